package integration_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tap-dev/tap/demoapi"
)

// One 429 with Retry-After: 3, answered mid-run while three streams run:
// no stream sends anything until the 3 s have passed (the demo logs when
// every request arrived), and the run then completes every table.
//
// One request in flight at a time makes the count exact: the 429 pauses
// the shared limiter before the slot it held is given back, so a request
// arriving inside the window could only come from a stream the pause did
// not hold back.
func TestShared429PausesEveryStream(t *testing.T) {
	names := []string{"customers", "orders", "tickets"}
	dc := demoBase()
	dc.Throttle429At = 12
	srv, base := startDemo(t, dc)
	cfg := tapConfig(base, demoStreams(t, nil, names...))
	cfg["rate_limit"] = map[string]any{"requests_per_second": 50, "burst": 1, "max_in_flight": 1}
	cfg["max_parallel_streams"] = 3
	d := newTapDir(t, cfg)
	l := newLoader(t)
	r := d.sync(l, 2*time.Minute)
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	from, to, inside, ok := srv.Throttle429Window()
	if !ok {
		t.Fatalf("the demo never answered its 429 (requests: %+v)", srv.Stats())
	}
	if inside != 0 {
		t.Errorf("%d requests arrived inside the 3 s Retry-After window, want 0", inside)
	}
	if to.Sub(from) != 3*time.Second {
		t.Errorf("window %s, want 3s", to.Sub(from))
	}
	if !strings.Contains(string(r.stderr), "every stream waits") {
		t.Errorf("the pause is not logged; stderr:\n%s", r.stderr)
	}
	for _, name := range names {
		assertTable(t, l, name, demoKeys[name], source(t, srv, name))
	}
}

// rate_limit.daily_quota counts per UTC day across runs: the STATE of a
// run deferred at the quota carries {"day", "used"}, a second run the same
// day sends nothing more, and a count from an earlier day is not held
// against today.
func TestDailyQuotaAcrossRuns(t *testing.T) {
	srv, base := startDemo(t, demoBase())
	cfg := tapConfig(base, demoStreams(t, nil, "customers"))
	cfg["rate_limit"].(map[string]any)["daily_quota"] = 4
	d := newTapDir(t, cfg)
	l := newLoader(t)
	day := time.Now().UTC().Format(time.DateOnly)

	r1 := d.sync(l, time.Minute)
	if r1.code != 75 {
		t.Fatalf("first run: exit %d, want 75; stderr:\n%s", r1.code, r1.stderr)
	}
	midnight := time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour).Format(time.RFC3339)
	if !strings.Contains(string(r1.stderr), "retry after "+midnight) {
		t.Errorf("the deferral does not say %s; stderr:\n%s", midnight, r1.stderr)
	}
	if q := stateQuota(t, l.state); q != (quota{day, 4}) {
		t.Fatalf("STATE quota %+v, want {%s 4}", q, day)
	}
	sent := srv.Stats().Requests
	if sent != 4 {
		t.Errorf("first run sent %d requests, want the quota, 4", sent)
	}

	r2 := d.sync(l, time.Minute)
	if r2.code != 75 {
		t.Fatalf("second run: exit %d, want 75; stderr:\n%s", r2.code, r2.stderr)
	}
	if n := srv.Stats().Requests - sent; n != 0 {
		t.Errorf("the second run the same day sent %d requests, want 0: today's quota was used", n)
	}
	if !strings.Contains(string(r2.stderr), "retry after "+midnight) {
		t.Errorf("second run: the deferral does not say %s; stderr:\n%s", midnight, r2.stderr)
	}

	// The count of an earlier day: today starts from 0, and the run
	// finishes the stream.
	var st map[string]any
	json.Unmarshal(l.state, &st)
	st["quota"] = map[string]any{"day": "2020-01-01", "used": 4}
	l.state, _ = json.Marshal(st)
	r3 := d.sync(l, time.Minute)
	if r3.code != 0 {
		t.Fatalf("third run: exit %d, want 0; stderr:\n%s", r3.code, r3.stderr)
	}
	n := srv.Stats().Requests - sent
	if n < 1 || n > 4 {
		t.Errorf("the run after an earlier day's count sent %d requests, want 1 to 4", n)
	}
	if q := stateQuota(t, l.state); q != (quota{day, n}) {
		t.Errorf("STATE quota %+v, want {%s %d}", q, day, n)
	}
	assertTable(t, l, "customers", demoKeys["customers"], source(t, srv, "customers"))
}

type quota struct {
	Day  string `json:"day"`
	Used int    `json:"used"`
}

func stateQuota(t *testing.T, state []byte) quota {
	t.Helper()
	var st struct {
		Quota *quota `json:"quota"`
	}
	if err := json.Unmarshal(state, &st); err != nil || st.Quota == nil {
		t.Fatalf("STATE %s: no quota (%v)", state, err)
	}
	return *st.Quota
}

// on_status rules, per config and per stream, against real statuses of
// the demo: 404 for an unknown path, 400 for a bad parameter, 503 faults.
func TestOnStatusRules(t *testing.T) {
	tests := []struct {
		name     string
		use      string // the stream [tickets]
		demo     func(*demoapi.Config)
		config   map[string]any // on_status of the config
		stream   map[string]any // added to the tickets stream
		exit     int
		errHas   string
		statuses map[int]int // answers the demo gave, by status
	}{
		{
			name:     "404 ignored by the stream",
			stream:   map[string]any{"path": "/v1/gone", "on_status": map[string]any{"404": "ignore"}},
			statuses: map[int]int{404: 1},
		},
		{
			name:     "the stream's ignore_statuses win over the config's rule",
			config:   map[string]any{"404": "fail"},
			stream:   map[string]any{"path": "/v1/gone", "ignore_statuses": []int{404}},
			statuses: map[int]int{404: 1},
		},
		{
			name:     "404 failed by the config",
			config:   map[string]any{"404": "fail"},
			stream:   map[string]any{"path": "/v1/gone"},
			exit:     1,
			errHas:   "404",
			statuses: map[int]int{404: 1},
		},
		{
			name:     "400 retried by the config until the attempts run out",
			use:      "customers",
			config:   map[string]any{"400": "retry"},
			stream:   map[string]any{"params": map[string]any{"per_page": "many"}},
			exit:     1,
			errHas:   "gave up after 3 attempts",
			statuses: map[int]int{400: 3},
		},
		{
			name:     "503 failed at once by the stream",
			demo:     func(c *demoapi.Config) { c.FailRate = 1 },
			stream:   map[string]any{"on_status": map[string]any{"503": "fail"}},
			exit:     1,
			errHas:   "503",
			statuses: map[int]int{503: 1},
		},
		{
			name:   "an unknown rule is a config error",
			stream: map[string]any{"on_status": map[string]any{"400": "skip"}},
			exit:   2,
			errHas: `stream "tickets": on_status: "400": expected retry, ignore, fail or dead_letter, got "skip"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dc := demoBase()
			if tt.demo != nil {
				tt.demo(&dc)
			}
			srv, base := startDemo(t, dc)
			use := tt.use
			if use == "" {
				use = "tickets"
			}
			streams := demoStreams(t, nil, use)
			for k, v := range tt.stream {
				streams[0].(map[string]any)[k] = v
			}
			cfg := tapConfig(base, streams)
			cfg["retry"].(map[string]any)["max_attempts"] = 3
			if tt.config != nil {
				cfg["on_status"] = tt.config
			}
			d := newTapDir(t, cfg)
			r := d.sync(newLoader(t), time.Minute)
			if r.code != tt.exit {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, tt.exit, r.stderr)
			}
			if !strings.Contains(string(r.stderr), tt.errHas) {
				t.Errorf("stderr lacks %q:\n%s", tt.errHas, r.stderr)
			}
			got := srv.Stats().ByStatus
			for status, n := range tt.statuses {
				if got[status] != n {
					t.Errorf("the demo answered %d × %d, want %d (all: %v)", got[status], status, n, got)
				}
			}
			if tt.exit == 2 {
				if n := srv.Stats().Requests; n != 0 {
					t.Errorf("%d requests sent on a config error", n)
				}
				if _, err := os.Stat(filepath.Join(d.dir, "dead_letter.jsonl")); err == nil {
					t.Errorf("a config error left a dead-letter file")
				}
			}
		})
	}
}

// circuit_breaker settings reach the breaker, and its changes of state are
// METRIC lines.
func TestCircuitBreakerSettingsAndMetrics(t *testing.T) {
	dc := demoBase()
	dc.FailRate = 1
	srv, base := startDemo(t, dc)
	cfg := tapConfig(base, demoStreams(t, nil, "tickets"))
	cfg["retry"].(map[string]any)["max_attempts"] = 20
	cfg["circuit_breaker"] = map[string]any{"threshold": 3, "cooldown_s": 0.05, "max_openings": 2}
	d := newTapDir(t, cfg)
	r := d.sync(newLoader(t), time.Minute)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
	var states []string
	for _, line := range strings.Split(string(r.stderr), "\n") {
		_, m, ok := strings.Cut(line, "METRIC: ")
		if !ok || !strings.Contains(m, "circuit_breaker_state") {
			continue
		}
		var v struct {
			Tags  struct{ State string } `json:"tags"`
			Value int                    `json:"value"`
		}
		if err := json.Unmarshal([]byte(m), &v); err != nil {
			t.Fatalf("METRIC line %q: %v", m, err)
		}
		states = append(states, v.Tags.State+"/"+itoa(v.Value))
	}
	if got := strings.Join(states, " "); got != "open/1 half-open/1 open for good/2" {
		t.Errorf("breaker metrics %q, want open/1 half-open/1 open for good/2", got)
	}
	// threshold 3: 3 failures open it, the probe fails: 4 requests.
	if n := srv.Stats().Requests; n != 4 {
		t.Errorf("%d requests, want 4", n)
	}
}

// The GraphQL cost budget through the binary: each query reserves its
// page size before it is sent, so the demo's budget (20 points restoring
// 20/s, each query costing its 10 edges) never answers THROTTLED.
func TestGraphQLCostBudget(t *testing.T) {
	dc := demoBase()
	dc.CostPoints, dc.CostRestorePerS = 20, 20
	srv, base := startDemo(t, dc)
	streams := demoStreams(t, nil, "issues")
	streams[0].(map[string]any)["error_path"] = "errors" // THROTTLED would be retried
	cfg := tapConfig(base, streams)
	cfg["rate_limit"].(map[string]any)["cost"] = map[string]any{"points": 20, "restore_per_s": 20}
	d := newTapDir(t, cfg)
	l := newLoader(t)
	r := d.sync(l, time.Minute)
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if n := srv.Throttled(); n != 0 {
		t.Errorf("%d queries answered THROTTLED, want 0", n)
	}
	if n := srv.Stats().ByPath["graphql"]; n < 4 {
		t.Errorf("%d queries, want the 4 pages of 10 at least", n)
	}
	assertTable(t, l, "issues", demoKeys["issues"], source(t, srv, "issues"))
}

// In Airbyte mode each stream's stream_state carries a copy of the daily
// quota count; given back as --state, the next read the same day goes on
// counting from it.
func TestDailyQuotaAirbyte(t *testing.T) {
	dir := abDir(t)
	var cfg map[string]any
	readJSON(t, filepath.Join(dir, "config.json"), &cfg)
	cfg["rate_limit"] = map[string]any{"requests_per_second": 0, "daily_quota": 3}
	b, _ := json.Marshal(cfg)
	writeFile(t, filepath.Join(dir, "config.json"), b)
	read := []string{"read", "--config", "config.json", "--catalog", "configured_catalog.json"}
	day := time.Now().UTC().Format(time.DateOnly)

	first := runAirbyte(t, dir, read...)
	if first.code != 75 {
		t.Fatalf("first read: exit %d, want 75: %v", first.code, first.errorTrace())
	}
	states := first.lastStates()
	if len(states) == 0 {
		t.Fatal("no STATE before the deferral")
	}
	for _, s := range states {
		q, _ := abGet(s, "stream", "stream_state", "quota").(map[string]any)
		if q["day"] != day || fmt.Sprint(q["used"]) != "3" {
			t.Errorf("stream_state quota %v, want {day %s, used 3}", q, day)
		}
	}
	b, _ = json.Marshal(states)
	writeFile(t, filepath.Join(dir, "state.json"), b)
	second := runAirbyte(t, dir, append(read, "--state", "state.json")...)
	if second.code != 75 {
		t.Fatalf("second read: exit %d, want 75: %v", second.code, second.errorTrace())
	}
	if n := len(second.of("RECORD")); n != 0 {
		t.Errorf("the second read the same day emitted %d records, want 0: the quota was used", n)
	}
}

// Weights, end to end against the demo's weight budget of 30 a UTC minute
// with every customers request billed 5 (as exchanges bill by weight):
//
//   - "weight": 5 on the stream spends 5 of rate_limit.weight_per_minute
//     per request, with no header to learn from;
//   - a stream of weight 1 that the API bills 5 learns its true cost from
//     rate_limit.used_weight_header.
//
// Either way the tap must send exactly 6 requests in the first minute (the
// budget, used in full), wait for the next minute for the other 4, and
// never be answered 429. The counts come from the server's log of arrivals,
// grouped by UTC minute; the test takes up to about a minute.
func TestWeightBudgetEndToEnd(t *testing.T) {
	t.Parallel() // it mostly waits for the minute to turn
	const budget, billed, pages = 30, 5, 10
	tests := []struct {
		name   string
		weight int    // the stream's "weight"; 0 leaves it out
		header string // rate_limit.used_weight_header
	}{
		{"weight spent per request", billed, ""},
		{"used weight header trues up", 0, demoapi.UsedWeightHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dc := demoBase()
			dc.WeightPerMinute, dc.Weights = budget, map[string]int{"customers": billed}
			srv, err := demoapi.New(dc)
			if err != nil {
				t.Fatal(err)
			}
			log := &reqLog{}
			base := serve(t, log.wrap(srv))
			streams := demoStreams(t, map[string]int{"customers": 60 / pages}, "customers")
			if tt.weight > 0 {
				streams[0].(map[string]any)["weight"] = tt.weight
			}
			cfg := tapConfig(base, streams)
			rl := map[string]any{"requests_per_second": 0, "max_in_flight": 1, "weight_per_minute": budget}
			if tt.header != "" {
				rl["used_weight_header"] = tt.header
			}
			cfg["rate_limit"] = rl
			d := newTapDir(t, cfg)
			// The first minute's 6 requests take milliseconds; start them
			// well before the minute turns, so that they all land in it.
			if now := time.Now().UTC(); now.Second() >= 50 {
				time.Sleep(now.Truncate(time.Minute).Add(time.Minute).Sub(now))
			}
			l := newLoader(t)
			r := d.sync(l, 3*time.Minute)
			if r.code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
			}
			if n := srv.Stats().ByStatus[429]; n != 0 {
				t.Errorf("%d answers 429, want 0 (statuses %v)", n, srv.Stats().ByStatus)
			}
			var minutes []time.Time
			perMinute := map[time.Time]int{}
			for _, q := range log.all() {
				m := q.At.UTC().Truncate(time.Minute)
				if perMinute[m] == 0 {
					minutes = append(minutes, m)
				}
				perMinute[m]++
			}
			var got []int
			for _, m := range minutes {
				got = append(got, perMinute[m])
			}
			if want := []int{budget / billed, pages - budget/billed}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("requests per UTC minute %v, want %v (a budget of %d, each request billed %d)", got, want, budget, billed)
			}
			assertTable(t, l, "customers", demoKeys["customers"], source(t, srv, "customers"))
		})
	}
}

// An API window used up (X-RateLimit-Remaining 0) until a reset a day or
// years away is a deferral, as a Retry-After that long is: the run
// checkpoints and exits 75 at once, saying when to retry, instead of
// sleeping until the reset.
func TestFarRateLimitResetDefers(t *testing.T) {
	t.Parallel()
	for _, reset := range []string{"86400", "999999999"} {
		t.Run(reset, func(t *testing.T) {
			t.Parallel()
			var pages atomic.Int32
			base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				page := r.URL.Query().Get("page")
				if page == "" {
					page = "1"
				}
				pages.Add(1)
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("X-RateLimit-Remaining", "0")
				w.Header().Set("X-RateLimit-Reset", reset)
				fmt.Fprintf(w, `{"data":[{"id":%s}],"next":"%d"}`, page, atoi(t, page)+1)
			}))
			def := map[string]any{"name": "items", "path": "/items", "records_path": "data", "primary_key": []string{"id"},
				"pagination": map[string]any{"type": "cursor", "cursor_param": "page", "next_cursor_path": "next"},
				"schema":     map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}}}}
			d := newTapDir(t, tapConfig(base, []any{def}))
			l := newLoader(t)
			start := time.Now()
			r := d.sync(l, time.Minute)
			if r.code != 75 {
				t.Fatalf("exit %d, want 75; stderr:\n%s", r.code, r.stderr)
			}
			secs, _ := strconv.Atoi(reset)
			at := start.Add(time.Duration(secs) * time.Second).UTC()
			line := lastLine(r.stderr)
			if !strings.Contains(line, "X-RateLimit-Remaining 0") || !strings.Contains(line, "max_retry_after_s") ||
				!strings.Contains(line, "retry after "+at.Format("2006-01-02T15")) {
				t.Errorf("the deferral %q does not say the window is used up until about %s", line, at.Format(time.RFC3339))
			}
			if n := pages.Load(); n != 1 {
				t.Errorf("%d requests, want 1: the second waits for the window", n)
			}
			if n := len(l.rows("items")); n != 1 {
				t.Errorf("%d rows, want page 1's", n)
			}
		})
	}
}

func atoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
