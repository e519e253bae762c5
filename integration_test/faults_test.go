package integration_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tap-dev/tap/demoapi"
)

// allDemo is every demo stream.
var allDemo = []string{"customers", "orders", "order_items", "events", "invoices", "tickets", "bars", "issues"}

// faultCase is one row of the fault matrix: a demo API with a fault, the
// tap run against it, and what the run must come to.
type faultCase struct {
	name    string
	streams []string
	demo    func(*demoapi.Config)
	config  func(map[string]any)
	// wrap, when set, sits between the tap and the demo server.
	wrap func(t *testing.T, h http.Handler) http.Handler
	exit int
	// errHas are substrings of the last stderr line (the error) when exit != 0.
	errHas []string
	// resume: after a failed run, a second run from its state against the
	// same data without the fault must complete the tables.
	resume bool
	// expect returns the rows the table of stream must hold when the
	// source is rows (nil: rows unchanged).
	expect func(stream string, rows []map[string]any) []map[string]any
	// check runs extra assertions after the run(s).
	check func(t *testing.T, f *faultRun)
}

// faultRun is what a case's check sees.
type faultRun struct {
	srv *demoapi.Server
	d   *tapDir
	l   *loader
	r   result
}

func TestFaults(t *testing.T) {
	var raSeconds, raDate retryAfterLog
	cases := []faultCase{
		{
			name:    "rate limit with Retry-After in seconds",
			streams: []string{"customers", "tickets"},
			demo:    func(c *demoapi.Config) { c.RequestsPerSecond = 4; c.RetryAfterS = 1 },
			config:  rateLimitConfig,
			wrap:    raSeconds.rewrite("seconds"),
			check:   func(t *testing.T, f *faultRun) { raSeconds.check(t, f.srv) },
		},
		{
			name:    "rate limit with Retry-After as an HTTP-date",
			streams: []string{"customers", "tickets"},
			demo:    func(c *demoapi.Config) { c.RequestsPerSecond = 4; c.RetryAfterS = 1 },
			config:  rateLimitConfig,
			wrap:    raDate.rewrite("date"),
			check:   func(t *testing.T, f *faultRun) { raDate.check(t, f.srv) },
		},
		{
			name:    "rate limit with the demo's own headers",
			streams: []string{"customers", "orders", "tickets"},
			demo:    func(c *demoapi.Config) { c.RequestsPerSecond = 8 },
			config: func(c map[string]any) {
				c["rate_limit"] = map[string]any{"requests_per_second": 30, "burst": 5, "max_in_flight": 4}
			},
			check: func(t *testing.T, f *faultRun) {
				// X-RateLimit-Remaining/Reset slow the tap down before the
				// API has to refuse it: a 429 now and then at most.
				st := f.srv.Stats()
				if n := st.ByStatus[429]; n*10 > st.Requests {
					t.Errorf("%d of %d requests got 429: the tap fights the rate limit", n, st.Requests)
				}
			},
		},
		{
			name: "8% 503s",
			demo: func(c *demoapi.Config) { c.FailRate = 0.08 },
		},
		{
			// A parent record that fails its schema is dead-lettered; its
			// children are valid records of their own and must still be
			// synced.
			name:    "drifted orders dead-lettered, their items still synced",
			streams: []string{"orders", "order_items"},
			demo:    func(c *demoapi.Config) { c.Drift = 2 },
			expect: func(stream string, rows []map[string]any) []map[string]any {
				if stream != "orders" {
					return rows
				}
				var out []map[string]any
				for _, r := range rows {
					if _, drifted := r["coupon_code"]; !drifted {
						out = append(out, r)
					}
				}
				return out
			},
			check: checkDeadLetters,
		},
		{
			name:   "30% 503s",
			demo:   func(c *demoapi.Config) { c.FailRate = 0.3 },
			config: func(c map[string]any) { c["retry"].(map[string]any)["max_attempts"] = 12 },
		},
		{
			name: "slow answers beyond the timeout",
			demo: func(c *demoapi.Config) { c.SlowRate = 0.08; c.SlowMS = 3000 },
			config: func(c map[string]any) {
				c["request_timeout_s"] = 0.3
				c["retry"].(map[string]any)["max_attempts"] = 8
			},
			check: func(t *testing.T, f *faultRun) {
				if f.srv.Stats().ByStatus[0] == 0 {
					t.Error("no request timed out; the case tests nothing")
				}
			},
		},
		{
			name:   "connection resets",
			demo:   func(c *demoapi.Config) { c.ResetRate = 0.1 },
			config: func(c map[string]any) { c["retry"].(map[string]any)["max_attempts"] = 8 },
		},
		{
			name:   "bodies cut short",
			demo:   func(c *demoapi.Config) { c.TruncateRate = 0.1 },
			config: func(c map[string]any) { c["retry"].(map[string]any)["max_attempts"] = 8 },
		},
		{
			name: "200 with an error body",
			demo: func(c *demoapi.Config) { c.ErrorBodyRate = 0.1 },
			config: func(c map[string]any) {
				c["retry"].(map[string]any)["max_attempts"] = 8
				for _, s := range c["streams"].([]any) {
					s.(map[string]any)["error_path"] = "error" // issues has none in the sample
				}
			},
		},
		{
			name:   "401 halfway",
			demo:   func(c *demoapi.Config) { c.UnauthorizedAfter = 25 },
			exit:   1,
			errHas: []string{"401", "check the credentials"},
			resume: true,
		},
		{
			name:   "418 ban",
			demo:   func(c *demoapi.Config) { c.TeapotAfter = 25 },
			exit:   75,
			errHas: []string{"418", "retry after"},
			resume: true,
		},
		{
			name:    "Retry-After beyond max_retry_after_s",
			streams: []string{"customers", "tickets"},
			demo:    func(c *demoapi.Config) { c.RequestsPerSecond = 4; c.RetryAfterS = 400 },
			config: func(c map[string]any) {
				rateLimitConfig(c)
				c["retry"].(map[string]any)["max_retry_after_s"] = 60
			},
			wrap:   new(retryAfterLog).rewrite("seconds"),
			exit:   75,
			errHas: []string{"429", "retry after"},
			resume: true,
		},
		{
			name:    "daily quota reached",
			streams: []string{"customers", "tickets"},
			config: func(c map[string]any) {
				c["rate_limit"].(map[string]any)["daily_quota"] = 5
			},
			exit:   75,
			errHas: []string{"quota", "retry after"},
			resume: true,
		},
		{
			name:    "503 on every attempt",
			streams: []string{"tickets"},
			demo:    func(c *demoapi.Config) { c.FailRate = 1 },
			config:  func(c map[string]any) { c["retry"].(map[string]any)["max_attempts"] = 3 },
			exit:    1,
			errHas:  []string{`"tickets"`, "/v1/tickets", "gave up after 3 attempts", "503"},
		},
		{
			name:    "inserts during an offset scan",
			streams: []string{"invoices"},
			demo:    func(c *demoapi.Config) { c.InvoicesGrowth = 3 },
			expect:  func(_ string, rows []map[string]any) []map[string]any { return rows[:len(rows)-3] },
		},
		{
			name:    "inserts during a keyset scan",
			streams: []string{"events"},
			demo:    func(c *demoapi.Config) { c.EventsGrowth = 9 },
			expect:  func(_ string, rows []map[string]any) []map[string]any { return rows[:len(rows)-9] },
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			runFaultCase(t, c)
		})
	}
	t.Run("late-committing rows", func(t *testing.T) {
		t.Parallel()
		testLateRows(t, nil)
	})
}

func runFaultCase(t *testing.T, c faultCase) {
	names := c.streams
	if names == nil {
		names = allDemo
	}
	dc := demoBase()
	if *long {
		// More pages, so more faults per run.
		dc.Customers, dc.Orders, dc.Events, dc.Invoices = 5*dc.Customers, 4*dc.Orders, 5*dc.Events, 5*dc.Invoices
		dc.Tickets, dc.Issues, dc.BarsDays = 5*dc.Tickets, 5*dc.Issues, 3*dc.BarsDays
	}
	if c.demo != nil {
		c.demo(&dc)
	}
	srv, err := demoapi.New(dc)
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = srv
	if c.wrap != nil {
		h = c.wrap(t, srv)
	}
	base := serve(t, h)
	cfg := tapConfig(base, demoStreams(t, nil, names...))
	if c.config != nil {
		c.config(cfg)
	}
	d := newTapDir(t, cfg)
	l := newLoader(t)
	r := d.sync(l, 2*time.Minute)
	if r.code != c.exit {
		t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, c.exit, r.stderr)
	}
	if c.exit != 0 {
		msg := lastLine(r.stderr)
		for _, want := range c.errHas {
			if !strings.Contains(msg, want) {
				t.Errorf("the error lacks %q: %s", want, msg)
			}
		}
		if c.exit == 75 && l.state == nil {
			t.Errorf("no STATE checkpointed before the run was deferred")
		}
		for _, name := range names {
			assertSubset(t, l, name, demoKeys[name], source(t, srv, name))
		}
	}
	if c.resume {
		// The same data without the fault: the run resumes from the state
		// and the tables end up complete.
		dc2 := dc
		dc2.UnauthorizedAfter, dc2.TeapotAfter, dc2.RequestsPerSecond = 0, 0, 0
		srv2, base2 := startDemo(t, dc2)
		cfg["base_url"] = base2
		delete(cfg["rate_limit"].(map[string]any), "daily_quota")
		d.writeConfig(cfg)
		r2 := d.sync(l, 2*time.Minute)
		if r2.code != 0 {
			t.Fatalf("resumed run: exit %d, want 0; stderr:\n%s", r2.code, r2.stderr)
		}
		srv = srv2
	}
	if c.exit == 0 || c.resume {
		for _, name := range names {
			want := source(t, srv, name)
			if c.expect != nil {
				want = c.expect(name, want)
			}
			assertTable(t, l, name, demoKeys[name], want)
		}
	}
	for name, n := range l.dupes {
		t.Errorf("stream %q: %d records sent twice in the last run", name, n)
	}
	if c.check != nil {
		c.check(t, &faultRun{srv: srv, d: d, l: l, r: r})
	}
	t.Logf("server: %+v; tap: %s", srv.Stats().ByStatus, summaryLine(r.stderr))
}

// summaryLine is the tap's "run summary" log line.
func summaryLine(stderr []byte) string {
	for _, line := range strings.Split(string(stderr), "\n") {
		if strings.Contains(line, "run summary") {
			return line
		}
	}
	return ""
}

// rateLimitConfig makes the tap ask faster than the demo allows, one
// request at a time, so that every 429 is followed by the retry it caused.
func rateLimitConfig(c map[string]any) {
	c["rate_limit"] = map[string]any{"requests_per_second": 50, "burst": 10, "max_in_flight": 1}
	c["max_parallel_streams"] = 1
}

// checkDeadLetters: the drifted orders are in the dead-letter file, whole.
func checkDeadLetters(t *testing.T, f *faultRun) {
	b, err := os.ReadFile(filepath.Join(f.d.dir, "dead_letter.jsonl"))
	if err != nil {
		t.Fatalf("dead-letter file: %v", err)
	}
	want := map[string]bool{}
	for _, r := range source(t, f.srv, "orders") {
		if _, drifted := r["coupon_code"]; drifted {
			k, _ := keyOf(r, []string{"id"})
			want[k] = true
		}
	}
	got := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var dl struct {
			Stream string         `json:"stream"`
			Record map[string]any `json:"record"`
			Errors []any          `json:"errors"`
		}
		if err := json.Unmarshal(sc.Bytes(), &dl); err != nil {
			t.Errorf("dead letter %q: %v", sc.Text(), err)
			continue
		}
		if dl.Stream != "orders" || len(dl.Errors) == 0 || dl.Record == nil {
			t.Errorf("dead letter %s: want an orders record with its errors", sc.Text())
			continue
		}
		k, _ := keyOf(dl.Record, []string{"id"})
		got[k] = true
	}
	if len(want) != 2 || len(got) != len(want) {
		t.Errorf("dead letters %v, want the drifted orders %v", got, want)
	}
	for k := range want {
		if !got[k] {
			t.Errorf("drifted order %s is not in the dead-letter file", k)
		}
	}
}

// retryAfterLog rewrites the Retry-After of 429s into one form and records
// when each 429 was answered and when the next request came.
type retryAfterLog struct {
	mu     sync.Mutex
	events []raEvent
	n429   int
}

type raEvent struct {
	at       time.Time
	is429    bool
	notEarly time.Time // for a 429: the earliest time the next request may come
	header   string
}

func (l *retryAfterLog) rewrite(form string) func(t *testing.T, h http.Handler) http.Handler {
	return func(t *testing.T, h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			now := time.Now()
			l.mu.Lock()
			l.events = append(l.events, raEvent{at: now})
			l.mu.Unlock()
			h.ServeHTTP(&raWriter{ResponseWriter: w, form: form, log: l, start: now}, r)
		})
	}
}

type raWriter struct {
	http.ResponseWriter
	form  string
	log   *retryAfterLog
	start time.Time
}

func (w *raWriter) WriteHeader(code int) {
	h := w.Header()
	// An API that sends Retry-After but no rate-limit headers, so the
	// client cannot slow down before the 429s.
	for _, k := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
		h.Del(k)
	}
	if code == http.StatusTooManyRequests {
		now := time.Now()
		ra := h.Get("Retry-After")
		var at time.Time
		if secs, err := strconv.Atoi(ra); err == nil {
			at = now.Add(time.Duration(secs) * time.Second)
		} else if d, err := http.ParseTime(ra); err == nil {
			at = d
		}
		if w.form == "seconds" {
			secs := int(math.Ceil(at.Sub(now).Seconds()))
			ra = strconv.Itoa(max(secs, 1))
			at = now.Add(time.Duration(max(secs, 1)) * time.Second)
		} else {
			at = at.Truncate(time.Second).Add(time.Second)
			ra = at.UTC().Format(http.TimeFormat)
		}
		h.Set("Retry-After", ra)
		w.log.mu.Lock()
		w.log.n429++
		w.log.events = append(w.log.events, raEvent{at: now, is429: true, notEarly: at, header: ra})
		w.log.mu.Unlock()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *raWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// check: there were 429s, and after each the next request came no earlier
// than Retry-After said, and not much later.
func (l *retryAfterLog) check(t *testing.T, srv *demoapi.Server) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n429 == 0 {
		t.Fatalf("the demo answered no 429 (server %v); the case tests nothing", srv.Stats().ByStatus)
	}
	for i, e := range l.events {
		if !e.is429 {
			continue
		}
		var next *raEvent
		for j := i + 1; j < len(l.events); j++ {
			if !l.events[j].is429 {
				next = &l.events[j]
				break
			}
		}
		if next == nil {
			t.Errorf("no request after the 429 answered at %s", e.at.Format(time.StampMilli))
			continue
		}
		early := e.notEarly.Sub(next.at)
		late := next.at.Sub(e.notEarly)
		if early > 20*time.Millisecond {
			t.Errorf("Retry-After %q answered at %s: the next request came %s too early", e.header, e.at.Format(time.StampMilli), early)
		}
		if late > 1500*time.Millisecond {
			t.Errorf("Retry-After %q answered at %s: the next request came %s after the time it allowed", e.header, e.at.Format(time.StampMilli), late)
		}
	}
	t.Logf("%d 429s", l.n429)
}

// testLateRows runs customers, orders (with order_items) and issues twice:
// first at a Now at which some rows were updated but not yet committed,
// then later. The union of the runs equals the source at the later time,
// late rows included. When log is set, the second run's server records
// requests into it (run 2).
func testLateRows(t *testing.T, check func(t *testing.T, l *loader, state1 json.RawMessage, log *reqLog)) {
	names := []string{"customers", "orders", "order_items", "issues"}
	dc := demoBase()
	dc.LateRate = 0.3
	probe, err := demoapi.New(dc)
	if err != nil {
		t.Fatal(err)
	}
	// A Now at which the last late customer is updated but not committed.
	late := probe.LateRows("customers")
	if len(late) == 0 {
		t.Fatal("no late customers")
	}
	row := late[len(late)-1]
	for i := len(late) - 1; i >= 0 && !row.CommittedAt.Before(today); i-- {
		row = late[i]
	}
	now1 := row.UpdatedAt.Add(row.CommittedAt.Sub(row.UpdatedAt) / 2)
	dc1 := dc
	dc1.Now = now1.Format(time.RFC3339)
	srv1, base1 := startDemo(t, dc1)
	invisible := 0
	for _, name := range []string{"customers", "orders", "issues"} {
		for _, lr := range srv1.LateRows(name) {
			if !lr.UpdatedAt.After(now1) && lr.CommittedAt.After(now1) {
				invisible++
			}
		}
	}
	if invisible == 0 {
		t.Fatal("no row is waiting to commit at the first run")
	}

	d := newTapDir(t, tapConfig(base1, demoStreams(t, nil, names...)))
	l := newLoader(t)
	if r := d.sync(l, time.Minute); r.code != 0 {
		t.Fatalf("first run: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	for _, name := range names {
		assertTable(t, l, name, demoKeys[name], source(t, srv1, name))
	}
	if _, ok := l.rows("customers")[keyText(row.ID)]; ok {
		t.Fatalf("late customer %v was emitted before it committed", row.ID)
	}
	state1 := l.state

	// Later: every row has committed.
	dc2 := dc
	dc2.Now = today.Add(time.Hour).Format(time.RFC3339)
	srv2, err := demoapi.New(dc2)
	if err != nil {
		t.Fatal(err)
	}
	log := &reqLog{run: 2}
	base2 := serve(t, log.wrap(srv2))
	cfg := tapConfig(base2, demoStreams(t, nil, names...))
	d.writeConfig(cfg)
	if r := d.sync(l, time.Minute); r.code != 0 {
		t.Fatalf("second run: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if l.seen["customers"][keyText(row.ID)] == 0 {
		t.Errorf("late customer %v (updated %s, committed %s) was not emitted by the second run", row.ID, row.UpdatedAt, row.CommittedAt)
	}
	for _, name := range names {
		assertTable(t, l, name, demoKeys[name], source(t, srv2, name))
	}
	if check != nil {
		check(t, l, state1, log)
	}
}

// keyText is the loader's key text of a one-column key value.
func keyText(id any) string {
	switch v := id.(type) {
	case int64:
		return "[" + strconv.FormatInt(v, 10) + "]"
	case string:
		b, _ := json.Marshal([]string{v})
		return string(b)
	}
	b, _ := json.Marshal([]any{id})
	return string(b)
}

// TestFaultsSecretsEchoed: an API that echoes the credentials back, in an
// error message and inside a record that fails its schema, does not make
// the tap print them: not on stdout, stderr, in STATE or the dead-letter
// file.
func TestFaultsSecretsEchoed(t *testing.T) {
	t.Parallel()
	echo := func(r *http.Request) string {
		return "you sent Authorization=" + r.Header.Get("Authorization") + " query=" + r.URL.RawQuery
	}
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/records":
			writeJSONBody(w, map[string]any{"items": []any{
				map[string]any{"id": 1, "name": "fine"},
				map[string]any{"id": "not-a-number", "name": echo(r)}, // dead-lettered with the echo
			}})
		case "/fail":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": echo(r)}}) //nolint:errcheck
		}
	}))
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"id": map[string]any{"type": "integer"}, "name": map[string]any{"type": "string"},
	}}
	for _, auth := range []map[string]any{
		{"type": "bearer", "token": sentinel},
		{"type": "api_key", "name": "api_key", "value": sentinel, "in": "query"},
		{"type": "api_key", "name": "X-Key", "value": sentinel, "in": "header"},
		{"type": "basic", "username": "me", "password": sentinel},
		// A key with characters that are escaped in a query: the API
		// echoes the escaped form, which holds the sentinel too.
		{"type": "api_key", "name": "api_key", "value": sentinel + "+/= x", "in": "query", "case": "escaped"},
	} {
		name := strings.Trim(auth["type"].(string)+"_"+fmtAny(auth["in"])+"_"+fmtAny(auth["case"]), "_")
		delete(auth, "case")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			streams := []any{
				map[string]any{"name": "records", "path": "/records", "records_path": "items", "primary_key": []string{"id"},
					"pagination": map[string]any{"type": "none"}, "schema": schema},
				map[string]any{"name": "failing", "path": "/fail", "records_path": "items", "primary_key": []string{"id"},
					"pagination": map[string]any{"type": "none"}, "schema": schema},
			}
			cfg := tapConfig(base, streams)
			cfg["auth"] = auth
			cfg["max_parallel_streams"] = 1
			d := newTapDir(t, cfg)
			r := d.sync(newLoader(t), time.Minute) // checks stdout, stderr, state and dead letters
			// Basic credentials travel base64-encoded: that form is the
			// password too.
			b64 := base64.StdEncoding.EncodeToString([]byte("me:" + sentinel))
			dl, _ := os.ReadFile(filepath.Join(d.dir, "dead_letter.jsonl"))
			for name, out := range map[string][]byte{"stdout": r.stdout, "stderr": r.stderr, "dead_letter.jsonl": dl} {
				if bytes.Contains(out, []byte(b64)) {
					t.Errorf("the base64 basic-auth credentials leaked into %s", name)
				}
			}
			if r.code != 1 || !strings.Contains(lastLine(r.stderr), "422") {
				t.Errorf("exit %d, error %q; want exit 1 naming the 422", r.code, lastLine(r.stderr))
			}
			b, err := os.ReadFile(filepath.Join(d.dir, "dead_letter.jsonl"))
			if err != nil || !bytes.Contains(b, []byte("not-a-number")) {
				t.Errorf("the record that fails its schema is not in the dead-letter file (%v): %s", err, b)
			}
		})
	}
}

func fmtAny(v any) string {
	if v == nil {
		return ""
	}
	return v.(string)
}
