package tap

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/tap/output"
)

// Credentials given in the headers block are secrets: an API that echoes
// them into records, next-page URLs and error messages does not get them
// into the logs (debug included), the error, STATE or the dead letters.
func TestHeaderCredentialsDoNotLeak(t *testing.T) {
	const key, token = "k3y/with+chars=", "t0ken-abc-123"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k, auth := r.Header.Get("X-Api-Key"), strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("page") == "2" {
			w.WriteHeader(http.StatusForbidden)
			json.NewEncoder(w).Encode(map[string]any{"message": "key " + k + " may not read page 2"})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"data": []any{
				map[string]any{"id": 1, "note": "seen " + auth, "surprise": k}, // drift: an unknown field
				map[string]any{"id": k, "note": auth},                          // fails its schema: a dead letter
			},
			"next": "/things?page=2&k=" + url.QueryEscape(k),
		})
	}))
	defer srv.Close()
	dir := t.TempDir()
	dead := filepath.Join(dir, "dead.jsonl")
	path := writeConfig(t, dir, "config.json", map[string]any{
		"base_url":         srv.URL,
		"headers":          map[string]any{"X-Api-Key": key, "Authorization": "Bearer " + token, "User-Agent": "tap-test"},
		"rate_limit":       map[string]any{"requests_per_second": 0},
		"retry":            map[string]any{"max_attempts": 1},
		"dead_letter_path": dead,
		"log_level":        "debug",
		"streams": []any{map[string]any{
			"name": "things", "path": "/things", "records_path": "data", "primary_key": []string{"id"},
			"pagination": map[string]any{"type": "next_url", "next_url_path": "next"},
			"schema": map[string]any{"type": "object", "properties": map[string]any{
				"id": map[string]any{"type": "integer"}, "note": map[string]any{"type": "string"}}},
		}},
	})
	cfg, err := settings.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var out, logs bytes.Buffer
	err = Sync(context.Background(), Options{Config: cfg, Writer: output.NewSinger(&out), Log: output.NewStderrLogger(&logs, slog.LevelDebug, cfg.Redactor)})
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("want the 403 of page 2, got %v", err)
	}
	letters, rerr := os.ReadFile(dead)
	if rerr != nil || !bytes.Contains(letters, []byte(settings.Mask)) {
		t.Errorf("dead letters not written with the mask (%v): %s", rerr, letters)
	}
	var states []string
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, `"type":"STATE"`) {
			states = append(states, line)
		}
	}
	outputs := map[string]string{"error": err.Error(), "logs": logs.String(), "dead letters": string(letters), "STATE": strings.Join(states, "\n")}
	for _, secret := range []string{key, url.QueryEscape(key), url.PathEscape(key), token} {
		for what, text := range outputs {
			if strings.Contains(text, secret) {
				t.Errorf("%s leaks %q:\n%s", what, secret, text)
			}
		}
	}
	if !strings.Contains(logs.String(), "surprise") {
		t.Errorf("no drift report in the logs:\n%s", logs.String())
	}
}
