package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The limit scenario measures the tap against the real limit of its
// machine: the same pages, pre-generated and served from memory on the
// bench's cores, read by the pinned tap and, interleaved with it, by a
// pinned raw copy that writes every body to the same kind of stdout pipe.
// Medians of limitRuns of each.
const limitRuns = 3

// memPages holds every events page of one walk, by its since_id ("" for
// the first), as the demo answered it.
type memPages map[string][]byte

// fetchPages walks the demo's n events the way the tap does and keeps
// every body.
func fetchPages(ctx context.Context, n, size int) (memPages, error) {
	srv, url, err := startDemo(eventsDemo(n))
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	pages := memPages{}
	err = walkEvents(ctx, url, size, n/size+2, func(since string, body []byte) error {
		pages[since] = bytes.Clone(body)
		return nil
	})
	return pages, err
}

// walkEvents requests /v1/events?since_id=X&limit=size, X the last id of
// the page before, until a short page, calling page with each body (valid
// until it returns).
func walkEvents(ctx context.Context, url string, size, maxPages int, page func(since string, body []byte) error) error {
	client := &http.Client{Transport: &http.Transport{}, Timeout: time.Minute}
	defer client.CloseIdleConnections()
	var body bytes.Buffer
	idKey := []byte(`{"id":`)
	since := ""
	for i := 0; ; i++ {
		if i >= maxPages {
			return fmt.Errorf("no short page after %d pages", i)
		}
		u := url + "/v1/events?limit=" + strconv.Itoa(size)
		if since != "" {
			u = url + "/v1/events?since_id=" + since + "&limit=" + strconv.Itoa(size)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		body.Reset()
		_, err = io.Copy(&body, resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", u, resp.Status)
		}
		data := body.Bytes()
		if err := page(since, data); err != nil {
			return err
		}
		// Every event starts with {"id": (its payload does not).
		if bytes.Count(data, idKey) < size {
			return nil
		}
		last := data[bytes.LastIndex(data, idKey)+len(idKey):]
		end := bytes.IndexAny(last, ",}")
		if end < 0 {
			return fmt.Errorf("GET %s: cannot find the last id", u)
		}
		since = string(last[:end])
	}
}

// serve answers /v1/events from memory on loopback.
func (p memPages) serve() (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := p[r.URL.Query().Get("since_id")]
		if r.URL.Path != "/v1/events" || !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

// servePages is the bench binary run as the page server (-servepages):
// it generates n events' pages into memory, prints its URL and serves
// them until its stdin closes. A process of its own, so that the tap's
// peak RSS is not counted with the pages (a child's ru_maxrss includes
// its parent's memory before exec).
func servePages(n, size int) int {
	pages, err := fetchPages(context.Background(), n, size)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench -servepages:", err)
		return 1
	}
	url, stop, err := pages.serve()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench -servepages:", err)
		return 1
	}
	defer stop()
	fmt.Println(url)
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// startPages starts the page server on the bench's CPUs: off the tap's
// one CPU and, with three or more, off the two the parallel runs use too.
func (b *bench) startPages(self string, n int) (url string, stop func(), err error) {
	return b.startServer([]string{self, "-servepages", "-records", strconv.Itoa(n)})
}

// startServer starts args, a page server that prints its URL, as
// startPages does.
func (b *bench) startServer(args []string) (url string, stop func(), err error) {
	if cpus := b.pin.cpus; b.pin.taskset != "" && len(cpus) > 1 {
		args = append([]string{b.pin.taskset, "-c", formatCPUList(cpus[min(2, len(cpus)-1):])}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env, cmd.Stderr = cleanEnv(), os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() { in.Close(); cmd.Wait() }
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("the page server did not start: %v", err)
	}
	return strings.TrimSpace(line), stop, nil
}

// rawCopy is the bench binary run as the raw copy (-rawcopy URL): it walks
// the pages and writes each body to stdout, one write per page.
func rawCopy(url string, n, size int) int {
	err := walkEvents(context.Background(), url, size, n/size+2, func(_ string, body []byte) error {
		_, err := os.Stdout.Write(body)
		return err
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench -rawcopy:", err)
		return 1
	}
	return 0
}

// runPinned runs args on the tap's CPU with stdout counted through a pipe.
func (b *bench) runPinned(ctx context.Context, args []string, timeout time.Duration) (*tapRun, error) {
	args, env := b.pin.wrap(args, cleanEnv())
	return b.runCounted(ctx, args, env, b.pin.offTapCPU, timeout)
}

// runCounted runs args with stdout counted through a pipe, through run
// (which may move the bench off the tap's CPU meanwhile).
func (b *bench) runCounted(ctx context.Context, args, env []string, run func(func() error) error, timeout time.Duration) (*tapRun, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env, cmd.Dir = env, b.dir
	r := &tapRun{}
	stderr := &tail{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = &r.out, stderr
	start := time.Now()
	err := run(cmd.Run)
	r.wall = time.Since(start)
	if err != nil {
		return nil, fmt.Errorf("%s: %w; stderr ends with:\n%s", filepath.Base(args[len(args)-1]), err, stderr.b)
	}
	r.user, r.sys = cmd.ProcessState.UserTime(), cmd.ProcessState.SystemTime()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && runtime.GOOS == "linux" {
		r.maxRSSKiB = int64(ru.Maxrss)
	}
	return r, nil
}

// limit runs the scenario on n records, and the tap alone on n/10 for
// its peak RSS.
func (b *bench) limit(ctx context.Context, rep *report, n int) error {
	const sc = "limit"
	self, err := os.Executable()
	if err != nil {
		return err
	}
	progress(fmt.Sprintf("limit: generating %s events into memory", thousands(int64(n))))
	url, stop, err := b.startPages(self, n)
	if err != nil {
		return err
	}
	defer stop()
	cfg, err := b.eventsConfig(fmt.Sprintf("limit_%d.json", n), url, nil)
	if err != nil {
		return err
	}
	timeout := 2*time.Minute + time.Duration(n/10_000)*time.Second
	var taps, raws []*tapRun
	for i := range limitRuns {
		progress(fmt.Sprintf("limit: run %d of %d, tap then raw copy", i+1, limitRuns))
		t, err := b.runPinned(ctx, []string{b.bin, "--config", cfg}, timeout)
		if err != nil {
			return err
		}
		if t.out.records != int64(n) {
			return fmt.Errorf("the tap emitted %d RECORD messages, want %d", t.out.records, n)
		}
		r, err := b.runPinned(ctx, []string{self, "-rawcopy", url, "-records", strconv.Itoa(n)}, timeout)
		if err != nil {
			return err
		}
		taps, raws = append(taps, t), append(raws, r)
	}
	tap, raw := median(taps), median(raws)
	tapRate, rawRate := float64(n)/tap.wall.Seconds(), float64(n)/raw.wall.Seconds()
	tapCPU := float64(n) / (tap.user + tap.sys).Seconds()
	rep.add(sc, "runs", fmt.Sprintf("%d of each, interleaved; medians by wall time", limitRuns), "", "")
	rep.check(sc, "tap records/s (wall)", thousands(int64(tapRate)), ">= 700,000", tapRate >= 700_000)
	rep.check(sc, "tap records per CPU-second", thousands(int64(tapCPU)), ">= 1,000,000", tapCPU >= 1_000_000)
	rep.add(sc, "tap CPU user+sys", fmt.Sprintf("%.2f+%.2f s", tap.user.Seconds(), tap.sys.Seconds()), "", "")
	rep.add(sc, "raw copy records/s (wall)", thousands(int64(rawRate)), "", "")
	rep.add(sc, "raw copy records per CPU-second", thousands(int64(float64(n)/(raw.user+raw.sys).Seconds())), "", "")
	rep.check(sc, "tap/raw copy (records/s)", fmt.Sprintf("%.2f", tapRate/rawRate), ">= 0.50", tapRate/rawRate >= 0.5)

	small := n / 10
	progress(fmt.Sprintf("limit: tap on %s events for its peak RSS", thousands(int64(small))))
	surl, sstop, err := b.startPages(self, small)
	if err != nil {
		return err
	}
	defer sstop()
	scfg, err := b.eventsConfig(fmt.Sprintf("limit_%d.json", small), surl, nil)
	if err != nil {
		return err
	}
	s, err := b.runPinned(ctx, []string{b.bin, "--config", scfg}, timeout)
	if err != nil {
		return err
	}
	var peak int64
	for _, t := range taps {
		peak = max(peak, t.maxRSSKiB)
	}
	if peak == 0 || s.maxRSSKiB == 0 {
		return errors.New("no peak RSS from the operating system")
	}
	rep.check(sc, "tap peak RSS, "+thousands(int64(small))+" records", fmt.Sprintf("%.1f MiB", mib(s.maxRSSKiB)), "<= 16 MiB", mib(s.maxRSSKiB) <= 16)
	rep.check(sc, "tap peak RSS, "+thousands(int64(n))+" records (max of runs)", fmt.Sprintf("%.1f MiB", mib(peak)), "<= 16 MiB", mib(peak) <= 16)
	ratio := float64(peak) / float64(s.maxRSSKiB)
	rep.check(sc, "tap peak RSS ratio", fmt.Sprintf("%.2f", ratio), "<= 1.10", ratio <= 1.1)
	return b.parallel(ctx, rep, url, n, tapRate, timeout)
}

// parallel reads the same pages as two streams at once (events and a copy
// of it, max_parallel_streams 2) and as one stream alone, the tap on two
// CPUs both times, interleaved, medians of limitRuns: the two together
// should run at least 1.6 times the records/s of one. With three CPUs or
// more the page server and the stdout reader run on the others; with two
// they share the tap's, and take CPU time the second stream would use.
func (b *bench) parallel(ctx context.Context, rep *report, url string, n int, pinnedRate float64, timeout time.Duration) error {
	const sc = "limit"
	if b.pin.taskset == "" || len(b.pin.cpus) < 2 {
		rep.add(sc, "two streams / one (records/s)", "not measured: needs taskset and 2 CPUs", ">= 1.60", "-")
		return nil
	}
	cpus := b.pin.cpus[:2]
	configs := make([]string, 2)
	for i := range configs {
		streams := []any{b.stream("events", pageSize)}
		if i == 1 {
			twin := b.stream("events", pageSize)
			twin["name"] = "events_b"
			streams = append(streams, twin)
		}
		cfg := map[string]any{
			"base_url":             url,
			"rate_limit":           map[string]any{"requests_per_second": 0, "max_in_flight": 4},
			"max_parallel_streams": 2,
			"request_timeout_s":    60,
			"on_schema_violation":  "dead_letter",
			"dead_letter_path":     filepath.Join(b.dir, fmt.Sprintf("parallel_%d.dead_letter.jsonl", i+1)),
			"streams":              streams,
		}
		var err error
		if configs[i], err = b.writeConfig(fmt.Sprintf("parallel_%d.json", i+1), cfg); err != nil {
			return err
		}
	}
	runs := [2][]*tapRun{}
	for i := range limitRuns {
		progress(fmt.Sprintf("limit: run %d of %d on %d CPUs, one stream then two", i+1, limitRuns, len(cpus)))
		for k, cfg := range configs {
			args := []string{b.pin.taskset, "-c", formatCPUList(cpus), b.bin, "--config", cfg}
			t, err := b.runCounted(ctx, args, cleanEnv(), b.pin.offCPUs(2), 2*timeout)
			if err != nil {
				return err
			}
			if want := int64(n * (k + 1)); t.out.records != want {
				return fmt.Errorf("%d streams: the tap emitted %d RECORD messages, want %d", k+1, t.out.records, want)
			}
			runs[k] = append(runs[k], t)
		}
	}
	one, two := median(runs[0]), median(runs[1])
	oneRate, twoRate := float64(n)/one.wall.Seconds(), float64(2*n)/two.wall.Seconds()
	rep.add(sc, fmt.Sprintf("one stream on CPUs %s, records/s", formatCPUList(cpus)), thousands(int64(oneRate)), "", "")
	rep.add(sc, "two streams at once, records/s", thousands(int64(twoRate)), "", "")
	rep.check(sc, "two streams / one (records/s)", fmt.Sprintf("%.2f", twoRate/oneRate), ">= 1.60", twoRate/oneRate >= 1.6)
	if len(b.pin.cpus) < 3 {
		rep.add(sc, "two streams: page server and reader", "on the tap's two CPUs (3 CPUs keep them apart)", "", "")
	}
	// One stream already uses part of the second CPU (a page is scanned
	// while the one before is written); against the tap on one CPU:
	rep.add(sc, "two streams / one stream pinned to one CPU", fmt.Sprintf("%.2f", twoRate/pinnedRate), "", "")
	return nil
}

// median is the run of median wall time.
func median(runs []*tapRun) *tapRun {
	s := slices.Clone(runs)
	slices.SortFunc(s, func(a, b *tapRun) int { return int(a.wall - b.wall) })
	return s[len(s)/2]
}
