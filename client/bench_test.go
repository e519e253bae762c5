package client

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

// BenchmarkRequest is one GET of a page through the client against the
// same request through a bare net/http client, both to one loopback
// server: the difference is the client's own cost per request, part of
// the tap's cost per page (issue 44). Its allocations are per request.
func BenchmarkRequest(b *testing.B) {
	page := []byte(`{"data":[{"id":1},{"id":2}],"next":"abc"}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(page)
	}))
	defer srv.Close()
	base, err := url.Parse(srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("client", func(b *testing.B) {
		cfg := withSettings(Config{BaseURL: base})
		cfg.Limit.RequestsPerSecond = 0
		c, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		buf := make([]byte, 0, 4096)
		q := url.Values{"limit": {"100"}, "after": {"42"}}
		b.ReportAllocs()
		for b.Loop() {
			resp, err := c.Do(context.Background(), Request{Stream: "s", URL: "/v1/things", Query: q,
				Buffer: func(int) []byte { return buf[:0] }})
			if err != nil || len(resp.Body) != len(page) {
				b.Fatalf("%v, %d bytes", err, len(resp.Body))
			}
		}
	})
	b.Run("net/http", func(b *testing.B) {
		hc := &http.Client{}
		buf := make([]byte, 4096)
		b.ReportAllocs()
		for b.Loop() {
			resp, err := hc.Get(srv.URL + "/v1/things?after=42&limit=100")
			if err != nil {
				b.Fatal(err)
			}
			n, _ := io.ReadFull(resp.Body, buf[:len(page)])
			resp.Body.Close()
			if n != len(page) {
				b.Fatalf("%d bytes", n)
			}
		}
	})
}
