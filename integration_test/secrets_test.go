package integration_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// hostServer is an API on a loopback address of its own: 127.0.0.1 and
// 127.0.0.2 are two hosts to the tap. hits counts its requests.
type hostServer struct {
	*httptest.Server
	hits atomic.Int64
}

func startHost(t *testing.T, host string, h http.HandlerFunc) *hostServer {
	t.Helper()
	ln, err := net.Listen("tcp", host+":0")
	if err != nil {
		t.Fatal(err)
	}
	s := &hostServer{}
	s.Server = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	})}}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// rowsHandler answers one page of rows with ids from..to.
func rowsHandler(from, to int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		var rows []string
		for i := from; i <= to; i++ {
			rows = append(rows, fmt.Sprintf(`{"id": %d, "updated_at": "2026-01-0%dT00:00:00Z"}`, i, i))
		}
		fmt.Fprintf(w, `{"data": [%s]}`, strings.Join(rows, ","))
	}
}

func itemsStream() map[string]any {
	return map[string]any{
		"name": "items", "path": "/items", "records_path": "data", "primary_key": []any{"id"},
		"pagination": map[string]any{"type": "next_url", "next_url_path": "next"},
		"schema": map[string]any{"type": "object", "properties": map[string]any{
			"id": map[string]any{"type": "integer"}, "updated_at": map[string]any{"type": "string"}}},
	}
}

// A resume position read from --state is held to the next-URL rule: one
// on another host is refused before any request (exit 2, naming the
// field), not fetched with the stream's credentials (issue 29).
func TestResumeURLOnAnotherHostRefused(t *testing.T) {
	t.Parallel()
	api := startHost(t, "127.0.0.1", rowsHandler(1, 2))
	evil := startHost(t, "127.0.0.2", rowsHandler(7, 9))
	d := newTapDir(t, tapConfig(api.URL, []any{itemsStream()}))
	state := fmt.Sprintf(`{"bookmarks": {"items": {"resume": {"request": {"method": "GET", "url": %q}, "pages": 1}}}}`, evil.URL+"/items?page=2")
	writeFile(t, filepath.Join(d.dir, "state.json"), []byte(state))
	r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json", "--state", "state.json")
	d.checkSecrets(r)
	if r.code != 2 {
		t.Errorf("exit %d, want 2; stderr:\n%s", r.code, r.stderr)
	}
	want := "bookmarks.items.resume.request.url: points to another host (" + strings.TrimPrefix(evil.URL, "http://") + ") than base_url"
	if !strings.Contains(string(r.stderr), want) {
		t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
	}
	if n := evil.hits.Load(); n != 0 {
		t.Errorf("the other host got %d requests", n)
	}
	if n := api.hits.Load(); n != 0 {
		t.Errorf("the API got %d requests before the state was refused", n)
	}
	if len(r.stdout) != 0 {
		t.Errorf("stdout: %s", r.stdout)
	}
}

// A dead letter whose resume position is on another host is not
// fetched by replay, as a --state one is not: the letter is kept, with a
// WARN naming the field.
func TestReplayResumeOnAnotherHostRefused(t *testing.T) {
	t.Parallel()
	api := startHost(t, "127.0.0.1", rowsHandler(1, 2))
	evil := startHost(t, "127.0.0.2", rowsHandler(7, 9))
	d := newTapDir(t, tapConfig(api.URL, []any{itemsStream()}))
	letter := fmt.Sprintf(`{"kind": "request", "stream": "items", "context": null, "resume": {"request": {"method": "GET", "url": %q}, "pages": 1}, "request": {"method": "GET", "url": "/items", "body": ""}}`+"\n", evil.URL+"/items?page=2")
	writeFile(t, filepath.Join(d.dir, "dead_letter.jsonl"), []byte(letter))
	r := runTap(t, d.dir, time.Minute, nil, "replay", "--config", "config.json", "--dead-letters", "dead_letter.jsonl")
	d.checkSecrets(r)
	if r.code != 0 {
		t.Errorf("exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	want := "resume.request.url: points to another host (" + strings.TrimPrefix(evil.URL, "http://") + ") than base_url"
	if !strings.Contains(string(r.stderr), "WARN dead letter kept") || !strings.Contains(string(r.stderr), want) {
		t.Errorf("stderr does not say the letter is kept and %q:\n%s", want, r.stderr)
	}
	if n := evil.hits.Load(); n != 0 {
		t.Errorf("the other host got %d requests", n)
	}
	if b, _ := os.ReadFile(filepath.Join(d.dir, "dead_letter.jsonl")); string(b) != letter {
		t.Errorf("letters after replay:\n%s\nwant the letter kept", b)
	}
}

// assertNone fails the test for each form found in any of the outputs.
func assertNone(t *testing.T, outputs map[string][]byte, forms ...string) {
	t.Helper()
	for name, b := range outputs {
		for _, f := range forms {
			if bytes.Contains(b, []byte(f)) {
				t.Errorf("%q leaked into %s:\n%s", f, name, b)
			}
		}
	}
}

// An OAuth client sent as HTTP Basic (auth_style header) and echoed by a
// failing token endpoint is masked as sent, base64 and all, in stderr,
// Airbyte TRACE/LOG and check (issue 29: "Basic Y2lk…" got out).
func TestOAuthBasicClientEchoMasked(t *testing.T) {
	t.Parallel()
	const id, secret = "cid", "the-client-secret-42"
	basic := base64.StdEncoding.EncodeToString([]byte(id + ":" + secret))
	api := startHost(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error": "invalid_client", "error_description": "client not allowed: %s"}`, r.Header.Get("Authorization"))
	})
	cfg := tapConfig(api.URL, []any{itemsStream()})
	cfg["auth"] = map[string]any{"type": "oauth2", "token_url": "/oauth/token", "client_id": id, "client_secret": secret, "auth_style": "header"}
	d := newTapDir(t, cfg)
	writeFile(t, filepath.Join(d.dir, "catalog.json"), []byte(`{"streams": [{"stream": {"name": "items", "json_schema": {}, "supported_sync_modes": ["full_refresh"]},
	  "sync_mode": "full_refresh", "destination_sync_mode": "overwrite"}]}`))
	singer := runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
	check := runTap(t, d.dir, time.Minute, nil, "check", "--config", "config.json")
	read := runTap(t, d.dir, time.Minute, nil, "read", "--config", "config.json", "--catalog", "catalog.json")
	if singer.code == 0 || !strings.Contains(string(singer.stderr), "invalid_client") {
		t.Fatalf("exit %d; stderr:\n%s", singer.code, singer.stderr)
	}
	if !strings.Contains(string(check.stdout), "invalid_client") || !strings.Contains(string(read.stdout), "invalid_client") {
		t.Fatalf("check or read does not report the refusal:\n%s\n%s", check.stdout, read.stdout)
	}
	assertNone(t, map[string][]byte{"stderr": singer.stderr, "check": check.stdout, "read": read.stdout,
		"check stderr": check.stderr, "read stderr": read.stderr}, basic, secret)
}

// A request dead letter's response body keeps what the API sent, but an
// echo of a credential in any JSON escape is masked (issue 29: a key with
// '"', '\' or 'é', echoed as \", \\ or \u00e9, stayed readable).
func TestDeadLetterJSONEscapedEchoMasked(t *testing.T) {
	t.Parallel()
	const key = `k"e\y-é-9876543`
	echo := strings.NewReplacer(`"`, `\"`, `\`, `\\`, "é", `\u00e9`).Replace(key)
	api := startHost(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"error": "key %s is not allowed here"}`, strings.NewReplacer(`"`, `\"`, `\`, `\\`, "é", `\u00e9`).Replace(r.Header.Get("X-Api-Key")))
	})
	s := itemsStream()
	s["on_request_failure"] = "dead_letter"
	cfg := tapConfig(api.URL, []any{s})
	cfg["auth"] = map[string]any{"type": "api_key", "name": "X-Api-Key", "value": key}
	d := newTapDir(t, cfg)
	r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	letters, err := os.ReadFile(filepath.Join(d.dir, "dead_letter.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(letters), `is not allowed here`) || !strings.Contains(string(letters), "REDACTED") {
		t.Fatalf("the letter lost the body or masks nothing:\n%s", letters)
	}
	// The letter is JSON: the echo is escaped once more in it.
	escapedTwice := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(echo)
	assertNone(t, map[string][]byte{"dead letters": letters, "stderr": r.stderr, "stdout": r.stdout}, key, echo, escapedTwice)
}

// An API echoing the request's credential into a record field the schema
// does not declare: the value is masked on stdout, counted, and a WARN
// names the stream and the field (issue 29).
func TestSecretInRecordMasked(t *testing.T) {
	t.Parallel()
	api := startHost(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		auth, _ := json.Marshal(r.Header.Get("Authorization"))
		fmt.Fprintf(w, `{"data": [{"id": 1, "updated_at": "2026-01-01T00:00:00Z", "debug": {"auth": %s}}, {"id": 2, "updated_at": "2026-01-02T00:00:00Z"}]}`, auth)
	})
	d := newTapDir(t, tapConfig(api.URL, []any{itemsStream()}))
	r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
	d.checkSecrets(r)
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	var recs []string
	for _, m := range parseSinger(t, r.stdout) {
		if m.Type == "RECORD" {
			recs = append(recs, string(m.Record))
		}
	}
	// The clean record is written as it came (spliced, in the API's
	// spacing); only its value is held here.
	var clean bytes.Buffer
	if len(recs) == 2 {
		json.Compact(&clean, []byte(recs[1]))
	}
	if len(recs) != 2 || !strings.Contains(recs[0], `"debug":{"auth":"Bearer REDACTED"}`) || clean.String() != `{"id":2,"updated_at":"2026-01-02T00:00:00Z"}` {
		t.Errorf("records:\n%s", strings.Join(recs, "\n"))
	}
	for _, want := range []string{"WARN a configured secret appeared in a record", "stream=items field=debug.auth", "secrets_masked=1"} {
		if !strings.Contains(string(r.stderr), want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}
