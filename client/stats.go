package client

import (
	"maps"
	"sync"
	"time"
)

// Stats counts what a Client did since New. Waits add up across goroutines,
// so with several streams they may exceed the wall-clock time.
type Stats struct {
	Requests        int           // attempts sent (retries and redirects included)
	ByStatus        map[int]int   // responses by status; transport errors under 0
	Retries         int           // retries scheduled
	Ignored         int           // responses with a status in Request.IgnoreStatuses
	WaitBucket      time.Duration // waiting for a token, an in-flight slot, or a rate-limit window to reset
	WaitRetryAfter  time.Duration // waiting as told by Retry-After
	WaitBackoff     time.Duration // waiting between retries (jittered backoff)
	WaitBreaker     time.Duration // waiting for the circuit breaker's cooldown or probe
	BreakerOpenings int
}

// Stats returns a snapshot of the counters. It is safe to call
// concurrently with Do.
func (c *Client) Stats() Stats { return c.stats.snapshot() }

// stats is the mutable, locked side of Stats.
type stats struct {
	mu sync.Mutex
	s  Stats
}

func newStats() *stats { return &stats{s: Stats{ByStatus: map[int]int{}}} }

func (s *stats) snapshot() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.s
	out.ByStatus = maps.Clone(s.s.ByStatus)
	return out
}

func (s *stats) update(f func(*Stats)) {
	s.mu.Lock()
	f(&s.s)
	s.mu.Unlock()
}

func (s *stats) sent()                       { s.update(func(t *Stats) { t.Requests++ }) }
func (s *stats) status(code int)             { s.update(func(t *Stats) { t.ByStatus[code]++ }) }
func (s *stats) retried()                    { s.update(func(t *Stats) { t.Retries++ }) }
func (s *stats) ignored()                    { s.update(func(t *Stats) { t.Ignored++ }) }
func (s *stats) opened()                     { s.update(func(t *Stats) { t.BreakerOpenings++ }) }
func (s *stats) waitBucket(d time.Duration)  { s.update(func(t *Stats) { t.WaitBucket += max(d, 0) }) }
func (s *stats) waitBreaker(d time.Duration) { s.update(func(t *Stats) { t.WaitBreaker += max(d, 0) }) }
func (s *stats) waitRetry(d time.Duration, retryAfter bool) {
	s.update(func(t *Stats) {
		if retryAfter {
			t.WaitRetryAfter += max(d, 0)
		} else {
			t.WaitBackoff += max(d, 0)
		}
	})
}
