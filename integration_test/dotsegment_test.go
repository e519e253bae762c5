package integration_test

import (
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestDotSegmentPathValues: a path value of ".." (from path_params, here;
// a parent key or a reconcile key go through the same fill) is sent as
// %2E%2E, so a server that normalises paths cannot be asked for
// /raw/../secret, which is /secret.
func TestDotSegmentPathValues(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var uris []string
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		uris = append(uris, r.RequestURI)
		mu.Unlock()
		w.Write([]byte(`[{"id":1}]`))
	}))
	cfg := tapConfig(base, []any{map[string]any{"name": "raw", "path": "/raw/{dir}/secret", "records_path": "", "primary_key": []any{"id"},
		"schema": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}}}}})
	cfg["path_params"] = map[string]any{"dir": ".."}
	d := newTapDir(t, cfg)
	r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(uris) != 1 || uris[0] != "/raw/%2E%2E/secret" {
		t.Errorf("requests %q, want [/raw/%%2E%%2E/secret]", uris)
	}
}
