package integration_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	// Small pages: a job of many requests, over which a kill's cost
	// (the pages in flight) is measured.
	pages := map[string]int{"bars": 100, "customers": 10, "orders": 10, "events": 20, "issues": 10}
	if long {
		days = 60
		dc.Customers, dc.Orders, dc.Events, dc.Issues, dc.BarsDays = 1000, 200, 6000, 400, days
		pages = map[string]int{"bars": 50, "customers": 5, "orders": 10, "events": 10, "issues": 5}
	}
	dc.SpanDays = float64(days)
	return crashSetup{
		demo:    dc,
		streams: []string{"bars", "customers", "orders", "order_items", "events", "issues"},
		pages:   pages,
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
// the final tables equal the source, that the bars backfill resumes at the
// window recorded in the state, and that all the runs together send at
// most 1.05× the requests of an uninterrupted run (every request counts:
// pages of every stream, child walks, windows). A kill costs the pages in
// flight: one per stream being walked (two run at once), and the parent's
// page for a kill inside a child walk; with 24 kills that stays under 5%
// of a job of about 1,500 requests, which is why the pages are small.
func TestCrashResume(t *testing.T) {
	t.Parallel()
	kills, seed := 5, uint64(20260830)
	if *long {
		kills, seed = 24, 4242
	}
	setup := newCrashSetup(*long)

	// The uninterrupted run: its requests and duration.
	base0Srv, err := demoapi.New(setup.demo)
	if err != nil {
		t.Fatal(err)
	}
	log0 := &reqLog{}
	base0 := serve(t, log0.wrap(base0Srv))
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
	defer func() { logResent(t, log0.all(), log.all()) }()
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
	if float64(total) > 1.05*float64(fullReqs) {
		t.Errorf("the interrupted runs made %d requests, more than 1.05× the %d of an uninterrupted run", total, fullReqs)
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

// holdOnce passes requests on to h, except the first one hold accepts:
// that one waits until release is closed (or the client goes away), so
// that a kill lands while it is in flight and the pages before it are
// written.
// held is closed when that request arrives.
func holdOnce(h http.Handler, hold func(r *http.Request) bool, held, release chan struct{}) http.Handler {
	var once sync.Once
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		this := false
		if hold(r) {
			once.Do(func() { this = true; close(held) })
		}
		if this {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		h.ServeHTTP(w, r)
	})
}

// stateLine returns the bookmarks of a STATE line, or nil for another line.
func stateLine(line []byte) map[string]any {
	if !bytes.HasPrefix(line, []byte(`{"type":"STATE"`)) {
		return nil
	}
	var m struct {
		Value struct {
			Bookmarks map[string]any `json:"bookmarks"`
		} `json:"value"`
	}
	if json.Unmarshal(line, &m) != nil {
		return nil
	}
	return m.Value.Bookmarks
}

// dig returns the value at a path of nested objects, or nil.
func dig(v any, path ...string) any {
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// killInside is one SIGKILL inside a stream's walk: an uninterrupted run
// on its own server counts the requests of the job; then a run is killed
// once the request hold accepts is held in flight and a STATE satisfying
// killWhen has been written, and a second run completes the job from the
// last STATE. It returns the requests of the uninterrupted run and of both
// others (tagged run 1 and 2), and the loader and the server of the
// interrupted job.
type killInside struct {
	demo    demoapi.Config
	streams []any
	wrap    func(http.Handler) http.Handler // the demo as the test serves it (nil: as is)
	// target returns, from the requests of the uninterrupted run, the
	// request to hold and the STATE to kill at.
	target func(base []loggedReq) (hold func(r *http.Request) bool, killWhen func(bookmarks map[string]any) bool)
}

func (k killInside) run(t *testing.T) (base, reqs []loggedReq, l *loader, srv *demoapi.Server) {
	t.Helper()
	wrap := k.wrap
	if wrap == nil {
		wrap = func(h http.Handler) http.Handler { return h }
	}
	srv0, err := demoapi.New(k.demo)
	if err != nil {
		t.Fatal(err)
	}
	log0 := &reqLog{run: 1}
	d0 := newTapDir(t, tapConfig(serve(t, log0.wrap(wrap(srv0))), k.streams))
	if r := d0.sync(newLoader(t), time.Minute); r.code != 0 {
		t.Fatalf("uninterrupted run: exit %d; stderr:\n%s", r.code, r.stderr)
	}

	hold, killWhen := k.target(log0.all())
	if srv, err = demoapi.New(k.demo); err != nil {
		t.Fatal(err)
	}
	held, release, written, both := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	log := &reqLog{run: 1}
	d := newTapDir(t, tapConfig(serve(t, log.wrap(holdOnce(wrap(srv), hold, held, release))), k.streams))
	l = newLoader(t)
	go func() {
		for _, ch := range []chan struct{}{held, written} {
			select {
			case <-ch:
			case <-release:
				return
			}
		}
		close(both)
	}()
	var once sync.Once
	r := d.syncKill(l, both, 0, time.Minute, func(line []byte) bool {
		if bm := stateLine(line); bm != nil && killWhen(bm) {
			once.Do(func() { close(written) })
		}
		return false
	})
	close(release)
	if !r.killed {
		t.Fatalf("the run was not killed (exit %d); stderr:\n%s", r.code, r.stderr)
	}
	log.setRun(2)
	if r := d.sync(l, time.Minute); r.code != 0 {
		t.Fatalf("second run: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	return log0.all(), log.all(), l, srv
}

// resent returns the requests of run 2 that run 1 had sent too.
func resent(reqs []loggedReq) []string {
	sent := map[string]bool{}
	var out []string
	for _, q := range reqs {
		k := reqKey(q)
		if q.Run == 1 {
			sent[k] = true
		} else if sent[k] {
			out = append(out, k)
		}
	}
	return out
}

func reqKey(q loggedReq) string {
	return q.Method + " " + q.Path + "?" + q.Query.Encode() + " " + string(q.Body)
}

func firstOf(reqs []loggedReq, run int) loggedReq {
	for _, q := range reqs {
		if q.Run == run {
			return q
		}
	}
	return loggedReq{}
}

// TestCrashUnsortedResumesAtItsPage kills the tap on page 8 of an
// unsorted incremental stream (orders: a cursor walk whose bookmark moves
// only when the walk ends) and checks that the next run starts on page 8
// with the filter of page 1, that the two runs together send exactly one
// request more than an uninterrupted run — page 8, in flight at the kill
// — and that the bookmark at the end counts the pages before the kill.
func TestCrashUnsortedResumesAtItsPage(t *testing.T) {
	t.Parallel()
	dc := demoBase()
	dc.Orders = 200
	var pages atomic.Int64
	k := killInside{
		demo:    dc,
		streams: demoStreams(t, map[string]int{"orders": 10}, "orders"),
		target: func([]loggedReq) (func(*http.Request) bool, func(map[string]any) bool) {
			hold := func(r *http.Request) bool { return r.URL.Path == "/v1/orders" && pages.Add(1) == 8 }
			kill := func(bm map[string]any) bool {
				n, _ := dig(bm, "orders", "resume", "pages").(float64)
				return n == 7
			}
			return hold, kill
		},
	}
	base, reqs, l, srv := k.run(t)
	rows := source(t, srv, "orders")
	assertTable(t, l, "orders", demoKeys["orders"], rows)
	var run1 []loggedReq
	for _, q := range reqs {
		if q.Run == 1 {
			run1 = append(run1, q)
		}
	}
	if len(run1) != 8 {
		t.Fatalf("run 1 sent %d requests, want the 8 pages up to the one held", len(run1))
	}
	if got, want := reqKey(firstOf(reqs, 2)), reqKey(run1[7]); got != want {
		t.Errorf("run 2 began with %s, want page 8 as run 1 asked for it: %s", got, want)
	}
	if got := resent(reqs); len(got) != 1 || len(reqs) != len(base)+1 {
		t.Errorf("%d requests for a job an uninterrupted run does in %d; re-sent %q, want only page 8", len(reqs), len(base), got)
	}
	var high any
	for _, r := range rows {
		if high == nil || compareKeys(r["updated_at"], high) > 0 {
			high = r["updated_at"]
		}
	}
	if got := l.stateBookmark("orders")["replication_key_value"]; fmt.Sprint(got) != fmt.Sprint(high) {
		t.Errorf("bookmark %v after the resumed walk, want the largest updated_at of all pages, %v", got, high)
	}
	t.Logf("%d + %d requests, %d uninterrupted", len(run1), len(reqs)-len(run1), len(base))
}

// pagedItems serves the demo's order items in pages (offset, limit), so
// that a child stream's walk for one parent has several pages.
func pagedItems(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if !strings.HasSuffix(r.URL.Path, "/items") || q.Get("limit") == "" {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var body struct {
			Items []json.RawMessage `json:"items"`
		}
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &body) != nil {
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes())
			return
		}
		offset, _ := strconv.Atoi(q.Get("offset"))
		limit, _ := strconv.Atoi(q.Get("limit"))
		items := body.Items[min(offset, len(body.Items)):min(offset+limit, len(body.Items))]
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"items": items})
	})
}

// TestCrashChildResumesAtItsParent kills the tap inside a child stream's
// walk for one parent record (order_items, two items a page, below
// orders) and checks that the next run fetches again only the parent's
// page in progress, walks no child of the parents before it on that page,
// and goes on with the child's walk at its page: both runs together send
// exactly two requests more than an uninterrupted run, that parent page
// and the child page in flight at the kill.
func TestCrashChildResumesAtItsParent(t *testing.T) {
	t.Parallel()
	dc := demoBase()
	dc.Orders = 60
	defs := demoStreams(t, map[string]int{"orders": 10}, "orders", "order_items")
	defs[1].(map[string]any)["pagination"] = map[string]any{"type": "offset", "offset_param": "offset", "page_size_param": "limit", "page_size": 2}
	k := killInside{
		demo:    dc,
		streams: defs,
		wrap:    pagedItems,
		target: func(base []loggedReq) (func(*http.Request) bool, func(map[string]any) bool) {
			// A child's second page, past the first parent page.
			var path string
			for i, orders := 0, 0; i < len(base) && path == ""; i++ {
				if base[i].Path == "/v1/orders" {
					orders++
				} else if orders == 2 && base[i].Query.Get("offset") == "2" {
					path = base[i].Path
				}
			}
			if path == "" {
				t.Fatal("no child walk of two pages on the second parent page")
			}
			hold := func(r *http.Request) bool { return r.URL.Path == path && r.URL.Query().Get("offset") == "2" }
			// The STATE that says the walk goes on at the held page.
			kill := func(bm map[string]any) bool {
				url, _ := dig(bm, "orders", "resume", "child", "request", "url").(string)
				q, _ := dig(bm, "orders", "resume", "child", "request", "query", "offset").([]any)
				return url == path && len(q) == 1 && q[0] == "2"
			}
			return hold, kill
		},
	}
	base, reqs, l, srv := k.run(t)
	assertTable(t, l, "orders", demoKeys["orders"], source(t, srv, "orders"))
	assertTable(t, l, "order_items", demoKeys["order_items"], source(t, srv, "order_items"))
	var run1 []loggedReq
	var parentPage, held loggedReq
	for _, q := range reqs {
		if q.Run != 1 {
			continue
		}
		run1 = append(run1, q)
		if q.Path == "/v1/orders" {
			parentPage = q
		}
	}
	held = run1[len(run1)-1]
	var run2 []loggedReq
	for _, q := range reqs {
		if q.Run == 2 {
			run2 = append(run2, q)
		}
	}
	if len(run2) < 2 || reqKey(run2[0]) != reqKey(parentPage) || reqKey(run2[1]) != reqKey(held) {
		t.Errorf("run 2 began with %v, want the parent page in progress (%s), then the child page held at the kill (%s)", run2[:min(2, len(run2))], reqKey(parentPage), reqKey(held))
	}
	got := resent(reqs)
	if len(got) != 2 || len(reqs) != len(base)+2 {
		t.Errorf("%d requests for a job an uninterrupted run does in %d; re-sent %q, want only the parent page and the held child page", len(reqs), len(base), got)
	}
	t.Logf("killed during %s; %d + %d requests, %d uninterrupted", reqKey(held), len(run1), len(run2), len(base))
}

// logResent logs, per run of an interrupted job, its requests that an
// earlier run had sent too, by path, and those the uninterrupted run never
// sent (a window or filter the restart changed): where a restart's extra
// requests go.
func logResent(t *testing.T, base, reqs []loggedReq) {
	inBase := map[string]bool{}
	for _, q := range base {
		inBase[reqKey(q)] = true
	}
	firstRun := map[string]int{}
	type counts struct{ all, again, foreign map[string]int }
	byRun := map[int]*counts{}
	last := 0
	for _, q := range reqs {
		c := byRun[q.Run]
		if c == nil {
			c = &counts{map[string]int{}, map[string]int{}, map[string]int{}}
			byRun[q.Run] = c
		}
		last = max(last, q.Run)
		k := reqKey(q)
		path := q.Path
		if strings.HasSuffix(path, "/items") {
			path = "/v1/orders/{id}/items"
		}
		c.all[path]++
		if r, ok := firstRun[k]; ok && r < q.Run {
			c.again[path]++
		} else if !inBase[k] {
			c.foreign[path]++
		}
		if _, ok := firstRun[k]; !ok {
			firstRun[k] = q.Run
		}
	}
	for run := 1; run <= last; run++ {
		if c := byRun[run]; c != nil {
			t.Logf("run %d: sent %v; sent before %v; not in the uninterrupted run %v", run, c.all, c.again, c.foreign)
		}
	}
}

// TestCrashResumeRejected starts from a state whose resume cursor the API
// no longer accepts (the demo answers 400 to a cursor it did not issue):
// the tap warns, restarts the stream from its bookmark with the filter of
// a new walk, and completes the table.
func TestCrashResumeRejected(t *testing.T) {
	t.Parallel()
	dc := demoBase()
	srv, err := demoapi.New(dc)
	if err != nil {
		t.Fatal(err)
	}
	log := &reqLog{run: 1}
	d := newTapDir(t, tapConfig(serve(t, log.wrap(srv)), demoStreams(t, map[string]int{"orders": 10}, "orders")))
	l := newLoader(t)
	l.state = json.RawMessage(`{"bookmarks":{"orders":{"resume":{"request":{"method":"GET","url":"/v1/orders",` +
		`"query":{"cursor":["expired"],"limit":["10"]}},"filter":{"updated_since":"` + startDate + `"},"pages":3}}}}`)
	r := d.sync(l, time.Minute)
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if !bytes.Contains(r.stderr, []byte("WARN the API rejected the resume position")) {
		t.Errorf("no WARN about the rejected resume position; stderr:\n%s", r.stderr)
	}
	reqs := log.all()
	if len(reqs) < 2 || reqs[0].Query.Get("cursor") != "expired" || reqs[1].Query.Has("cursor") || reqs[1].Query.Get("updated_since") != startDate {
		t.Errorf("requests %v, want the rejected cursor, then page 1 from start_date", reqs[:min(2, len(reqs))])
	}
	assertTable(t, l, "orders", demoKeys["orders"], source(t, srv, "orders"))
	if res := l.stateBookmark("orders")["resume"]; res != nil {
		t.Errorf("resume left in the state after the walk ended: %v", res)
	}
}
