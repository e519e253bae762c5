package client

import (
	"context"
	"sync"
	"testing"
	"time"
	"net/url"

	"github.com/tap-dev/tap/demoapi"
)

func TestZZDemoQuota(t *testing.T) {
	for _, tc := range []struct{ rps float64; burst, workers int }{{0, 1, 4}, {9, 1, 4}, {0, 1, 1}, {20, 5, 8}} {
		srv, err := demoapi.New(demoapi.Config{RequestsPerSecond: 10, LatencyMS: 20})
		if err != nil { t.Fatal(err) }
		addr, err := srv.Start("127.0.0.1:0")
		if err != nil { t.Fatal(err) }
		u, _ := url.Parse(addr)
		c, err := New(Config{BaseURL: u, RequestsPerSecond: tc.rps, Burst: tc.burst, MaxInFlight: 4, Timeout: 2*time.Second})
		if err != nil { t.Fatal(err) }
		start := time.Now()
		jobs := make(chan int)
		var wg sync.WaitGroup
		for range tc.workers {
			wg.Go(func() {
				for range jobs {
					if _, err := c.Do(context.Background(), Request{Stream: "orders", URL: "/v1/orders", Query: url.Values{"limit": {"5"}}}); err != nil { t.Error(err) }
				}
			})
		}
		for i := range 45 { jobs <- i }
		close(jobs); wg.Wait()
		st := c.Stats()
		t.Logf("rps=%v burst=%d workers=%d: %s client %+v server %+v", tc.rps, tc.burst, tc.workers, time.Since(start), st, srv.Stats().ByStatus)
		srv.Close()
	}
}
