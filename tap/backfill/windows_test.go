package backfill

import (
	"testing"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/pages"
	"github.com/tap-dev/tap/tap/state"
)

// TestFinish: each outcome of a window reaches the plan, the book and the
// state in one call, step by step through three windows of a walk.
func TestFinish(t *testing.T) {
	d := &streams.Definition{Name: "events", Path: "/e", ReplicationKey: "t",
		Incremental: &streams.Incremental{Param: "since", EndParam: "until", ChunkDays: 1}}
	day := func(n int) time.Time { return time.Date(2026, 1, n, 0, 0, 0, 0, time.UTC) }
	p, err := streams.NewPlan(d, streams.Bounds{StartDate: day(1), Now: day(4)})
	if err != nil {
		t.Fatal(err)
	}
	st := state.New()
	var ws Windows
	keep := Keep{State: st, Def: d, Plan: p}
	failed := Outcome{Kind: Failed, Err: &client.StatusError{Status: 500}}
	for i, step := range []struct {
		o          Outcome
		at         bool
		wantFailed int  // windows in failed_windows after the step
		wantResume bool // the resume object is still there
	}{
		{o: Outcome{}, at: true, wantFailed: 0, wantResume: true},
		{o: failed, at: true, wantFailed: 1, wantResume: false},
		{o: Outcome{Kind: Lettered}, at: true, wantFailed: 2, wantResume: false},
	} {
		w, ok := p.Backfill().Next()
		if !ok {
			t.Fatalf("step %d: no window left", i)
		}
		st.SetResume("events", &pages.Resume{Next: streams.Request{Method: "GET", URL: "/e?page=2"}})
		if err := ws.Finish(keep, w, step.o, "why", step.at); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		got, err := st.FailedWindows("events")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != step.wantFailed || len(p.Backfill().Failed()) != step.wantFailed {
			t.Errorf("step %d: state has %d failed windows, plan %d, want %d", i, len(got), len(p.Backfill().Failed()), step.wantFailed)
		}
		if r, err := st.Resume("events"); err != nil || (r != nil) != step.wantResume {
			t.Errorf("step %d: resume object kept = %v (%v), want %v", i, r != nil, err, step.wantResume)
		}
		if k := ws.Book().Outcome(w).Kind; k != step.o.Kind {
			t.Errorf("step %d: the book says %q, want %q", i, k, step.o.Kind)
		}
	}
	if c := ws.Book().Count(p.Backfill().Failed()); c.Completed != 1 {
		t.Errorf("completed %d windows, want 1", c.Completed)
	}
	if _, ok := p.Backfill().Next(); ok {
		t.Error("the walk has windows left after three of three")
	}
}
