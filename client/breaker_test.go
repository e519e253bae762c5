package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// Threshold consecutive failures open the circuit; the cooldown is waited
// (via Sleep); one probe goes; its success closes the circuit.
func TestBreakerOpensAndCloses(t *testing.T) {
	srv := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n <= 3 {
			w.WriteHeader(503)
			return
		}
		io.WriteString(w, "{}")
	})
	e := newEnv(t, srv.URL, func(c *Config) {
		c.BreakerThreshold = 3
		c.BreakerCooldown = 30 * time.Second
		c.MaxAttempts = 10
	})
	resp, err := e.c.Do(context.Background(), Request{Stream: "orders", URL: "/v1/orders"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Attempts != 4 || srv.Hits() != 4 {
		t.Errorf("attempts %d, hits %d; want 4", resp.Attempts, srv.Hits())
	}
	// Three backoffs (250ms, 500ms, 1s), then the cooldown before attempt 4.
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 30*time.Second - time.Second}
	if got := e.clock.Sleeps(); !equalDurations(got, want) {
		t.Errorf("sleeps %v, want %v", got, want)
	}
	st := e.c.Stats()
	if st.BreakerOpenings != 1 || st.WaitBreaker != 29*time.Second {
		t.Errorf("stats %+v", st)
	}
	if e.c.brk.state != stateClosed {
		t.Errorf("breaker %s, want closed", e.c.brk.state)
	}
	log := e.log.String()
	for _, s := range []string{"circuit breaker opened", "circuit breaker half-open", "circuit breaker closed"} {
		if !strings.Contains(log, s) {
			t.Errorf("log lacks %q:\n%s", s, log)
		}
	}
}

// Successes reset the count of consecutive failures.
func TestBreakerSuccessResets(t *testing.T) {
	srv := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n%3 != 0 { // 2 failures, 1 success, ...
			w.WriteHeader(500)
			return
		}
		io.WriteString(w, "{}")
	})
	e := newEnv(t, srv.URL, func(c *Config) { c.BreakerThreshold = 3 })
	for range 5 {
		if _, err := e.c.Do(context.Background(), Request{URL: "/x"}); err != nil {
			t.Fatal(err)
		}
	}
	if st := e.c.Stats(); st.BreakerOpenings != 0 {
		t.Errorf("breaker opened: %+v", st)
	}
}

// After BreakerMaxOpenings openings every attempt fails with
// ErrCircuitOpen, without being sent.
func TestBreakerMaxOpenings(t *testing.T) {
	srv := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(502) })
	e := newEnv(t, srv.URL, func(c *Config) {
		c.BreakerThreshold = 2
		c.BreakerMaxOpenings = 2
		c.MaxAttempts = 20
	})
	_, err := e.c.Do(context.Background(), Request{Stream: "orders", URL: "/v1/orders"})
	if !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("err = %v, want ErrCircuitOpen", err)
	}
	// 2 failures open it; cooldown; the probe fails: second opening, final.
	if srv.Hits() != 3 {
		t.Errorf("hits %d, want 3", srv.Hits())
	}
	if !strings.HasPrefix(err.Error(), `stream "orders": GET /v1/orders: circuit breaker open`) {
		t.Errorf("err = %v", err)
	}
	_, err = e.c.Do(context.Background(), Request{Stream: "orders", URL: "/v1/orders"})
	if !errors.Is(err, ErrCircuitOpen) || srv.Hits() != 3 {
		t.Errorf("next request: err %v, hits %d", err, srv.Hits())
	}
	if st := e.c.Stats(); st.BreakerOpenings != 2 {
		t.Errorf("stats %+v", st)
	}
}

// While half-open exactly one probe is out; the others wait, then go once
// it succeeded. In the synctest bubble, synctest.Wait says when every
// request that can go has gone, instead of a sleep.
func TestBreakerSingleProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var hits atomic.Int32
		rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			switch hits.Add(1) {
			case 1:
				return jsonResponse(r, 500, nil, "{}"), nil
			case 2: // the probe
				<-release
			}
			return jsonResponse(r, 200, nil, "{}"), nil
		})
		e := newEnv(t, "http://api.test", func(c *Config) {
			c.Transport = rt
			c.BreakerThreshold = 1
			c.MaxAttempts = 1
			c.Limit.MaxInFlight = 8
		})
		if _, err := e.c.Do(t.Context(), Request{URL: "/x"}); err == nil {
			t.Fatal("want the first request to fail")
		}
		var wg sync.WaitGroup
		for range 5 {
			wg.Go(func() {
				if _, err := e.c.Do(t.Context(), Request{URL: "/x"}); err != nil {
					t.Error(err)
				}
			})
		}
		synctest.Wait()
		if h := hits.Load(); h != 2 {
			t.Errorf("hits %d while the probe is out, want 2", h)
		}
		close(release)
		wg.Wait()
		if h := hits.Load(); h != 6 {
			t.Errorf("hits %d, want 6", h)
		}
		if e.c.brk.state != stateClosed {
			t.Errorf("breaker %s", e.c.brk.state)
		}
		if st := e.c.Stats(); st.BreakerOpenings != 1 {
			t.Errorf("stats %+v", st)
		}
	})
}

// Cancelling the context while the breaker cools down returns at once, on
// the synctest clock: after the 30 ms of the context, not the hour of the
// cooldown.
func TestBreakerCancelDuringCooldown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var hits atomic.Int32
		rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			hits.Add(1)
			return jsonResponse(r, 500, nil, "{}"), nil
		})
		c, err := New(withSettings(Config{BaseURL: mustURL(t, "http://api.test"), Transport: rt, BreakerThreshold: 1, MaxAttempts: 1, BreakerCooldown: time.Hour}))
		if err != nil {
			t.Fatal(err)
		}
		c.Do(t.Context(), Request{URL: "/x"})
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err = c.Do(ctx, Request{URL: "/x"})
		if d := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || d != 30*time.Millisecond {
			t.Errorf("err %v after %s, want the context's deadline after 30ms", err, d)
		}
		if h := hits.Load(); h != 1 {
			t.Errorf("hits %d", h)
		}
	})
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
