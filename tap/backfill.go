package tap

import (
	"context"
	"errors"
	"time"

	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/tap/backfill"
)

// The engine's steps of a backfill with outcomes; what became of the
// windows, and what that makes of the run, is tap/backfill's.

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
	if n.cut {
		return nil // cut short by a test run's record limit
	}
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
		n.backfill.Done(w)
		e.state.SetFailedWindows(name, p.Failed())
		e.commitWindow(n)
		return nil
	}
	o := backfill.Outcome{Kind: backfill.Lettered}
	why := "a request was dead-lettered to " + e.cfg.DeadLetterPath
	if err != nil {
		if o = backfill.OutcomeOf(err); o.Kind == "" {
			return err // not the window's failure: the stream stops here, as before
		}
		why = backfill.OneLine(e.redact.Redact(err.Error()))
	}
	p.Fail(w, why)
	n.backfill.Record(w, o)
	if at {
		e.state.SetResume(name, nil) // the resume object was this window's
	}
	e.state.SetFailedWindows(name, p.Failed())
	e.commitWindow(n)
	if o.EndsWalk() {
		e.setPosition(n)
		if n.selected {
			err = errors.Join(err, e.checkpoint(n))
		}
		return err
	}
	if o.Kind == backfill.Failed {
		e.log.Warn("backfill window failed; the walk goes on", "stream", name,
			"start", w.Start.UTC().Format(time.RFC3339), "end", w.End.UTC().Format(time.RFC3339), "error", why)
	}
	return nil
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

// backfills lists the selected streams read in chunk windows in this run,
// in config order, with what became of their windows.
func (e *engine) backfills() []backfill.Stream {
	var out []backfill.Stream
	for _, n := range e.nodes {
		if n.chunked() {
			out = append(out, backfill.Stream{Name: n.def.Name, Book: &n.backfill, Failed: n.plan.Failed()})
		}
	}
	return out
}

// chunked reports whether n is a selected stream read in chunk windows in
// this run.
func (n *node) chunked() bool {
	return n.selected && n.def.Parent == nil && n.plan != nil && n.plan.Windows() != nil
}

// backfillSummary logs a line per chunked stream: what became of its
// windows.
func (e *engine) backfillSummary() {
	for _, s := range e.backfills() {
		e.log.Info(s.Book.Count(s.Failed).String(), "stream", s.Name)
	}
}
