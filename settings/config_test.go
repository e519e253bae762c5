package settings

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tap-dev/tap/streams"
)

const customersStream = `{"name": "customers", "path": "/v1/customers", "primary_key": ["id"], "replication_key": "updated_at", "schema": "schemas/customers.json"}`

func TestLoadStreamsFileAndEnv(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "conf", "defs"), 0o755)
	os.WriteFile(filepath.Join(dir, "conf", "defs", "streams.json"), []byte(`{"streams": [
		{"name": "things", "path": "/things", "primary_key": ["id"], "schema": "things.schema.json", "params": {"key": {"env": "TAP_TEST_PARAM"}}}]}`), 0o644)
	os.WriteFile(filepath.Join(dir, "conf", "defs", "things.schema.json"), []byte(`{"type": "object", "properties": {"id": {"type": "integer"}}}`), 0o644)
	cfgPath := filepath.Join(dir, "conf", "config.json")
	os.WriteFile(cfgPath, []byte(`{"base_url": "https://api.example.com", "auth": {"type": "bearer", "token": {"env": "TAP_TEST_TOKEN"}}, "streams_file": "defs/streams.json"}`), 0o644)
	t.Setenv("TAP_TEST_TOKEN", "s3cret-token")
	t.Setenv("TAP_TEST_PARAM", "p")
	cfg, err := Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Auth.Token != "s3cret-token" || cfg.Streams[0].Params["key"] != "p" {
		t.Errorf("env not resolved: token %q, param %q", cfg.Auth.Token, cfg.Streams[0].Params["key"])
	}
	if cfg.Schemas["things"] == nil {
		t.Errorf("schema relative to the streams file not loaded")
	}
	// Defaults.
	if cfg.RateLimit.RequestsPerSecond != 10 || cfg.RateLimit.Burst != 1 || cfg.Retry.MaxAttempts != 6 || cfg.MaxParallelStreams != 2 || cfg.OnSchemaViolation != "emit" {
		t.Errorf("defaults not applied: %+v %+v", cfg.RateLimit, cfg.Retry)
	}
	if cfg.DeadLetterPath != filepath.Join(dir, "conf", "dead_letter.jsonl") {
		t.Errorf("dead_letter_path %q not relative to the config", cfg.DeadLetterPath)
	}
	if got := cfg.Redactor.Redact("token s3cret-token"); got != "token REDACTED" {
		t.Errorf("the env secret is not redacted: %q", got)
	}
}

func TestLoadErrorsNameFileStreamAndField(t *testing.T) {
	tests := []struct {
		name, config, want string
	}{
		{"explicit zero rate is unlimited, not default", `{"base_url": "embedded://demo", "rate_limit": {"requests_per_second": 0}, "streams": [` + customersStream + `]}`, ""},
		{"both streams and streams_file", `{"base_url": "embedded://demo", "streams_file": "x.json", "streams": [` + customersStream + `]}`, "streams_file: set either streams or streams_file"},
		{"parent cycle", `{"base_url": "embedded://demo", "streams": [
			{"name": "a", "path": "/a/{id}", "schema": {"type": "object", "properties": {"id": {}}}, "parent": {"stream": "b", "key": "id"}},
			{"name": "b", "path": "/b/{id}", "schema": {"type": "object", "properties": {"id": {}}}, "parent": {"stream": "a", "key": "id"}}]}`, `stream "a": parent.stream: parents form a cycle`},
		{"bad time format", `{"base_url": "embedded://demo", "streams": [{"name": "c", "path": "/c", "replication_key": "u", "incremental": {"param": "p", "format": "yyyy"}, "schema": {"type": "object", "properties": {"u": {}}}}]}`, `stream "c": incremental.format: expected rfc3339`},
		{"schema without properties", `{"base_url": "embedded://demo", "streams": [{"name": "c", "path": "/c", "schema": {"type": "object"}}]}`, `stream "c": schema: expected "properties"`},
		{"schema of another type", `{"base_url": "embedded://demo", "streams": [{"name": "c", "path": "/c", "schema": {"type": "array", "properties": {}}}]}`, `expected "type": "object"`},
		{"stream that is not an object", `{"base_url": "embedded://demo", "streams": [3]}`, `streams[0]: expected a JSON object`},
		{"path_params fill what no parent fills", `{"base_url": "embedded://demo", "path_params": {"owner": "o", "repo": 7}, "streams": [{"name": "c", "path": "/repos/{owner}/{repo}/c", "schema": {"type": "object", "properties": {}}}]}`, ""},
		{"a placeholder path_params lacks", `{"base_url": "embedded://demo", "path_params": {"owner": "o"}, "streams": [{"name": "c", "path": "/repos/{owner}/{repo}/c", "schema": {"type": "object", "properties": {}}}]}`, `stream "c": path: placeholder {repo} needs a parent stream`},
		{"path_params not strings", `{"base_url": "embedded://demo", "path_params": {"owner": ["o"]}, "streams": [` + customersStream + `]}`, `path_params`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			os.WriteFile(path, []byte(tt.config), 0o644)
			_, err := Load(path)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), path+": ") {
				t.Fatalf("error %v, want %q after the file name", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Errorf("error %T, want an *InputError (exit 2)", err)
			}
		})
	}
}

func TestFillPathParams(t *testing.T) {
	vals := map[string]string{"owner": "tap dev", "repo": "a/b", "number": "never"}
	tests := map[string]struct {
		path   string
		parent *streams.Parent
		want   string
	}{
		"config values escaped":   {path: "/repos/{owner}/{repo}/issues", want: "/repos/tap%20dev/a%2Fb/issues"},
		"parent's key kept":       {path: "/repos/{owner}/{repo}/issues/{number}/comments", parent: &streams.Parent{Stream: "issues", Key: "number"}, want: "/repos/tap%20dev/a%2Fb/issues/{number}/comments"},
		"parent's as kept":        {path: "/r/{repo}/{number}", parent: &streams.Parent{Stream: "issues", Key: "id", As: "number"}, want: "/r/a%2Fb/{number}"},
		"unknown name kept":       {path: "/x/{other}", want: "/x/{other}"},
		"no placeholder":          {path: "/x", want: "/x"},
		"malformed left to Check": {path: "/x/{owner", want: "/x/{owner"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			d := streams.Definition{Name: "s", Path: tt.path, Parent: tt.parent}
			fillPathParams(&d, vals)
			if d.Path != tt.want {
				t.Errorf("path = %q, want %q", d.Path, tt.want)
			}
		})
	}
}

// TestDefaultViolation: on_schema_violation left out is dead_letter when
// the config names a dead_letter_path, else emit; given, it stays.
func TestDefaultViolation(t *testing.T) {
	for _, c := range []struct {
		name string
		obj  map[string]any
		want string
	}{
		{"nothing given", map[string]any{}, ViolationEmit},
		{"a dead_letter_path", map[string]any{"dead_letter_path": "/data/dead.jsonl"}, ViolationDeadLetter},
		{"a null dead_letter_path", map[string]any{"dead_letter_path": nil}, ViolationEmit},
		{"given", map[string]any{"on_schema_violation": "fail"}, ViolationFail},
		{"given with a path", map[string]any{"on_schema_violation": "emit", "dead_letter_path": "d.jsonl"}, ViolationEmit},
	} {
		defaultViolation(c.obj)
		if got := c.obj["on_schema_violation"]; got != c.want {
			t.Errorf("%s: on_schema_violation = %v, want %s", c.name, got, c.want)
		}
	}
}
