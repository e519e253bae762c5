package keys

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func day(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }

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

func TestPlanWindows(t *testing.T) {
	noon := func(d int) time.Time { return day(d).Add(12 * time.Hour) }
	tests := map[string]struct {
		start, now time.Time
		chunk      int
		want       []Window
	}{
		"exact division": {day(1), day(7), 3, []Window{{day(1), day(4)}, {day(4), day(7)}}},
		"remainder":      {day(1), noon(8), 3, []Window{{day(1), day(4)}, {day(4), day(7)}, {day(7), noon(8)}}},
		"one short":      {day(1), noon(1), 30, []Window{{day(1), noon(1)}}},
		"no chunking":    {day(1), day(20), 0, []Window{{day(1), day(20)}}},
		"negative chunk": {day(1), day(20), -2, []Window{{day(1), day(20)}}},
		"start == now":   {day(5), day(5), 1, nil},
		"start > now":    {day(6), day(5), 1, nil},
		"huge chunk":     {day(1), day(5), 1 << 62, []Window{{day(1), day(5)}}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := PlanWindows(tt.start, tt.now, tt.chunk)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestPlanWindowsContiguous: the windows tile [start, now) with no gap and
// no overlap, whatever the lengths.
func TestPlanWindowsContiguous(t *testing.T) {
	start := time.Date(2023, 2, 27, 13, 14, 15, 16, time.UTC)
	for _, chunk := range []int{1, 2, 7, 30, 365} {
		for _, span := range []time.Duration{time.Hour, 24 * time.Hour, 100*24*time.Hour + 7*time.Minute, 1000 * 24 * time.Hour} {
			now := start.Add(span)
			ws := PlanWindows(start, now, chunk)
			if len(ws) == 0 || !ws[0].Start.Equal(start) || !ws[len(ws)-1].End.Equal(now) {
				t.Fatalf("chunk %d span %v: windows %v do not cover [start, now)", chunk, span, ws)
			}
			for i, w := range ws {
				if !w.Start.Before(w.End) {
					t.Errorf("chunk %d span %v: empty window %v", chunk, span, w)
				}
				if i > 0 && !ws[i-1].End.Equal(w.Start) {
					t.Errorf("chunk %d span %v: gap or overlap between %v and %v", chunk, span, ws[i-1], w)
				}
				if i < len(ws)-1 && !w.End.Equal(w.Start.AddDate(0, 0, chunk)) {
					t.Errorf("chunk %d span %v: window %v is not %d days", chunk, span, w, chunk)
				}
			}
		}
	}
}

// TestWindowBordersAgree: formatted, the end of one window is the start of
// the next, whatever the format.
func TestWindowBordersAgree(t *testing.T) {
	start := time.Date(2026, 1, 1, 10, 30, 15, 500, time.UTC)
	ws := PlanWindows(start, start.AddDate(0, 0, 10).Add(90*time.Minute), 3)
	for _, f := range []string{"", "date", "unix", "unix_ms", time.RFC1123} {
		for i := 1; i < len(ws); i++ {
			if a, b := Format(ws[i-1].End, f), Format(ws[i].Start, f); a != b {
				t.Errorf("format %q: end %s != next start %s", f, a, b)
			}
		}
	}
}
