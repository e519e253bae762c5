package integration_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// pagedThings serves 60 things in pages of 50, the next page's token at
// paging.next_cursor; with ignoreCursor it answers the first page to every
// request, as an API that does not know the cursor parameter does.
func pagedThings(ignoreCursor bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		from, next := 0, `"p2"`
		if r.URL.Query().Get("after") == "p2" && !ignoreCursor {
			from, next = 50, `null`
		}
		var recs []string
		for i := from; i < min(from+50, 60); i++ {
			recs = append(recs, fmt.Sprintf(`{"id":%d}`, i+1))
		}
		fmt.Fprintf(w, `{"data":[%s],"paging":{"next_cursor":%s}}`, strings.Join(recs, ","), next)
	})
}

func thingsStream(nextCursorPath string) map[string]any {
	return map[string]any{"name": "things", "path": "/things", "records_path": "data", "primary_key": []any{"id"},
		"pagination": map[string]any{"type": "cursor", "cursor_param": "after", "next_cursor_path": nextCursorPath, "page_size": 50, "page_size_param": "limit"},
		"schema":     map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}}}}
}

// TestFullPageWithoutTokenWarns: next_cursor_path "next_cursor" where the
// API's is paging.next_cursor ends the walk after a full first page. The
// run says so in a WARN naming the stream, the path and the keys the
// body has, and --test fails on it; with the right path all 60 records
// come and nothing is said.
func TestFullPageWithoutTokenWarns(t *testing.T) {
	t.Parallel()
	base := serve(t, pagedThings(false))
	d := newTapDir(t, tapConfig(base, []any{thingsStream("next_cursor")}))

	r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if n := countRecords(r.stdout); n != 50 {
		t.Errorf("records = %d, want the first page's 50", n)
	}
	want := `WARN stream "things": the walk stops: the page has no next_cursor_path "next_cursor", but the page is full (50 records, page_size 50): is the path right?; its keys: data, paging`
	if !strings.Contains(string(r.stderr), want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}

	r = runTap(t, d.dir, time.Minute, nil, "--config", "config.json", "--test")
	if r.code != 1 || !strings.Contains(string(r.stderr), `the page has no next_cursor_path "next_cursor"`) {
		t.Errorf("--test: exit %d, want 1 naming the path; stderr:\n%s", r.code, r.stderr)
	}

	d.writeConfig(tapConfig(base, []any{thingsStream("paging.next_cursor")}))
	r = runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
	if r.code != 0 || countRecords(r.stdout) != 60 || bytes.Contains(r.stderr, []byte("the walk stops")) {
		t.Errorf("the right path: exit %d, %d records, want 0 and 60 and no warning; stderr:\n%s", r.code, countRecords(r.stdout), r.stderr)
	}
}

// TestIgnoredCursorWritesNoPageTwice: an API that ignores the cursor
// answers page 1 again; the loop guard stops the walk (exit 1) without
// writing page 1's records a second time.
func TestIgnoredCursorWritesNoPageTwice(t *testing.T) {
	t.Parallel()
	base := serve(t, pagedThings(true))
	d := newTapDir(t, tapConfig(base, []any{thingsStream("paging.next_cursor")}))
	r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
	if r.code != 1 || !strings.Contains(string(r.stderr), "repeats the request just made") {
		t.Fatalf("exit %d, want 1 naming the loop; stderr:\n%s", r.code, r.stderr)
	}
	if n := countRecords(r.stdout); n != 50 {
		t.Errorf("records = %d, want page 1's 50 once", n)
	}
}
