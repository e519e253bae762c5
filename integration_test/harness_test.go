package integration_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tap-dev/tap/demoapi"
	"github.com/tap-dev/tap/internal/clitest"
)

// long turns on the long proof suite: go test ./integration_test/ -long
var long = flag.Bool("long", false, "run the long proof suite")

// Primary keys of the demo streams, as the sample config declares them.
var demoKeys = map[string][]string{
	"customers": {"id"}, "orders": {"id"}, "order_items": {"id"}, "events": {"id"},
	"invoices": {"id"}, "tickets": {"id"}, "bars": {"symbol", "t"}, "issues": {"id"},
}

// today is midnight UTC of the day the suite started: the demo's data end,
// so that a chunked backfill walks few empty windows up to the wall clock.
var today = time.Now().UTC().Truncate(24 * time.Hour)

// demoBase is a small demo data set: every stream has a few pages with the
// page sizes of smallStreams, all of it visible at Now = DataEnd.
func demoBase() demoapi.Config {
	end := today.Format(time.RFC3339)
	return demoapi.Config{
		Seed: 11, Token: sentinel,
		Customers: 60, Orders: 25, Events: 300, Invoices: 50, Tickets: 45, Issues: 40, BarsDays: 2,
		SpanDays: 30, DataEnd: end, Now: end,
	}
}

// startDate is before every row of demoBase.
var startDate = today.AddDate(0, 0, -40).Format(time.RFC3339)

// sampleStreams returns the stream definitions of ../sample_config.json by
// name, each a fresh copy.
func sampleStreams(t *testing.T) map[string]map[string]any {
	t.Helper()
	var cfg struct {
		Streams []map[string]any `json:"streams"`
	}
	readJSON(t, "../sample_config.json", &cfg)
	out := map[string]map[string]any{}
	for _, s := range cfg.Streams {
		out[s["name"].(string)] = s
	}
	return out
}

// smallPages are page sizes that give the small data set several pages.
var smallPages = map[string]int{
	"customers": 10, "orders": 10, "events": 50, "invoices": 10, "tickets": 10, "bars": 200, "issues": 10,
}

// demoStreams returns the sample definitions of the named streams with the
// page sizes of pages (smallPages when nil).
func demoStreams(t *testing.T, pages map[string]int, names ...string) []any {
	t.Helper()
	if pages == nil {
		pages = smallPages
	}
	all := sampleStreams(t)
	var out []any
	for _, name := range names {
		d, ok := all[name]
		if !ok {
			t.Fatalf("no sample stream %q", name)
		}
		if n, ok := pages[name]; ok {
			setPageSize(d, name, n)
		}
		out = append(out, d)
	}
	return out
}

func setPageSize(d map[string]any, name string, n int) {
	switch name {
	case "customers":
		d["params"] = map[string]any{"per_page": itoa(n)}
	case "bars":
		d["params"] = map[string]any{"limit": itoa(n)}
	default:
		p := d["pagination"].(map[string]any)
		p["page_size"] = n
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// tapConfig is a config pointing the tap at base with the given streams:
// fast retries, no client-side rate limit, the sentinel token, records
// that fail their schema set aside in dead_letter.jsonl.
func tapConfig(base string, streams []any) map[string]any {
	return map[string]any{
		"base_url":             base,
		"dead_letter_path":     "dead_letter.jsonl",
		"auth":                 map[string]any{"type": "bearer", "token": sentinel},
		"start_date":           startDate,
		"rate_limit":           map[string]any{"requests_per_second": 0, "max_in_flight": 4},
		"retry":                map[string]any{"max_attempts": 6, "base_delay_ms": 5, "max_delay_ms": 50},
		"request_timeout_s":    5,
		"max_parallel_streams": 2,
		"metrics_log_level":    "info", // the METRIC lines some tests read
		"streams":              streams,
	}
}

// startDemo starts a demo server on loopback; it is closed with the test.
func startDemo(t *testing.T, cfg demoapi.Config) (*demoapi.Server, string) {
	t.Helper()
	srv, err := demoapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, base
}

// reqLog records the requests a server received.
type reqLog struct {
	mu   sync.Mutex
	reqs []loggedReq
	run  int // tag of the requests recorded from now on
	// waits are closed when the run's count of requests reaches n.
	waits []reqWait
	count map[int]int
}

type reqWait struct {
	run, n int
	ch     chan struct{}
}

// after returns a channel closed when the n-th request of run arrives.
func (l *reqLog) after(run, n int) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch := make(chan struct{})
	if l.count[run] >= n {
		close(ch)
	} else {
		l.waits = append(l.waits, reqWait{run: run, n: n, ch: ch})
	}
	return ch
}

type loggedReq struct {
	Run    int
	At     time.Time
	Method string
	Path   string
	Query  url.Values
	Body   []byte
	Auth   string
}

func (l *reqLog) setRun(run int) {
	l.mu.Lock()
	l.run = run
	l.mu.Unlock()
}

func (l *reqLog) all() []loggedReq {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]loggedReq(nil), l.reqs...)
}

// wrap records every request, then passes it on.
func (l *reqLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Body != nil {
			body, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		l.mu.Lock()
		l.reqs = append(l.reqs, loggedReq{Run: l.run, At: time.Now(), Method: r.Method, Path: r.URL.Path,
			Query: r.URL.Query(), Body: body, Auth: r.Header.Get("Authorization")})
		if l.count == nil {
			l.count = map[int]int{}
		}
		l.count[l.run]++
		kept := l.waits[:0]
		for _, w := range l.waits {
			if w.run == l.run && l.count[l.run] >= w.n {
				close(w.ch)
			} else {
				kept = append(kept, w)
			}
		}
		l.waits = kept
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// serve starts an httptest server (127.0.0.1) for h, closed with the test.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s.URL
}

// tapDir holds the files of one tap under test: config.json, state.json,
// the dead-letter file.
type tapDir struct {
	t   *testing.T
	dir string
}

func newTapDir(t *testing.T, cfg map[string]any) *tapDir {
	t.Helper()
	d := &tapDir{t: t, dir: t.TempDir()}
	d.writeConfig(cfg)
	return d
}

func (d *tapDir) writeConfig(cfg map[string]any) {
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		d.t.Fatal(err)
	}
	writeFile(d.t, filepath.Join(d.dir, "config.json"), b)
}

// args returns the command line of a sync from the loader's state.
func (d *tapDir) args(l *loader) []string {
	args := []string{"--config", "config.json"}
	if l != nil && l.state != nil {
		writeFile(d.t, filepath.Join(d.dir, "state.json"), l.state)
		args = append(args, "--state", "state.json")
	}
	return args
}

// sync runs the tap to its end from the loader's state and feeds its stdout
// to the loader.
func (d *tapDir) sync(l *loader, limit time.Duration) result {
	d.t.Helper()
	r := runTap(d.t, d.dir, limit, nil, d.args(l)...)
	l.feed(r.stdout, false)
	d.checkSecrets(r)
	return r
}

// checkSecrets fails the test if the sentinel token appears in the output,
// the state file or the dead-letter file.
func (d *tapDir) checkSecrets(r result) {
	d.t.Helper()
	for name, b := range map[string][]byte{"stdout": r.stdout, "stderr": r.stderr} {
		if bytes.Contains(b, []byte(sentinel)) {
			d.t.Errorf("the token leaked into %s", name)
		}
	}
	for _, f := range []string{"state.json", "dead_letter.jsonl"} {
		b, err := os.ReadFile(filepath.Join(d.dir, f))
		if err == nil && bytes.Contains(b, []byte(sentinel)) {
			d.t.Errorf("the token leaked into %s", f)
		}
	}
}

// killedRun is a run of the tap killed with SIGKILL after a delay.
type killedRun struct {
	result
	killed bool // false: the run ended before the kill
}

// syncKill runs the tap from the loader's state and kills it (SIGKILL)
// jitter after trigger is closed, unless it ends first; stdout goes to the
// loader either way. When killAt is set, it is called with each complete
// stdout line as it arrives and the run is killed as soon as it returns
// true.
func (d *tapDir) syncKill(l *loader, trigger <-chan struct{}, jitter, limit time.Duration, killAt func(line []byte) bool) killedRun {
	d.t.Helper()
	cmd := exec.Command(tapBin, d.args(l)...)
	cmd.Dir = d.dir
	var out, errb bytes.Buffer
	cmd.Stderr = &errb
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		d.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		d.t.Fatal(err)
	}
	var mu sync.Mutex
	killed := false
	kill := func() {
		mu.Lock()
		defer mu.Unlock()
		if !killed && cmd.ProcessState == nil {
			killed = cmd.Process.Kill() == nil
		}
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-trigger:
			select {
			case <-time.After(jitter):
				kill()
			case <-stop:
			}
		case <-stop:
		}
	}()
	var overLimit atomic.Bool
	hard := time.AfterFunc(limit, func() { overLimit.Store(true); kill() })
	// Read stdout whole lines at a time, keeping a cut last line as is.
	br := bufio.NewReader(pipe)
	for {
		line, err := br.ReadBytes('\n')
		out.Write(line)
		if err != nil {
			break
		}
		if killAt != nil && killAt(line) {
			kill()
		}
	}
	werr := cmd.Wait()
	hard.Stop()
	mu.Lock()
	wasKilled := killed
	mu.Unlock()
	if overLimit.Load() {
		d.t.Fatalf("tap did not finish within %s; stderr:\n%s", limit, errb.String())
	}
	code := 0
	if ee, ok := werr.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if werr != nil {
		d.t.Fatal(werr)
	}
	r := killedRun{result: result{stdout: out.Bytes(), stderr: errb.Bytes(), code: code}, killed: wasKilled && code == -1}
	l.feed(r.stdout, r.killed)
	d.checkSecrets(r.result)
	return r
}

// source returns srv.Source(stream) or fails.
func source(t *testing.T, srv *demoapi.Server, stream string) []map[string]any {
	t.Helper()
	rows, err := srv.Source(stream)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// lastLine returns the last non-empty line of b (the tap's one-line error).
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// sentinel is the secret of base_config.json: it must never be printed.
const sentinel = "SENTINEL-SECRET-7f3a"

// The config of a row is the base config with a merge patch applied.
var (
	mergePatch = clitest.MergePatch
	writeFile  = clitest.WriteFile
)

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
