package tap

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/internal/taptest"
	"github.com/tap-dev/tap/tap/inputs"
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
	cfg := fmt.Sprintf(`{"base_url": %q, "rate_limit": {"requests_per_second": 0},
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
