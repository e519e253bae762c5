package client

import (
	"github.com/tap-dev/tap/client/limit"

	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/time/rate"
)

// 16 goroutines race on a bucket of 4 tokens refilled very slowly: exactly
// 4 go, the others wait until cancelled. synctest.Wait says when every
// request that can go has gone.
func TestBucketBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int32
		rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sent.Add(1)
			return jsonResponse(r, 200, nil, "{}"), nil
		})
		c, err := New(withSettings(Config{
			BaseURL: mustURL(t, "http://api.test"), Transport: rt,
			Limit: limit.Config{RequestsPerSecond: 0.001, Burst: 4, MaxInFlight: 16},
		}))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var wg sync.WaitGroup
		var ok, canceled atomic.Int32
		for range 16 {
			wg.Go(func() {
				_, err := c.Do(ctx, Request{Stream: "s", URL: "/x"})
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, context.Canceled):
					canceled.Add(1)
				default:
					t.Error(err)
				}
			})
		}
		synctest.Wait()
		if n := sent.Load(); n != 4 || ok.Load() != 4 {
			t.Errorf("%d requests sent, %d done before the others gave up; want 4 and 4", n, ok.Load())
		}
		cancel()
		wg.Wait()
		if ok.Load() != 4 || canceled.Load() != 12 {
			t.Errorf("ok %d, canceled %d; want 4, 12", ok.Load(), canceled.Load())
		}
		if st := c.Stats(); st.Requests != 4 {
			t.Errorf("stats %+v", st)
		}
	})
}

// The bucket spaces attempts at the configured rate (fake clock).
func TestBucketSpacing(t *testing.T) {
	var e *env
	var times []time.Time
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		times = append(times, e.clock.Now())
		return jsonResponse(r, 200, nil, "{}"), nil
	})
	e = newEnv(t, "http://api.test", func(c *Config) { c.Transport = rt; c.Limit.RequestsPerSecond = 4; c.Limit.Burst = 2 })
	for range 6 {
		if _, err := e.c.Do(context.Background(), Request{URL: "/x"}); err != nil {
			t.Fatal(err)
		}
	}
	want := []time.Duration{0, 0, 250, 500, 750, 1000}
	for i, tm := range times {
		if got := tm.Sub(t0); got != want[i]*time.Millisecond {
			t.Errorf("attempt %d at +%s, want +%dms", i+1, got, want[i])
		}
	}
	if st := e.c.Stats(); st.WaitBucket != time.Second {
		t.Errorf("WaitBucket %s, want 1s", st.WaitBucket)
	}
}

// The in-flight cap holds with many goroutines, and is reached: each
// request takes 15 ms of the synctest clock, so all 3 slots fill.
func TestMaxInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var cur, peak atomic.Int32
		rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			v := cur.Add(1)
			for p := peak.Load(); v > p && !peak.CompareAndSwap(p, v); p = peak.Load() {
			}
			time.Sleep(15 * time.Millisecond)
			cur.Add(-1)
			return jsonResponse(r, 200, nil, "{}"), nil
		})
		c, err := New(withSettings(Config{BaseURL: mustURL(t, "http://api.test"), Transport: rt, Limit: limit.Config{MaxInFlight: 3}}))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		var wg sync.WaitGroup
		for range 12 {
			wg.Go(func() {
				if _, err := c.Do(t.Context(), Request{URL: "/x"}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if p := peak.Load(); p != 3 {
			t.Errorf("peak concurrency %d, want 3", p)
		}
		if d := time.Since(start); d != 4*15*time.Millisecond {
			t.Errorf("12 requests of 15 ms, 3 at a time, took %v; want 60ms", d)
		}
	})
}

// quotaAPI is a fake API that allows limit requests per window of its
// clock, answers 429 beyond, and sends rate-limit headers.
type quotaAPI struct {
	mu       sync.Mutex
	now      func() time.Time
	limit    int
	window   time.Duration
	epoch    bool // Reset as a Unix time instead of delay-seconds
	winStart time.Time
	used     int
	ok, too  int
}

func (q *quotaAPI) RoundTrip(r *http.Request) (*http.Response, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	for !now.Before(q.winStart.Add(q.window)) {
		q.winStart = q.winStart.Add(q.window)
		q.used = 0
	}
	status := 200
	if q.used < q.limit {
		q.used++
		q.ok++
	} else {
		status = 429
		q.too++
	}
	reset := q.winStart.Add(q.window)
	h := http.Header{}
	h.Set("X-RateLimit-Limit", strconv.Itoa(q.limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(q.limit-q.used))
	if q.epoch {
		h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	} else {
		h.Set("X-RateLimit-Reset", strconv.Itoa(int(math.Ceil(reset.Sub(now).Seconds()))))
	}
	if status == 429 {
		h.Set("Retry-After", strconv.Itoa(int(math.Ceil(reset.Sub(now).Seconds()))))
	}
	return jsonResponse(r, status, h, "{}"), nil
}

// Rate-limit headers slow the bucket down so that a quota is used up
// without a single 429. The workers wait concurrently, which a clock that
// adds up every Sleep cannot model: the test runs on the synctest clock
// with the client's real Now and Sleep.
func TestRateLimitHeadersNo429(t *testing.T) {
	for _, epoch := range []bool{false, true} {
		for _, workers := range []int{1, 4} {
			t.Run(fmt.Sprintf("epoch=%v/workers=%d", epoch, workers), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) { rateLimitHeadersNo429(t, epoch, workers) })
			})
		}
	}
}

func rateLimitHeadersNo429(t *testing.T, epoch bool, workers int) {
	api := &quotaAPI{now: time.Now, limit: 10, window: time.Minute, epoch: epoch, winStart: time.Now()}
	e := newEnv(t, "http://api.test", func(c *Config) {
		c.Transport = api
		c.Now, c.Sleep = nil, nil // the bubble's clock
		c.Limit.RequestsPerSecond = 5
		c.Limit.Burst = 3
		c.Limit.MaxInFlight = 4
	})
	var slowest rate.Limit = rate.Inf
	var mu sync.Mutex
	var wg sync.WaitGroup
	jobs := make(chan int)
	for range workers {
		wg.Go(func() {
			for range jobs {
				if _, err := e.c.Do(context.Background(), Request{URL: "/x"}); err != nil {
					t.Error(err)
				}
				mu.Lock()
				slowest = min(slowest, e.c.lim.Limit())
				mu.Unlock()
			}
		})
	}
	for i := range 35 {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if api.too != 0 || api.ok != 35 {
		t.Errorf("API answered %d × 200 and %d × 429, want 35 and 0", api.ok, api.too)
	}
	if slowest >= 5 || slowest < 0.1 {
		t.Errorf("slowest bucket rate %v, want in [0.1, 5)", slowest)
	}
	st := e.c.Stats()
	if st.WaitBucket < 2*time.Minute || st.Retries != 0 {
		t.Errorf("stats %+v: want about 3 windows of bucket waits and no retry", st)
	}
	if !strings.Contains(e.log.String(), "rate limit: slowing down") {
		t.Errorf("no slowdown logged:\n%s", e.log.String())
	}
}

// An API whose window holds fewer requests than the bucket would send in
// it (7 a second against 9/s) gets its 7 in every window, and no 429: the
// pace the headers set lets the 7 go before the reset and the next at the
// reset, so no window loses a slot to the slowdown.
func TestWindowSlowdownKeepsEveryWindowFull(t *testing.T) {
	const perWindow, windows = 7, 10
	var e *env
	api := &quotaAPI{limit: perWindow, window: time.Second, epoch: true, winStart: t0}
	e = newEnv(t, "http://api.test", func(c *Config) {
		c.Transport = api
		c.Limit.RequestsPerSecond = 9
		c.Limit.Burst = 1
	})
	api.now = e.clock.Now
	byWindow := make([]int, windows+1)
	for range perWindow * windows {
		if _, err := e.c.Do(context.Background(), Request{URL: "/x"}); err != nil {
			t.Fatal(err)
		}
		if w := int(e.clock.Now().Sub(t0) / time.Second); w < len(byWindow) {
			byWindow[w]++
		} else {
			t.Fatalf("request sent at %s: past %d windows (by window: %v)", e.clock.Now().Sub(t0), windows, byWindow)
		}
	}
	if api.too != 0 {
		t.Errorf("%d × 429", api.too)
	}
	for w, n := range byWindow[:windows] {
		if n != perWindow {
			t.Errorf("window %d: %d requests, want %d (by window: %v)", w, n, perWindow, byWindow)
		}
	}
}

// A Remaining of 0 makes the next attempt wait for the reset, counted as
// bucket wait.
func TestRemainingZeroWaitsForReset(t *testing.T) {
	var e *env
	var times []time.Time
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		times = append(times, e.clock.Now())
		h := http.Header{}
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Reset", "42")
		return jsonResponse(r, 200, h, "{}"), nil
	})
	e = newEnv(t, "http://api.test", func(c *Config) { c.Transport = rt })
	for range 2 {
		if _, err := e.c.Do(context.Background(), Request{URL: "/x"}); err != nil {
			t.Fatal(err)
		}
	}
	if len(times) != 2 || times[1].Sub(times[0]) != 42*time.Second {
		t.Errorf("attempts at %v, want 42s apart", times)
	}
	if st := e.c.Stats(); st.WaitBucket != 42*time.Second {
		t.Errorf("WaitBucket %s", st.WaitBucket)
	}
}

// A real server with short windows that handles concurrent requests in a
// shuffled order (random delays before and after counting) still never
// has to answer 429: the smallest Remaining of the window, minus the
// attempts still out, never overestimates the budget.
func TestRateLimitShuffledServer(t *testing.T) {
	const apiLimit, win = 4, 40 * time.Millisecond
	var mu sync.Mutex
	var winStart time.Time
	used, ok, too := 0, 0, 0
	var seed atomic.Uint64
	srv := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		rnd := rand.New(rand.NewPCG(seed.Add(1), 7))
		time.Sleep(time.Duration(rnd.IntN(2000)) * time.Microsecond)
		mu.Lock()
		now := time.Now()
		if now.Sub(winStart) >= win {
			winStart = now.Truncate(win)
			used = 0
		}
		status := 200
		if used < apiLimit {
			used++
			ok++
		} else {
			status = 429
			too++
		}
		w.Header().Set("X-RateLimit-Limit", strconv.Itoa(apiLimit))
		w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(apiLimit-used))
		w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(winStart.Add(win).UnixMilli(), 10))
		mu.Unlock()
		time.Sleep(time.Duration(rnd.IntN(2000)) * time.Microsecond)
		if status == 429 {
			w.Header().Set("Retry-After", "0")
		}
		w.WriteHeader(status)
	})
	c, err := New(withSettings(Config{BaseURL: mustURL(t, srv.URL), Limit: limit.Config{MaxInFlight: apiLimit}}))
	if err != nil {
		t.Fatal(err)
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range jobs {
				if _, err := c.Do(context.Background(), Request{URL: "/x"}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	for i := range 40 {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if too != 0 || ok != 40 {
		t.Errorf("server answered %d × 200 and %d × 429, want 40 and 0", ok, too)
	}
}

// Waits are told apart by kind and by the stream whose request waited.
func TestWaitsByStreamAndKind(t *testing.T) {
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return jsonResponse(r, 200, nil, "{}"), nil
	})
	e := newEnv(t, "http://api.test", func(c *Config) { c.Transport = rt; c.Limit.RequestsPerSecond = 4; c.Limit.Burst = 1 })
	// a: no wait (burst), b: 250ms, a: 250ms, a: 250ms.
	for _, s := range []string{"a", "b", "a", "a"} {
		if _, err := e.c.Do(context.Background(), Request{Stream: s, URL: "/x"}); err != nil {
			t.Fatal(err)
		}
	}
	st := e.c.Stats()
	q := 250 * time.Millisecond
	want := map[string]Waits{"a": {WaitBucket: 2 * q}, "b": {WaitBucket: q}}
	if d := cmp.Diff(want, st.ByStream); d != "" {
		t.Errorf("ByStream (-want +got):\n%s", d)
	}
	if st.Waits != (Waits{WaitBucket: 3 * q}) {
		t.Errorf("totals %+v, want 750ms of bucket wait only", st.Waits)
	}
}

// A wait for an in-flight slot is counted as a slot wait, for the stream
// that waited, not as a bucket wait.
func TestSlotWaitAttributed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/slow" {
				time.Sleep(3 * time.Second)
			}
			return jsonResponse(r, 200, nil, "{}"), nil
		})
		c, err := New(withSettings(Config{BaseURL: mustURL(t, "http://api.test"), Transport: rt, Limit: limit.Config{MaxInFlight: 1}}))
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error)
		go func() {
			_, err := c.Do(t.Context(), Request{Stream: "a", URL: "/slow"})
			done <- err
		}()
		synctest.Wait() // a holds the only slot
		if _, err := c.Do(t.Context(), Request{Stream: "b", URL: "/x"}); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		got := c.Stats()
		if want := (Waits{WaitSlot: 3 * time.Second}); got.Waits != want || got.ByStream["b"] != want || got.ByStream["a"] != (Waits{}) {
			t.Errorf("waits %+v, by stream %+v; want 3s of slot wait for b", got.Waits, got.ByStream)
		}
	})
}
