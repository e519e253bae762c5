package tap

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/internal/taptest"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/tap/inputs"
	"github.com/tap-dev/tap/tap/output"
	"github.com/tap-dev/tap/tap/state"
)

// A small sync: the table on stderr has a row per stream with what each
// did — a retried 503, a dead letter and a drifted property — while the
// key=value run summary stays for machines.
func TestSingerSyncSummaryTable(t *testing.T) {
	var mu sync.Mutex
	failed := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a":
			fmt.Fprint(w, `[{"id": 1}, {"id": 2}]`)
		case "/b":
			mu.Lock()
			first := !failed
			failed = true
			mu.Unlock()
			if first {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			fmt.Fprint(w, `[{"id": 3}]`)
		case "/c":
			fmt.Fprint(w, `[{"id": "not a number"}, {"id": 5, "extra": true}]`)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	schema := `{"type": "object", "properties": {"id": {"type": "integer"}}}`
	cfg := fmt.Sprintf(`{"base_url": %q, "rate_limit": {"requests_per_second": 0}, "dead_letter_path": "dead_letter.jsonl",
	  "retry": {"max_attempts": 3, "base_delay_ms": 1, "max_delay_ms": 2},
	  "streams": [
	    {"name": "a", "path": "/a", "records_path": "", "primary_key": ["id"], "schema": %s},
	    {"name": "b", "path": "/b", "records_path": "", "primary_key": ["id"], "schema": %s},
	    {"name": "c", "path": "/c", "records_path": "", "primary_key": ["id"], "schema": %s}]}`, srv.URL, schema, schema, schema)
	path := filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := singerSync(context.Background(), inputs.Files{Config: path}, &stdout, &stderr); err != nil {
		t.Fatalf("sync: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	start := -1
	for i, l := range lines {
		if l == "INFO run summary by stream:" {
			start = i + 1
		}
	}
	if start < 0 || start+5 > len(lines) {
		t.Fatalf("no summary table on stderr:\n%s", stderr.String())
	}
	var rows []string
	for _, l := range lines[start : start+5] { // header, a, b, c, total
		row, ok := strings.CutPrefix(l, "INFO ")
		if !ok {
			t.Fatalf("table line %q lacks the level", l)
		}
		rows = append(rows, row)
	}
	tb := taptest.ReadTable(t, rows)
	pick := func(stream string, cols ...string) []string {
		var out []string
		for _, c := range cols {
			out = append(out, tb.Rows[stream][c])
		}
		return out
	}
	cols := []string{"records", "pages", "requests", "2xx", "5xx", "retries", "dead_letters", "drift"}
	for stream, want := range map[string][]string{
		"a":     {"2", "1", "1", "1", "0", "0", "0", "0"},
		"b":     {"1", "1", "2", "1", "1", "1", "0", "0"},
		"c":     {"1", "1", "1", "1", "0", "0", "1", "2"}, // drift: the extra property and the changed type
		"total": {"4", "3", "4", "3", "1", "1", "1", "2"},
	} {
		if diff := cmp.Diff(want, pick(stream, cols...)); diff != "" {
			t.Errorf("stream %s, columns %v (-want +got):\n%s", stream, cols, diff)
		}
	}
	if !strings.Contains(stderr.String(), "INFO run summary records=4 ") {
		t.Errorf("the key=value run summary is gone:\n%s", stderr.String())
	}
}

// In Airbyte mode the table is one LOG message, its lines joined.
func TestAirbyteSummaryTableIsOneLog(t *testing.T) {
	srv := newABServer(t)
	f := writeABFiles(t, srv.URL, abAllStreams, "")
	var out bytes.Buffer
	if err := airbyteRead(context.Background(), f, &out); err != nil {
		t.Fatalf("read: %v\n%s", err, out.String())
	}
	var tables []string
	for _, m := range abLines(t, out.Bytes()) {
		if m["type"] != "LOG" {
			continue
		}
		msg, _ := m["log"].(map[string]any)["message"].(string)
		if rest, ok := strings.CutPrefix(msg, "run summary by stream:\n"); ok {
			tables = append(tables, rest)
		}
	}
	if len(tables) != 1 {
		t.Fatalf("%d LOG messages with the table, want 1:\n%s", len(tables), out.String())
	}
	tb := taptest.ReadTable(t, strings.Split(tables[0], "\n"))
	for stream, records := range map[string]string{"tickets": "0", "orders": "2", "items": "2", "total": "4"} {
		if got := tb.Rows[stream]["records"]; got != records {
			t.Errorf("stream %s: records %q, want %s", stream, got, records)
		}
	}
}

// signal is a slog.Handler that passes records on and closes seen at
// the first whose message is msg.
type signal struct {
	slog.Handler
	msg  string
	once sync.Once
	seen chan struct{}
}

// Handle writes the record first and signals after, so whoever waits on
// seen finds the line already written.
func (s *signal) Handle(ctx context.Context, r slog.Record) error {
	err := s.Handler.Handle(ctx, r)
	if r.Message == s.msg {
		s.once.Do(func() { close(s.seen) })
	}
	return err
}

// The progress reporter reads a stream's counters while the stream runs
// (under -race, this is the test that they may): the second page is
// served only once a progress line was written, so the line comes from
// the middle of the walk, whatever the machine's load.
func TestProgressWhileStreamRuns(t *testing.T) {
	path := writeConfig(t, t.TempDir(), "config.json", map[string]any{
		"base_url": "http://127.0.0.1:9", "dead_letter_path": t.TempDir() + "/dead.jsonl",
		"streams": []any{map[string]any{
			"name": "s", "path": "/s", "records_path": "data", "primary_key": []string{"id"},
			"pagination": map[string]any{"type": "page_number", "page_param": "page", "page_size_param": "per_page", "page_size": 2},
			"schema":     map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}}},
		}},
	})
	cfg, err := settings.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	sig := &signal{Handler: output.NewStderrLogger(&logs, slog.LevelInfo, nil).Handler(), msg: "progress", seen: make(chan struct{})}
	log := slog.New(sig)
	e := testEngine(t, cfg, run{state: state.New(), out: &recorder{}, log: log})
	src := &source{rows: map[string][]map[string]any{"s": {row(1, 1), row(2, 1), row(3, 1), row(4, 1), row(5, 1)}}, pageSize: 2}
	e.fetch = func(n *node) streams.Fetch {
		fetch := src.fetch(n)
		return func(ctx context.Context, req streams.Request) (*streams.Page, error) {
			if req.Query.Get("page") == "2" {
				select {
				case <-sig.seen:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return fetch(ctx, req)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound, not a wait
	defer cancel()
	if err := e.sync(ctx, time.Millisecond); err != nil {
		t.Fatalf("sync: %v\n%s", err, logs.String())
	}
	out := logs.String()
	progress := strings.Index(out, "INFO progress stream=s records=")
	done := strings.Index(out, "INFO stream done stream=s records=5 pages=3 ")
	if progress < 0 || done < 0 || progress > done {
		t.Errorf("want a progress line for s, then its stream done line with 5 records in 3 pages:\n%s", out)
	}
}
