package demoapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// fakeClock is a settable wall clock for the rate-limit window.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time  { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) set(t time.Time) { c.ns.Store(t.UnixNano()) }

// startClocked is start with the server's wall clock replaced before any
// request can read it.
func startClocked(t *testing.T, cfg Config, c *fakeClock) (*Server, string) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.clock = c.now
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts.URL
}

func TestRateLimit(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 400e6, time.UTC)
	reset := fmt.Sprint(t0.Unix() + 1)
	type want struct {
		status     int
		remaining  string
		retryAfter string
	}
	cases := []struct {
		name  string
		cfg   Config
		steps []want
	}{
		{"window reset", Config{RequestsPerSecond: 3}, []want{
			{200, "2", ""}, {200, "1", ""}, {200, "0", ""},
			{429, "0", "1"}, // odd 429: delay-seconds
			{429, "0", "Mon, 30 Nov 2026 12:00:01 GMT"}, // even 429: the window's reset
			{429, "0", "1"},
		}},
		{"fixed retry after", Config{RequestsPerSecond: 1.9, RetryAfterS: 5}, []want{
			{200, "0", ""},
			{429, "0", "5"},
			{429, "0", "Mon, 30 Nov 2026 12:00:06 GMT"}, // 12:00:05.4 rounded up
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c fakeClock
			c.set(t0)
			s, base := startClocked(t, tc.cfg, &c)
			for i, w := range tc.steps {
				a := get(t, base+"/v1/tickets?per_page=1")
				h := a.header
				got := want{a.status, h.Get("X-RateLimit-Remaining"), h.Get("Retry-After")}
				if got != w {
					t.Errorf("request %d: %+v, want %+v (%s)", i+1, got, w, a.raw)
				}
				if h.Get("X-RateLimit-Limit") != fmt.Sprint(s.cfg.rpsLimit) || h.Get("X-RateLimit-Reset") != reset {
					t.Errorf("request %d: limit %q reset %q", i+1, h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Reset"))
				}
				if a.status == 429 && field(a.body, "error.message") != "rate limit exceeded" {
					t.Errorf("429 body %s", a.raw)
				}
				if ra := w.retryAfter; strings.Contains(ra, "GMT") {
					if at, err := http.ParseTime(ra); err != nil || !at.After(t0) {
						t.Errorf("Retry-After %q is not a future HTTP-date", ra)
					}
				}
			}
			// The next window admits requests again; 429s used no quota.
			c.set(t0.Add(700 * time.Millisecond))
			a := get(t, base+"/v1/tickets?per_page=1")
			if a.status != 200 || a.header.Get("X-RateLimit-Remaining") != fmt.Sprint(s.cfg.rpsLimit-1) {
				t.Errorf("next window: %d remaining %s", a.status, a.header.Get("X-RateLimit-Remaining"))
			}
		})
	}
}

func TestRateLimitHeadersOnRefusals(t *testing.T) {
	var c fakeClock
	c.set(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	_, base := startClocked(t, Config{RequestsPerSecond: 2, Token: "s3cret"}, &c)
	for range 3 {
		a := get(t, base+"/v1/events")
		if a.status != 401 || a.header.Get("X-RateLimit-Remaining") != "2" || a.header.Get("X-RateLimit-Reset") == "" {
			t.Errorf("401: remaining %q, reset %q", a.header.Get("X-RateLimit-Remaining"), a.header.Get("X-RateLimit-Reset"))
		}
	}
}

// TestRateLimitRealClock runs the window on the server's default clock,
// time.Now: a burst of 2×limit requests inside one second gets limit 200s
// and limit 429s that name the next second as the reset; the next second
// admits requests again. In the synctest bubble the clock starts on a
// second boundary and stands still while the burst runs.
func TestRateLimitRealClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := New(Config{RequestsPerSecond: 5})
		if err != nil {
			t.Fatal(err)
		}
		sec := time.Now().Unix()
		ok, limited := 0, 0
		for range 10 {
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/tickets?per_page=1", nil))
			switch rec.Code {
			case 200:
				ok++
			case 429:
				limited++
				if reset := rec.Header().Get("X-RateLimit-Reset"); reset != fmt.Sprint(sec+1) {
					t.Errorf("X-RateLimit-Reset %s in second %d", reset, sec)
				}
			}
		}
		if ok != 5 || limited != 5 {
			t.Errorf("%d ok, %d limited; want 5 and 5", ok, limited)
		}
		time.Sleep(time.Second)
		if got := statuses(s, 1, "/v1/tickets?per_page=1"); got[200] != 1 {
			t.Errorf("the next second: %v, want a 200", got)
		}
	})
}

// statuses sends n sequential requests to path straight into the handler.
func statuses(s *Server, n int, path string) map[int]int {
	out := map[int]int{}
	for range n {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		out[rec.Code]++
	}
	return out
}

func TestFailRate(t *testing.T) {
	for _, rate := range []float64{0.1, 0.3, 0.5} {
		s, _ := New(Config{FailRate: rate})
		got := statuses(s, 4000, "/v1/tickets?per_page=1")
		frac := float64(got[503]) / 4000
		if frac < rate-0.04 || frac > rate+0.04 || got[503]+got[200] != 4000 {
			t.Errorf("fail_rate %v: %v (%.3f)", rate, got, frac)
		}
		// Deterministic for a sequential client.
		s2, _ := New(Config{FailRate: rate})
		if again := statuses(s2, 4000, "/v1/tickets?per_page=1"); again[503] != got[503] {
			t.Errorf("fail_rate %v: %d then %d failures with the same seed", rate, got[503], again[503])
		}
	}
	s, _ := New(Config{FailRate: 1})
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/events", nil))
	if rec.Code != 503 || rec.Body.String() != `{"error":{"message":"service unavailable"}}` {
		t.Errorf("503 body %s", rec.Body)
	}
}

func TestErrorBody(t *testing.T) {
	s, _ := New(Config{ErrorBodyRate: 1})
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/orders", nil))
	if rec.Code != 200 || rec.Body.String() != `{"error":{"message":"temporary backend error"}}` {
		t.Errorf("%d %s", rec.Code, rec.Body)
	}
}

func TestTruncate(t *testing.T) {
	s, base := start(t, Config{TruncateRate: 1})
	resp, err := http.Get(base + "/v1/events?limit=50")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.ContentLength <= 0 {
		t.Fatalf("status %d, Content-Length %d", resp.StatusCode, resp.ContentLength)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) || int64(len(body)) != resp.ContentLength/2 {
		t.Errorf("read %d of %d bytes, err %v", len(body), resp.ContentLength, err)
	}
	if json.Valid(body) {
		t.Error("half a body is valid JSON")
	}
	if st := s.Stats(); st.ByStatus[200] != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestReset(t *testing.T) {
	s, base := start(t, Config{ResetRate: 1})
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	if resp, err := (&http.Client{Transport: tr}).Get(base + "/v1/events"); err == nil {
		resp.Body.Close()
		t.Fatalf("got an answer: %d", resp.StatusCode)
	}
	// At the TCP level: the request is read, nothing comes back.
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v1/events HTTP/1.1\r\nHost: demo\r\n\r\n")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := bufio.NewReader(conn).Read(make([]byte, 100))
	if n != 0 || err == nil {
		t.Errorf("read %d bytes, err %v", n, err)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Error("connection left open instead of closed")
	}
	if st := s.Stats(); st.ByStatus[0] != 2 || st.ByPath["events"] != 2 {
		t.Errorf("stats %+v", st)
	}
}

// A slow answer ends when the client gives up, not when the slow delay
// is over; latency delays every answer by exactly its amount. Timed on the
// synctest clock, so a loaded machine cannot stretch or shrink it.
func TestSlowAndLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := New(Config{SlowRate: 1, SlowMS: 10000})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
		defer cancel()
		t0 := time.Now()
		s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequestWithContext(ctx, "GET", "/v1/tickets", nil))
		if d := time.Since(t0); d != 150*time.Millisecond {
			t.Errorf("the slow handler returned after %v, want when the client gave up (150ms)", d)
		}
		if st := s.Stats(); st.ByStatus[0] != 1 {
			t.Errorf("stats %+v, want one request without an answer", st)
		}

		s, err = New(Config{LatencyMS: 60})
		if err != nil {
			t.Fatal(err)
		}
		t0 = time.Now()
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/tickets", nil))
		if d := time.Since(t0); d != 60*time.Millisecond || rec.Code != 200 {
			t.Errorf("latency 60 ms: status %d after %v", rec.Code, d)
		}
	})
}

func TestAfterLimits(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want []int
		msg  string
	}{
		{"unauthorized_after", Config{UnauthorizedAfter: 3}, []int{200, 200, 200, 401, 401}, "token expired"},
		{"teapot_after", Config{TeapotAfter: 2}, []int{200, 200, 418, 418}, "banned"},
		{"both: 401 first", Config{UnauthorizedAfter: 2, TeapotAfter: 2}, []int{200, 200, 401}, "token expired"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, base := start(t, tc.cfg)
			var last answer
			for i, w := range tc.want {
				last = get(t, base+"/v1/customers?per_page=1")
				if last.status != w {
					t.Errorf("request %d: %d, want %d", i+1, last.status, w)
				}
			}
			if got := field(last.body, "error.message"); got != tc.msg {
				t.Errorf("message %v, want %q", got, tc.msg)
			}
		})
	}
}

func TestToken(t *testing.T) {
	_, base := start(t, Config{Token: "s3cret"})
	cases := []struct {
		name   string
		path   string
		auth   string
		status int
	}{
		{"none", "/v1/events", "", 401},
		{"bearer", "/v1/events", "Bearer s3cret", 200},
		{"bearer lower case", "/v1/events", "bearer s3cret", 200},
		{"wrong", "/v1/events", "Bearer nope", 401},
		{"basic", "/v1/events", "Basic czNjcmV0", 401},
		{"api_key", "/v1/events?api_key=s3cret", "", 200},
		{"wrong api_key", "/v1/events?api_key=s3cre", "", 401},
		{"unknown path still needs auth", "/nope", "", 401},
	}
	for _, tc := range cases {
		h := http.Header{}
		if tc.auth != "" {
			h.Set("Authorization", tc.auth)
		}
		a := do(t, "GET", base+tc.path, nil, h)
		if a.status != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, a.status, tc.status)
		}
		if tc.status == 401 && field(a.body, "error.message") != "invalid credentials" {
			t.Errorf("%s: %s", tc.name, a.raw)
		}
	}
}

func TestStatsAndConcurrency(t *testing.T) {
	s, base := start(t, Config{FailRate: 0.2, EventsGrowth: 1, InvoicesGrowth: 1})
	paths := []string{"/v1/customers", "/v1/orders", "/v1/orders/1/items", "/v1/events", "/v1/invoices", "/v1/tickets", "/v1/bars?limit=5", "/nope"}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				p := paths[(g+i)%len(paths)]
				resp, err := http.Get(base + p)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	st := s.Stats()
	if st.Requests != 160 {
		t.Errorf("Requests %d", st.Requests)
	}
	sum := 0
	for _, n := range st.ByStatus {
		sum += n
	}
	if sum != 160 || st.ByStatus[404] == 0 || st.ByStatus[503] == 0 {
		t.Errorf("ByStatus %v", st.ByStatus)
	}
	for _, name := range []string{"customers", "orders", "order_items", "events", "invoices", "tickets", "bars"} {
		if st.ByPath[name] != 20 {
			t.Errorf("ByPath[%s] = %d, want 20", name, st.ByPath[name])
		}
	}
	body := strings.NewReader(`{"query":"{ repository { issues { edges { cursor } } } }"}`)
	resp, err := http.Post(base+"/graphql", "application/json", body)
	if err == nil {
		resp.Body.Close()
	}
	if st := s.Stats(); st.ByPath["graphql"] != 1 {
		t.Errorf("ByPath %v", st.ByPath)
	}
}

func TestStartClose(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	base, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Errorf("base URL %q", base)
	}
	if _, err := s.Start("127.0.0.1:0"); err == nil {
		t.Error("second Start succeeded")
	}
	mustGet(t, base+"/v1/tickets")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Get(base + "/v1/tickets"); err == nil {
		resp.Body.Close()
		t.Error("server still answers after Close")
	}
}
