package integration_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
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
