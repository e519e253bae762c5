package demoapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// discardWriter is a ResponseWriter that throws the body away, to measure
// the handler alone.
type discardWriter struct {
	h http.Header
	n int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }

// BenchmarkEventsPage measures how fast the demo serves events in pages of
// 1000 (~300 bytes each): "handler" is the encoding alone, "http" adds a
// loopback HTTP round trip with the body read by a client. The benchmark
// pulls a million events through the demo, so both must stay well above
// the tap's own rate; records/s is reported as a metric.
func BenchmarkEventsPage(b *testing.B) {
	const events, limit = 1_000_000, 1000
	s, err := New(Config{Events: events})
	if err != nil {
		b.Fatal(err)
	}
	url := func(i int) string {
		return "/v1/events?limit=" + strconv.Itoa(limit) + "&since_id=" + strconv.Itoa((i*limit)%events)
	}
	b.Run("handler", func(b *testing.B) {
		w := &discardWriter{h: http.Header{}}
		reqs := make([]*http.Request, 16)
		for i := range reqs {
			reqs[i] = httptest.NewRequest("GET", url(i), nil)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			s.ServeHTTP(w, reqs[i%len(reqs)])
		}
		b.SetBytes(int64(w.n / max(b.N, 1)))
		b.ReportMetric(float64(b.N*limit)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("http", func(b *testing.B) {
		ts := httptest.NewServer(s)
		defer ts.Close()
		client := ts.Client()
		var n int64
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			resp, err := client.Get(ts.URL + url(i))
			if err != nil {
				b.Fatal(err)
			}
			m, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			n += m
		}
		b.SetBytes(n / int64(max(b.N, 1)))
		b.ReportMetric(float64(b.N*limit)/b.Elapsed().Seconds(), "records/s")
	})
}
