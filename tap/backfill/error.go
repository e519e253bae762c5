package backfill

import (
	"fmt"
	"strings"
	"time"

	"github.com/tap-dev/tap/streams"
)

// Stream is a chunked stream at the end of a run: its book, and its plan's
// failed windows.
type Stream struct {
	Name   string
	Book   *Book
	Failed []streams.FailedWindow
}

// RunError is the error of a run whose chunked streams are ss, in config
// order: an *Error when a window is still failed with no dead letter to
// record it, joined to also, the error that ended the run if any;
// otherwise also.
func RunError(ss []Stream, also error) error {
	var we *Error
	for _, s := range ss {
		if s.Book.Count(s.Failed).Unlettered == 0 {
			continue
		}
		if we != nil {
			we.MoreStreams++
			continue
		}
		we = &Error{Stream: s.Name, Also: also}
		for _, f := range s.Failed {
			if o := s.Book.Outcome(f.Window); o.Kind == Failed {
				if we.Windows == 0 {
					we.First, we.Err = f, o.Err
				}
				we.Windows++
			}
		}
	}
	if we == nil {
		return also
	}
	return we
}

// Error ends a run that went on past a chunk window that failed and is
// still failed after a second try: the state's failed_windows keeps it,
// and the next run reads it first.
type Error struct {
	Stream      string
	Windows     int                  // windows of Stream still failed
	First       streams.FailedWindow // the earliest
	Err         error                // its error
	MoreStreams int                  // other streams with failed windows
	Also        error                // what else ended the run, if anything
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "stream %q: %d backfill %s still failed after a second try (failed_windows in the state; the next run reads them first); the first, %s to %s: %s",
		e.Stream, e.Windows, plural(e.Windows, "window", "windows"),
		e.First.Start.UTC().Format(time.RFC3339), e.First.End.UTC().Format(time.RFC3339), e.First.Error)
	if e.MoreStreams > 0 {
		fmt.Fprintf(&b, "; %d more %s failed windows", e.MoreStreams, plural(e.MoreStreams, "stream has", "streams have"))
	}
	if e.Also != nil {
		b.WriteString("; also: " + strings.ReplaceAll(e.Also.Error(), "\n", "; "))
	}
	return b.String()
}

func (e *Error) Unwrap() []error { return []error{e.Err, e.Also} }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
