package integration_test

import (
	"math/rand/v2"
	"net/url"
	"testing"
	"time"

	"github.com/tap-dev/tap/demoapi"
)

// crashSetup is the data set and config of the crash tests: a chunked bars
// backfill (one-day windows, several pages each) next to sorted, unsorted
// and keyset incremental streams, with latency so that a run takes
// seconds.
type crashSetup struct {
	demo    demoapi.Config
	streams []string
	pages   map[string]int
	start   string
}

func newCrashSetup(long bool) crashSetup {
	days := 30
	dc := demoBase()
	dc.LatencyMS = 15
	dc.Customers, dc.Orders, dc.Events, dc.Issues, dc.BarsDays = 500, 40, 3000, 300, days
	if long {
		days = 60
		dc.Customers, dc.Events, dc.Issues, dc.BarsDays = 1000, 5000, 400, days
	}
	dc.SpanDays = float64(days)
	return crashSetup{
		demo:    dc,
		streams: []string{"bars", "customers", "orders", "events", "issues"},
		pages:   map[string]int{"bars": 100, "customers": 10, "orders": 10, "events": 50, "issues": 10},
		start:   today.AddDate(0, 0, -days-1).Format(time.RFC3339),
	}
}

func (c crashSetup) config(t *testing.T, base string) map[string]any {
	defs := demoStreams(t, c.pages, c.streams...)
	for _, d := range defs {
		m := d.(map[string]any)
		if m["name"] == "bars" {
			m["incremental"].(map[string]any)["chunk_days"] = 1
		}
	}
	cfg := tapConfig(base, defs)
	cfg["start_date"] = c.start
	return cfg
}

// barsResumeCheck checks that the first bars request of a run starts where
// the state it resumed from says: the window in progress, else the
// bookmark (overlap 0), else start_date.
func barsResumeCheck(t *testing.T, run int, state map[string]any, start string, reqs []loggedReq) {
	t.Helper()
	var first *loggedReq
	for i := range reqs {
		if reqs[i].Run == run && reqs[i].Path == "/v1/bars" {
			first = &reqs[i]
			break
		}
	}
	if first == nil {
		return // killed before bars began
	}
	wantFrom, wantTo := start, ""
	if w, ok := state["window"].(map[string]any); ok && w["start"] != nil {
		wantFrom, _ = w["start"].(string)
		wantTo, _ = w["end"].(string)
	} else if v, ok := state["replication_key_value"].(string); ok {
		wantFrom = v
	}
	if got := first.Query.Get("from"); got != wantFrom {
		t.Errorf("run %d: the first bars request starts at from=%s, want %s (state %v)", run, got, wantFrom, state)
	}
	if wantTo != "" && first.Query.Get("to") != wantTo {
		t.Errorf("run %d: the first bars request ends at to=%s, want the window's end %s", run, first.Query.Get("to"), wantTo)
	}
}

// TestCrashResume kills the tap with SIGKILL at random moments, restarts
// it each time from the last STATE the loader committed, and checks that
// the final tables equal the source, that the restarts cost at most half
// again the requests of an uninterrupted run, and that the bars backfill
// resumes at the window recorded in the state.
func TestCrashResume(t *testing.T) {
	t.Parallel()
	kills, seed := 5, uint64(20260830)
	if *long {
		kills, seed = 24, 4242
	}
	setup := newCrashSetup(*long)

	// The uninterrupted run: its requests and duration.
	base0Srv, base0 := startDemo(t, setup.demo)
	d0 := newTapDir(t, setup.config(t, base0))
	l0 := newLoader(t)
	began := time.Now()
	if r := d0.sync(l0, 3*time.Minute); r.code != 0 {
		t.Fatalf("uninterrupted run: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	full := time.Since(began)
	fullReqs := base0Srv.Stats().Requests
	t.Logf("uninterrupted run: %d requests in %s", fullReqs, full.Round(time.Millisecond))

	srv, err := demoapi.New(setup.demo)
	if err != nil {
		t.Fatal(err)
	}
	log := &reqLog{}
	base := serve(t, log.wrap(srv))
	d := newTapDir(t, setup.config(t, base))
	l := newLoader(t)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	t.Logf("seed %d, %d kills", seed, kills)

	done, killed, run := false, 0, 0
	for run < kills*3 && killed < kills {
		run++
		log.setRun(run)
		barsState := l.stateBookmark("bars")
		// Spread the kills over the whole job, whatever the speed of
		// the machine: each run is killed at a random moment after a
		// random share of the job's requests, counting the ones a
		// restart repeats.
		per := float64(fullReqs+kills*8) / float64(kills+1)
		n := max(1, int((0.4+0.7*rng.Float64())*per))
		jitter := time.Duration(rng.Float64() * float64(40*time.Millisecond))
		r := d.syncKill(l, log.after(run, n), jitter, 2*time.Minute, nil)
		barsResumeCheck(t, run, barsState, setup.start, log.all())
		t.Logf("run %d: killed=%v %s after request %d, during %v; bars now at %v", run, r.killed, jitter.Round(time.Millisecond), n,
			activeStreams(log.all(), run), l.stateBookmark("bars")["window"])
		if r.killed {
			killed++
			continue
		}
		if r.code != 0 {
			t.Fatalf("run %d: exit %d; stderr:\n%s", run, r.code, r.stderr)
		}
		done = true
		break
	}
	if killed < kills {
		t.Errorf("only %d kills before the job finished, want %d", killed, kills)
	}
	if !done {
		run++
		log.setRun(run)
		barsState := l.stateBookmark("bars")
		if r := d.sync(l, 3*time.Minute); r.code != 0 {
			t.Fatalf("final run: exit %d; stderr:\n%s", r.code, r.stderr)
		}
		barsResumeCheck(t, run, barsState, setup.start, log.all())
	}
	for _, name := range setup.streams {
		assertTable(t, l, name, demoKeys[name], source(t, srv, name))
	}
	total := srv.Stats().Requests
	t.Logf("%d runs, %d kills: %d requests, %.2f× the uninterrupted run", run, killed, total, float64(total)/float64(fullReqs))
	if float64(total) > 1.5*float64(fullReqs) {
		t.Errorf("the interrupted runs made %d requests, more than 1.5× the %d of an uninterrupted run", total, fullReqs)
	}
}

// activeStreams lists the endpoints of the last requests of a run.
func activeStreams(reqs []loggedReq, run int) []string {
	seen := map[string]bool{}
	var out []string
	for i := len(reqs) - 1; i >= 0 && len(out) < 2; i-- {
		if reqs[i].Run == run && !seen[reqs[i].Path] {
			seen[reqs[i].Path] = true
			out = append(out, reqs[i].Path)
		}
	}
	return out
}

// TestCrashCutLine kills the tap while a full-table stream with large
// pages is being written, so that stdout overflows the tap's buffer
// between two STATEs and the kill can cut a line in half. The loader drops
// the cut line; the next run (full table: from scratch, a new table
// version) completes the table, and ACTIVATE_VERSION drops nothing that
// is still in the source.
func TestCrashCutLine(t *testing.T) {
	t.Parallel()
	dc := demoBase()
	dc.Invoices, dc.LatencyMS = 4000, 30
	srv, err := demoapi.New(dc)
	if err != nil {
		t.Fatal(err)
	}
	log := &reqLog{run: 1}
	base := serve(t, log.wrap(srv))
	d := newTapDir(t, tapConfig(base, demoStreams(t, map[string]int{"invoices": 1000}, "invoices")))
	l := newLoader(t)
	r := d.syncKill(l, log.after(1, 3), 10*time.Millisecond, time.Minute, nil)
	if !r.killed {
		t.Fatalf("the run was not killed (exit %d)", r.code)
	}
	cut := len(r.stdout) > 0 && r.stdout[len(r.stdout)-1] != '\n'
	t.Logf("killed after %d bytes of stdout, %d invoices received; last line cut: %v", len(r.stdout), l.received["invoices"], cut)
	log.setRun(2)
	if r := d.sync(l, time.Minute); r.code != 0 {
		t.Fatalf("second run: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	assertTable(t, l, "invoices", demoKeys["invoices"], source(t, srv, "invoices"))
}

// TestCrashFullTableResumesAtItsPage kills the tap inside a full-table
// stream and checks that the next run starts on the page after the last
// one its STATE covers, not on page 1: the first request of run 2 is the
// state's resume request, and both runs together send at most two pages
// more than an uninterrupted walk (the page being written at the kill,
// and the one prefetched behind it).
func TestCrashFullTableResumesAtItsPage(t *testing.T) {
	t.Parallel()
	dc := demoBase()
	dc.Invoices, dc.LatencyMS = 1000, 20
	srv, err := demoapi.New(dc)
	if err != nil {
		t.Fatal(err)
	}
	log := &reqLog{run: 1}
	base := serve(t, log.wrap(srv))
	d := newTapDir(t, tapConfig(base, demoStreams(t, map[string]int{"invoices": 50}, "invoices")))
	l := newLoader(t)
	r := d.syncKill(l, log.after(1, 8), 0, time.Minute, nil)
	if !r.killed {
		t.Fatalf("the run was not killed (exit %d)", r.code)
	}
	resume, _ := l.stateBookmark("invoices")["resume"].(map[string]any)
	if resume == nil {
		t.Fatalf("the last STATE has no resume object: %v", l.stateBookmark("invoices"))
	}
	req, _ := resume["request"].(map[string]any)
	want := url.Values{}
	q, _ := req["query"].(map[string]any)
	for k, vs := range q {
		for _, v := range vs.([]any) {
			want.Add(k, v.(string))
		}
	}
	log.setRun(2)
	if r := d.sync(l, time.Minute); r.code != 0 {
		t.Fatalf("second run: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	assertTable(t, l, "invoices", demoKeys["invoices"], source(t, srv, "invoices"))
	var run1, run2 int
	var first *loggedReq
	for _, q := range log.all() {
		if q.Path != "/v1/invoices" {
			continue
		}
		if q.Run == 1 {
			run1++
		} else {
			if first == nil {
				first = &q
			}
			run2++
		}
	}
	if first == nil || want.Get("offset") == "" {
		t.Fatalf("resume %v, first request of run 2 %v", resume, first)
	}
	if first.Query.Encode() != want.Encode() {
		t.Errorf("run 2 began with %v, want the resume position %v", first.Query, want)
	}
	pages := 1000/50 + 1 // the last, empty page ends the walk
	t.Logf("killed after %d requests; resumed at %s; %d + %d requests for a %d-page walk", run1, want, run1, run2, pages)
	if run1+run2 > pages+2 {
		t.Errorf("%d + %d requests, more than two pages beyond the %d of an uninterrupted walk", run1, run2, pages)
	}
}
