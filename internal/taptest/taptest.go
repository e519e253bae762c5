// Package taptest holds the fixtures the tests of the engine (tap), its
// writers (tap/output) and its commands (tap/command) share: the demo's
// config, a small API with the config and catalog that read it in Airbyte
// mode, and readers of what a writer wrote.
package taptest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// DemoConfig writes a config of the demo streams of sample_config.json,
// with the faults of the demo off, and returns it decoded and its path.
func DemoConfig(t testing.TB, patch func(cfg map[string]any)) (map[string]any, string) {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", "sample_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	demo := cfg["demo"].(map[string]any)
	for k, v := range map[string]any{"fail_rate": 0, "requests_per_second": 0, "latency_ms": 0, "bars_days": 30, "events": 2000} {
		demo[k] = v
	}
	cfg["rate_limit"] = map[string]any{"requests_per_second": 0, "max_in_flight": 4}
	dir := t.TempDir()
	cfg["dead_letter_path"] = filepath.Join(dir, "dead_letter.jsonl")
	if patch != nil {
		patch(cfg)
	}
	return cfg, WriteConfig(t, dir, "config.json", cfg)
}

// WriteConfig writes cfg as dir/name and returns its path.
func WriteConfig(t testing.TB, dir, name string, cfg map[string]any) string {
	t.Helper()
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// JSONLines decodes the JSON lines of out.
func JSONLines(t testing.TB, out []byte) []map[string]any {
	t.Helper()
	var msgs []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("not a JSON line: %s: %v", line, err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// ABServer is a small API: /tickets (full table, empty), /orders
// (incremental), /orders/{id}/items (child). It records every request.
type ABServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string
	status   int // answered to every request when set
}

// NewABServer starts an ABServer on loopback, closed when the test ends.
func NewABServer(t testing.TB) *ABServer {
	s := &ABServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.URL.RequestURI())
		status := s.status
		s.mu.Unlock()
		if status != 0 {
			w.WriteHeader(status)
			fmt.Fprint(w, `{"error": "invalid token"}`)
			return
		}
		if r.Header.Get("Authorization") != "Bearer tok-secret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch {
		case r.URL.Path == "/tickets":
			fmt.Fprint(w, `[]`)
		case r.URL.Path == "/orders":
			fmt.Fprint(w, `[{"id": 7, "updated_at": "2026-03-01T00:00:00Z", "amount": 1}, {"id": 8, "updated_at": "2026-03-02T00:00:00Z", "amount": 2}]`)
		case strings.HasPrefix(r.URL.Path, "/orders/"):
			id := strings.Split(r.URL.Path, "/")[2]
			fmt.Fprintf(w, `[{"id": "%s-1", "sku": "x"}]`, id)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// SetStatus makes every answer status (with an error body), or the
// normal answers again when status is 0.
func (s *ABServer) SetStatus(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = status
}

// Take returns the requests received since the last Take.
func (s *ABServer) Take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.requests
	s.requests = nil
	return r
}

// ABFiles are the paths WriteABFiles wrote; State is empty when no state
// was given.
type ABFiles struct{ Config, Catalog, State string }

// WriteABFiles writes a config for an ABServer at base and the given
// configured catalog (and state, when not empty) into a temp dir.
func WriteABFiles(t testing.TB, base string, catalog, state string) ABFiles {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`{
	  "base_url": %q,
	  "auth": {"type": "bearer", "token": "tok-secret"},
	  "rate_limit": {"requests_per_second": 0},
	  "retry": {"max_attempts": 2, "base_delay_ms": 1, "max_delay_ms": 2},
	  "streams": [
	    {"name": "tickets", "path": "/tickets", "records_path": "", "primary_key": ["id"],
	     "schema": {"type": "object", "properties": {"id": {"type": "integer"}}}},
	    {"name": "orders", "path": "/orders", "records_path": "", "primary_key": ["id"], "replication_key": "updated_at",
	     "incremental": {"param": "since"},
	     "schema": {"type": "object", "properties": {"id": {"type": "integer"}, "updated_at": {"type": "string"}, "amount": {"type": "integer"}}}},
	    {"name": "items", "path": "/orders/{id}/items", "records_path": "", "primary_key": ["id"],
	     "parent": {"stream": "orders", "key": "id", "as": "order_id"},
	     "schema": {"type": "object", "properties": {"id": {"type": "string"}, "order_id": {"type": "integer"}, "sku": {"type": "string"}}}}
	  ]}`, base)
	f := ABFiles{Config: filepath.Join(dir, "config.json"), Catalog: filepath.Join(dir, "catalog.json")}
	files := map[string]string{f.Config: cfg, f.Catalog: catalog}
	if state != "" {
		f.State = filepath.Join(dir, "state.json")
		files[f.State] = state
	}
	for p, content := range files {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// ABAllStreams is a configured catalog of every stream of an ABServer.
const ABAllStreams = `{"streams": [
  {"stream": {"name": "tickets"}, "sync_mode": "full_refresh", "destination_sync_mode": "overwrite"},
  {"stream": {"name": "orders"}, "sync_mode": "incremental", "cursor_field": ["updated_at"], "destination_sync_mode": "append_dedup"},
  {"stream": {"name": "items"}, "sync_mode": "full_refresh", "destination_sync_mode": "overwrite"}]}`

// MissingProgram ends a test that needs a program not installed here
// (err says which, and how to install it): a failure under CI=true,
// since .ci/run installs it, and a loud skip elsewhere.
func MissingProgram(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but %v: .ci/run installs it", err)
	}
	t.Skipf("SKIPPED, NOT TESTED: %v", err)
}
