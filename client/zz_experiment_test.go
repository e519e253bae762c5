package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/tap-dev/tap/demoapi"
)

func TestZZDemoQuota(t *testing.T) {
	for try := range 6 {
		srv, err := demoapi.New(demoapi.Config{RequestsPerSecond: 10})
		if err != nil {
			t.Fatal(err)
		}
		addr, err := srv.Start("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(addr)
		var mu sync.Mutex
		var lines []string
		base := http.DefaultTransport.(*http.Transport).Clone()
		rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sent := time.Now()
			resp, err := base.RoundTrip(r)
			if err == nil {
				mu.Lock()
				lines = append(lines, fmt.Sprintf("%s→%s %d rem=%s reset=%s", sent.Format("05.000000"), time.Now().Format("05.000000"), resp.StatusCode, resp.Header.Get("X-RateLimit-Remaining"), resp.Header.Get("X-RateLimit-Reset")))
				mu.Unlock()
			}
			return resp, err
		})
		c, err := New(Config{BaseURL: u, RequestsPerSecond: 50, Burst: 10, MaxInFlight: 4, Timeout: 2 * time.Second, Transport: rt})
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
		for i := range 60 {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
		st := srv.Stats()
		t.Logf("try %d server %+v", try, st.ByStatus)
		if st.ByStatus[429] > 0 {
			for _, l := range lines {
				t.Log(l)
			}
		}
		srv.Close()
	}
}
