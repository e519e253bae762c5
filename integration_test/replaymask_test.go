package integration_test

import (
	"bytes"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReplayMasksSecretsInRecords: a record letter holding a configured
// secret (hand-made, from an older version, or written under another
// config) is written by replay as a sync writes a record: the secret
// masked, the field named in a WARN.
func TestReplayMasksSecretsInRecords(t *testing.T) {
	t.Parallel()
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }))
	cfg := tapConfig(base, []any{map[string]any{"name": "items", "path": "/items", "records_path": "", "primary_key": []any{"id"},
		"schema": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}, "note": map[string]any{"type": "string"}}}}})
	d := newTapDir(t, cfg)
	letter := `{"kind":"record","run_id":"01M8PPCAQVE2S8V3M4N6P9R0TW","run_started_at":"2026-11-30T17:00:00Z","stream":"items",` +
		`"primary_key":{"id":7},"record":{"id":7,"note":"echoed ` + sentinel + ` here"},` +
		`"errors":[{"pointer":"/note","message":"old"}],"time_extracted":"2026-11-30T17:00:01Z"}` + "\n"
	writeFile(t, filepath.Join(d.dir, "letters.jsonl"), []byte(letter))
	r := runTap(t, d.dir, time.Minute, nil, "replay", "--config", "config.json", "--dead-letters", "letters.jsonl")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if bytes.Contains(r.stdout, []byte(sentinel)) || bytes.Contains(r.stderr, []byte(sentinel)) {
		t.Errorf("the secret reached the output:\n%s", r.stdout)
	}
	if !strings.Contains(string(r.stdout), `"note":"echoed REDACTED here"`) || countRecords(r.stdout) != 1 {
		t.Errorf("want the record written once, masked:\n%s", r.stdout)
	}
	if !strings.Contains(string(r.stderr), "a configured secret appeared in a record") {
		t.Errorf("no WARN naming the field:\n%s", r.stderr)
	}
}
