package streams

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tap-dev/tap/streams/keys"
)

func day(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }

func TestLowerBound(t *testing.T) {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		bookmark any
		inc      *Incremental
		want     any
		wantErr  string
	}{
		"no bookmark":           {nil, &Incremental{OverlapS: new(300)}, start, ""},
		"time minus overlap":    {"2026-08-18T11:00:00+02:00", &Incremental{OverlapS: new(300)}, time.Date(2026, 8, 18, 8, 55, 0, 0, time.UTC), ""},
		"date bookmark":         {"2026-08-18", &Incremental{OverlapS: new(3600)}, time.Date(2026, 8, 17, 23, 0, 0, 0, time.UTC), ""},
		"time, nil incremental": {"2026-08-18T09:00:00Z", nil, time.Date(2026, 8, 18, 9, 0, 0, 0, time.UTC), ""},
		"time.Time bookmark":    {time.Date(2026, 8, 18, 9, 0, 0, 0, time.UTC), &Incremental{OverlapS: new(1)}, time.Date(2026, 8, 18, 8, 59, 59, 0, time.UTC), ""},
		"int minus overlap":     {json.Number("9007199254740993"), &Incremental{OverlapS: new(300), Overlap: "1"}, json.Number("9007199254740992"), ""},
		"big int":               {json.Number("123456789012345678901234567890"), &Incremental{Overlap: "100"}, json.Number("123456789012345678901234567790"), ""},
		"overlap_s not applied": {json.Number("1000"), &Incremental{OverlapS: new(300)}, json.Number("1000"), ""},
		"decimal":               {json.Number("10.25"), &Incremental{Overlap: "0.5"}, json.Number("9.75"), ""},
		"decimal to int":        {json.Number("10.5"), &Incremental{Overlap: "0.5"}, json.Number("10"), ""},
		"float64 bookmark":      {float64(1000), &Incremental{Overlap: "10"}, json.Number("990"), ""},
		"int bookmark":          {int64(5), nil, json.Number("5"), ""},
		"below zero":            {json.Number("3"), &Incremental{Overlap: "5"}, json.Number("-2"), ""},
		"opaque string":         {"v0042", &Incremental{OverlapS: new(300)}, "v0042", ""},
		"bad overlap":           {json.Number("3"), &Incremental{Overlap: "x"}, nil, "incremental.overlap"},
		"bool bookmark":         {true, nil, nil, "bookmark must be"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := LowerBound(tt.bookmark, tt.inc, start)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if gt, ok := got.(time.Time); ok {
				if wt, ok := tt.want.(time.Time); !ok || !gt.Equal(wt) {
					t.Errorf("got %v, want %v", got, tt.want)
				}
				return
			}
			if got != tt.want {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

// TestPlanBackfillOutcomes: a failed window holds the bookmark where it
// stood while the walk goes on; the bookmark moves once it is read.
func TestPlanBackfillOutcomes(t *testing.T) {
	chunked := func(sorted bool) *Definition {
		return incDef(func(d *Definition) { d.Incremental.ChunkDays = 1; d.Incremental.OverlapS = new(0); d.IsSorted = sorted })
	}
	w := func(d int) keys.Window { return keys.Window{Start: day(d), End: day(d + 1)} }
	ts := func(d, h int) string { return day(d).Add(time.Duration(h) * time.Hour).Format(time.RFC3339) }
	type step struct {
		op     string // "key", "done", "fail", "reread"
		win    keys.Window
		key    string
		bm     any  // the bookmark Checkpoint returns after the step
		moved  bool // and whether it moved
		failed []keys.Window
		high   any // WalkHigh after the step, when set
	}
	tests := map[string]struct {
		def     *Definition
		b       Bounds
		retries []keys.Window
		steps   []step
		pos     time.Time // Position at the end
	}{
		"a failed window holds the bookmark where it stood; its retry frees it": {
			b: Bounds{StartDate: day(1), Now: day(5)},
			steps: []step{
				{op: "key", key: ts(1, 10), bm: nil},
				{op: "done", win: w(1), bm: ts(1, 10), moved: true},
				{op: "key", key: ts(2, 3), bm: ts(1, 10)},
				{op: "fail", win: w(2), bm: ts(1, 10), failed: []keys.Window{w(2)}},
				{op: "key", key: ts(3, 5), bm: ts(1, 10), failed: []keys.Window{w(2)}},
				{op: "done", win: w(3), bm: ts(1, 10), failed: []keys.Window{w(2)}, high: ts(3, 5)},
				{op: "done", win: w(4), bm: ts(1, 10), failed: []keys.Window{w(2)}},
				{op: "key", key: ts(2, 4), bm: ts(1, 10), failed: []keys.Window{w(2)}},
				{op: "done", win: w(2), bm: ts(3, 5), moved: true},
			},
			pos: day(5),
		},
		"the smallest bookmark a failed window failed at holds": {
			b: Bounds{StartDate: day(1), Now: day(5)},
			steps: []step{
				{op: "fail", win: w(1), bm: nil, failed: []keys.Window{w(1)}},
				{op: "key", key: ts(2, 1), bm: nil, failed: []keys.Window{w(1)}},
				{op: "done", win: w(2), bm: nil, failed: []keys.Window{w(1)}},
				{op: "fail", win: w(3), bm: nil, failed: []keys.Window{w(1), w(3)}},
				{op: "fail", win: w(1), bm: nil, failed: []keys.Window{w(1), w(3)}}, // a retry that fails again
				{op: "done", win: w(1), bm: ts(2, 1), moved: true, failed: []keys.Window{w(3)}},
			},
			pos: day(4),
		},
		"failed windows from state are read first; once read, the bookmark takes up the largest key of the last run": {
			b: Bounds{StartDate: day(1), Now: day(5), Bookmark: ts(2, 0), WindowStart: day(5), WalkHigh: ts(4, 18),
				Failed: []FailedWindow{{Window: w(3), Error: "503"}, {Window: w(2), Error: "timeout"}}},
			retries: []keys.Window{w(2), w(3)},
			steps: []step{
				{op: "key", key: ts(2, 7), bm: ts(2, 0), failed: []keys.Window{w(2), w(3)}},
				{op: "done", win: w(2), bm: ts(2, 0), failed: []keys.Window{w(3)}, high: ts(4, 18)},
				{op: "done", win: w(3), bm: ts(4, 18), moved: true},
			},
			pos: day(5),
		},
		"with a state's failed window read, the walk goes on from its position": {
			b: Bounds{StartDate: day(1), Now: day(5), Bookmark: ts(2, 0), WindowStart: day(3),
				Failed: []FailedWindow{{Window: w(2), Error: "503"}}},
			retries: []keys.Window{w(2)},
			steps: []step{
				{op: "key", key: ts(2, 5), bm: ts(2, 0), failed: []keys.Window{w(2)}},
				{op: "done", win: w(2), bm: ts(2, 5), moved: true},
				{op: "key", key: ts(3, 2), bm: ts(2, 5)},
				{op: "done", win: w(3), bm: ts(3, 2), moved: true},
				{op: "key", key: ts(4, 20), bm: ts(3, 2)},
				{op: "done", win: w(4), bm: ts(4, 20), moved: true},
			},
			pos: day(5),
		},
		"sorted: a window read again after later ones is no disorder": {
			def: chunked(true),
			b:   Bounds{StartDate: day(1), Now: day(4)},
			steps: []step{
				{op: "key", key: ts(1, 1), bm: nil},
				{op: "done", win: w(1), bm: ts(1, 1), moved: true},
				{op: "fail", win: w(2), bm: ts(1, 1), failed: []keys.Window{w(2)}},
				{op: "key", key: ts(3, 1), bm: ts(1, 1), failed: []keys.Window{w(2)}},
				{op: "done", win: w(3), bm: ts(1, 1), failed: []keys.Window{w(2)}},
				{op: "reread", bm: ts(1, 1), failed: []keys.Window{w(2)}},
				{op: "key", key: ts(2, 5), bm: ts(1, 1), failed: []keys.Window{w(2)}},
				{op: "done", win: w(2), bm: ts(3, 1), moved: true},
			},
			pos: day(4),
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			def := tt.def
			if def == nil {
				def = chunked(false)
			}
			p, err := NewPlan(def, tt.b)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.retries, p.Backfill().Retries()); d != "" {
				t.Errorf("Retries (-want +got):\n%s", d)
			}
			p.Checkpoint()
			for i, s := range tt.steps {
				switch s.op {
				case "key":
					if obs, err := p.Observe(Partition{}, s.key); obs != Observed {
						t.Fatalf("step %d: Observe(%s) = %v, %v", i, s.key, obs, err)
					}
				case "done":
					if err := p.Done(s.win); err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
				case "fail":
					p.Fail(s.win, "it failed")
				case "reread":
					p.Reread()
				}
				bm, moved := p.Checkpoint()
				if bm != s.bm || moved != s.moved {
					t.Errorf("step %d (%s): Checkpoint() = %v, %v; want %v, %v", i, s.op, bm, moved, s.bm, s.moved)
				}
				var failed []keys.Window
				for _, f := range p.Backfill().Failed() {
					failed = append(failed, f.Window)
				}
				if d := cmp.Diff(s.failed, failed); d != "" {
					t.Errorf("step %d (%s): Failed (-want +got):\n%s", i, s.op, d)
				}
				if s.high != nil && p.WalkHigh() != s.high {
					t.Errorf("step %d (%s): WalkHigh() = %v, want %v", i, s.op, p.WalkHigh(), s.high)
				}
			}
			if got := p.Backfill().Position(); !got.Equal(tt.pos) {
				t.Errorf("Position() = %v, want %v", got, tt.pos)
			}
		})
	}
}

// Every window of the full plan is read by exactly one of N shards, each
// from its own fresh state, and a shard resuming from its own window in
// progress keeps to its windows.
func TestShardWindowsPartitionThePlan(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := time.Date(2026, 3, 5, 12, 0, 0, 0, time.UTC)
	d := &Definition{Name: "s", ReplicationKey: "updated_at", Incremental: &Incremental{Param: "since", ChunkDays: 7}}
	full := keys.PlanWindows(start, now, 7)
	for _, n := range []int{1, 2, 4, 20} {
		seen := map[keys.Window]int{}
		for i := range n {
			p, err := NewPlan(d, Bounds{StartDate: start, Now: now, Shard: keys.Shard{I: i, N: n}})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range p.Windows() {
				seen[w]++
			}
		}
		if len(seen) != len(full) {
			t.Errorf("N=%d: %d windows read, the plan has %d", n, len(seen), len(full))
		}
		for _, w := range full {
			if seen[w] != 1 {
				t.Errorf("N=%d: window %v read %d times", n, w, seen[w])
			}
		}
	}
	// keys.Shard 1/4 resuming at its second window (index 5).
	p, err := NewPlan(d, Bounds{StartDate: start, Now: now, WindowStart: full[5].Start, Shard: keys.Shard{I: 1, N: 4}})
	if err != nil {
		t.Fatal(err)
	}
	want := []keys.Window{full[5]}
	if len(full) > 9 {
		want = append(want, full[9])
	}
	if got := p.Windows(); len(got) != len(want) || got[0] != want[0] || got[len(got)-1] != want[len(want)-1] {
		t.Errorf("resumed shard 1/4 windows %v, want %v", got, want)
	}
}
