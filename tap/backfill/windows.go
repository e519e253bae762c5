package backfill

import (
	"time"

	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/tap/state"
)

// Windows is a chunked stream's backfill part in the engine: whether a
// walk was cut short by a test run's record limit, and the Book of what
// became of every window. (The window a walk is in, and whether it is one
// read again, travel with the walk.) The zero Windows is ready to use;
// like Book, it is not safe for concurrent use.
type Windows struct {
	book Book
	cut  bool
}

// Cut records that a walk ended at the record limit, short of its end.
func (ws *Windows) Cut() { ws.cut = true }

// WasCut reports whether a walk ended at the record limit: its window is
// neither done nor failed.
func (ws *Windows) WasCut() bool { return ws.cut }

// Book is what became of the stream's windows.
func (ws *Windows) Book() *Book { return &ws.book }

// Keep is where a chunked stream's windows are kept besides the book:
// its plan (the windows, the bookmark, the failed windows) and the run's
// state.
type Keep struct {
	State *state.State
	Def   *streams.Definition
	Plan  *streams.Plan
}

// Finish records what became of the walk of w in every place that keeps
// it: the plan, the book and the state. A zero o is a window read to its
// end; why is a failed window's message, as failed_windows keeps it; at
// says w is the window at the walk's position (not one read again), whose
// resume object a failed walk leaves behind. Its error is the plan's, of
// a window done.
func (ws *Windows) Finish(k Keep, w keys.Window, o Outcome, why string, at bool) error {
	name := k.Def.Name
	if o.Kind == "" {
		if err := k.Plan.Done(w); err != nil {
			return err
		}
		ws.book.Done(w)
	} else {
		k.Plan.Fail(w, why)
		ws.book.Record(w, o)
		if at {
			k.State.SetResume(name, nil) // the resume object was this window's
		}
	}
	k.State.SetFailedWindows(name, k.Plan.Backfill().Failed())
	Commit(k.State, k.Def, k.Plan)
	return nil
}

// Commit copies p's bookmark into st when it moved. Unlike the engine's
// commit, it does not wait for a dead letter to clear: the plan holds a
// windowed bookmark at the start of the earliest window not read, the
// letter's among them.
func Commit(st *state.State, d *streams.Definition, p *streams.Plan) {
	if v, moved := p.Checkpoint(); moved {
		st.SetValue(d.Name, d.ReplicationKey, v)
	}
}

// Position records in st where p's walk goes on: the next window, or,
// with windows still failed, the end of the walk (a window with no
// length); nothing once every window is read. While failed windows hold
// the bookmark back, the window carries the largest key read (high), the
// bookmark the next run may take up once it has read them.
func Position(st *state.State, name string, p *streams.Plan) {
	bf := p.Backfill()
	var high any
	if len(bf.Failed()) > 0 {
		high = p.WalkHigh()
	}
	if w, ok := bf.Next(); ok {
		st.SetWindowHigh(name, w.Start.UTC().Format(time.RFC3339), w.End.UTC().Format(time.RFC3339), high)
		return
	}
	if len(bf.Failed()) > 0 {
		end := bf.Position().UTC().Format(time.RFC3339)
		st.SetWindowHigh(name, end, end, high)
		return
	}
	st.SetWindow(name, "", "")
}
