package streams

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func day(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }

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

func TestLowerBound(t *testing.T) {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		bookmark any
		inc      *Incremental
		want     any
		wantErr  string
	}{
		"no bookmark":           {nil, &Incremental{OverlapS: 300}, start, ""},
		"time minus overlap":    {"2026-08-18T11:00:00+02:00", &Incremental{OverlapS: 300}, time.Date(2026, 8, 18, 8, 55, 0, 0, time.UTC), ""},
		"date bookmark":         {"2026-08-18", &Incremental{OverlapS: 3600}, time.Date(2026, 8, 17, 23, 0, 0, 0, time.UTC), ""},
		"time, nil incremental": {"2026-08-18T09:00:00Z", nil, time.Date(2026, 8, 18, 9, 0, 0, 0, time.UTC), ""},
		"time.Time bookmark":    {time.Date(2026, 8, 18, 9, 0, 0, 0, time.UTC), &Incremental{OverlapS: 1}, time.Date(2026, 8, 18, 8, 59, 59, 0, time.UTC), ""},
		"int minus overlap":     {json.Number("9007199254740993"), &Incremental{OverlapS: 300, Overlap: "1"}, json.Number("9007199254740992"), ""},
		"big int":               {json.Number("123456789012345678901234567890"), &Incremental{Overlap: "100"}, json.Number("123456789012345678901234567790"), ""},
		"overlap_s not applied": {json.Number("1000"), &Incremental{OverlapS: 300}, json.Number("1000"), ""},
		"decimal":               {json.Number("10.25"), &Incremental{Overlap: "0.5"}, json.Number("9.75"), ""},
		"decimal to int":        {json.Number("10.5"), &Incremental{Overlap: "0.5"}, json.Number("10"), ""},
		"float64 bookmark":      {float64(1000), &Incremental{Overlap: "10"}, json.Number("990"), ""},
		"int bookmark":          {int64(5), nil, json.Number("5"), ""},
		"below zero":            {json.Number("3"), &Incremental{Overlap: "5"}, json.Number("-2"), ""},
		"opaque string":         {"v0042", &Incremental{OverlapS: 300}, "v0042", ""},
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

func TestFormatBound(t *testing.T) {
	ts := time.Date(2026, 8, 18, 11, 0, 7, 987654321, time.FixedZone("CEST", 2*3600))
	tests := []struct {
		v      any
		format string
		want   string
	}{
		{ts, "", "2026-08-18T09:00:07Z"},
		{ts, "rfc3339", "2026-08-18T09:00:07Z"},
		{ts, "date", "2026-08-18"},
		{ts, "unix", "1787043607"},
		{ts, "unix_ms", "1787043607987"},
		{ts, "2006-01-02 15:04:05", "2026-08-18 09:00:07"},
		{ts, "20060102T150405Z0700", "20260818T090007Z"},
		{time.Date(2026, 8, 18, 0, 30, 0, 0, time.FixedZone("", 2*3600)), "date", "2026-08-17"},
		{"2026-08-18T11:00:07+02:00", "unix", "1787043607"},
		{json.Number("9007199254740993"), "rfc3339", "9007199254740993"},
		{json.Number("1.50"), "unix", "1.50"},
		{float64(1.5), "", "1.5"},
		{int64(42), "", "42"},
		{"v0042", "date", "v0042"},
		{nil, "", ""},
	}
	for _, tt := range tests {
		if got := FormatBound(tt.v, tt.format); got != tt.want {
			t.Errorf("FormatBound(%#v, %q) = %q, want %q", tt.v, tt.format, got, tt.want)
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
			if a, b := FormatBound(ws[i-1].End, f), FormatBound(ws[i].Start, f); a != b {
				t.Errorf("format %q: end %s != next start %s", f, a, b)
			}
		}
	}
}

func TestInclusiveEnd(t *testing.T) {
	end := time.Date(2026, 1, 4, 0, 0, 0, 0, time.UTC)
	for format, want := range map[string]string{
		"date": "2026-01-03", "rfc3339": "2026-01-03T23:59:59Z", "": "2026-01-03T23:59:59Z",
		"unix": "1767484799", "unix_ms": "1767484799999",
	} {
		if got := FormatBound(InclusiveEnd(end, format), format); got != want {
			t.Errorf("%q: %s, want %s", format, got, want)
		}
	}
}

// TestPlanBackfillOutcomes: a failed window holds the bookmark where it
// stood while the walk goes on; the bookmark moves once it is read.
func TestPlanBackfillOutcomes(t *testing.T) {
	chunked := func(sorted bool) *Definition {
		return incDef(func(d *Definition) { d.Incremental.ChunkDays = 1; d.Incremental.OverlapS = 0; d.IsSorted = sorted })
	}
	w := func(d int) Window { return Window{day(d), day(d + 1)} }
	ts := func(d, h int) string { return day(d).Add(time.Duration(h) * time.Hour).Format(time.RFC3339) }
	type step struct {
		op     string // "key", "done", "fail", "reread"
		win    Window
		key    string
		bm     any  // the bookmark Checkpoint returns after the step
		moved  bool // and whether it moved
		failed []Window
		high   any // WalkHigh after the step, when set
	}
	tests := map[string]struct {
		def     *Definition
		b       Bounds
		retries []Window
		steps   []step
		pos     time.Time // Position at the end
	}{
		"a failed window holds the bookmark where it stood; its retry frees it": {
			b: Bounds{StartDate: day(1), Now: day(5)},
			steps: []step{
				{op: "key", key: ts(1, 10), bm: nil},
				{op: "done", win: w(1), bm: ts(1, 10), moved: true},
				{op: "key", key: ts(2, 3), bm: ts(1, 10)},
				{op: "fail", win: w(2), bm: ts(1, 10), failed: []Window{w(2)}},
				{op: "key", key: ts(3, 5), bm: ts(1, 10), failed: []Window{w(2)}},
				{op: "done", win: w(3), bm: ts(1, 10), failed: []Window{w(2)}, high: ts(3, 5)},
				{op: "done", win: w(4), bm: ts(1, 10), failed: []Window{w(2)}},
				{op: "key", key: ts(2, 4), bm: ts(1, 10), failed: []Window{w(2)}},
				{op: "done", win: w(2), bm: ts(3, 5), moved: true},
			},
			pos: day(5),
		},
		"the smallest bookmark a failed window failed at holds": {
			b: Bounds{StartDate: day(1), Now: day(5)},
			steps: []step{
				{op: "fail", win: w(1), bm: nil, failed: []Window{w(1)}},
				{op: "key", key: ts(2, 1), bm: nil, failed: []Window{w(1)}},
				{op: "done", win: w(2), bm: nil, failed: []Window{w(1)}},
				{op: "fail", win: w(3), bm: nil, failed: []Window{w(1), w(3)}},
				{op: "fail", win: w(1), bm: nil, failed: []Window{w(1), w(3)}}, // a retry that fails again
				{op: "done", win: w(1), bm: ts(2, 1), moved: true, failed: []Window{w(3)}},
			},
			pos: day(4),
		},
		"failed windows from state are read first; once read, the bookmark takes up the largest key of the last run": {
			b: Bounds{StartDate: day(1), Now: day(5), Bookmark: ts(2, 0), WindowStart: day(5), WalkHigh: ts(4, 18),
				Failed: []FailedWindow{{Window: w(3), Error: "503"}, {Window: w(2), Error: "timeout"}}},
			retries: []Window{w(2), w(3)},
			steps: []step{
				{op: "key", key: ts(2, 7), bm: ts(2, 0), failed: []Window{w(2), w(3)}},
				{op: "done", win: w(2), bm: ts(2, 0), failed: []Window{w(3)}, high: ts(4, 18)},
				{op: "done", win: w(3), bm: ts(4, 18), moved: true},
			},
			pos: day(5),
		},
		"with a state's failed window read, the walk goes on from its position": {
			b: Bounds{StartDate: day(1), Now: day(5), Bookmark: ts(2, 0), WindowStart: day(3),
				Failed: []FailedWindow{{Window: w(2), Error: "503"}}},
			retries: []Window{w(2)},
			steps: []step{
				{op: "key", key: ts(2, 5), bm: ts(2, 0), failed: []Window{w(2)}},
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
				{op: "fail", win: w(2), bm: ts(1, 1), failed: []Window{w(2)}},
				{op: "key", key: ts(3, 1), bm: ts(1, 1), failed: []Window{w(2)}},
				{op: "done", win: w(3), bm: ts(1, 1), failed: []Window{w(2)}},
				{op: "reread", bm: ts(1, 1), failed: []Window{w(2)}},
				{op: "key", key: ts(2, 5), bm: ts(1, 1), failed: []Window{w(2)}},
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
			if d := cmp.Diff(tt.retries, p.Retries()); d != "" {
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
				var failed []Window
				for _, f := range p.Failed() {
					failed = append(failed, f.Window)
				}
				if d := cmp.Diff(s.failed, failed); d != "" {
					t.Errorf("step %d (%s): Failed (-want +got):\n%s", i, s.op, d)
				}
				if s.high != nil && p.WalkHigh() != s.high {
					t.Errorf("step %d (%s): WalkHigh() = %v, want %v", i, s.op, p.WalkHigh(), s.high)
				}
			}
			if got := p.Position(); !got.Equal(tt.pos) {
				t.Errorf("Position() = %v, want %v", got, tt.pos)
			}
		})
	}
}
