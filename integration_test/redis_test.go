package integration_test

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/demoapi"
	"github.com/tap-dev/tap/internal/redistest"
)

// startTap runs the binary in dir without waiting; wait returns its result.
func startTap(t *testing.T, dir string, limit time.Duration, args ...string) (wait func() result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	cmd := exec.CommandContext(ctx, tapBin, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	return func() result {
		defer cancel()
		err := cmd.Wait()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		if ctx.Err() != nil {
			code = -1
		}
		return result{stdout: out.Bytes(), stderr: errb.Bytes(), code: code}
	}
}

func sharedLimit(url, key string, rps float64) map[string]any {
	return map[string]any{"requests_per_second": rps, "burst": 1, "max_in_flight": 2,
		"shared": map[string]any{"redis_url": url, "key": key}}
}

// Three tap processes on one key stay within the demo's 10 requests per
// second between them: no 429.
func TestRedisSharedLimitNo429(t *testing.T) {
	rs := redistest.ForTest(t)
	dc := demoBase()
	dc.RequestsPerSecond = 10
	srv, base := startDemo(t, dc)
	var waits []func() result
	var dirs []*tapDir
	for range 3 {
		cfg := tapConfig(base, demoStreams(t, nil, "customers", "orders", "events"))
		cfg["rate_limit"] = sharedLimit(rs.URL(), "tap:it-no429", 8)
		d := newTapDir(t, cfg)
		dirs = append(dirs, d)
		waits = append(waits, startTap(t, d.dir, 2*time.Minute, d.args(nil)...))
	}
	for i, w := range waits {
		r := w()
		if r.code != 0 {
			t.Fatalf("process %d: exit %d; stderr:\n%s", i, r.code, r.stderr)
		}
		l := newLoader(t)
		l.feed(r.stdout, false)
		dirs[i].checkSecrets(r)
		for _, s := range []string{"customers", "orders", "events"} {
			assertTable(t, l, s, demoKeys[s], source(t, srv, s))
		}
	}
	st := srv.Stats()
	if st.ByStatus[429] != 0 {
		t.Errorf("the demo answered %d of %d requests with 429; the shared limit should keep 3 processes under its 10/s", st.ByStatus[429], st.Requests)
	}
	t.Logf("3 processes, %d requests, statuses %v", st.Requests, st.ByStatus)
}

func TestRedisUnreachableAtStart(t *testing.T) {
	rs := redistest.ForTest(t)
	rs.Stop() // its port is now closed
	_, base := startDemo(t, demoBase())
	cfg := tapConfig(base, demoStreams(t, nil, "customers"))
	cfg["rate_limit"] = sharedLimit("redis://:"+sentinel+"@"+rs.Addr+"/0", "tap:it", 8)
	d := newTapDir(t, cfg)
	r := runTap(t, d.dir, time.Minute, nil, d.args(nil)...)
	d.checkSecrets(r)
	if r.code != 2 {
		t.Fatalf("exit %d, want 2; stderr:\n%s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(r.stderr)), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "rate_limit.shared.redis_url") || !strings.Contains(lines[0], rs.Addr) {
		t.Errorf("stderr should be one line naming rate_limit.shared.redis_url and the host, got:\n%s", r.stderr)
	}
	if len(r.stdout) != 0 {
		t.Errorf("stdout not empty: %s", r.stdout)
	}
}

// Redis killed mid-run: the run fails (exit 1) with a valid last STATE;
// a rerun from it, Redis back, completes with every row once.
func TestRedisLostMidRun(t *testing.T) {
	rs := redistest.ForTest(t)
	setup := newCrashSetup(false)
	srv, err := demoapi.New(setup.demo)
	if err != nil {
		t.Fatal(err)
	}
	log := &reqLog{run: 1}
	base := serve(t, log.wrap(srv))
	cfg := setup.config(t, base)
	cfg["rate_limit"] = sharedLimit(rs.URL(), "tap:it-lost", 200)
	cfg["retry"] = map[string]any{"max_attempts": 3, "base_delay_ms": 5, "max_delay_ms": 20}
	d := newTapDir(t, cfg)
	l := newLoader(t)
	go func() {
		<-log.after(1, 15)
		rs.Stop()
	}()
	r := d.sync(l, 2*time.Minute)
	if r.code != 1 {
		t.Fatalf("run with Redis killed: exit %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
	if !bytes.Contains(r.stderr, []byte("rate_limit.shared: Redis")) {
		t.Errorf("the failure does not say Redis was lost:\n%s", lastLine(r.stderr))
	}
	if l.state == nil {
		t.Fatal("no STATE before Redis was lost")
	}
	if err := rs.Restart(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	log.setRun(2)
	if r := d.sync(l, 2*time.Minute); r.code != 0 {
		t.Fatalf("rerun from STATE: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	for _, s := range setup.streams {
		assertTable(t, l, s, demoKeys[s], source(t, srv, s))
	}
}

// Redis down for 5 s mid-run and back within the retry budget: the
// attempts that find it gone fail before they leave and are retried as
// transient, and the run completes (exit 0) with every row, and no request
// reached the API twice.
func TestRedisDownFiveSecondsMidRun(t *testing.T) {
	rs := redistest.ForTest(t)
	setup := newCrashSetup(false)
	srv, err := demoapi.New(setup.demo)
	if err != nil {
		t.Fatal(err)
	}
	log := &reqLog{run: 1}
	base := serve(t, log.wrap(srv))
	cfg := setup.config(t, base)
	cfg["rate_limit"] = sharedLimit(rs.URL(), "tap:it-down", 200)
	// A retry budget far above the outage: 100 attempts with a full-jitter
	// backoff capped at 1 s wait about 45 s in all.
	cfg["retry"] = map[string]any{"max_attempts": 100, "base_delay_ms": 50, "max_delay_ms": 1000}
	d := newTapDir(t, cfg)
	restarted := make(chan error, 1)
	go func() {
		<-log.after(1, 15)
		rs.Stop()
		time.Sleep(5 * time.Second) // the outage, not a synchronisation
		restarted <- rs.Restart(t.TempDir())
	}()
	l := newLoader(t)
	r := d.sync(l, 3*time.Minute)
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	if r.code != 0 {
		t.Fatalf("exit %d, want 0 (Redis was back within the retry budget); stderr:\n%s", r.code, r.stderr)
	}
	if !bytes.Contains(r.stderr, []byte("rate_limit.shared: Redis")) {
		t.Fatalf("no attempt met the outage (the run ended before it?); stderr:\n%s", r.stderr)
	}
	for _, s := range setup.streams {
		assertTable(t, l, s, demoKeys[s], source(t, srv, s))
	}
	seen := map[string]int{}
	for _, q := range log.all() {
		seen[q.Method+" "+q.Path+"?"+q.Query.Encode()+" "+string(q.Body)]++
	}
	for req, n := range seen {
		if n > 1 {
			t.Errorf("%s reached the API %d times", req, n)
		}
	}
}

// Four shards of one chunked backfill: every window is asked for by one
// shard only, the stream that is not chunked by shard 0 only, and the
// shards' records together are the source.
func TestShardsSplitABackfill(t *testing.T) {
	setup := newCrashSetup(false)
	const n = 4
	// Each shard asks its own demo server, all of the same data, so that
	// the requests of each shard are known apart.
	var srv *demoapi.Server
	logs := make([]*reqLog, n)
	loaders := make([]*loader, n)
	var wg sync.WaitGroup
	results := make([]result, n)
	for i := range n {
		s, err := demoapi.New(setup.demo)
		if err != nil {
			t.Fatal(err)
		}
		srv = s
		logs[i] = &reqLog{}
		cfg := setup.config(t, serve(t, logs[i].wrap(s)))
		cfg["streams"] = cfg["streams"].([]any)[:2] // bars (chunked), customers
		d := newTapDir(t, cfg)
		loaders[i] = newLoader(t)
		args := append(d.args(nil), "--shard", itoa(i)+"/"+itoa(n))
		wait := startTap(t, d.dir, 2*time.Minute, args...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = wait()
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Fatalf("shard %d: exit %d; stderr:\n%s", i, r.code, r.stderr)
		}
		loaders[i].feed(r.stdout, false)
	}
	// A window is known by its start (from), which each of its pages
	// carries: which shards asked for it.
	askedBy := map[string]map[int]bool{}
	for i, l := range logs {
		for _, q := range l.all() {
			if i != 0 && q.Path == "/v1/customers" {
				t.Errorf("shard %d asked for customers; only shard 0 reads the streams that are not chunked", i)
			}
			if q.Path != "/v1/bars" || q.Query.Get("from") == "" {
				continue
			}
			from := q.Query.Get("from")
			if askedBy[from] == nil {
				askedBy[from] = map[int]bool{}
			}
			askedBy[from][i] = true
		}
	}
	start, _ := time.Parse(time.RFC3339, setup.start)
	var want []string
	for d := start; d.Before(time.Now()); d = d.AddDate(0, 0, 1) {
		want = append(want, d.UTC().Format(time.RFC3339))
	}
	var got []string
	for f, shards := range askedBy {
		got = append(got, f)
		if len(shards) != 1 {
			t.Errorf("window from %s asked for by shards %v, want one", f, shards)
		}
	}
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bars windows asked for (-want +got):\n%s", diff)
	}
	perShard := make([]int, n)
	for i, l := range loaders {
		perShard[i] = len(l.rows("customers"))
		if i != 0 && perShard[i] != 0 {
			t.Errorf("shard %d read %d customers; only shard 0 reads the streams that are not chunked", i, perShard[i])
		}
	}
	for _, s := range []string{"bars", "customers"} {
		union := map[string]map[string]any{}
		dupes := 0
		for _, l := range loaders {
			for k, r := range l.rows(s) {
				if _, ok := union[k]; ok {
					dupes++
				}
				union[k] = r
			}
		}
		want := keysOf(t, source(t, srv, s), demoKeys[s])
		if dupes != 0 {
			t.Errorf("stream %q: %d rows read by more than one shard", s, dupes)
		}
		if !cmp.Equal(want, union) {
			t.Errorf("stream %q: the shards' union (%d rows) differs from the source (%d rows)", s, len(union), len(want))
		}
	}
}
