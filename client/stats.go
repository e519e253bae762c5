package client

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/tap-dev/tap/client/limit"
)

// Stats counts what a Client did since New.
type Stats struct {
	Requests int         // attempts sent (retries and redirects included)
	ByStatus map[int]int // responses by status; transport errors under 0
	// Cancelled counts attempts sent but ended by the caller's context
	// before a response: not failures, so not in ByStatus.
	Cancelled int
	Retries   int // retries scheduled
	// RetriesByStream holds the retries of each Request.Stream.
	RetriesByStream map[string]int
	Ignored         int // responses with a status in Request.IgnoreStatuses

	// Waits are the totals over every request. Requests of streams that
	// run in parallel wait at the same time, so a total may exceed the
	// wall-clock time of the run.
	Waits
	// ByStream holds the waits of each Request.Stream. A stream sends one
	// request at a time, so its waits never exceed its wall-clock time.
	ByStream map[string]Waits

	BreakerOpenings int
}

// Waits is time spent waiting before or between attempts, by cause.
type Waits struct {
	WaitSlot       time.Duration // for an in-flight slot (rate_limit.max_in_flight)
	WaitBucket     time.Duration // for a token of the shared bucket (requests_per_second), or for the API's rate-limit window to reset
	WaitRetryAfter time.Duration // as told by Retry-After
	WaitBackoff    time.Duration // between retries (jittered backoff)
	WaitBreaker    time.Duration // for the circuit breaker's cooldown or probe
}

// Quota is the time spent waiting on the client's own limits: slots and
// the bucket.
func (w Waits) Quota() time.Duration { return w.WaitSlot + w.WaitBucket }

// Stats returns a snapshot of the counters. It is safe to call
// concurrently with Do.
func (c *Client) Stats() Stats { return c.stats.snapshot() }

// stats is the mutable, locked side of Stats.
type stats struct {
	mu sync.Mutex
	s  Stats
}

func newStats() *stats {
	return &stats{s: Stats{ByStatus: map[int]int{}, ByStream: map[string]Waits{}, RetriesByStream: map[string]int{}}}
}

func (s *stats) snapshot() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.s
	out.ByStatus = maps.Clone(s.s.ByStatus)
	out.ByStream = maps.Clone(s.s.ByStream)
	out.RetriesByStream = maps.Clone(s.s.RetriesByStream)
	return out
}

func (s *stats) update(f func(*Stats)) {
	s.mu.Lock()
	f(&s.s)
	s.mu.Unlock()
}

func (s *stats) sent()           { s.update(func(t *Stats) { t.Requests++ }) }
func (s *stats) status(code int) { s.update(func(t *Stats) { t.ByStatus[code]++ }) }
func (s *stats) cancelled()      { s.update(func(t *Stats) { t.Cancelled++ }) }
func (s *stats) retried(stream string) {
	s.update(func(t *Stats) { t.Retries++; t.RetriesByStream[stream]++ })
}
func (s *stats) ignored() { s.update(func(t *Stats) { t.Ignored++ }) }
func (s *stats) opened()  { s.update(func(t *Stats) { t.BreakerOpenings++ }) }

// wait adds d to one kind of wait, in the totals and in the waits of the
// stream whose request ctx carries (none outside Client.Do).
func (s *stats) wait(ctx context.Context, kind waitKind, d time.Duration) {
	if d <= 0 {
		return
	}
	stream, attributed := "", false
	if cs := callFrom(ctx); cs != nil {
		stream, attributed = cs.req.Stream, true
		cs.waited[kind] += d // the wait before its next attempt, for a trace
	}
	s.update(func(t *Stats) {
		*kind.of(&t.Waits) += d
		if attributed {
			w := t.ByStream[stream]
			*kind.of(&w) += d
			t.ByStream[stream] = w
		}
	})
}

// limitWait counts a wait of the limiter.
func (s *stats) limitWait(ctx context.Context, kind limit.Wait, d time.Duration) {
	switch kind {
	case limit.WaitSlot:
		s.wait(ctx, slotWait, d)
	case limit.WaitRetryAfter:
		s.wait(ctx, retryAfterWait, d)
	default:
		s.wait(ctx, bucketWait, d)
	}
}

// waitKind is a reason a request waits, as the stats and a trace name it.
type waitKind int

const (
	slotWait waitKind = iota
	bucketWait
	retryAfterWait
	backoffWait
	breakerWait
	waitKinds
)

func (k waitKind) of(w *Waits) *time.Duration {
	switch k {
	case slotWait:
		return &w.WaitSlot
	case bucketWait:
		return &w.WaitBucket
	case retryAfterWait:
		return &w.WaitRetryAfter
	case backoffWait:
		return &w.WaitBackoff
	}
	return &w.WaitBreaker
}

// String is the kind as the run summary's wait_<kind>_s columns name it.
func (k waitKind) String() string {
	return [...]string{"slot", "bucket", "retry_after", "backoff", "breaker"}[k]
}
