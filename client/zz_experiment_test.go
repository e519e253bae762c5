package client

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tap-dev/tap/demoapi"
)

func TestZZDemoQuota(t *testing.T) {
	for try := range 4 {
		srv, err := demoapi.New(demoapi.Config{RequestsPerSecond: 10})
		if err != nil {
			t.Fatal(err)
		}
		addr, err := srv.Start("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(addr)
		c, err := New(Config{BaseURL: u, RequestsPerSecond: 50, Burst: 10, MaxInFlight: 4, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		jobs := make(chan int)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range jobs {
					if _, err := c.Do(context.Background(), Request{Stream: "orders", URL: "/v1/orders", Query: url.Values{"limit": {"5"}}}); err != nil {
						t.Error(err)
					}
				}
			})
		}
		start := time.Now()
		for i := range 50 {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
		t.Logf("try %d server %+v in %s", try, srv.Stats().ByStatus, time.Since(start))
		srv.Close()
	}
}

// A server with 100ms windows that counts requests after a random delay.
func TestZZShuffled(t *testing.T) {
	for try := range 4 {
		var mu sync.Mutex
		var winStart time.Time
		used, ok, too := 0, 0, 0
		const limit, win = 5, 100 * time.Millisecond
		srv := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
			time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
			mu.Lock()
			now := time.Now()
			if now.Sub(winStart) >= win {
				winStart = now.Truncate(win)
				used = 0
			}
			st := 200
			if used < limit {
				used++
				ok++
			} else {
				st = 429
				too++
			}
			w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(limit-used))
			w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(winStart.Add(win).UnixMilli(), 10))
			mu.Unlock()
			time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
			if st == 429 {
				w.Header().Set("Retry-After", "0")
			}
			w.WriteHeader(st)
		})
		c, _ := New(Config{BaseURL: mustURL(t, srv.URL), MaxInFlight: 4})
		var wg sync.WaitGroup
		start := time.Now()
		jobs := make(chan int)
		for range 8 {
			wg.Go(func() {
				for range jobs {
					if _, err := c.Do(context.Background(), Request{URL: "/x"}); err != nil {
						t.Error(err)
					}
				}
			})
		}
		for i := range 60 {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
		t.Logf("try %d: ok %d 429 %d in %s", try, ok, too, time.Since(start))
	}
}
