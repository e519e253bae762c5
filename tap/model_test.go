package tap

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/tap/state"
)

// A stream's definition compiles once per run: a child walked for each of
// 1,000 parent records checks its definition, merges its status rules and
// builds its fetcher (decoder, splice reader) once, as its parent does.
func TestStreamCompiledOncePerRun(t *testing.T) {
	const parents = 1000
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/p" {
			var b strings.Builder
			b.WriteString(`{"data":[`)
			for i := 1; i <= parents; i++ {
				if i > 1 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"id":%d}`, i)
			}
			b.WriteString(`]}`)
			io.WriteString(w, b.String())
			return
		}
		io.WriteString(w, `{"data":[{"id":"`+strings.TrimPrefix(r.URL.Path, "/p/")+`"}]}`)
	}))
	defer srv.Close()
	schema := func(typ string) map[string]any {
		return map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": typ}}}
	}
	path := writeConfig(t, t.TempDir(), "config.json", map[string]any{
		"base_url": srv.URL, "dead_letter_path": t.TempDir() + "/dead.jsonl",
		"on_status": map[string]any{"409": "retry"}, "rate_limit": map[string]any{"requests_per_second": 0},
		"streams": []any{
			map[string]any{"name": "p", "path": "/p", "records_path": "data", "primary_key": []string{"id"},
				"pagination": map[string]any{"type": "none"}, "schema": schema("integer")},
			map[string]any{"name": "c", "path": "/p/{id}", "records_path": "data", "primary_key": []string{"id"},
				"parent": map[string]any{"stream": "p", "key": "id"}, "ignore_statuses": []int{404},
				"pagination": map[string]any{"type": "none"}, "schema": schema("string")},
		},
	})
	cfg, err := settings.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	e := testEngine(t, cfg, run{state: state.New(), out: rec, log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	// A stream's fetcher is built with its decoder and splice reader, from
	// its model, which holds its paginator and status rules: one fetcher
	// and one model per stream say none of them was built again.
	fetchers, models := map[string]int{}, map[string]map[*model]bool{}
	fetch := e.fetch
	e.fetch = func(n *node) streams.Fetch {
		fetchers[n.def.Name]++
		if models[n.def.Name] == nil {
			models[n.def.Name] = map[*model]bool{}
		}
		models[n.def.Name][n.model] = true
		return fetch(n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a bound, not a wait
	defer cancel()
	if err := e.sync(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := len(streamIDs(rec, "c")); got != parents {
		t.Fatalf("child records: %d, want %d", got, parents)
	}
	if got := requests.Load(); got != parents+1 {
		t.Fatalf("requests: %d, want %d", got, parents+1)
	}
	for _, stream := range []string{"p", "c"} {
		if fetchers[stream] != 1 || len(models[stream]) != 1 {
			t.Errorf("stream %s: %d fetchers from %d models for %d child walks, want one of each", stream, fetchers[stream], len(models[stream]), parents)
		}
	}
	for _, n := range e.nodes {
		if m := n.model; m.pager == nil || !m.statusDone {
			t.Errorf("stream %s: paginator and status rules not kept in its model", n.def.Name)
		}
	}
}
