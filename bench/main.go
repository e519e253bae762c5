// Command bench measures the real tap binary against the bundled demo API
// and prints a report table:
//
//	go run ./bench [-records N] [-quick]
//
// It builds the tap once ("go build" in the module root, into a temporary
// directory), starts a fresh demo API in-process on loopback for every
// scenario, writes a config for it, and runs the binary as a subprocess.
// Nothing leaves the machine.
//
// Scenarios:
//
//   - throughput: the events stream (keyset pagination, pages of 1,000
//     records of ~300 bytes, schema validation on, dead letters on), N
//     records (1,000,000 by default), no faults and no rate limit on either
//     side, one stream, one request in flight. The tap runs pinned to one
//     CPU ("taskset -c" on the first CPU this process may use, and the bench
//     itself — the demo server and the reader of the tap's stdout — moves to
//     the other CPUs meanwhile; without taskset, GOMAXPROCS=1 in the tap's
//     environment). Its stdout goes to a counter (bytes, lines, RECORD
//     lines) and is not kept. Wall time gives records/s and MB/s (MB = 10^6
//     bytes of stdout). Beside it a raw baseline: an in-process net/http
//     client, unpinned, fetching the same pages from a fresh server with
//     the same data (/v1/events?since_id=X&limit=1000, X = the largest id
//     seen) and copying the bodies to the same kind of counter. The ratio
//     tap/baseline (records/s) says how much of the raw fetch rate the tap
//     keeps while it parses, validates and writes Singer messages. It is a
//     figure, not a target: issue 20 replaced its target (>= 0.5), which
//     could not be met as set — the baseline runs unpinned, in process,
//     with no stdout pipe — by the limit scenario's tap against a pinned
//     raw copy of the same pages through the same kind of pipe.
//
//   - memory: peak RSS (getrusage ru_maxrss) of the tap on the throughput
//     config for N/10 and N records (the N run is the throughput run). The
//     tap must stream: the larger run may use at most 1.2 times the memory
//     of the smaller, and neither more than 64 MiB.
//
//   - stream maps: the throughput config with a Meltano SDK stream map of
//     three expressions on every event (md5 of a property, arithmetic, a
//     removal), N records, against the same config unmapped: the two
//     interleaved, 3 runs of each, medians. The ratio mapped/unmapped
//     (records/s; target >= 0.7, issue 18) says what the maps cost, per
//     CPU-second too, which the machine's load disturbs less.
//
//   - quota: the demo enforces 10 requests per second (fixed one-second
//     windows), answers 8% of requests with 503 and adds 50 ms to every
//     answer; the tap is configured at 9 requests/s, burst 1, and syncs five
//     streams (customers, orders, events, invoices, tickets; pages of 10),
//     two at a time as in sample_config.json, sized to total 300 pages (30
//     with -quick). Pages are the 200 answers. The floor is pages ÷ 9 s; a
//     tap that keeps its bucket busy and wastes nothing on 429s finishes
//     close to it (target ≤ 1.05). It runs with retries_spend_tokens
//     false: the retries of 503s take no bucket token, so they do not push
//     the pages back, and the tap's 9/s leaves the demo's 10/s room for
//     them (the demo counts a 503 in its window). Requests per page counts
//     retries (503s are expected: ~1/0.92 ≈ 1.09); 429s must be 0.
//
//   - pause: three streams at once, four requests in flight, 50 ms latency;
//     the demo answers one request mid-run 429 with Retry-After: 3. Target:
//     0 requests of any stream arrive inside those 3 s (the demo's arrival
//     log).
//
//   - cost: the GraphQL issues stream against the demo's cost budget
//     (1,000 points restoring 50/s, each query costing its page size of
//     100; 3,500 issues, 1,500 with -quick), the tap given the same budget
//     and no request rate. Targets: 0 THROTTLED answers, wall ≤ 1.10 × the
//     budget floor (total cost − 1,000) ÷ 50 s.
//
//   - scale-out: 4 tap processes share one Redis key (rate_limit.shared;
//     the bench starts a redis-server on loopback) at 20 requests/s,
//     against the demo enforcing 20 per fixed one-second window (20 ms
//     latency, no faults), ~300 pages each (30 with -quick); then the same
//     4 with in-process limiters, side by side, to show the 429s they
//     cause. Targets for the shared run: 200 answers/s ≥ 19 between them,
//     0 429s. The shortest span of 21 consecutive arrivals at the demo is
//     printed for both: a window of 20 answers 429 only when it is below
//     1 s. Skipped, and said so, without redis-server.
//
//   - -only quota,pause,cost (or throughput, formats) runs only those.
//
//   - manifest (bench/manifest.go): the same N events in pages of 1,000
//     read by the events stream written in the tap's language and by an
//     Airbyte manifest of it (a cursor from the last record, the schema
//     inline), the tap pinned, interleaved in -reps rounds, medians.
//     Targets: CPU per record manifest/native <= 1.2, peak RSS <= 1.1.
//
//   - census (bench/census.go), on its own: go run ./bench -manifests DIR
//     loads every Airbyte declarative manifest under DIR (its files, or
//     the manifest.yaml of a checkout of Airbyte's connectors) and tallies
//     loaded / needs Python / not implemented / bad input (target: at
//     least 85% load), by component type; no tap is built or run.
//
//   - tap init on a corpus (bench/openapicorpus.go), on its own: go run
//     ./bench -openapi DIR runs init, then --discover, on every OpenAPI
//     document under DIR and tallies a config / no list operation /
//     anything else (target: at least 95% in the first two).
//
//   - formats: the same N invoices read as JSON pages (offset, 1,000 a
//     page), as one CSV body and as one JSON Lines body, validated, one
//     core: records/s of each and the ratios to JSON. Then the tap's peak
//     RSS on a CSV body of N rows against one of N/10: a body is decoded
//     as it arrives, so the ratio must be at most 1.2.
//
//   - feeds: the same N small trades (~80 bytes) read, one core, as a
//     local websocket feed (/v1/feed/ws, heartbeats every 200 ms, an end
//     message after the last) and as keyset pages of 1,000 (/v1/trades):
//     records/s and CPU time (user + system) per record of each, and the
//     ratio feed/pages. A figure, not a target.
//
//   - models (bench/models.go): the same N events through every
//     pagination model, as one JSON Lines and one CSV body, as the child
//     stream of N/1,000 parents, and a 7-property stream paged by a cursor
//     in the body (N/10 records, pages of 100), the tap pinned to one CPU,
//     the rows interleaved in -reps rounds (3), medians: records per
//     CPU-second and the ratio to keyset's (targets: models >= 0.8,
//     bodies >= 0.5, the child stream >= 0.7), CPU-seconds per 100k
//     records of the 7-property stream (<= 0.55), peak RSS (<= 20 MiB at
//     1M; with -records of 10M or more each row runs once on 1M too, and
//     its RSS at N must be <= 1.1 times that).
//     With -against REV (a git revision, built in a temporary detached
//     worktree, or a tap binary) every row runs with that build too, in
//     the same rounds (bench/against.go): CPU new/old and the peak RSS
//     of both, per row.
//
//   - reconcile: a stream's keys file of 10,000,000 integer keys (100,000
//     with -quick) saved, listed again without 1% of them, compared as
//     sorted streams (bench/reconcile.go), in a process of its own: the
//     time, the keys file's size and the peak RSS (target <= 64 MiB).
//
// The header gives the Go version, the CPUs, how the tap was pinned and the
// load average: the machine is not reserved, so compare throughput figures
// only between runs on a quiet machine.
//
// Reading the table: one row per figure, with its value, its target and
// PASS or FAIL ("-" for figures that are informative, without a target).
// The exit status is 0 even when a target is missed — this is a report —
// and non-zero only when a scenario could not run (the build failed, the
// tap exited non-zero, the tap emitted the wrong number of records, ...).
// Progress goes to stderr, the table to stdout.
//
// -quick runs tiny sizes (20,000 records, 30 pages) so CI can smoke the
// command in well under a minute; -records overrides N.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/tap-dev/tap/demoapi"
)

func main() {
	records := flag.Int("records", 0, "records in the throughput and memory scenarios [1,000,000; 20,000 with -quick]")
	quick := flag.Bool("quick", false, "tiny sizes, for a CI smoke run")
	reps := flag.Int("reps", 0, "rounds of the models, perpage and feeds scenarios, interleaved [3; 1 with -quick]")
	against := flag.String("against", "", "another tap to run beside this one in the models scenario, in the same rounds: a tap binary or a git revision (built in a temporary worktree)")
	only := flag.String("only", "", "comma-separated scenarios to run: throughput (with memory and stream maps), limit, perpage, models, manifest, quota, scale-out, pause, cost, formats, feeds, reconcile [all]")
	raw := flag.String("rawcopy", "", "internal: run as the limit scenario's raw copy of the pages at this URL")
	serve := flag.Bool("servepages", false, "internal: run as the limit scenario's page server of -records events")
	serveM := flag.Bool("servemodels", false, "internal: run as the models scenario's page server of -records events")
	keys := flag.Int("reconcilekeys", 0, "internal: run as the reconcile scenario's process, with this many keys")
	keysDir := flag.String("reconciledir", "", "internal: the reconcile scenario's folder")
	manifests := flag.String("manifests", "", "the census alone: load every Airbyte manifest under this folder and tally loaded / needs Python / not implemented, by component type")
	size := flag.Int("pagesize", pageSize, "internal: the page size of -servepages and -rawcopy")
	openapi := flag.String("openapi", "", "tap init alone: run init, then --discover, on every OpenAPI document under this folder and tally a config / no list operation / anything else")
	flag.Parse()
	if *openapi != "" {
		os.Exit(openAPICorpus(*openapi, os.Stdout))
	}
	if *manifests != "" {
		os.Exit(census(*manifests, os.Stdout))
	}
	if *keys > 0 {
		os.Exit(reconcileChild(*keys, *keysDir))
	}
	if *serve {
		os.Exit(servePages(*records, *size))
	}
	if *serveM {
		os.Exit(serveModels(*records))
	}
	if *raw != "" {
		os.Exit(rawCopy(*raw, *records, *size))
	}
	os.Exit(run(*records, *reps, *quick, *only, *against))
}

func run(records, reps int, quick bool, only, against string) int {
	want := func(scenario string) bool {
		return only == "" || slices.Contains(strings.Split(only, ","), scenario)
	}
	n, pages := 1_000_000, 300
	if quick {
		n, pages = 20_000, 30
	}
	if records > 0 {
		n = records
	}
	if reps <= 0 {
		reps = 3
		if quick {
			reps = 1
		}
	}
	if n < 10 {
		fmt.Fprintln(os.Stderr, "bench: -records must be at least 10")
		return 2
	}

	started := time.Now()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "tap-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	defer os.RemoveAll(dir)

	progress("building the tap binary")
	bin, root, err := buildTap(ctx, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	defs, err := sampleStreams(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	b := &bench{bin: bin, root: root, dir: dir, pin: setupPinning(), streams: defs}
	if against != "" {
		progress("building the tap of -against " + against)
		if b.old, err = buildAgainst(ctx, root, dir, against); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
	}
	loadBefore := loadAvg()
	rep := &report{}

	var failed []string
	fail := func(scenario string, err error) {
		progress(scenario + " could not run: " + err.Error())
		failed = append(failed, scenario)
		rep.add(scenario, "error", oneLine(err.Error()), "", "ERROR")
	}
	if want("throughput") {
		large, err := b.throughput(ctx, rep, n)
		if err != nil {
			fail("throughput", err)
		}
		if err := b.memory(ctx, rep, n/10, n, large); err != nil {
			fail("memory", err)
		}
		if err := b.streamMaps(ctx, rep, n); err != nil {
			fail("stream maps", err)
		}
	}
	if want("limit") {
		if err := b.limit(ctx, rep, n); err != nil {
			fail("limit", err)
		}
	}
	if want("perpage") {
		if err := b.perPage(ctx, rep, n, reps); err != nil {
			fail("per page", err)
		}
	}
	if want("models") {
		if err := b.models(ctx, rep, n, reps); err != nil {
			fail("models", err)
		}
	}
	if want("manifest") {
		if err := b.manifest(ctx, rep, n, reps); err != nil {
			fail("manifest", err)
		}
	}
	if want("quota") {
		if err := b.quota(ctx, rep, pages); err != nil {
			fail("quota", err)
		}
	}
	if want("scale-out") {
		if err := b.scaleOut(ctx, rep, pages); err != nil {
			fail("scale-out", err)
		}
	}
	if want("pause") {
		if err := b.pause(ctx, rep, pages); err != nil {
			fail("pause", err)
		}
	}
	if want("cost") {
		if err := b.cost(ctx, rep, quick); err != nil {
			fail("cost", err)
		}
	}
	if want("formats") {
		if err := b.formats(ctx, rep, n); err != nil {
			fail("formats", err)
		}
	}
	if want("feeds") {
		if err := b.feeds(ctx, rep, n, reps); err != nil {
			fail("feeds", err)
		}
	}
	if want("reconcile") {
		keys := 10_000_000
		if quick {
			keys = 100_000
		}
		if err := b.reconcileScenario(ctx, rep, keys); err != nil {
			fail("reconcile", err)
		}
	}

	fmt.Printf("tap benchmark  %s  %s/%s  %d CPUs  %s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), time.Now().UTC().Format(time.RFC3339))
	fmt.Printf("throughput/memory: %s records; tap pinned by %s\n", thousands(int64(n)), b.pin.method())
	fmt.Printf("load average (1 min): %s at start, %s at end (other processes make the throughput figures slower and noisier)\n", loadBefore, loadAvg())
	if b.old != nil {
		fmt.Printf("against: %s, beside this build in the models scenario's rounds (new/old: this build over that one)\n", b.old.desc)
	}
	if quick {
		fmt.Println("quick mode: a smoke run; at these sizes start-up dominates, so PASS/FAIL below say nothing about the targets")
	}
	rep.print(os.Stdout)
	fmt.Printf("bench wall time: %.1f s\n", time.Since(started).Seconds())
	if len(failed) > 0 {
		fmt.Fprintf(os.Stderr, "bench: scenario(s) could not run: %s\n", strings.Join(failed, ", "))
		return 1
	}
	return 0
}

// bench holds what every scenario needs.
type bench struct {
	bin     string // the tap binary
	root    string // the module's root, where sample_config.json and schemas/ are
	dir     string // temporary directory for configs and dead letters
	pin     *pinning
	streams map[string]map[string]any // sample_config.json's definitions by name
	old     *oldBuild                 // -against's build, or nil
}

// buildTap runs "go build -o DIR/tap ." in the module root, and returns
// the binary and the root.
func buildTap(ctx context.Context, dir string) (bin, root string, err error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", "", fmt.Errorf("go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", "", errors.New("not inside a Go module: run go run ./bench from the tap module")
	}
	root = filepath.Dir(gomod)
	bin = filepath.Join(dir, "tap")
	return bin, root, goBuild(ctx, root, bin)
}

// goBuild builds the tap of the module at root into bin as the image
// ships it: no C library, no symbol table.
func goBuild(ctx context.Context, root, bin string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	cmd.Dir, cmd.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build in %s: %v\n%s", root, err, out)
	}
	return nil
}

// sampleStreams reads the stream definitions of sample_config.json, so
// that the scenarios walk the demo exactly as the sample does.
func sampleStreams(root string) (map[string]map[string]any, error) {
	b, err := os.ReadFile(filepath.Join(root, "sample_config.json"))
	if err != nil {
		return nil, err
	}
	var cfg struct {
		Streams []map[string]any `json:"streams"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("sample_config.json: %v", err)
	}
	out := map[string]map[string]any{}
	for _, d := range cfg.Streams {
		out[d["name"].(string)] = d
	}
	return out, nil
}

// stream returns a copy of the sample's definition of name with n records
// per page.
func (b *bench) stream(name string, n int) map[string]any {
	var d map[string]any
	raw, _ := json.Marshal(b.streams[name]) // a deep copy
	json.Unmarshal(raw, &d)
	if name == "customers" {
		d["params"] = map[string]any{"per_page": fmt.Sprint(n)}
	} else {
		d["pagination"].(map[string]any)["page_size"] = n
	}
	return d
}

// startDemo starts a fresh demo API on loopback.
func startDemo(cfg demoapi.Config) (*demoapi.Server, string, error) {
	srv, err := demoapi.New(cfg)
	if err != nil {
		return nil, "", err
	}
	url, err := srv.Start("127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	return srv, url, nil
}

// writeConfig writes a tap config into the bench directory.
func (b *bench) writeConfig(name string, cfg map[string]any) (string, error) {
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(b.dir, name)
	return path, os.WriteFile(path, data, 0o600)
}

// tapRun is what one run of the tap binary measured.
type tapRun struct {
	wall      time.Duration
	out       counter
	maxRSSKiB int64
	user, sys time.Duration
}

// runTap runs "tap --config cfg" to completion within timeout, with stdout
// counted and the tail of stderr kept for error messages. pinned runs it
// on one CPU (see pinning).
func (b *bench) runTap(ctx context.Context, cfg string, pinned bool, timeout time.Duration) (*tapRun, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	args := []string{b.bin, "--config", cfg}
	env := cleanEnv()
	if pinned {
		args, env = b.pin.wrap(args, env)
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = env
	cmd.Dir = b.dir
	r := &tapRun{}
	stderr := &tail{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = &r.out, stderr
	start := time.Now()
	err := cmd.Run()
	r.wall = time.Since(start)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%v (timed out after %s)", err, timeout)
		}
		return nil, fmt.Errorf("tap: %v; stderr ends with:\n%s", err, stderr.b)
	}
	r.user, r.sys = cmd.ProcessState.UserTime(), cmd.ProcessState.SystemTime()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSSKiB = int64(ru.Maxrss) // KiB on Linux
		if runtime.GOOS == "darwin" {
			r.maxRSSKiB /= 1024 // bytes there
		}
	}
	return r, nil
}

// cleanEnv is this process's environment without the Go runtime knobs
// that would change what is measured.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GODEBUG", "GOGC", "GOMEMLIMIT", "GOMAXPROCS":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// counter is an io.Writer that counts bytes, lines and Singer RECORD lines
// and keeps nothing.
type counter struct {
	bytes, lines, records int64
	matched               int // bytes of recordPrefix matched at the start of the current line; -1: no match
}

var recordPrefix = []byte(`{"type":"RECORD"`)

func (c *counter) Write(p []byte) (int, error) {
	n := len(p)
	c.bytes += int64(n)
	for len(p) > 0 {
		if c.matched >= 0 && c.matched < len(recordPrefix) {
			k := min(len(p), len(recordPrefix)-c.matched)
			if string(p[:k]) == string(recordPrefix[c.matched:c.matched+k]) {
				c.matched += k
				if c.matched == len(recordPrefix) {
					c.records++
				}
			} else {
				c.matched = -1
			}
		}
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			break
		}
		c.lines++
		p = p[i+1:]
		c.matched = 0
	}
	return n, nil
}

// tail keeps the last max bytes written to it.
type tail struct {
	b   []byte
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

// report is the table: one row per figure.
type report struct{ rows [][5]string }

// add appends a row; result is PASS, FAIL, ERROR or "" (no target).
func (r *report) add(scenario, figure, value, target, result string) {
	if target == "" {
		target = "-"
	}
	if result == "" {
		result = "-"
	}
	r.rows = append(r.rows, [5]string{scenario, figure, value, target, result})
}

// check appends a row with a target, PASS when ok.
func (r *report) check(scenario, figure, value, target string, ok bool) {
	result := "FAIL"
	if ok {
		result = "PASS"
	}
	r.add(scenario, figure, value, target, result)
}

func (r *report) print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tFIGURE\tVALUE\tTARGET\tRESULT")
	for _, row := range r.rows {
		fmt.Fprintln(tw, strings.Join(row[:], "\t"))
	}
	tw.Flush()
}

func progress(msg string) {
	fmt.Fprintf(os.Stderr, "bench %s %s\n", time.Now().Format("15:04:05"), msg)
}

// thousands formats n with commas: 1,000,000.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// loadAvg is the 1-minute load average, or "?" where /proc is not.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

func mib(kib int64) float64 { return float64(kib) / 1024 }
