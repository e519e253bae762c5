package tap

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/tap/output"
	"github.com/tap-dev/tap/tap/state"
)

// gate is a recorder that closes seen at its first STATE.
type gate struct {
	recorder
	seen   chan struct{}
	closed bool
}

func (g *gate) State(stream string, st output.State, v int64) error {
	if !g.closed {
		g.closed = true
		close(g.seen)
	}
	return g.recorder.State(stream, st, v)
}

// A body read as it arrives goes through the page walk in pages of
// decoder.PageRecords: a sorted stream checkpoints after each page while
// the rest of the body is still unsent (the server holds it back until
// the first STATE is out), every record is written once, in order, and
// the body counts as one page; a body of any format, gzip among them.
func TestStreamedBodyInPages(t *testing.T) {
	const total = 2500
	row := func(format string, i int) string {
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute).Format(time.RFC3339)
		switch format {
		case "csv":
			return fmt.Sprintf("%d,%s\n", i, at)
		case "xml":
			return fmt.Sprintf("<r><id>%d</id><updated_at>%s</updated_at></r>", i, at)
		}
		return fmt.Sprintf(`{"id":%d,"updated_at":%q}`+"\n", i, at)
	}
	for _, format := range []string{"jsonl", "csv", "xml"} {
		t.Run(format, func(t *testing.T) {
			seen := make(chan struct{})
			held := make(chan bool, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch format {
				case "csv":
					fmt.Fprint(w, "id,updated_at\n")
				case "xml":
					fmt.Fprint(w, "<rs>")
				}
				for i := 1; i <= total; i++ {
					fmt.Fprint(w, row(format, i))
					if i == 1200 {
						// The first page is written before the rest is sent.
						w.(http.Flusher).Flush()
						select {
						case <-seen:
							held <- true
						case <-r.Context().Done():
							return
						case <-time.After(20 * time.Second): // a bound, not a measure
							held <- false
						}
					}
				}
				if format == "xml" {
					fmt.Fprint(w, "</rs>")
				}
			}))
			defer srv.Close()
			stream := map[string]any{
				"name": "export", "path": "/export", "format": format, "primary_key": []string{"id"},
				"replication_key": "updated_at", "is_sorted": true, "pagination": map[string]any{"type": "none"},
				"schema": map[string]any{"type": "object", "properties": map[string]any{
					"id": map[string]any{"type": "integer"}, "updated_at": map[string]any{"type": "string", "format": "date-time"}}},
			}
			if format == "xml" {
				stream["records_path"] = "rs.r"
			}
			path := writeConfig(t, t.TempDir(), "config.json", map[string]any{
				"base_url": srv.URL, "start_date": "2025-01-01T00:00:00Z",
				"rate_limit": map[string]any{"requests_per_second": 0}, "retry": map[string]any{"max_attempts": 1},
				"request_timeout_s": 120, "streams": []any{stream},
			})
			cfg, err := settings.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			g := &gate{seen: seen}
			e := testEngine(t, cfg, run{policy: policy{mode: ModeSync}, state: state.New(), out: g, log: output.NewStderrLogger(&logs, slog.LevelInfo, nil)})
			if err := e.sync(context.Background(), time.Hour); err != nil {
				t.Fatalf("sync: %v\n%s", err, logs.String())
			}
			if !<-held {
				t.Error("no STATE before the body's rest was sent: the body was not read in pages")
			}
			var ids []string
			var marks []any
			for _, m := range g.msgs {
				switch m.Type {
				case "RECORD":
					ids = append(ids, fmt.Sprint(m.Record["id"]))
				case "STATE":
					if b := m.bookmark("export"); b != nil && (len(marks) == 0 || marks[len(marks)-1] != b) {
						marks = append(marks, b)
					}
				}
			}
			if len(ids) != total || ids[0] != "1" || ids[total-1] != fmt.Sprint(total) {
				t.Fatalf("%d records (%v … ), want %d in order", len(ids), ids[:min(3, len(ids))], total)
			}
			want := []any{at(1000), at(2000), at(total)}
			if fmt.Sprint(marks) != fmt.Sprint(want) {
				t.Errorf("bookmarks %v, want one per page %v", marks, want)
			}
			if got := e.nodes[0].counts.Pages.Load(); got != 1 {
				t.Errorf("pages = %d, want 1 (one body)", got)
			}
			if !strings.Contains(logs.String(), "records=2500 pages=1") {
				t.Errorf("log lacks the stream's count:\n%s", logs.String())
			}
		})
	}
}

func at(i int) string {
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute).Format(time.RFC3339)
}

// A walk that stops inside a body read as it arrives (a test run's
// record limit) lets the body go: the rest is never read, and the
// server sees the connection end.
func TestStreamedBodyStopsInside(t *testing.T) {
	const total = 1 << 20
	done := make(chan int, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent := 0
		defer func() { done <- sent }()
		for sent < total {
			if _, err := fmt.Fprintf(w, `{"id":%d,"pad":"%s"}`+"\n", sent+1, strings.Repeat("x", 200)); err != nil {
				return
			}
			sent++
		}
	}))
	defer srv.Close()
	path := writeConfig(t, t.TempDir(), "config.json", map[string]any{
		"base_url": srv.URL, "rate_limit": map[string]any{"requests_per_second": 0}, "retry": map[string]any{"max_attempts": 1},
		"streams": []any{map[string]any{
			"name": "export", "path": "/export", "format": "jsonl", "primary_key": []string{"id"}, "pagination": map[string]any{"type": "none"},
			"schema": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}, "pad": map[string]any{"type": "string"}}},
		}},
	})
	cfg, err := settings.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	rec := &recorder{}
	e := testEngine(t, cfg, run{policy: policy{mode: ModeTest, recordLimit: 5}, state: state.New(), out: rec, log: output.NewStderrLogger(&logs, slog.LevelInfo, nil)})
	if err := e.sync(context.Background(), time.Hour); err != nil {
		t.Fatalf("sync: %v\n%s", err, logs.String())
	}
	records := 0
	for _, m := range rec.msgs {
		if m.Type == "RECORD" {
			records++
		}
	}
	if records != 5 {
		t.Errorf("%d records, want the limit's 5", records)
	}
	select {
	case sent := <-done:
		if sent >= total {
			t.Errorf("the server sent the whole body (%d rows): the walk did not let it go", sent)
		}
	case <-time.After(time.Minute): // a bound, not a measure
		t.Error("the server is still sending: the walk did not let the body go")
	}
}
