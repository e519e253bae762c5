package integration_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// lastStateValue is the value of the last STATE line of a Singer run's
// stdout, nil when it wrote none.
func lastStateValue(t *testing.T, stdout []byte) []byte {
	t.Helper()
	var last []byte
	for _, line := range bytes.Split(stdout, []byte("\n")) {
		var m struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		}
		if len(line) == 0 || json.Unmarshal(line, &m) != nil || m.Type != "STATE" {
			continue
		}
		last = m.Value
	}
	return last
}

func countRecords(stdout []byte) int {
	return bytes.Count(stdout, []byte(`{"type":"RECORD"`))
}

// TestStateOutIsTheIncrementalLoop runs `tap --state s.json --state-out
// s.json` three times: the first from a file that does not exist, then
// from an empty one, then from what the run before wrote. A missing or
// empty state is a first run said on stderr, the file then holds the last
// STATE's value (with a final newline), and the run after it asks only
// for what changed.
func TestStateOutIsTheIncrementalLoop(t *testing.T) {
	t.Parallel()
	_, base := startDemo(t, demoBase())
	d := newTapDir(t, tapConfig(base, demoStreams(t, nil, "customers", "orders")))
	statePath := filepath.Join(d.dir, "s.json")
	args := []string{"--config", "config.json", "--state", "s.json", "--state-out", "s.json"}

	check := func(r result, firstRun string) {
		t.Helper()
		if r.code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
		}
		d.checkSecrets(r)
		if firstRun != "" && !strings.Contains(string(r.stderr), "INFO state: s.json "+firstRun+": a first run") {
			t.Errorf("stderr does not say the state %s starts a first run:\n%s", firstRun, r.stderr)
		}
		if firstRun == "" && strings.Contains(string(r.stderr), "a first run") {
			t.Errorf("a run from a written state says it is a first run:\n%s", r.stderr)
		}
		got, err := os.ReadFile(statePath)
		if err != nil {
			t.Fatal(err)
		}
		want := lastStateValue(t, r.stdout)
		if want == nil || !bytes.Equal(got, append(want, '\n')) {
			t.Fatalf("--state-out wrote %q, want the last STATE's value %q and a newline", got, want)
		}
	}

	first := runTap(t, d.dir, 2*time.Minute, nil, args...)
	check(first, "does not exist yet")
	if err := os.WriteFile(statePath, []byte(" \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	again := runTap(t, d.dir, 2*time.Minute, nil, args...)
	check(again, "is empty")
	if countRecords(again.stdout) != countRecords(first.stdout) {
		t.Errorf("a run from an empty state read %d records, the first run %d", countRecords(again.stdout), countRecords(first.stdout))
	}
	next := runTap(t, d.dir, 2*time.Minute, nil, args...)
	check(next, "")
	if n, all := countRecords(next.stdout), countRecords(first.stdout); n >= all {
		t.Errorf("the run from --state-out's file read %d records, not fewer than a first run's %d", n, all)
	}
}

// TestStateOutOnFailure: a run that fails after a checkpoint leaves the
// last STATE it wrote in --state-out's file, exit 1; one that fails
// before writing any leaves the file as it was.
func TestStateOutOnFailure(t *testing.T) {
	t.Parallel()
	page := `{"data":[{"id":1,"updated_at":"2026-01-01T00:00:00Z"},{"id":2,"updated_at":"2026-01-02T00:00:00Z"}]}`
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/good" {
			w.Write([]byte(page))
			return
		}
		http.Error(w, `{"error":"gone"}`, http.StatusNotFound)
	}))
	stream := func(name string) map[string]any {
		return map[string]any{"name": name, "path": "/" + name, "records_path": "data", "primary_key": []any{"id"},
			"replication_key": "updated_at", "incremental": map[string]any{"param": "since"},
			"schema": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}, "updated_at": map[string]any{"type": "string"}}}}
	}
	cfg := tapConfig(base, []any{stream("good"), stream("bad")})
	cfg["max_parallel_streams"] = 1
	d := newTapDir(t, cfg)
	statePath := filepath.Join(d.dir, "out.json")

	r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json", "--state-out", "out.json")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (the bad stream's 404); stderr:\n%s", r.code, r.stderr)
	}
	want := lastStateValue(t, r.stdout)
	if want == nil || !strings.Contains(string(want), `"good"`) {
		t.Fatalf("the failed run wrote no STATE with the good stream's bookmark: %s", r.stdout)
	}
	got, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatalf("a failed run wrote no --state-out file: %v", err)
	}
	if !bytes.Equal(got, append(want, '\n')) {
		t.Errorf("--state-out after a failure holds %q, want the last STATE %q", got, want)
	}

	// Only the failing stream: no STATE before the failure, so the file
	// keeps what it had.
	cfg["streams"] = []any{stream("bad")}
	d.writeConfig(cfg)
	before := []byte(`{"bookmarks":{"bad":{"replication_key":"updated_at","replication_key_value":"2026-01-01T00:00:00Z"}}}` + "\n")
	if err := os.WriteFile(statePath, before, 0o644); err != nil {
		t.Fatal(err)
	}
	r = runTap(t, d.dir, time.Minute, nil, "--config", "config.json", "--state", "out.json", "--state-out", "out.json")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
	if v := lastStateValue(t, r.stdout); v != nil {
		t.Logf("the run wrote a STATE before failing: %s", v)
		before = append(v, '\n')
	} else if !strings.Contains(string(r.stderr), "no STATE was written: out.json is left as it was") {
		t.Errorf("stderr does not say the state file was left as it was:\n%s", r.stderr)
	}
	if got, _ := os.ReadFile(statePath); !bytes.Equal(got, before) {
		t.Errorf("--state-out file is %q, want %q", got, before)
	}
}

// TestWrittenFilesEndWithNewline: what the tap writes for a person to
// keep — a config from init, an inferred schema, the state of
// --state-out — ends with a newline, as text files do.
func TestWrittenFilesEndWithNewline(t *testing.T) {
	t.Parallel()
	_, base := startDemo(t, demoBase())
	d := newTapDir(t, tapConfig(base, demoStreams(t, nil, "customers")))
	r := runTap(t, d.dir, time.Minute, nil, "init", "--openapi", demoOpenAPI(t), "--base-url", base, "--out", "init.json")
	if r.code != 0 {
		t.Fatalf("init: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	r = runTap(t, d.dir, time.Minute, nil, "--config", "config.json", "--infer-schema", "customers")
	if r.code != 0 {
		t.Fatalf("--infer-schema: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if err := os.WriteFile(filepath.Join(d.dir, "schema.json"), r.stdout, 0o644); err != nil {
		t.Fatal(err)
	}
	r = runTap(t, d.dir, time.Minute, nil, "--config", "config.json", "--state-out", "state.json")
	if r.code != 0 {
		t.Fatalf("sync: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	for _, name := range []string{"init.json", "schema.json", "state.json"} {
		b, err := os.ReadFile(filepath.Join(d.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 || b[len(b)-1] != '\n' {
			t.Errorf("%s does not end with a newline: %q", name, b[max(0, len(b)-20):])
		}
	}
}

// demoOpenAPI is the absolute path of the demo's OpenAPI document.
func demoOpenAPI(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../docs/testdata/demo-openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}
