package integration_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// reportServer serves /items in two pages: the first answered 429 once
// (Retry-After: 1), the second 503 once, or held until the test ends
// when hold is set.
func reportServer(t *testing.T, hold bool) (*httptest.Server, <-chan struct{}) {
	var mu sync.Mutex
	seen := map[string]int{}
	held := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page := r.URL.Query().Get("page")
		mu.Lock()
		seen[page]++
		n := seen[page]
		mu.Unlock()
		switch {
		case page == "1" && n == 1:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		case page == "2" && hold:
			held <- struct{}{}
			<-r.Context().Done()
			return
		case page == "2" && n == 1:
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if page == "1" {
			w.Write([]byte(`{"data": [{"id": 1}, {"id": 2}]}`))
		} else {
			w.Write([]byte(`{"data": [{"id": 3, "surprise": "drift"}]}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv, held
}

func reportConfig(base string) map[string]any {
	cfg := tapConfig(base, []any{map[string]any{"name": "items", "path": "/items", "records_path": "data", "primary_key": []string{"id"},
		"pagination": map[string]any{"type": "page_number", "page_param": "page", "page_size": 2},
		"schema":     map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}}}}})
	cfg["auth"] = map[string]any{"type": "api_key", "in": "query", "name": "key", "value": sentinel}
	return cfg
}

// checkReport checks a report as a file: self-contained (no script, no
// URL but the SVG namespace), secrets masked, and its stream row equal
// to the run summary's.
func checkReport(t *testing.T, page []byte, stderr []byte) {
	t.Helper()
	html := string(page)
	for _, bad := range []string{"<script", "src=", "href=", "<link", "@import", "url(", sentinel} {
		if strings.Contains(html, bad) {
			t.Errorf("the report holds %q", bad)
		}
	}
	if !strings.Contains(html, `content="default-src 'none'; style-src 'unsafe-inline'`) {
		t.Errorf("the report has no policy that keeps the page from loading anything")
	}
	row := summaryTable(t, stderr)["items"]
	for _, cell := range []string{`<td class="records">` + row["records"] + `</td>`, `<td class="requests">` + row["requests"] + `</td>`} {
		if !strings.Contains(html, cell) {
			t.Errorf("the report's items row lacks %s (the summary's %v)", cell, row)
		}
	}
}

// TestRunReport: --report writes the HTML report at the end of a run
// that succeeds, one that fails, and one stopped by SIGTERM; each holds
// the run summary's numbers, the 429 marked, and nothing from a network.
func TestRunReport(t *testing.T) {
	t.Parallel()
	t.Run("a run that succeeds", func(t *testing.T) {
		srv, _ := reportServer(t, false)
		d := newTapDir(t, reportConfig(srv.URL))
		r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json", "--report", "run.html")
		if r.code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
		}
		page, err := os.ReadFile(filepath.Join(d.dir, "run.html"))
		if err != nil {
			t.Fatal(err)
		}
		checkReport(t, page, r.stderr)
		if n := strings.Count(string(page), `class="throttle"`); n != 1 {
			t.Errorf("%d 429s marked, want 1", n)
		}
		if !strings.Contains(string(page), `<td id="exit" class="ok">0</td>`) {
			t.Errorf("the report does not say exit status 0")
		}
		renderInBrowser(t, filepath.Join(d.dir, "run.html"))
	})
	t.Run("an Airbyte read", func(t *testing.T) {
		srv, _ := reportServer(t, false)
		d := newTapDir(t, reportConfig(srv.URL))
		writeFile(t, filepath.Join(d.dir, "catalog.json"), []byte(`{"streams": [{"stream": {"name": "items", "json_schema": {}, "supported_sync_modes": ["full_refresh"]}, "sync_mode": "full_refresh", "destination_sync_mode": "overwrite"}]}`))
		r := runTap(t, d.dir, time.Minute, nil, "read", "--config", "config.json", "--catalog", "catalog.json", "--report", "run.html")
		if r.code != 0 {
			t.Fatalf("exit %d; stdout:\n%s", r.code, r.stdout)
		}
		page, err := os.ReadFile(filepath.Join(d.dir, "run.html"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(page, []byte("<td>Airbyte read</td>")) || !bytes.Contains(page, []byte(`<td class="records">3</td>`)) || bytes.Contains(page, []byte(sentinel)) {
			t.Errorf("the Airbyte read's report lacks its mode or its 3 records, or holds the secret")
		}
	})
	t.Run("a feed", func(t *testing.T) {
		dc := demoBase()
		dc.FeedTrades = 30
		_, base := startDemo(t, dc)
		d := newTapDir(t, tapConfig(base, []any{feedStream("ndjson", map[string]any{"stop": map[string]any{"max_records": 20}})}))
		r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json", "--report", "run.html")
		if r.code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
		}
		page, err := os.ReadFile(filepath.Join(d.dir, "run.html"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(page, []byte(`<td class="records">20</td>`)) || !bytes.Contains(page, []byte(`<td class="gaps">0</td>`)) {
			t.Errorf("the feed's report lacks its 20 records or its feed columns")
		}
	})
	t.Run("a replay", func(t *testing.T) {
		dir := t.TempDir()
		cfg := sampleConfig(t, dir)
		if r := runTap(t, dir, 2*time.Minute, nil, "--config", cfg); r.code != 0 {
			t.Fatalf("sync: exit %d; stderr:\n%s", r.code, r.stderr)
		}
		r := runTap(t, dir, time.Minute, nil, "replay", "--config", cfg, "--dead-letters", "dead.jsonl", "--report", "replay.html")
		if r.code != 0 {
			t.Fatalf("replay: exit %d; stderr:\n%s", r.code, r.stderr)
		}
		page, err := os.ReadFile(filepath.Join(dir, "replay.html"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(page, []byte("<td>replay</td>")) || !bytes.Contains(page, []byte("<li>replay summary letters=")) {
			t.Errorf("the replay's report lacks its mode or its summary line")
		}
	})
	t.Run("a run that fails", func(t *testing.T) {
		srv, _ := reportServer(t, false)
		cfg := reportConfig(srv.URL)
		cfg["retry"] = map[string]any{"max_attempts": 1}
		d := newTapDir(t, cfg)
		r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json", "--report", "run.html")
		if r.code != 1 {
			t.Fatalf("exit %d, want 1; stderr:\n%s", r.code, r.stderr)
		}
		page, err := os.ReadFile(filepath.Join(d.dir, "run.html"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(page, []byte(`<td id="exit" class="failed">1</td>`)) || !bytes.Contains(page, []byte(`<td id="error">`)) {
			t.Errorf("the report of a failed run lacks its exit status or its error")
		}
	})
	t.Run("a run stopped by SIGTERM", func(t *testing.T) {
		srv, held := reportServer(t, true)
		d := newTapDir(t, reportConfig(srv.URL))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, tapBin, "--config", "config.json", "--report", "run.html")
		cmd.Dir = d.dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-held:
		case <-ctx.Done():
			t.Fatal("the tap never asked for page 2")
		}
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		page, err := os.ReadFile(filepath.Join(d.dir, "run.html"))
		if err != nil {
			t.Fatalf("no report after SIGTERM: %v; stderr:\n%s", err, stderr.String())
		}
		if !bytes.Contains(page, []byte("interrupted")) {
			t.Errorf("the report of an interrupted run does not say so")
		}
	})
}

// renderInBrowser opens the report in Debian's headless chromium, with
// every host unresolvable, and checks the rendered page holds its tables
// and both charts: the report is a page a person can open from a file.
func renderInBrowser(t *testing.T, path string) {
	t.Helper()
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed: .ci/run installs Debian's chromium")
		}
		t.Skip("chromium is not installed (apt-get install chromium); CI runs this check")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	profile := t.TempDir()
	shot := filepath.Join(t.TempDir(), "report.png")
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + profile,
		"--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=900,1400"}
	dom, err := exec.CommandContext(ctx, bin, append(args, "--dump-dom", "file://"+path)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	for _, want := range []string{`<table id="streams">`, `<td class="records">3</td>`, "<polyline", `class="throttle"`, "waited 1s", `id="warnings"`} {
		if !bytes.Contains(dom, []byte(want)) {
			t.Errorf("the page chromium rendered lacks %s", want)
		}
	}
	if out, err := exec.CommandContext(ctx, bin, append(args, "--screenshot="+shot, "file://"+path)...).CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, out)
	}
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 10_000 {
		t.Errorf("chromium's screenshot of the report: %v (%d bytes)", err, fi.Size())
	}
}
