package streams

import (
	"testing"
	"time"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		ok   bool
	}{
		{"0/1", Shard{0, 1}, true},
		{"3/4", Shard{3, 4}, true},
		{"4/4", Shard{}, false},
		{"-1/4", Shard{}, false},
		{"1/0", Shard{}, false},
		{"1", Shard{}, false},
		{"a/b", Shard{}, false},
	} {
		got, err := ParseShard(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// Every window of the full plan is read by exactly one of N shards, each
// from its own fresh state, and a shard resuming from its own window in
// progress keeps to its windows.
func TestShardWindowsPartitionThePlan(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := time.Date(2026, 3, 5, 12, 0, 0, 0, time.UTC)
	d := &Definition{Name: "s", ReplicationKey: "updated_at", Incremental: &Incremental{Param: "since", ChunkDays: 7}}
	full := PlanWindows(start, now, 7)
	for _, n := range []int{1, 2, 4, 20} {
		seen := map[Window]int{}
		for i := range n {
			p, err := NewPlan(d, Bounds{StartDate: start, Now: now, Shard: Shard{i, n}})
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
	// Shard 1/4 resuming at its second window (index 5).
	p, err := NewPlan(d, Bounds{StartDate: start, Now: now, WindowStart: full[5].Start, Shard: Shard{1, 4}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Window{full[5]}
	if len(full) > 9 {
		want = append(want, full[9])
	}
	if got := p.Windows(); len(got) != len(want) || got[0] != want[0] || got[len(got)-1] != want[len(want)-1] {
		t.Errorf("resumed shard 1/4 windows %v, want %v", got, want)
	}
}
