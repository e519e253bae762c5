package resume

import (
	"testing"

	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/pages"
)

func digest(ids ...string) string {
	var d pages.Digest
	for _, id := range ids {
		d.Add(id)
	}
	return d.String()
}

// TestBeginPage: the first page of a resumed walk skips the children of
// the records the last run finished, and goes on with the child walk it
// was in, only when the page still starts with those records.
func TestBeginPage(t *testing.T) {
	id := func(rec any) string { return rec.(string) }
	inChild := func(rec any, c *pages.Resume) bool { return rec == "c" && c.Partition == "pc" }
	child := &pages.Resume{Stream: "items", Partition: "pc"}
	tests := map[string]struct {
		from      *pages.Resume
		recs      []any
		want      Check
		skipped   []bool // SkipChildren for each record
		childWalk bool   // the third record's walk of items goes on at child
	}{
		"a fresh walk: nothing skipped": {
			recs: []any{"a", "b", "c"}, want: Same, skipped: []bool{false, false, false},
		},
		"the same page: the finished records skipped, the child walk goes on": {
			from: &pages.Resume{Done: 2, Digest: digest("a", "b"), Child: child},
			recs: []any{"a", "b", "c"}, want: Same, skipped: []bool{true, true, false}, childWalk: true,
		},
		"the page changed: its children walked again": {
			from: &pages.Resume{Done: 2, Digest: digest("a", "x"), Child: child},
			recs: []any{"a", "b", "c"}, want: Changed, skipped: []bool{false, false, false},
		},
		"the page is shorter: its children walked again": {
			from: &pages.Resume{Done: 4, Digest: digest("a", "b", "c", "d")},
			recs: []any{"a", "b", "c"}, want: Shorter, skipped: []bool{false, false, false},
		},
		"the child walk's partition is another record's: walked afresh": {
			from: &pages.Resume{Done: 1, Digest: digest("a"), Child: child},
			recs: []any{"a", "b", "c"}, want: Same, skipped: []bool{true, false, false},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var tr Tracker
			tr.Resume(tt.from)
			if tt.from != nil {
				tr.TakeUp()
			}
			tr.Track(nil, streams.Request{Method: "GET", URL: "/orders?page=1"})
			if got := tr.BeginPage(tt.recs, id, inChild); got != tt.want {
				t.Errorf("BeginPage = %v, want %v", got, tt.want)
			}
			moved := 0
			for i, rec := range tt.recs {
				tr.Record(i)
				if tr.SkipChildren() != tt.skipped[i] {
					t.Errorf("record %d: SkipChildren = %v, want %v", i, tr.SkipChildren(), tt.skipped[i])
				}
				if i == 2 {
					from, walk := tr.ChildFrom("items")
					if !walk || (from == child) != tt.childWalk {
						t.Errorf("record 2: ChildFrom = %v, %v; want the last run's child walk: %v", from, walk, tt.childWalk)
					}
				}
				if tr.Handled(id(rec)) {
					moved++
				}
			}
			tr.EndPage()
			if want := len(tt.recs) - count(tt.skipped); moved != want {
				t.Errorf("%d records moved the resume, want %d", moved, want)
			}
			got := tr.Point(func(r streams.Request) streams.Request { return r }, nil, 0)
			if got.Done != 3 || got.Digest != digest("a", "b", "c") {
				t.Errorf("resume after the page: done %d digest %q, want 3 and the page's digest", got.Done, got.Digest)
			}
		})
	}
}

func count(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// TestChildFrom: a child listed before the walk the last run was in had
// ended its own walk and is not walked again.
func TestChildFrom(t *testing.T) {
	var tr Tracker
	c := &pages.Resume{Stream: "b", Partition: "p", Done: 0}
	tr.Resume(&pages.Resume{Done: 0, Child: c})
	tr.TakeUp()
	tr.BeginPage([]any{"r"}, func(any) string { return "r" }, func(any, *pages.Resume) bool { return true })
	if _, walk := tr.ChildFrom("a"); walk {
		t.Error("child a, listed before the walk under way, is walked again")
	}
	if from, walk := tr.ChildFrom("b"); !walk || from != c {
		t.Errorf("child b: ChildFrom = %v, %v; want the last run's walk", from, walk)
	}
	if from, walk := tr.ChildFrom("c"); !walk || from != nil {
		t.Errorf("child c after it: ChildFrom = %v, %v; want a walk from its start", from, walk)
	}
}
