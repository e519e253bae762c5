package tap

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/tap/output"
)

// TestFetchBodiesRetryCannotFix: a whole 200 body of the wrong kind fails
// at once, naming its content type, the stream and the path; a body cut
// short is retried like a 503.
func TestFetchBodiesRetryCannotFix(t *testing.T) {
	cutAfter := func(w http.ResponseWriter, header, partial string) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + header + "\r\n" + partial)
		buf.Flush()
		conn.Close()
	}
	tests := map[string]struct {
		serve    func(w http.ResponseWriter)
		requests int64
		want     []string
	}{
		"HTML with 200": {func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte("<!doctype html><html><body>maintenance</body></html>"))
		}, 1, []string{`stream "things"`, "/things", "not JSON", `Content-Type "text/html; charset=utf-8"`}},
		"JSON nested too deep": {func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(strings.Repeat("[", 10001) + strings.Repeat("]", 10001)))
		}, 1, []string{`stream "things"`, "nested deeper", `Content-Type "application/json"`}},
		"trailing garbage": {func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"data":[]} <!-- debug -->`))
		}, 1, []string{"not JSON"}},
		"cut short, no Content-Length": {func(w http.ResponseWriter) {
			cutAfter(w, "Connection: close\r\n", `{"data":[{"id":1,"updated_`)
		}, 3, []string{"gave up after 3 attempts", "cut short"}},
		"cut short of its Content-Length": {func(w http.ResponseWriter) {
			cutAfter(w, "Content-Length: 100\r\n", `{"data":[{"id":1}`)
		}, 3, []string{"gave up after 3 attempts", "cut short"}},
		"empty body, no Content-Length": {func(w http.ResponseWriter) {
			cutAfter(w, "Connection: close\r\n", "")
		}, 3, []string{"gave up after 3 attempts", "cut short"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var requests atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				tt.serve(w)
			}))
			defer srv.Close()
			path := writeConfig(t, t.TempDir(), "config.json", map[string]any{
				"base_url":   srv.URL,
				"rate_limit": map[string]any{"requests_per_second": 0},
				"retry":      map[string]any{"max_attempts": 3, "base_delay_ms": 1, "max_delay_ms": 1},
				"streams": []any{map[string]any{
					"name": "things", "path": "/things", "records_path": "data", "primary_key": []string{"id"},
					"schema": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}}},
				}},
			})
			cfg, err := settings.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			var out, logs bytes.Buffer
			err = Sync(context.Background(), Options{Config: cfg, Writer: output.NewSinger(&out), Log: output.NewStderrLogger(&logs, slog.LevelInfo, nil)})
			if err == nil {
				t.Fatalf("sync succeeded; stdout:\n%s", out.String())
			}
			if got := requests.Load(); got != tt.requests {
				t.Errorf("requests = %d, want %d (error: %v)", got, tt.requests, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
		})
	}
}

// An empty 2xx by its own headers (204, Content-Length: 0) is an empty
// page, whatever the body format: one request, no record, no error
// (issue 29: it was "cut short", retried and failed the run).
func TestFetchNoContentIsAnEmptyPage(t *testing.T) {
	for _, status := range []int{http.StatusNoContent, http.StatusOK} {
		for _, format := range []string{"json", "jsonl", "csv"} {
			t.Run(fmt.Sprintf("%d %s", status, format), func(t *testing.T) {
				var requests atomic.Int64
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					requests.Add(1)
					w.Header().Set("Content-Length", "0")
					w.WriteHeader(status)
				}))
				defer srv.Close()
				stream := map[string]any{
					"name": "things", "path": "/things", "records_path": "data", "primary_key": []string{"id"},
					"schema": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}}},
				}
				if format != "json" {
					stream["format"] = format
					delete(stream, "records_path")
				}
				path := writeConfig(t, t.TempDir(), "config.json", map[string]any{
					"base_url":   srv.URL,
					"rate_limit": map[string]any{"requests_per_second": 0},
					"retry":      map[string]any{"max_attempts": 3, "base_delay_ms": 1, "max_delay_ms": 1},
					"streams":    []any{stream},
				})
				cfg, err := settings.Load(path)
				if err != nil {
					t.Fatal(err)
				}
				var out, logs bytes.Buffer
				err = Sync(context.Background(), Options{Config: cfg, Writer: output.NewSinger(&out), Log: output.NewStderrLogger(&logs, slog.LevelInfo, nil)})
				if err != nil {
					t.Fatalf("sync: %v\n%s", err, logs.String())
				}
				if got := requests.Load(); got != 1 {
					t.Errorf("requests = %d, want 1", got)
				}
				if strings.Contains(out.String(), `"RECORD"`) {
					t.Errorf("records from an empty page:\n%s", out.String())
				}
			})
		}
	}
}
