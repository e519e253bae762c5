package command

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tap-dev/tap/internal/taptest"
	"github.com/tap-dev/tap/tap/inputs"
)

// TestCheckStreamedBodyStatusRules: check reads a csv stream's first
// record through the same request adapter as a sync, so the stream's
// on_status rules apply to it as they do to a JSON stream's first page.
func TestCheckStreamedBodyStatusRules(t *testing.T) {
	for _, c := range []struct {
		name     string
		onStatus map[string]any
		ok       bool
	}{
		{"404 ignored by on_status", map[string]any{"404": "ignore"}, true},
		{"404 not listed", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "gone", http.StatusNotFound)
			}))
			defer srv.Close()
			stream := map[string]any{"name": "export", "path": "/export", "format": "csv", "pagination": map[string]any{"type": "none"}, "schema": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}}}
			if c.onStatus != nil {
				stream["on_status"] = c.onStatus
			}
			p := taptest.WriteConfig(t, t.TempDir(), "config.json", map[string]any{
				"base_url": srv.URL, "retry": map[string]any{"max_attempts": 1},
				"streams": []any{stream},
			})
			cfg, err := inputs.Files{Config: p}.LoadConfig()
			if err != nil {
				t.Fatal(err)
			}
			err = checkConnection(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
			if (err == nil) != c.ok {
				t.Fatalf("check: %v, want ok=%v", err, c.ok)
			}
		})
	}
}
