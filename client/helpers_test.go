package client

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tap-dev/tap/settings"
)

// t0 is the fake clock's start.
var t0 = time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)

// fakeClock is a clock whose Sleep records the duration and moves the
// clock forward instead of waiting.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps []time.Duration
}

func newFakeClock() *fakeClock { return &fakeClock{t: t0} }

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sleeps = append(f.sleeps, d)
	if d > 0 {
		f.t = f.t.Add(d)
	}
	return nil
}

func (f *fakeClock) Sleeps() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sleeps...)
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of slog.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// env is a Client under test with its fake clock and captured log.
type env struct {
	c     *Client
	clock *fakeClock
	log   *syncBuffer
}

// newEnv makes a Client for base with a fake clock, jitter fixed at 0.5,
// fast retries, a captured debug log, and the changes of mod.
func newEnv(t *testing.T, base string, mod func(*Config)) *env {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{clock: newFakeClock(), log: &syncBuffer{}}
	cfg := Config{
		BaseURL:   u,
		Logger:    slog.New(slog.NewJSONHandler(e.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Rand:      func() float64 { return 0.5 },
		Now:       e.clock.Now,
		Sleep:     e.clock.Sleep,
		Timeout:   5 * time.Second,
		BaseDelay: 500 * time.Millisecond,
	}
	if mod != nil {
		mod(&cfg)
	}
	e.c, err = New(withSettings(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// server is an httptest server (127.0.0.1) whose handler is given the
// 1-based number of the request.
type server struct {
	*httptest.Server
	mu   sync.Mutex
	hits int
	reqs []*http.Request
}

func newServer(t *testing.T, h func(n int, w http.ResponseWriter, r *http.Request)) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits++
		n := s.hits
		s.reqs = append(s.reqs, r.Clone(context.Background()))
		s.mu.Unlock()
		h(n, w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) Hits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits
}

func (s *server) Request(i int) *http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs[i]
}

// roundTripFunc is an http.RoundTripper from a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func jsonResponse(r *http.Request, status int, h http.Header, body string) *http.Response {
	if h == nil {
		h = http.Header{}
	}
	h.Set("Content-Type", "application/json")
	return &http.Response{
		StatusCode: status, Status: http.StatusText(status), Header: h,
		Body: io.NopCloser(strings.NewReader(body)), Request: r, ContentLength: int64(len(body)),
	}
}

// secretsRedactor masks the given values, as the tap's redactor does.
type secretsRedactor []string

func (r secretsRedactor) Redact(s string) string {
	for _, v := range r {
		s = strings.ReplaceAll(s, v, "REDACTED")
	}
	return s
}

// withSettings fills the settings a test leaves zero with their defaults,
// read from the tap's registry of settings (package settings), as a run
// is given them: the client itself fills in none.
func withSettings(c Config) Config {
	def := map[string]float64{}
	for _, s := range settings.Settings() {
		switch v := s.Default.(type) {
		case int:
			def[s.Name] = float64(v)
		case float64:
			def[s.Name] = v
		}
	}
	ints := []struct {
		v       *int
		setting string
	}{
		{&c.Limit.Burst, "rate_limit.burst"},
		{&c.Limit.MaxInFlight, "rate_limit.max_in_flight"},
		{&c.MaxAttempts, "retry.max_attempts"},
		{&c.BreakerThreshold, "circuit_breaker.threshold"},
		{&c.BreakerMaxOpenings, "circuit_breaker.max_openings"},
	}
	for _, f := range ints {
		if *f.v == 0 {
			*f.v = int(def[f.setting])
		}
	}
	durs := []struct {
		v       *time.Duration
		setting string
		unit    time.Duration
	}{
		{&c.Limit.MaxRetryAfter, "retry.max_retry_after_s", time.Second},
		{&c.BaseDelay, "retry.base_delay_ms", time.Millisecond},
		{&c.MaxDelay, "retry.max_delay_ms", time.Millisecond},
		{&c.Timeout, "request_timeout_s", time.Second},
		{&c.BreakerCooldown, "circuit_breaker.cooldown_s", time.Second},
	}
	for _, f := range durs {
		if *f.v == 0 {
			*f.v = time.Duration(def[f.setting] * float64(f.unit))
		}
	}
	return c
}
