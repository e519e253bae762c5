package client

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"
)

// A Streaming answer outlives Timeout, which bounds its headers only; it
// carries the credentials, and holds no in-flight slot once open.
func TestStreamingOutlivesTheTimeoutAndFreesItsSlot(t *testing.T) {
	release, never := make(chan struct{}), make(chan struct{})
	defer close(never)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow-headers" {
			select {
			case <-never:
			case <-r.Context().Done():
			}
			return
		}
		if r.URL.Path != "/feed" {
			w.Write([]byte(`{}`))
			return
		}
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("first\n"))
		w.(http.Flusher).Flush()
		<-release
		w.Write([]byte("second\n"))
	}))
	defer srv.Close()
	base, _ := url.Parse(srv.URL)
	cfg := Config{BaseURL: base, Auth: Auth{Type: "bearer", Token: "tok"}, Timeout: 100 * time.Millisecond}
	cfg.Limit.MaxInFlight = 1
	c, err := New(withSettings(cfg))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	resp, err := c.Streaming().Get(srv.URL + "/feed")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: the credentials were not sent", resp.StatusCode)
	}
	// With the only slot held by the feed, this would wait forever.
	if _, err := c.Do(ctx, Request{URL: "/other"}); err != nil {
		t.Fatalf("a request while the feed is open: %v", err)
	}
	time.Sleep(300 * time.Millisecond) // three timeouts
	close(release)
	b, err := io.ReadAll(resp.Body)
	if err != nil || string(b) != "first\nsecond\n" {
		t.Fatalf("body %q, %v; want both lines", b, err)
	}
	// The timeout still bounds the wait for the headers.
	start := time.Now()
	if _, err := c.Streaming().Get(srv.URL + "/slow-headers"); err == nil {
		t.Fatal("no error from an answer without headers")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the headers were waited for %s, Timeout is 100ms", d)
	}
}
