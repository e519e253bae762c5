package replay

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
	lines, read, err := readLetters(path)
	if err != nil || read != int64(len(body)) {
		t.Fatal(read, err)
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
	_, _, err = readLetters(filepath.Join(t.TempDir(), "missing.jsonl"))
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
		{name: "resume on base_url's origin", letter: `{"resume": {"request": {"method": "GET", "url": "http://127.0.0.1:8080/s?page=7"}}}`,
			check: func(t *testing.T, w walkFields) {
				if w.ResumeURL != "http://127.0.0.1:8080/s?page=7" {
					t.Errorf("walk %+v, want to resume at page 7", w)
				}
			}},
		{name: "resume on another host", letter: `{"resume": {"request": {"method": "GET", "url": "http://127.0.0.2:8080/s?page=7"}}}`,
			wantErr: "resume.request.url: points to another host (127.0.0.2:8080) than base_url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := codec.Decode([]byte(tt.letter))
			if err != nil {
				t.Fatal(err)
			}
			w, err := walkOf("s", v.(map[string]any), &url.URL{Scheme: "http", Host: "127.0.0.1:8080"})
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
	if err := rewriteLetters(path, int64(len("old 1\nold 2\nold 3\n")), [][]byte{[]byte("old 2")}, []byte("new 1\n")); err != nil {
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

// A run that appends letters while a replay works on the file loses none:
// those appended before the rewrite join the new file, and a run that
// had the file open goes on writing to the new one, not to the file the
// rename replaced; so do the lines of a run appending at the same time.
func TestRewriteLettersKeepsConcurrentAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dead.jsonl")
	run := records.NewDeadLetters(path, records.Run{ID: "other"}, nil)
	defer run.Close()
	letter := func(i int) {
		t.Helper()
		if err := run.Request(records.RequestLetter{Stream: "s", Method: "GET", URL: fmt.Sprintf("/s?n=%d", i)}); err != nil {
			t.Error(err)
		}
	}
	for i := range 3 {
		letter(i)
	}
	lines, read, err := readLetters(path)
	if err != nil || len(lines) != 3 {
		t.Fatalf("%d lines, %v", len(lines), err)
	}
	letter(3) // after the replay read the file
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	appended := 0
	go func() { // a second run appending while the file is replaced
		defer wg.Done()
		other := records.NewDeadLetters(path, records.Run{ID: "third"}, nil)
		defer other.Close()
		for n := 0; n < 1000; n++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := other.Request(records.RequestLetter{Stream: "t", Method: "GET", URL: fmt.Sprintf("/t?n=%d", n)}); err != nil {
				t.Error(err)
				return
			}
			appended++
		}
	}()
	if err := rewriteLetters(path, read, [][]byte{lines[1].raw}, []byte("{\"new\":1}\n")); err != nil {
		t.Fatal(err)
	}
	letter(4) // the first run, its file open since before the rename
	close(stop)
	wg.Wait()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ns, ts []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		switch {
		case strings.Contains(l, `/s?n=`):
			ns = append(ns, l[strings.Index(l, "/s?n=")+5:][:1])
		case strings.Contains(l, `/t?n=`):
			ts = append(ts, l)
		case l != `{"new":1}`:
			t.Errorf("line %q", l)
		}
	}
	if got := strings.Join(ns, ","); got != "1,3,4" {
		t.Errorf("the first run's letters in the file: %s, want 1 (kept), 3 (appended after the read) and 4 (after the rename)", got)
	}
	if len(ts) != appended {
		t.Errorf("%d of the %d letters the second run appended are in the file", len(ts), appended)
	}
}
