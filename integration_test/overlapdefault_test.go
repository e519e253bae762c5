package integration_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestDefaultOverlap: a time replication key whose incremental block
// gives no overlap_s asks for the bookmark less 300 s, and says so at the
// stream's start; "overlap_s": 0 asks for the bookmark itself, silently.
func TestDefaultOverlap(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var since []string
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		since = append(since, r.URL.Query().Get("since"))
		mu.Unlock()
		w.Write([]byte(`{"data":[{"id":1,"updated_at":"2026-03-01T00:00:00Z"}]}`))
	}))
	for _, c := range []struct {
		name     string
		overlap  any // nil: absent
		want     string
		saysInfo bool
	}{
		{"absent", nil, "2026-02-28T23:55:00Z", true},
		{"zero", 0, "2026-03-01T00:00:00Z", false},
		{"sixty", 60, "2026-02-28T23:59:00Z", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			inc := map[string]any{"param": "since"}
			if c.overlap != nil {
				inc["overlap_s"] = c.overlap
			}
			stream := map[string]any{"name": "things", "path": "/things", "records_path": "data", "primary_key": []any{"id"},
				"replication_key": "updated_at", "incremental": inc,
				"schema": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}, "updated_at": map[string]any{"type": "string", "format": "date-time"}}}}
			d := newTapDir(t, tapConfig(base, []any{stream}))
			state := `{"bookmarks":{"things":{"replication_key":"updated_at","replication_key_value":"2026-03-01T00:00:00Z"}}}`
			if err := os.WriteFile(filepath.Join(d.dir, "state.json"), []byte(state), 0o644); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			since = nil
			mu.Unlock()
			r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json", "--state", "state.json")
			if r.code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
			}
			mu.Lock()
			got := since
			mu.Unlock()
			if len(got) != 1 || got[0] != c.want {
				t.Errorf("since = %q, want [%q]", got, c.want)
			}
			said := strings.Contains(string(r.stderr), "incremental: the default overlap applies: the filter starts 300 s before the bookmark")
			if said != c.saysInfo {
				t.Errorf("stderr says the default overlap applies: %v, want %v:\n%s", said, c.saysInfo, r.stderr)
			}
		})
	}
}
