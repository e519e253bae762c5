// Package backfill keeps what became of a stream's chunk windows in a run:
// the book the summary line and the exit code are made from.
//
// A chunked stream is walked in windows of chunk_days. The stream's plan
// owns the windows (streams.Backfill) and the bookmark (streams.Plan),
// which Plan.Fail and Plan.Done move together: a window whose walk
// fails after its retries, or is deferred, is kept in the plan's failed
// windows (the bookmark's failed_windows in STATE), and the walk's
// position moves on past it while the bookmark stays at or before the
// start of the earliest failed window, so that a reader knowing nothing of
// failed_windows never skips data. This package holds what the plan does
// not: why each window of this run was not completed — its outcome — and
// how many windows the run completed and took up from an earlier run.
//
// The outcomes decide what comes next:
//   - Failed: a request failed after its retries. The walk goes on; the
//     window is read once more at the end of the walk, and first by the
//     next run. A window still failed at the end of the run fails it
//     (exit 1, *Error).
//   - Deferred: the API asked us to stop. The walk stops there, as any
//     deferral does (exit 75 unless a window also failed).
//   - Lettered: one of its requests became a dead letter, which is its
//     record: the window stays in failed_windows for the next run but is
//     not read again in this one, and does not fail the run.
//
// A window failed by an error that is not its own (a cancelled run, a bad
// config, credentials refused) has no outcome: the stream stops, as it
// would without windows.
package backfill

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/keys"
)

// Kind is what became of a window the walk did not complete.
type Kind string

// Kinds of window outcome.
const (
	Failed   Kind = "failed"   // failed after its retries: read once more at the end
	Deferred Kind = "deferred" // the API asked us to stop
	Lettered Kind = "lettered" // its request is a dead letter: the letter is its record
)

// Outcome is what became of a window, and the error that made it so (nil
// for a lettered window).
type Outcome struct {
	Kind Kind
	Err  error
}

// OutcomeOf is the outcome of a window whose walk ended with err. Its Kind
// is empty when err is not the window's own failure and the stream must
// stop: see KindOf.
func OutcomeOf(err error) Outcome { return Outcome{Kind: KindOf(err), Err: err} }

// KindOf says what a window walk's error makes of the window: Failed (a
// request that failed after its retries, or the circuit breaker giving
// up), Deferred, or "" for an error that is not the window's own (a
// cancelled run, a bad config, a record the stream refuses). Credentials
// refused are not the window's own either: every window would fail alike.
func KindOf(err error) Kind {
	var de *client.DeferError
	var se *client.StatusError
	switch {
	case errors.As(err, &de):
		return Deferred
	case errors.Is(err, client.ErrCircuitOpen):
		return Failed
	case errors.As(err, &se) && se.Status != http.StatusUnauthorized && se.Status != http.StatusForbidden:
		return Failed
	}
	return ""
}

// EndsWalk reports whether the walk stops at a window with this outcome:
// every window after it would meet the same answer.
func (o Outcome) EndsWalk() bool {
	return o.Kind == Deferred || errors.Is(o.Err, client.ErrCircuitOpen)
}

// OneLine is an error message as failed_windows keeps it: one line, at
// most 500 bytes. Mask its secrets first.
func OneLine(msg string) string {
	s := strings.Join(strings.Fields(msg), " ")
	if len(s) > 500 {
		s = strings.ToValidUTF8(s[:497], "") + "..."
	}
	return s
}

// Book is what became of one stream's chunk windows in this run. The zero
// Book is empty and ready to use; it is not safe for concurrent use (a
// stream is walked by one goroutine).
type Book struct {
	completed, resumed int
	outcomes           map[string]Outcome // by key(window): the windows not completed
}

func key(w keys.Window) string {
	return w.Start.UTC().Format(time.RFC3339Nano) + "/" + w.End.UTC().Format(time.RFC3339Nano)
}

// Done records that the walk of w reached its end.
func (b *Book) Done(w keys.Window) {
	b.completed++
	delete(b.outcomes, key(w))
}

// Record records what became of w, replacing what an earlier walk of it
// in this run left.
func (b *Book) Record(w keys.Window, o Outcome) {
	if b.outcomes == nil {
		b.outcomes = map[string]Outcome{}
	}
	b.outcomes[key(w)] = o
}

// Resume counts a window this run takes up from an earlier one: the
// window it stopped in, or one it left failed.
func (b *Book) Resume() { b.resumed++ }

// Outcome is what became of w in this run; its Kind is empty when w was
// completed or not walked.
func (b *Book) Outcome(w keys.Window) Outcome { return b.outcomes[key(w)] }

// ReadAgain reports whether w is to be read once more at the end of the
// walk: it failed in this run after its retries.
func (b *Book) ReadAgain(w keys.Window) bool { return b.Outcome(w).Kind == Failed }

// Counts are the figures of a stream's summary line.
type Counts struct {
	Completed, Resumed int
	// Failed and Deferred count the plan's failed windows by their outcome
	// in this run (a lettered window counts as failed); Unlettered, those
	// failed with no dead letter to record them, which fail the run.
	Failed, Deferred, Unlettered int
}

// Count counts the windows of a stream: failed are its plan's failed
// windows at the end of the walk. A failed window this run did not walk
// (deferred before it came) is in none of the counts.
func (b *Book) Count(failed []streams.FailedWindow) Counts {
	c := Counts{Completed: b.completed, Resumed: b.resumed}
	for _, f := range failed {
		switch b.Outcome(f.Window).Kind {
		case Failed:
			c.Failed++
			c.Unlettered++
		case Lettered:
			c.Failed++
		case Deferred:
			c.Deferred++
		}
	}
	return c
}

// String is the summary line of a chunked stream.
func (c Counts) String() string {
	return fmt.Sprintf("windows completed=%d failed=%d deferred=%d resumed=%d", c.Completed, c.Failed, c.Deferred, c.Resumed)
}
