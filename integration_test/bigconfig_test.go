package integration_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRunCompilesOnlyWhatItWalks: a schema is compiled for the streams a
// run walks. A stream whose schema is not a JSON Schema does not stop
// --discover, nor a run that does not select it; a run that selects it
// stops before its first message, naming the stream.
func TestRunCompilesOnlyWhatItWalks(t *testing.T) {
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"data": []any{map[string]any{"id": 1}, map[string]any{"id": 2}}})
	}))
	stream := func(name string, idType any) map[string]any {
		return map[string]any{"name": name, "path": "/" + name, "records_path": "data", "primary_key": []any{"id"},
			"pagination": map[string]any{"type": "none"},
			"schema":     map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": idType}}}}
	}
	d := newTapDir(t, tapConfig(base, []any{stream("good", "integer"), stream("bad", 5)}))

	r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json", "--discover")
	if r.code != 0 {
		t.Fatalf("--discover: exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	var cat struct {
		Streams []struct {
			ID string `json:"tap_stream_id"`
		} `json:"streams"`
	}
	if err := json.Unmarshal(r.stdout, &cat); err != nil || len(cat.Streams) != 2 {
		t.Fatalf("--discover printed %d streams (%v), want 2:\n%s", len(cat.Streams), err, r.stdout)
	}

	catalog := func(selected string) string {
		var b bytes.Buffer
		b.WriteString(`{"streams":[`)
		for i, s := range []string{"good", "bad"} {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`{"tap_stream_id":"` + s + `","stream":"` + s + `","schema":{},"metadata":[{"breadcrumb":[],"metadata":{"selected":` +
				map[bool]string{true: "true", false: "false"}[s == selected] + `}}]}`)
		}
		b.WriteString("]}")
		name := "catalog_" + selected + ".json"
		writeFile(t, filepath.Join(d.dir, name), b.Bytes())
		return name
	}
	r = runTap(t, d.dir, time.Minute, nil, "--config", "config.json", "--catalog", catalog("good"))
	if r.code != 0 || bytes.Count(r.stdout, []byte(`"type":"RECORD"`)) != 2 {
		t.Fatalf("a run of the good stream: exit %d, want 0 and 2 records; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = runTap(t, d.dir, time.Minute, nil, "--config", "config.json", "--catalog", catalog("bad"))
	if r.code != 2 || len(r.stdout) != 0 || !strings.Contains(string(r.stderr), `config.json: stream "bad": schema: not a valid JSON Schema`) {
		t.Fatalf("a run of the bad stream: exit %d, want 2 with nothing written and the stream named; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestRunNeedsOnlyItsStreamsPlaceholders: an {"env"} placeholder of a
// stream (path_params.X, read by the streams whose path holds {X}, or
// one under the stream itself) is needed only by a run that walks that
// stream; a run that does names every missing one in one error.
func TestRunNeedsOnlyItsStreamsPlaceholders(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.RequestURI())
		mu.Unlock()
		writeJSON(w, map[string]any{"data": []any{map[string]any{"id": 1}}})
	}))
	stream := func(name, path string, params map[string]any) map[string]any {
		return map[string]any{"name": name, "path": path, "records_path": "data", "primary_key": []any{"id"},
			"pagination": map[string]any{"type": "none"}, "params": params,
			"schema": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}}}}
	}
	cfg := tapConfig(base, []any{
		stream("accounts", "/accounts", nil),
		stream("capabilities", "/accounts/{account}/capabilities", nil),
		stream("tenants", "/tenants", map[string]any{"tenant": map[string]any{"env": "TAP_IT_UNSET_TENANT"}}),
	})
	cfg["path_params"] = map[string]any{"account": map[string]any{"env": "TAP_IT_ACCOUNT"}}
	d := newTapDir(t, cfg)
	catalog := func(selected ...string) string {
		var entries []string
		for _, s := range []string{"accounts", "capabilities", "tenants"} {
			entries = append(entries, `{"tap_stream_id":"`+s+`","stream":"`+s+`","schema":{},"metadata":[{"breadcrumb":[],"metadata":{"selected":`+
				strconv.FormatBool(slices.Contains(selected, s))+`}}]}`)
		}
		name := "catalog_" + strings.Join(selected, "_") + ".json"
		writeFile(t, filepath.Join(d.dir, name), []byte(`{"streams":[`+strings.Join(entries, ",")+`]}`))
		return name
	}

	if r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json", "--discover"); r.code != 0 {
		t.Fatalf("--discover with every placeholder unset: exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json", "--catalog", catalog("accounts"))
	if r.code != 0 || bytes.Count(r.stdout, []byte(`"type":"RECORD"`)) != 1 {
		t.Fatalf("a run of a stream that reads no placeholder: exit %d, want 0 and 1 record; stderr:\n%s", r.code, r.stderr)
	}
	r = runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
	want := "tap: config.json: 2 environment variables are not set: path_params.account: TAP_IT_ACCOUNT, streams[2].params.tenant: TAP_IT_UNSET_TENANT\n"
	if r.code != 2 || len(r.stdout) != 0 || string(r.stderr) != want {
		t.Fatalf("a run of every stream: exit %d, stderr:\n%s\nwant exit 2, nothing written, and:\n%s", r.code, r.stderr, want)
	}
	r = runTap(t, d.dir, time.Minute, []string{"TAP_IT_ACCOUNT=acct 1"}, "--config", "config.json", "--catalog", catalog("capabilities"))
	if r.code != 0 {
		t.Fatalf("a run of the stream whose placeholder is set: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	// One error names them all: the config's own, and the streams'.
	cfg["auth"] = map[string]any{"type": "bearer", "token": map[string]any{"env": "TAP_IT_UNSET_TOKEN"}}
	d.writeConfig(cfg)
	r = runTap(t, d.dir, time.Minute, nil, "--config", "config.json", "--catalog", catalog("accounts"))
	want = "tap: config.json: auth.token: environment variable TAP_IT_UNSET_TOKEN is not set; and, needed only by a run that walks the streams reading them: " +
		"path_params.account: TAP_IT_ACCOUNT, streams[2].params.tenant: TAP_IT_UNSET_TENANT\n"
	if r.code != 2 || len(r.stdout) != 0 || string(r.stderr) != want {
		t.Fatalf("auth's placeholder unset too: exit %d, stderr:\n%s\nwant exit 2, nothing written, and:\n%s", r.code, r.stderr, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(paths, "/accounts/acct%201/capabilities") {
		t.Fatalf("requests %v: want /accounts/acct%%201/capabilities", paths)
	}
}
