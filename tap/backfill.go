package tap

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/tap/catalog"
	"github.com/tap-dev/tap/tap/state"
)

// Backfills with outcomes. A chunk window whose walk fails after its
// retries is recorded in the bookmark's failed_windows and the walk goes
// on with the next window; the plan holds the bookmark where it stood
// when the earliest failed window failed (streams/window.go). The
// windows still failed at the end of the walk are read once more; the
// next run reads them first. A window deferred (the API asked us to
// stop) is recorded too, and the run stops there, as any deferral does.

// Kinds of window outcome.
const (
	windowFailed   = "failed"   // failed after its retries: read once more at the end
	windowDeferred = "deferred" // the API asked us to stop
	windowLettered = "lettered" // its request is a dead letter: the letter is its record
)

// backfill is what became of a stream's chunk windows in this run, for
// the summary and the exit code.
type backfill struct {
	completed, resumed int
	outcomes           map[string]windowOutcome // by windowKey, the windows not completed
}

type windowOutcome struct {
	kind string
	err  error
}

func windowKey(w keys.Window) string {
	return w.Start.UTC().Format(time.RFC3339Nano) + "/" + w.End.UTC().Format(time.RFC3339Nano)
}

func (b *backfill) outcome(w keys.Window) windowOutcome { return b.outcomes[windowKey(w)] }

func (b *backfill) set(w keys.Window, o windowOutcome) {
	if b.outcomes == nil {
		b.outcomes = map[string]windowOutcome{}
	}
	b.outcomes[windowKey(w)] = o
}

// retryWindow reads again a window that failed. Its pages write no
// resume object: that belongs to the window at the walk's position.
func (e *engine) retryWindow(ctx context.Context, n *node, w keys.Window) error {
	req, err := n.plan.Request(streams.Partition{}, &w)
	if err != nil {
		return err
	}
	n.plan.Reread()
	n.window, n.retrying = &w, true
	letters := n.counts.DeadLetters.Load()
	err = e.walk(ctx, n, req, streams.Partition{})
	n.window, n.retrying = nil, false
	return e.windowEnd(n, w, err, n.counts.DeadLetters.Load() > letters, false)
}

// windowEnd records how the walk of w ended: err is its error, lettered
// says one of its requests became a dead letter (which ends the walk with
// no error), at that w is the window at the walk's position rather than
// one read again. It returns an error only when the stream must stop.
func (e *engine) windowEnd(n *node, w keys.Window, err error, lettered, at bool) error {
	p, name := n.plan, n.def.Name
	if err == nil && !lettered {
		if err := p.Done(w); err != nil {
			return err
		}
		n.backfill.completed++
		delete(n.backfill.outcomes, windowKey(w))
		e.state.SetFailedWindows(name, p.Failed())
		e.commitWindow(n)
		return nil
	}
	o := windowOutcome{kind: windowLettered, err: err}
	why := "a request was dead-lettered to " + e.cfg.DeadLetterPath
	if err != nil {
		if o.kind = windowKind(err); o.kind == "" {
			return err // not the window's failure: the stream stops here, as before
		}
		why = e.oneLine(err)
	}
	p.Fail(w, why)
	n.backfill.set(w, o)
	if at {
		e.state.SetResume(name, nil) // the resume object was this window's
	}
	e.state.SetFailedWindows(name, p.Failed())
	e.commitWindow(n)
	start, end := w.Start.UTC().Format(time.RFC3339), w.End.UTC().Format(time.RFC3339)
	if o.kind == windowDeferred || errors.Is(err, client.ErrCircuitOpen) {
		// Every window after it would meet the same answer.
		e.setPosition(n)
		if n.selected {
			err = errors.Join(err, e.checkpoint(n))
		}
		return err
	}
	if o.kind == windowFailed {
		e.log.Warn("backfill window failed; the walk goes on", "stream", name, "start", start, "end", end, "error", why)
	}
	return nil
}

// windowKind says what a window walk's error makes of the window: failed
// (a request that failed after its retries), deferred, or "" for an error
// that is not the window's own (a cancelled run, a bad config, a record
// the stream refuses) and stops the stream. Credentials refused stop it
// too: every window would fail alike.
func windowKind(err error) string {
	var de *client.DeferError
	var se *client.StatusError
	switch {
	case errors.As(err, &de):
		return windowDeferred
	case errors.Is(err, client.ErrCircuitOpen):
		return windowFailed
	case errors.As(err, &se) && se.Status != http.StatusUnauthorized && se.Status != http.StatusForbidden:
		return windowFailed
	}
	return ""
}

// oneLine is an error as failed_windows keeps it: one line, secrets
// masked, at most 500 bytes.
func (e *engine) oneLine(err error) string {
	s := strings.Join(strings.Fields(e.redact.Redact(err.Error())), " ")
	if len(s) > 500 {
		s = strings.ToValidUTF8(s[:497], "") + "..."
	}
	return s
}

// commitWindow copies the plan's bookmark into the state. Unlike commit,
// it does not wait for a dead letter to clear: the plan holds a windowed
// bookmark at the start of the earliest window not read, the letter's
// among them.
func (e *engine) commitWindow(n *node) {
	if v, moved := n.plan.Checkpoint(); moved {
		e.state.SetValue(n.def.Name, n.def.ReplicationKey, v)
	}
}

// setPosition records where the walk goes on: the next window, or, with
// windows still failed, the end of the walk (a window with no length);
// nothing once every window is read. While failed windows hold the
// bookmark back, the window carries the largest key read (high), the
// bookmark the next run may take up once it has read them.
func (e *engine) setPosition(n *node) {
	name, p := n.def.Name, n.plan
	var high any
	if len(p.Failed()) > 0 {
		high = p.WalkHigh()
	}
	if w, ok := p.Next(); ok {
		e.state.SetWindowHigh(name, w.Start.UTC().Format(time.RFC3339), w.End.UTC().Format(time.RFC3339), high)
		return
	}
	if len(p.Failed()) > 0 {
		end := p.Position().UTC().Format(time.RFC3339)
		e.state.SetWindowHigh(name, end, end, high)
		return
	}
	e.state.SetWindow(name, "", "")
}

// windowCounts counts the windows of n this run left failed and
// deferred, and the windows that failed with no dead letter.
func (n *node) windowCounts() (failed, deferred, unlettered int) {
	for _, f := range n.plan.Failed() {
		switch n.backfill.outcome(f.Window).kind {
		case windowFailed:
			failed++
			unlettered++
		case windowLettered:
			failed++
		case windowDeferred:
			deferred++
		}
	}
	return failed, deferred, unlettered
}

// chunked reports whether n is a selected stream read in chunk windows in
// this run.
func (n *node) chunked() bool {
	return n.selected && n.def.Parent == nil && n.plan != nil && n.plan.Windows() != nil
}

// backfillSummary logs a line per chunked stream: what became of its
// windows.
func (e *engine) backfillSummary() {
	for _, n := range e.nodes {
		if !n.chunked() {
			continue
		}
		failed, deferred, _ := n.windowCounts()
		e.log.Info(fmt.Sprintf("windows completed=%d failed=%d deferred=%d resumed=%d", n.backfill.completed, failed, deferred, n.backfill.resumed),
			"stream", n.def.Name)
	}
}

// windowsError is the error of a run that left a window failed with no
// dead letter to record it (exit 1), joined to also, the error that ended
// the run if any; nil when there is no such window.
func (e *engine) windowsError(also error) error {
	var we *WindowsError
	for _, n := range e.nodes {
		if !n.chunked() {
			continue
		}
		if _, _, k := n.windowCounts(); k == 0 {
			continue
		}
		if we != nil {
			we.MoreStreams++
			continue
		}
		we = &WindowsError{Stream: n.def.Name, Also: also}
		for _, f := range n.plan.Failed() {
			if o := n.backfill.outcome(f.Window); o.kind == windowFailed {
				if we.Windows == 0 {
					we.First, we.Err = f, o.err
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

// WindowsError ends a run that went on past a chunk window that failed and
// is still failed after a second try: the state's failed_windows keeps
// it, and the next run reads it first.
type WindowsError struct {
	Stream      string
	Windows     int                  // windows of Stream still failed
	First       streams.FailedWindow // the earliest
	Err         error                // its error
	MoreStreams int                  // other streams with failed windows
	Also        error                // what else ended the run, if anything
}

func (e *WindowsError) Error() string {
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

func (e *WindowsError) Unwrap() []error { return []error{e.Err, e.Also} }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// checkBackfills makes sure every selected chunked backfill knows where it
// begins — start_date, a bookmark or a window in progress — before any
// request is sent.
func checkBackfills(cfg *Config, st *state.State, sel *catalog.Selection) error {
	for i := range cfg.Streams {
		d := &cfg.Streams[i]
		inc := d.Incremental
		if inc == nil || inc.ChunkDays == 0 || !cfg.Start.IsZero() || !sel.Selected(d.Name) ||
			state.KeyKind(cfg.Schemas[d.Name], d.ReplicationKey) == "number" {
			continue
		}
		if _, _, inProgress := st.Window(d.Name); st.Value(d.Name) != nil || inProgress {
			continue
		}
		return &InputError{File: cfg.Path, Err: fmt.Errorf("stream %q: incremental.chunk_days: needs start_date in the config (or a bookmark in the state) to know where the backfill begins", d.Name)}
	}
	return nil
}
