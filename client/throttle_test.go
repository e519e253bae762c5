package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tap-dev/tap/client/limit"
)

// fakeAPI is an in-memory API for tests inside a synctest bubble, where
// time.Now is the bubble's clock: it logs when each attempt arrived and
// answers with the response of answer.
type fakeAPI struct {
	mu     sync.Mutex
	starts []time.Time
	answer func(n int, r *http.Request) *http.Response
}

func (f *fakeAPI) RoundTrip(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	f.starts = append(f.starts, time.Now())
	n := len(f.starts)
	f.mu.Unlock()
	return f.answer(n, r), nil
}

func (f *fakeAPI) startsIn(from, to time.Time) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := 0
	for _, s := range f.starts {
		if s.After(from) && s.Before(to) {
			k++
		}
	}
	return k
}

func bubbleClient(t *testing.T, api *fakeAPI, mod func(*Config)) *Client {
	t.Helper()
	cfg := Config{BaseURL: mustURL(t, "http://api.test"), Transport: api, Rand: func() float64 { return 0.5 }}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(withSettings(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// One 429 with Retry-After: 3 pauses every stream: no attempt of any of
// three streams starts inside the window, and all of them go on after it.
func TestShared429PausesEveryStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var at429 time.Time
		api := &fakeAPI{answer: func(n int, r *http.Request) *http.Response {
			if n == 10 {
				at429 = time.Now()
				return jsonResponse(r, 429, http.Header{"Retry-After": {"3"}}, `{"error":"slow down"}`)
			}
			return jsonResponse(r, 200, nil, "{}")
		}}
		c := bubbleClient(t, api, func(c *Config) { c.Limit.RequestsPerSecond = 10; c.Limit.MaxInFlight = 4 })
		var wg sync.WaitGroup
		for _, s := range []string{"a", "b", "c"} {
			wg.Go(func() {
				for range 8 {
					if _, err := c.Do(t.Context(), Request{Stream: s, URL: "/x"}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if at429.IsZero() {
			t.Fatal("no 429 was answered")
		}
		if n := api.startsIn(at429, at429.Add(3*time.Second)); n != 0 {
			t.Errorf("%d attempts started inside the 3 s Retry-After window, want 0", n)
		}
		if got := len(api.starts); got != 25 {
			t.Errorf("%d attempts, want 24 requests + 1 retry", got)
		}
		if st := c.Stats(); st.WaitRetryAfter < 3*time.Second {
			t.Errorf("Retry-After waits %s, want at least the 429's 3 s", st.WaitRetryAfter)
		}
	})
}

// A stream's weight spends that many tokens; weight_per_minute holds the
// weights of one UTC minute under the budget, trued up by the used-weight
// header.
func TestWeights(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The bubble starts at midnight UTC 2000-01-01: a minute boundary.
		var used int
		api := &fakeAPI{answer: func(n int, r *http.Request) *http.Response {
			used += 5
			if n == 1 {
				used += 2 // someone else on the same key
			}
			return jsonResponse(r, 200, http.Header{"X-Mbx-Used-Weight-1m": {fmt.Sprint(used)}}, "{}")
		}}
		c := bubbleClient(t, api, func(c *Config) {
			c.Limit.RequestsPerSecond = 10
			c.Limit.Burst = 10
			c.Limit.WeightPerMinute = 16
			c.Limit.UsedWeightHeader = "X-MBX-USED-WEIGHT-1M"
		})
		start := time.Now()
		for range 3 {
			if _, err := c.Do(t.Context(), Request{Stream: "w", URL: "/x", Weight: 5}); err != nil {
				t.Fatal(err)
			}
		}
		// 5 tokens each from a bucket of 10 at 10/s: the second goes at
		// once, the third half a second later. The API reports 12 used
		// after two, so the third (12 + 5 > 16) waits for the next minute.
		got := []time.Duration{api.starts[0].Sub(start), api.starts[1].Sub(start), api.starts[2].Sub(start)}
		want := []time.Duration{0, 0, time.Minute}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("attempt %d started at +%s, want +%s", i+1, got[i], want[i])
			}
		}
	})
	synctest.Test(t, func(t *testing.T) {
		api := &fakeAPI{answer: func(n int, r *http.Request) *http.Response { return jsonResponse(r, 200, nil, "{}") }}
		c := bubbleClient(t, api, func(c *Config) { c.Limit.RequestsPerSecond = 2; c.Limit.Burst = 1 })
		start := time.Now()
		for range 2 {
			if _, err := c.Do(t.Context(), Request{Stream: "w", URL: "/x", Weight: 4}); err != nil {
				t.Fatal(err)
			}
		}
		// A weight above the burst is spaced, not refused: 4 tokens at
		// 2/s from a full bucket of 1, then 4 more.
		if d0, d1 := api.starts[0].Sub(start), api.starts[1].Sub(start); d0 != 1500*time.Millisecond || d1 != 3500*time.Millisecond {
			t.Errorf("attempts at +%s and +%s, want +1.5s and +3.5s", d0, d1)
		}
	})
}

// A GraphQL cost budget: a query reserves its estimate, waits until the
// budget holds it, and the response's actual cost and remaining points
// true the count up.
func TestCostBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := &fakeAPI{answer: func(n int, r *http.Request) *http.Response {
			// Every query actually costs 20, whatever it asked for.
			return jsonResponse(r, 200, nil, `{"data":{},"extensions":{"cost":{"actualQueryCost":20}}}`)
		}}
		c := bubbleClient(t, api, func(c *Config) {
			c.Limit.RequestsPerSecond = 0
			c.Limit.Cost = limit.Cost{Points: 100, RestorePerS: 10, ActualPath: "extensions.cost.actualQueryCost"}
		})
		start := time.Now()
		for range 7 {
			if _, err := c.Do(t.Context(), Request{Stream: "g", URL: "/graphql", Method: "POST", Body: []byte("{}"), Cost: 50}); err != nil {
				t.Fatal(err)
			}
		}
		// The first reserves 50 and is trued up to 20: 80 left. Then the
		// stream's estimate is its last actual cost, 20: four more at once
		// (0 left), then one every 2 s.
		var got []time.Duration
		for _, s := range api.starts {
			got = append(got, s.Sub(start))
		}
		want := []time.Duration{0, 0, 0, 0, 0, 2 * time.Second, 4 * time.Second}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("starts %v, want %v", got, want)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		// The API's remaining points win over the local count.
		api := &fakeAPI{answer: func(n int, r *http.Request) *http.Response {
			return jsonResponse(r, 200, nil, `{"extensions":{"cost":{"actualQueryCost":10,"throttleStatus":{"currentlyAvailable":0}}}}`)
		}}
		c := bubbleClient(t, api, func(c *Config) {
			c.Limit.RequestsPerSecond = 0
			c.Limit.Cost = limit.Cost{Points: 1000, RestorePerS: 50, ActualPath: "extensions.cost.actualQueryCost",
				RemainingPath: "extensions.cost.throttleStatus.currentlyAvailable"}
		})
		start := time.Now()
		for range 2 {
			if _, err := c.Do(t.Context(), Request{Stream: "g", URL: "/graphql", Method: "POST", Cost: 10}); err != nil {
				t.Fatal(err)
			}
		}
		if d := api.starts[1].Sub(start); d != 200*time.Millisecond {
			t.Errorf("second query at +%s, want +200ms (10 points at 50/s from 0 left)", d)
		}
	})
}

// A redirect hop under a cost budget gives its reservation back: the
// query runs at the hop's target, which bills it. (Kept, each hop's
// estimate was lost for good, and the budget shrank query by query.)
func TestCostBudgetRedirect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := &fakeAPI{answer: func(n int, r *http.Request) *http.Response {
			if r.URL.Path == "/graphql" {
				return jsonResponse(r, http.StatusTemporaryRedirect, http.Header{"Location": {"/v2/graphql"}}, ``)
			}
			return jsonResponse(r, 200, nil, `{"data":{},"extensions":{"cost":{"actualQueryCost":20}}}`)
		}}
		c := bubbleClient(t, api, func(c *Config) {
			c.Limit.RequestsPerSecond = 0
			c.Limit.Cost = limit.Cost{Points: 100, RestorePerS: 10, ActualPath: "extensions.cost.actualQueryCost"}
		})
		start := time.Now()
		for range 6 {
			if _, err := c.Do(t.Context(), Request{Stream: "g", URL: "/graphql", Method: "POST", Body: []byte("{}"), Cost: 50}); err != nil {
				t.Fatal(err)
			}
		}
		// As without the redirect (TestCostBudget): 80 left after the
		// first, four more of 20 at once, then one every 2 s.
		var got []time.Duration
		for i, s := range api.starts {
			if i%2 == 1 { // the hops' targets
				got = append(got, s.Sub(start))
			}
		}
		want := []time.Duration{0, 0, 0, 0, 0, 2 * time.Second}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("queries at %v, want %v", got, want)
		}
	})
}

// The daily quota counts per UTC day, earlier runs' count included.
func TestDailyQuotaAcrossRuns(t *testing.T) {
	tests := []struct {
		name      string
		day       string
		used      int
		wantSent  int
		wantUsed  int
		wantDefer bool
	}{
		{"same day: goes on counting", "2026-11-30", 2, 1, 3, true},
		{"quota already used", "2026-11-30", 3, 0, 3, true},
		{"an earlier day counts nothing", "2026-11-29", 3, 3, 3, true},
		{"no count yet", "", 0, 3, 3, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sent int
			rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				sent++
				return jsonResponse(r, 200, nil, "{}"), nil
			})
			e := newEnv(t, "http://api.test", func(c *Config) {
				c.Transport, c.Limit.DailyQuota, c.Limit.QuotaDay, c.Limit.QuotaUsed = rt, 3, tt.day, tt.used
			})
			var err error
			for range 5 {
				if _, err = e.c.Do(context.Background(), Request{Stream: "s", URL: "/x"}); err != nil {
					break
				}
			}
			var de *DeferError
			if got := errors.As(err, &de); got != tt.wantDefer {
				t.Fatalf("err %v, want a DeferError %v", err, tt.wantDefer)
			}
			if !de.RetryAt.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) || !strings.Contains(de.Reason, "midnight UTC") {
				t.Errorf("defer %v: want a retry at the next midnight UTC", de)
			}
			day, used := e.c.QuotaUsage()
			if sent != tt.wantSent || day != "2026-11-30" || used != tt.wantUsed {
				t.Errorf("sent %d, usage %s %d; want %d, 2026-11-30 %d", sent, day, used, tt.wantSent, tt.wantUsed)
			}
		})
	}
}

// retry.max_total_s: no retry is made that would end past the cap.
func TestMaxRetryTime(t *testing.T) {
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) { return jsonResponse(r, 503, nil, "{}"), nil })
	e := newEnv(t, "http://api.test", func(c *Config) {
		// Backoff with jitter 0.5: 0.5 s, 1 s, 2 s, 4 s, ...
		c.Transport, c.MaxAttempts, c.BaseDelay, c.MaxDelay, c.MaxRetryTime = rt, 10, time.Second, time.Minute, 4*time.Second
	})
	_, err := e.c.Do(context.Background(), Request{Stream: "s", URL: "/x"})
	var se *StatusError
	if !errors.As(err, &se) || se.Attempts != 4 || !strings.Contains(err.Error(), "retry.max_total_s") {
		t.Fatalf("err %v: want a StatusError after 4 attempts (0.5+1+2 s waited; 4 s more would pass 4 s) naming retry.max_total_s", err)
	}
	if got := fmt.Sprint(e.clock.Sleeps()); got != "[500ms 1s 2s]" {
		t.Errorf("sleeps %s", got)
	}
}

// on_status rules override the default classification.
func TestOnStatusRules(t *testing.T) {
	// busy is a Classify that reads the body: it wins over the status
	// rules where it says something; where not, the status decides.
	busy := func(_ int, _ http.Header, body []byte) (StatusRule, bool) {
		switch {
		case strings.Contains(string(body), "busy"):
			return StatusRetry, true
		case strings.Contains(string(body), "nothing here"):
			return StatusIgnore, true
		}
		return "", false
	}
	tests := []struct {
		status      int
		rule        StatusRule
		ignore      []int
		wantHits    int
		wantIgnored bool
		wantErr     bool
		body        string // the first answer's ["{\"error\":\"x\"}"]
		classify    bool   // the request reads bodies with busy
	}{
		{409, StatusRetry, nil, 2, false, false, "", false}, // retried, then 200
		{404, StatusIgnore, nil, 1, true, false, "", false},
		{404, "", []int{404}, 1, true, false, "", false},         // ignore_statuses, the shorthand
		{404, StatusFail, []int{404}, 1, false, true, "", false}, // a rule wins over ignore_statuses
		{503, StatusFail, nil, 1, false, true, "", false},        // no retry
		{429, StatusFail, nil, 1, false, true, "", false},
		{400, "", nil, 1, false, true, "", false},  // the default: permanent
		{409, "", nil, 1, false, true, "", false},  // the default: permanent
		{503, "", nil, 2, false, false, "", false}, // the default: retried
		{400, StatusRetry, nil, 2, false, false, "", false},
		{200, "", nil, 2, false, false, `{"error":"busy"}`, true},         // a 200 that says busy is retried
		{404, "", nil, 1, true, false, `{"error":"nothing here"}`, true},  // no error
		{400, StatusFail, nil, 2, false, false, `{"error":"busy"}`, true}, // Classify over a status rule
		{400, StatusIgnore, nil, 1, true, false, `{"error":"bad"}`, true}, // silent: the rule decides
		{400, "", nil, 1, false, true, `{"error":"bad"}`, true},           // silent, no rule: the default
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d %s %s", tt.status, tt.rule, tt.body), func(t *testing.T) {
			hits := 0
			rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				hits++
				if hits == 1 {
					return jsonResponse(r, tt.status, nil, cmp.Or(tt.body, `{"error":"x"}`)), nil
				}
				return jsonResponse(r, 200, nil, "{}"), nil
			})
			e := newEnv(t, "http://api.test", func(c *Config) { c.Transport = rt })
			req := Request{Stream: "s", URL: "/x", IgnoreStatuses: tt.ignore}
			if tt.rule != "" {
				req.OnStatus = map[int]StatusRule{tt.status: tt.rule}
			}
			if tt.classify {
				req.Classify = busy
			}
			resp, err := e.c.Do(context.Background(), req)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, want error %v", err, tt.wantErr)
			}
			if hits != tt.wantHits {
				t.Errorf("%d attempts, want %d", hits, tt.wantHits)
			}
			if err == nil && resp.Ignored != tt.wantIgnored {
				t.Errorf("ignored %v, want %v", resp.Ignored, tt.wantIgnored)
			}
		})
	}
}

// The breaker tells every change of state.
func TestBreakerChangesReported(t *testing.T) {
	var mu sync.Mutex
	var changes []string
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) { return jsonResponse(r, 503, nil, "{}"), nil })
	e := newEnv(t, "http://api.test", func(c *Config) {
		c.Transport, c.MaxAttempts, c.BreakerThreshold, c.BreakerMaxOpenings = rt, 10, 2, 2
		c.OnBreaker = func(state string, openings int) {
			mu.Lock()
			changes = append(changes, fmt.Sprintf("%s/%d", state, openings))
			mu.Unlock()
		}
	})
	_, err := e.c.Do(context.Background(), Request{Stream: "s", URL: "/x"})
	if !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("err %v, want ErrCircuitOpen", err)
	}
	if got := strings.Join(changes, " "); got != "open/1 half-open/1 open for good/2" {
		t.Errorf("changes %q", got)
	}
}

// By default every attempt takes its tokens; with FreeRetries a retry
// after a 503 takes none (its backoff paces it). A retry after a 429
// always takes its tokens.
func TestRetriesAndTokens(t *testing.T) {
	tests := []struct {
		free  bool
		first int
		want  string
	}{
		{false, 503, "[0s 1s 2s]"},      // the retry waits for the next token, as a request would
		{true, 503, "[0s 50ms 1s]"},     // the retry at its backoff; the next request at the next token
		{false, 429, "[0s 1.25s 2.5s]"}, // the retry waits for a token, at the rate lowered to 0.8/s
		{true, 429, "[0s 1.25s 2.5s]"},
		{false, 200, "[0s 1s 2s]"}, // three requests: one a second
		{true, 200, "[0s 1s 2s]"},
	}
	for _, tt := range tests {
		synctest.Test(t, func(t *testing.T) {
			api := &fakeAPI{answer: func(n int, r *http.Request) *http.Response {
				if n == 1 {
					return jsonResponse(r, tt.first, nil, "{}")
				}
				return jsonResponse(r, 200, nil, "{}")
			}}
			c := bubbleClient(t, api, func(c *Config) {
				c.Limit.RequestsPerSecond, c.BaseDelay, c.MaxDelay = 1, 100*time.Millisecond, time.Second
				c.FreeRetries = tt.free
			})
			start := time.Now()
			for len(api.starts) < 3 {
				if _, err := c.Do(t.Context(), Request{Stream: "s", URL: "/x"}); err != nil {
					t.Fatal(err)
				}
			}
			var got []time.Duration
			for _, s := range api.starts {
				got = append(got, s.Sub(start))
			}
			if fmt.Sprint(got) != tt.want {
				t.Errorf("free retries %v, first answer %d: attempts at %v, want %s", tt.free, tt.first, got, tt.want)
			}
		})
	}
}
