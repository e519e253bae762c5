package replay

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/records"
)

// A dead letters file is read line by line; a line replay cannot read is
// kept as it is, never dropped.
func TestReadLetters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dead.jsonl")
	body := `{"kind": "record", "stream": "s", "record": {"id": 1}}

not json
{"kind": "request", "stream": "s"}
["an", "array"]
`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	lines, err := readLetters(path)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Raw, Kind string
		Object    bool
	}
	var gs []got
	for _, l := range lines {
		gs = append(gs, got{string(l.raw), l.kind, l.m != nil})
	}
	want := []got{
		{`{"kind": "record", "stream": "s", "record": {"id": 1}}`, records.KindRecord, true},
		{"not json", "", false},
		{`{"kind": "request", "stream": "s"}`, records.KindRequest, true},
		{`["an", "array"]`, "", false},
	}
	if d := cmp.Diff(want, gs); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	_, err = readLetters(filepath.Join(t.TempDir(), "missing.jsonl"))
	if err == nil || !strings.Contains(err.Error(), "cannot read the dead letters") {
		t.Errorf("missing file: error %v", err)
	}
}

// Letters several runs wrote for one request name one walk; a record
// letter names none.
func TestWalkKey(t *testing.T) {
	letter := func(s string) letterLine {
		v, err := codec.Decode([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		m := v.(map[string]any)
		k, _ := m["kind"].(string)
		return letterLine{raw: []byte(s), kind: k, m: m}
	}
	a := letter(`{"kind": "request", "stream": "s", "window": {"start": "2026-01-01T00:00:00Z", "end": "2026-01-02T00:00:00Z"}, "time": "1", "error": "503"}`)
	again := letter(`{"kind": "request", "stream": "s", "window": {"start": "2026-01-01T00:00:00Z", "end": "2026-01-02T00:00:00Z"}, "time": "2", "error": "502"}`)
	other := letter(`{"kind": "request", "stream": "s", "window": {"start": "2026-01-02T00:00:00Z", "end": "2026-01-03T00:00:00Z"}}`)
	rec := letter(`{"kind": "record", "stream": "s", "record": {"id": 1}}`)
	if a.walkKey() == "" || a.walkKey() != again.walkKey() {
		t.Errorf("one request failed twice: keys %q and %q, want the same", a.walkKey(), again.walkKey())
	}
	if a.walkKey() == other.walkKey() {
		t.Errorf("two windows share the key %q", a.walkKey())
	}
	if rec.walkKey() != "" {
		t.Errorf("record letter key %q, want none", rec.walkKey())
	}
}

func TestWalkOf(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		name, letter string
		check        func(t *testing.T, w walkFields)
		wantErr      string
	}{
		{
			name:   "window, bookmark and context",
			letter: `{"context": {"order_id": 3}, "bookmark": "2026-01-01T00:00:00Z", "window": {"start": "2026-01-02T00:00:00Z", "end": "2026-01-03T00:00:00Z"}}`,
			check: func(t *testing.T, w walkFields) {
				want := walkFields{Stream: "s", Bookmark: "2026-01-01T00:00:00Z", Context: map[string]any{"order_id": json.Number("3")},
					Start: day(2), End: day(3)}
				if d := cmp.Diff(want, w); d != "" {
					t.Errorf("(-want +got):\n%s", d)
				}
			},
		},
		{
			name:   "the page that failed",
			letter: `{"resume": {"request": {"method": "GET", "url": "/s", "query": {"page": ["7"]}}, "pages": 4}}`,
			check: func(t *testing.T, w walkFields) {
				if w.ResumeURL != "/s" || w.ResumeQuery != "page=7" || w.Start != (time.Time{}) {
					t.Errorf("walk %+v, want to resume at /s?page=7 with no window", w)
				}
			},
		},
		{name: "window not a time", letter: `{"window": {"start": "monday", "end": "2026-01-03T00:00:00Z"}}`, wantErr: "window: "},
		{name: "resume without a request", letter: `{"resume": {"pages": 4}}`, wantErr: "resume."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := codec.Decode([]byte(tt.letter))
			if err != nil {
				t.Fatal(err)
			}
			w, err := walkOf("s", v.(map[string]any))
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one starting %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			f := walkFields{Stream: w.Stream, Bookmark: w.Bookmark, Context: w.Context}
			if w.Window != nil {
				f.Start, f.End = w.Window.Start, w.Window.End
			}
			if w.Resume != nil {
				f.ResumeURL, f.ResumeQuery = w.Resume.Next.URL, w.Resume.Next.Query.Encode()
			}
			tt.check(t, f)
		})
	}
}

// walkFields is a tap.Walk in comparable fields.
type walkFields struct {
	Stream, ResumeURL, ResumeQuery string
	Bookmark                       any
	Context                        map[string]any
	Start, End                     time.Time
}

// The file is replaced whole: the kept lines, then the new letters.
func TestRewriteLetters(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dead.jsonl")
	if err := os.WriteFile(path, []byte("old 1\nold 2\nold 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rewriteLetters(path, [][]byte{[]byte("old 2")}, []byte("new 1\n")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "old 2\nnew 1\n" {
		t.Errorf("file %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the folder holds %d files, want the letters file only", len(entries))
	}
}
