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
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/client"
)

// table is a summary table read back: the header and, per stream, its
// cells by column name.
type table struct {
	header []string
	rows   map[string]map[string]string
}

// readTable parses lines of summaryTable and checks their alignment:
// the stream column starts every line, and every other column ends where
// its header ends.
func readTable(t *testing.T, lines []string) table {
	t.Helper()
	if len(lines) == 0 {
		t.Fatal("no table")
	}
	header := strings.Fields(lines[0])
	ends := columnEnds(lines[0])
	tb := table{header: header, rows: map[string]map[string]string{}}
	for _, line := range lines[1:] {
		cells := strings.Fields(line)
		if len(cells) != len(header) {
			t.Fatalf("row %q has %d cells, the header %d", line, len(cells), len(header))
		}
		if got := columnEnds(line); !cmp.Equal(got[1:], ends[1:]) || strings.HasPrefix(line, " ") {
			t.Errorf("row %q is not aligned with the header %q", line, lines[0])
		}
		row := map[string]string{}
		for i, c := range cells {
			row[header[i]] = c
		}
		tb.rows[cells[0]] = row
	}
	return tb
}

// columnEnds is the offset past the end of each word of line.
func columnEnds(line string) []int {
	var ends []int
	for i := 0; i < len(line); i++ {
		if line[i] != ' ' && (i+1 == len(line) || line[i+1] == ' ') {
			ends = append(ends, i+1)
		}
	}
	return ends
}

func TestSummaryTable(t *testing.T) {
	rows := []streamRow{
		{stream: "customers", records: 500, pages: 5, requests: 6, byClass: [6]int64{2: 5, 5: 1}, retries: 1,
			waits: client.Waits{WaitBucket: 1250 * time.Millisecond, WaitBackoff: 300 * time.Millisecond}},
		{stream: "orders", records: 97, pages: 1, requests: 1, byClass: [6]int64{2: 1}, deadLetters: 3, drift: 2},
		{stream: "order_items", records: 12345, pages: 100, requests: 101, byClass: [6]int64{0: 1, 2: 100},
			retries: 1, waits: client.Waits{WaitSlot: 2 * time.Second, WaitRetryAfter: 4 * time.Second, WaitBreaker: time.Second}},
	}
	tb := readTable(t, strings.Split(summaryTable(rows), "\n"))
	want := []string{"stream", "records", "pages", "requests", "no_response", "2xx", "5xx", "retries",
		"slot_s", "bucket_s", "retry_after_s", "backoff_s", "breaker_s", "dead_letters", "drift"}
	if diff := cmp.Diff(want, tb.header); diff != "" {
		t.Errorf("header (-want +got), the classes seen only:\n%s", diff)
	}
	cell := func(stream string, values ...string) map[string]string {
		m := map[string]string{}
		for i, v := range values {
			m[want[i]] = v
		}
		m["stream"] = stream
		return m
	}
	wantRows := map[string]map[string]string{
		"customers":   cell("customers", "", "500", "5", "6", "0", "5", "1", "1", "0.0", "1.2", "0.0", "0.3", "0.0", "0", "0"),
		"orders":      cell("orders", "", "97", "1", "1", "0", "1", "0", "0", "0.0", "0.0", "0.0", "0.0", "0.0", "3", "2"),
		"order_items": cell("order_items", "", "12345", "100", "101", "1", "100", "0", "1", "2.0", "0.0", "4.0", "0.0", "1.0", "0", "0"),
		"total":       cell("total", "", "12942", "106", "108", "1", "106", "1", "2", "2.0", "1.2", "4.0", "0.3", "1.0", "3", "2"),
	}
	if diff := cmp.Diff(wantRows, tb.rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}

	// One stream: no total row, and no request columns for classes never seen.
	one := strings.Split(summaryTable(rows[1:2]), "\n")
	if len(one) != 2 || strings.Contains(one[0], "5xx") || strings.Contains(one[0], "no_response") {
		t.Errorf("one stream's table:\n%s", strings.Join(one, "\n"))
	}
}

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
	if err := singerSync(context.Background(), Files{Config: path}, &stdout, &stderr); err != nil {
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
	tb := readTable(t, rows)
	pick := func(stream string, cols ...string) []string {
		var out []string
		for _, c := range cols {
			out = append(out, tb.rows[stream][c])
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
	tb := readTable(t, strings.Split(tables[0], "\n"))
	for stream, records := range map[string]string{"tickets": "0", "orders": "2", "items": "2", "total": "4"} {
		if got := tb.rows[stream]["records"]; got != records {
			t.Errorf("stream %s: records %q, want %s", stream, got, records)
		}
	}
}
