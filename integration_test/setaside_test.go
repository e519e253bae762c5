package integration_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSchemaViolationsNeverLostInSilence: a record that fails its schema
// (an assignee null where the schema says string) is, without a
// dead_letter_path, emitted with its violation logged and no file
// written; with one, set aside there, the run ending with a WARN that
// names the count and the file's absolute path; in Airbyte mode, even
// with on_schema_violation dead_letter, emitted and never in a file.
func TestSchemaViolationsNeverLostInSilence(t *testing.T) {
	t.Parallel()
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"data":[{"id":1,"assignee":"ann"},{"id":2,"assignee":null},{"id":3,"assignee":"bo"}]}`))
	}))
	stream := map[string]any{"name": "tickets", "path": "/tickets", "records_path": "data", "primary_key": []any{"id"},
		"schema": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}, "assignee": map[string]any{"type": "string"}}}}

	t.Run("no dead_letter_path: emitted, said, no file", func(t *testing.T) {
		cfg := tapConfig(base, []any{stream})
		delete(cfg, "dead_letter_path")
		d := newTapDir(t, cfg)
		r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
		if r.code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
		}
		if n := countRecords(r.stdout); n != 3 {
			t.Errorf("records = %d, want all 3 (the bad one emitted)", n)
		}
		if !strings.Contains(string(r.stderr), "WARN records failed their schema and were emitted as they came (on_schema_violation emit) stream=tickets count=1") {
			t.Errorf("no final WARN with the count:\n%s", r.stderr)
		}
		if _, err := os.Stat(filepath.Join(d.dir, "dead_letter.jsonl")); err == nil {
			t.Errorf("a dead-letter file was written though the config names none")
		}
	})

	t.Run("a dead_letter_path: set aside, the WARN names the absolute path", func(t *testing.T) {
		cfg := tapConfig(base, []any{stream})
		cfg["dead_letter_path"] = "letters/dead.jsonl"
		d := newTapDir(t, cfg)
		if err := os.Mkdir(filepath.Join(d.dir, "letters"), 0o755); err != nil {
			t.Fatal(err)
		}
		r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
		if r.code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
		}
		if n := countRecords(r.stdout); n != 2 {
			t.Errorf("records = %d, want 2 (one set aside)", n)
		}
		abs := filepath.Join(d.dir, "letters", "dead.jsonl")
		want := "WARN dead letters: set aside this run; fix the cause, then tap replay --dead-letters the file count=1 path=" + abs
		if !strings.Contains(string(r.stderr), want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
		if b, err := os.ReadFile(abs); err != nil || !strings.Contains(string(b), `"primary_key":{"id":2}`) {
			t.Errorf("the dead-letter file lacks record 2: %v %s", err, b)
		}
	})

	t.Run("Airbyte mode: dead_letter is emit", func(t *testing.T) {
		cfg := tapConfig(base, []any{stream})
		cfg["on_schema_violation"] = "dead_letter"
		d := newTapDir(t, cfg)
		catalog := map[string]any{"streams": []any{map[string]any{
			"stream":    map[string]any{"name": "tickets", "json_schema": stream["schema"], "supported_sync_modes": []any{"full_refresh"}},
			"sync_mode": "full_refresh", "destination_sync_mode": "overwrite"}}}
		b, _ := json.Marshal(catalog)
		writeFile(t, filepath.Join(d.dir, "catalog.json"), b)
		r := runAirbyte(t, d.dir, "read", "--config", "config.json", "--catalog", "catalog.json")
		if r.code != 0 {
			t.Fatalf("exit %d: %v", r.code, r.errorTrace())
		}
		if n := len(r.records()["tickets"]); n != 3 {
			t.Errorf("records = %d, want 3", n)
		}
		if !strings.Contains(string(r.stdout), "dead_letter is emit in Airbyte mode") {
			t.Errorf("no LOG saying dead_letter is emit:\n%s", r.stdout)
		}
		if _, err := os.Stat(filepath.Join(d.dir, "dead_letter.jsonl")); err == nil {
			t.Errorf("a dead-letter file was written in Airbyte mode")
		}
	})
}
