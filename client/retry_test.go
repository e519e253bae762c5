package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestBackoffDistribution(t *testing.T) {
	const base, maxDelay = 500 * time.Millisecond, 30 * time.Second
	tests := []struct {
		attempt int
		ceil    time.Duration
	}{
		{0, 500 * time.Millisecond},
		{1, time.Second},
		{2, 2 * time.Second},
		{5, 16 * time.Second},
		{6, maxDelay}, // 32s capped
		{30, maxDelay},
		{200, maxDelay}, // no overflow
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint("attempt", tt.attempt), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(42, uint64(tt.attempt)))
			const n = 10000
			var sum float64
			for range n {
				d := Backoff(base, maxDelay, tt.attempt, rnd.Float64())
				if d < 0 || d >= tt.ceil {
					t.Fatalf("Backoff = %s, want in [0, %s)", d, tt.ceil)
				}
				sum += float64(d)
			}
			mean, want := sum/n, float64(tt.ceil)/2
			if mean < want*0.95 || mean > want*1.05 {
				t.Errorf("mean %s, want %s ± 5%%", time.Duration(mean), time.Duration(want))
			}
		})
	}
	if d := Backoff(base, maxDelay, 0, 0.9999999999); d >= base {
		t.Errorf("Backoff(rnd≈1) = %s, want < %s", d, base)
	}
}

// A 429 waits exactly Retry-After (seconds or date), then is resent.
func TestRetryAfter429(t *testing.T) {
	tests := []struct {
		name   string
		header func(now time.Time) string
		want   time.Duration
		isRA   bool
	}{
		{"delay-seconds", func(time.Time) string { return "120" }, 120 * time.Second, true},
		{"http-date", func(now time.Time) string { return now.Add(120 * time.Second).Format(http.TimeFormat) }, 120 * time.Second, true},
		{"past date", func(now time.Time) string { return now.Add(-time.Minute).Format(http.TimeFormat) }, 0, true},
		{"malformed: backoff", func(time.Time) string { return "in a while" }, 250 * time.Millisecond, false},
		{"absent: backoff", func(time.Time) string { return "" }, 250 * time.Millisecond, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e *env
			srv := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					if v := tt.header(e.clock.Now()); v != "" {
						w.Header().Set("Retry-After", v)
					}
					w.WriteHeader(429)
					return
				}
				io.WriteString(w, `{"ok":true}`)
			})
			e = newEnv(t, srv.URL, nil)
			resp, err := e.c.Do(context.Background(), Request{Stream: "orders", URL: "/v1/orders"})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Attempts != 2 || srv.Hits() != 2 {
				t.Errorf("attempts %d, hits %d; want 2, 2", resp.Attempts, srv.Hits())
			}
			sl := e.clock.Sleeps()
			if len(sl) != 1 || (sl[0]-tt.want).Abs() > time.Second {
				t.Fatalf("sleeps %v, want [%s ± 1s]", sl, tt.want)
			}
			st := e.c.Stats()
			ra, bo := st.WaitRetryAfter, st.WaitBackoff
			if !tt.isRA {
				ra, bo = bo, ra
			}
			if ra != sl[0] || bo != 0 || st.Retries != 1 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// 404 (and other permanent statuses): one attempt, no sleep, the API's
// message in a StatusError.
func TestPermanentStatus(t *testing.T) {
	tests := []struct {
		status  int
		body    string
		wantMsg string
		wantErr string
	}{
		{404, `{"error":{"message":"order not found"}}`, "order not found",
			`stream "orders": GET /v1/orders?limit=2: 404 Not Found: order not found`},
		{401, `{"error":"invalid token"}`, "invalid token",
			`stream "orders": GET /v1/orders?limit=2: 401 Unauthorized: invalid token; check the credentials in the config's auth block`},
		{403, `{"message":"forbidden"}`, "forbidden",
			`stream "orders": GET /v1/orders?limit=2: 403 Forbidden: forbidden; check the credentials in the config's auth block`},
		{400, `{"errors":[{"message":"bad limit"}]}`, "bad limit", ""},
		{422, `{"detail":"unprocessable"}`, "unprocessable", ""},
		{422, `{"detail":[{"msg":"field required"}]}`, "field required", ""},
		{410, "gone\n  for good", "gone for good", ""},
		{409, strings.Repeat("é", 300), strings.Repeat("é", 200), ""},
		{501, `{"message":"nope"}`, "nope", ""},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status), func(t *testing.T) {
			srv := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			})
			e := newEnv(t, srv.URL, nil)
			_, err := e.c.Do(context.Background(), Request{Stream: "orders", URL: "/v1/orders?limit=2"})
			var se *StatusError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want *StatusError", err)
			}
			if se.Status != tt.status || se.Message != tt.wantMsg || se.Attempts != 1 {
				t.Errorf("StatusError %+v", se)
			}
			if tt.wantErr != "" && err.Error() != tt.wantErr {
				t.Errorf("Error()\n got %s\nwant %s", err, tt.wantErr)
			}
			if srv.Hits() != 1 || len(e.clock.Sleeps()) != 0 {
				t.Errorf("hits %d, sleeps %v; want 1 hit, no sleep", srv.Hits(), e.clock.Sleeps())
			}
		})
	}
}

func TestIgnoreStatuses(t *testing.T) {
	srv := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(404)
		io.WriteString(w, `{"error":"parent deleted"}`)
	})
	e := newEnv(t, srv.URL, nil)
	checked := false
	resp, err := e.c.Do(context.Background(), Request{
		Stream: "items", URL: "/v1/orders/7/items", IgnoreStatuses: []int{404},
		Check: func([]byte) error { checked = true; return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Ignored || resp.Status != 404 || resp.Attempts != 1 || checked {
		t.Errorf("resp %+v, checked %v", resp, checked)
	}
	if st := e.c.Stats(); st.Ignored != 1 || st.Requests != 1 || st.ByStatus[404] != 1 {
		t.Errorf("stats %+v", st)
	}
}

// 503 with MaxAttempts 3: three attempts, two sleeps, then a StatusError
// naming stream, method, path and the last status.
func TestTransientStatusGivesUp(t *testing.T) {
	for _, status := range []int{500, 502, 503, 504, 408, 425, 429, 520} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			srv := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(status)
				io.WriteString(w, `{"message":"service unavailable"}`)
			})
			var attempts []int
			e := newEnv(t, srv.URL, func(c *Config) {
				c.MaxAttempts = 3
				c.OnAttempt = func(stream, method, path string, st int, d time.Duration) {
					if stream != "orders" || method != "GET" || path != "/v1/orders" {
						t.Errorf("OnAttempt(%q, %q, %q)", stream, method, path)
					}
					attempts = append(attempts, st)
				}
			})
			_, err := e.c.Do(context.Background(), Request{Stream: "orders", URL: "/v1/orders"})
			var se *StatusError
			if !errors.As(err, &se) || se.Status != status || se.Attempts != 3 {
				t.Fatalf("err = %#v", err)
			}
			want := fmt.Sprintf(`stream "orders": GET /v1/orders: gave up after 3 attempts: last status %s: service unavailable`, statusText(status))
			if err.Error() != want {
				t.Errorf("Error()\n got %s\nwant %s", err, want)
			}
			if srv.Hits() != 3 || len(e.clock.Sleeps()) != 2 {
				t.Errorf("hits %d, sleeps %v", srv.Hits(), e.clock.Sleeps())
			}
			if len(attempts) != 3 || attempts[2] != status {
				t.Errorf("OnAttempt statuses %v", attempts)
			}
			if st := e.c.Stats(); st.Retries != 2 || st.Requests != 3 || st.ByStatus[status] != 3 {
				t.Errorf("stats %+v", st)
			}
			// Backoff grows: 0.5·500ms, 0.5·1s.
			if sl := e.clock.Sleeps(); sl[0] != 250*time.Millisecond || sl[1] != 500*time.Millisecond {
				t.Errorf("sleeps %v, want [250ms 500ms]", sl)
			}
		})
	}
}

func TestDefer(t *testing.T) {
	t.Run("418", func(t *testing.T) {
		srv := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(418) })
		e := newEnv(t, srv.URL, nil)
		_, err := e.c.Do(context.Background(), Request{Stream: "orders", URL: "/v1/orders"})
		var de *DeferError
		if !errors.As(err, &de) {
			t.Fatalf("err = %v, want *DeferError", err)
		}
		if !de.RetryAt.Equal(t0.Add(time.Hour)) || srv.Hits() != 1 || len(e.clock.Sleeps()) != 0 {
			t.Errorf("RetryAt %s, hits %d, sleeps %v", de.RetryAt, srv.Hits(), e.clock.Sleeps())
		}
		want := `stream "orders": deferred: API answered 418 (banned); retry after 2026-11-30T03:00:00Z`
		if err.Error() != want {
			t.Errorf("Error()\n got %s\nwant %s", err, want)
		}
	})
	t.Run("Retry-After beyond MaxRetryAfter", func(t *testing.T) {
		srv := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(429)
		})
		e := newEnv(t, srv.URL, func(c *Config) { c.Limit.MaxRetryAfter = 300 * time.Second })
		_, err := e.c.Do(context.Background(), Request{Stream: "orders", URL: "/v1/orders"})
		var de *DeferError
		if !errors.As(err, &de) {
			t.Fatalf("err = %v, want *DeferError", err)
		}
		if (de.RetryAt.Sub(t0)-time.Hour).Abs() > time.Second || srv.Hits() != 1 || len(e.clock.Sleeps()) != 0 {
			t.Errorf("RetryAt %s, hits %d, sleeps %v", de.RetryAt, srv.Hits(), e.clock.Sleeps())
		}
		if de.Stream != "orders" || !strings.Contains(err.Error(), "retry after 2026-11-30T03:00:00Z") {
			t.Errorf("Error() = %s", err)
		}
	})
	t.Run("daily quota", func(t *testing.T) {
		srv := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
			if n == 2 {
				w.WriteHeader(503) // a retry counts too
				return
			}
			io.WriteString(w, "{}")
		})
		e := newEnv(t, srv.URL, func(c *Config) { c.Limit.DailyQuota = 3 })
		for i := range 2 {
			if _, err := e.c.Do(context.Background(), Request{Stream: "orders", URL: "/v1/orders"}); err != nil {
				t.Fatalf("request %d: %v", i+1, err)
			}
		}
		_, err := e.c.Do(context.Background(), Request{Stream: "orders", URL: "/v1/orders"})
		var de *DeferError
		if !errors.As(err, &de) || de.Stream != "orders" {
			t.Fatalf("err = %v, want *DeferError", err)
		}
		if srv.Hits() != 3 {
			t.Errorf("hits %d, want 3: nothing sent once the quota is used", srv.Hits())
		}
		if !de.RetryAt.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("RetryAt %s", de.RetryAt)
		}
	})
}

// Transient failures are retried and then succeed; a plain Check error is
// not retried.
func TestTransientFailures(t *testing.T) {
	hijack := func(w http.ResponseWriter, f func(c net.Conn)) {
		c, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		f(c)
		c.Close()
	}
	tests := []struct {
		name      string
		first     func(w http.ResponseWriter, r *http.Request)
		check     func(n int) error
		wantHits  int
		wantErr   string
		transient bool
		// slow: the first attempt outlives the client's timeout. On a
		// loaded machine a later one may too and be retried in turn, so
		// wantHits is a least, and every hit an attempt of the response.
		slow bool
	}{
		{name: "truncated body", wantHits: 2, first: func(w http.ResponseWriter, r *http.Request) {
			hijack(w, func(c net.Conn) {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"data\": [")
			})
		}},
		{name: "connection reset", wantHits: 2, first: func(w http.ResponseWriter, r *http.Request) {
			hijack(w, func(c net.Conn) { c.(*net.TCPConn).SetLinger(0) })
		}},
		{name: "connection closed (EOF)", wantHits: 2, first: func(w http.ResponseWriter, r *http.Request) {
			hijack(w, func(net.Conn) {})
		}},
		{name: "timeout", wantHits: 2, slow: true, first: func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute): // a bound: the client's timeout ends it
			}
		}},
		{name: "slow body", wantHits: 2, slow: true, first: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "20")
			io.WriteString(w, `{"data":`)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute):
			}
		}},
		{name: "Check transient", wantHits: 2, check: func(n int) error {
			if n == 1 {
				return Transient(errors.New("body is not JSON"))
			}
			return nil
		}},
		{name: "Check permanent", wantHits: 1, wantErr: `stream "s": GET /p: 200 OK: records_path not found (Content-Type "text/plain; charset=utf-8")`,
			check: func(n int) error { return errors.New("records_path not found") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 && tt.first != nil {
					tt.first(w, r)
					return
				}
				io.WriteString(w, `{"data":[1,2,3]}`)
			})
			e := newEnv(t, srv.URL, func(c *Config) { c.Timeout = 300 * time.Millisecond; c.MaxAttempts = 10 })
			checks := 0
			req := Request{Stream: "s", URL: "/p"}
			if tt.check != nil {
				req.Check = func(b []byte) error { checks++; return tt.check(checks) }
			}
			resp, err := e.c.Do(context.Background(), req)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if string(resp.Body) != `{"data":[1,2,3]}` || resp.Status != 200 || resp.Attempts != srv.Hits() {
				t.Errorf("resp %+v after %d hits", resp, srv.Hits())
			}
			if hits := srv.Hits(); hits != tt.wantHits && !(tt.slow && hits > tt.wantHits) {
				t.Errorf("hits %d, want %d", hits, tt.wantHits)
			}
			if st := e.c.Stats(); tt.slow && st.ByStatus[0] < 1 && st.ByStatus[200] < 2 {
				t.Errorf("the first attempt did not fail: stats %+v", st)
			}
		})
	}
}

// A transport failure on every attempt names the last error.
func TestTransportGivesUp(t *testing.T) {
	srv := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute): // a bound: the client's timeout ends it
		}
	})
	e := newEnv(t, srv.URL, func(c *Config) { c.Timeout = 30 * time.Millisecond; c.MaxAttempts = 2 })
	_, err := e.c.Do(context.Background(), Request{Stream: "orders", URL: "/v1/orders"})
	want := `stream "orders": GET /v1/orders: gave up after 2 attempts: last error: timeout after 30ms`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 0 || !IsTransient(se.Err) {
		t.Errorf("StatusError %+v", se)
	}
	if st := e.c.Stats(); st.ByStatus[0] != 2 {
		t.Errorf("stats %+v", st)
	}
}

// A long Retry-After is cut short by cancelling the context.
// Cancelling the context during a Retry-After wait of 200 s returns when
// the context ends (30 ms on the synctest clock), with the real sleep.
func TestCancelDuringRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return jsonResponse(r, 429, http.Header{"Retry-After": {"200"}}, "{}"), nil
		})
		c, err := New(withSettings(Config{BaseURL: mustURL(t, "http://api.test"), Transport: rt})) // real clock and sleep
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(30*time.Millisecond, cancel)
		start := time.Now()
		_, err = c.Do(ctx, Request{Stream: "orders", URL: "/v1/orders"})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if d := time.Since(start); d != 30*time.Millisecond {
			t.Errorf("Do returned after %s, want 30ms", d)
		}
		if !strings.HasPrefix(err.Error(), `stream "orders": GET /v1/orders: `) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestStatusErrorFormat(t *testing.T) {
	tests := []struct {
		e    StatusError
		want string
	}{
		{StatusError{Stream: "o", Method: "GET", Path: "/x", Status: 404, Attempts: 1}, `stream "o": GET /x: 404 Not Found`},
		{StatusError{Stream: "o", Method: "GET", Path: "/x", Status: 599, Message: "m", Attempts: 6},
			`stream "o": GET /x: gave up after 6 attempts: last status 599: m`},
		{StatusError{Stream: "o", Method: "POST", Path: "/x", Status: 0, Message: "timeout after 30s", Attempts: 1, Err: Transient(errors.New("x"))},
			`stream "o": POST /x: gave up after 1 attempt: last error: timeout after 30s`},
		{StatusError{Stream: "o", Method: "GET", Path: "/x", Err: errors.New("tls: bad certificate"), Attempts: 1},
			`stream "o": GET /x: tls: bad certificate`},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}

// Cancelling the context while an attempt is in flight returns promptly,
// without a retry.
// TestCancelDuringAttempt: an attempt the caller cancels while it waits
// for the response ends at once, is not retried, and is no failed request:
// not under status 0, not reported to OnAttempt, counted as cancelled (a
// look-ahead page a walk no longer needs ends this way).
func TestCancelDuringAttempt(t *testing.T) {
	arrived := make(chan struct{})
	srv := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		close(arrived)
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute): // a bound, never reached when the test passes
		}
	})
	var attempts atomic.Int32
	e := newEnv(t, srv.URL, func(c *Config) {
		c.OnAttempt = func(string, string, string, int, time.Duration) { attempts.Add(1) }
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	_, err := e.c.Do(ctx, Request{Stream: "orders", URL: "/v1/orders"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	st := e.c.Stats()
	if srv.Hits() != 1 || len(e.clock.Sleeps()) != 0 || st.Retries != 0 {
		t.Errorf("hits %d, sleeps %v, retries %d", srv.Hits(), e.clock.Sleeps(), st.Retries)
	}
	if st.Requests != 1 || st.Cancelled != 1 || len(st.ByStatus) != 0 || attempts.Load() != 0 {
		t.Errorf("requests %d, cancelled %d, by status %v, OnAttempt calls %d; want 1, 1, none, 0",
			st.Requests, st.Cancelled, st.ByStatus, attempts.Load())
	}
}

func TestBodyPrefix(t *testing.T) {
	long := strings.Repeat("a", MaxBodyPrefix-1) + "é" + "tail"
	tests := []struct {
		in   string
		want string
	}{
		{"", ""},
		{`{"error":"x"}`, `{"error":"x"}`},
		{strings.Repeat("b", MaxBodyPrefix+10), strings.Repeat("b", MaxBodyPrefix)},
		{long, strings.Repeat("a", MaxBodyPrefix-1)}, // é would be split: dropped
		{"bad \xff byte", "bad \uFFFD byte"},
	}
	for _, tt := range tests {
		if got := bodyPrefix([]byte(tt.in)); got != tt.want {
			t.Errorf("bodyPrefix(%.20q…) = %.20q… (%d bytes), want %d bytes", tt.in, got, len(got), len(tt.want))
		}
	}
}

// An API's message is one line of printable text: its control characters
// (ESC of a colour or title sequence, BEL, DEL, C1) are escaped, not
// passed to the terminal reading stderr (issue 29).
func TestClipEscapesControls(t *testing.T) {
	tests := map[string]string{
		"plain":               "plain",
		"\x1b[31mred\x1b[0m":  `\x1b[31mred\x1b[0m`,
		"title\x1b]0;pwned\a": `title\x1b]0;pwned\a`,
		"del\x7f c1\u009b":    `del\x7f c1\u009b`,
		"lines\r\nand\ttabs":  "lines and tabs",
	}
	for in, want := range tests {
		if got := clip(in); got != want {
			t.Errorf("clip(%q) = %q, want %q", in, got, want)
		}
	}
}
