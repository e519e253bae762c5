package client

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// breaker is a circuit breaker shared by every request of a Client.
//
// Closed, it lets every attempt through and counts consecutive transient
// failures (5xx, timeouts, resets, Check → Transient); a healthy answer
// resets the count. After threshold consecutive failures it opens: no
// attempt is sent for cooldown, attempts block in acquire (one of them
// sleeping out the cooldown with the injectable Sleep, the others waiting
// for the state to change). Then it is half-open: exactly one attempt, the
// probe, goes through while the others keep waiting. A healthy probe closes
// the circuit; a failing one reopens it. The maxOpenings-th opening is the
// last: from then on every attempt fails with ErrCircuitOpen.
//
// Each attempt that passes holds a ticket and reports its outcome on it
// exactly once; tickets from an earlier state (epoch) are ignored.
type breaker struct {
	threshold   int
	cooldown    time.Duration
	maxOpenings int
	now         func() time.Time
	sleep       func(context.Context, time.Duration) error
	log         *slog.Logger
	stats       *stats
	onChange    func(state string, openings int)

	mu       sync.Mutex
	state    breakerState
	epoch    uint64 // incremented on every state change
	failures int    // consecutive, while closed
	openings int
	openedAt time.Time
	sleeping bool          // a waiter is sleeping out the cooldown
	probing  bool          // the half-open probe is out
	changed  chan struct{} // closed and replaced on every change
}

type breakerState int

const (
	stateClosed breakerState = iota
	stateOpen
	stateHalfOpen
	stateDead // opened maxOpenings times
)

func (s breakerState) String() string {
	return [...]string{"closed", "open", "half-open", "open for good"}[s]
}

func newBreaker(cfg *Config, st *stats, log *slog.Logger) *breaker {
	return &breaker{
		threshold:   cfg.BreakerThreshold,
		cooldown:    cfg.BreakerCooldown,
		maxOpenings: cfg.BreakerMaxOpenings,
		now:         cfg.Now,
		sleep:       cfg.Sleep,
		log:         log,
		stats:       st,
		onChange:    cfg.OnBreaker,
		changed:     make(chan struct{}),
	}
}

// ticket is one attempt's permission to go, on which it reports back.
type ticket struct {
	b     *breaker
	epoch uint64
	probe bool
	once  sync.Once
}

// acquire blocks while the circuit is open or a probe is out, and returns
// the ticket of an attempt allowed to go. It fails with ctx's error, or
// with an error wrapping ErrCircuitOpen once the circuit is open for good.
func (b *breaker) acquire(ctx context.Context) (*ticket, error) {
	var waited time.Duration
	defer func() { b.stats.wait(ctx, breakerWait, waited) }()
	for {
		b.mu.Lock()
		switch b.state {
		case stateClosed:
			t := &ticket{b: b, epoch: b.epoch}
			b.mu.Unlock()
			return t, nil
		case stateDead:
			n := b.openings
			b.mu.Unlock()
			return nil, fmt.Errorf("%w (opened %d times in this run)", ErrCircuitOpen, n)
		case stateHalfOpen:
			if !b.probing {
				b.probing = true
				t := &ticket{b: b, epoch: b.epoch, probe: true}
				b.mu.Unlock()
				return t, nil
			}
		case stateOpen:
			if !b.sleeping {
				b.sleeping = true
				epoch := b.epoch
				d := b.openedAt.Add(b.cooldown).Sub(b.now())
				b.mu.Unlock()
				var err error
				if d > 0 {
					err = b.sleep(ctx, d)
				}
				b.mu.Lock()
				b.sleeping = false
				if err != nil {
					b.notifyLocked() // let another waiter take over the cooldown
					b.mu.Unlock()
					return nil, err
				}
				waited += max(d, 0)
				if b.epoch == epoch && b.state == stateOpen {
					b.setLocked(stateHalfOpen)
					b.log.Warn("circuit breaker half-open: sending one probe request")
				}
				b.mu.Unlock()
				continue
			}
		}
		ch := b.changed
		b.mu.Unlock()
		start := b.now()
		select {
		case <-ctx.Done():
			waited += b.now().Sub(start)
			return nil, ctx.Err()
		case <-ch:
			waited += b.now().Sub(start)
		}
	}
}

// done reports the attempt's outcome; only the first report counts.
func (t *ticket) done(h health) {
	if t == nil {
		return
	}
	t.once.Do(func() { t.b.report(t, h) })
}

func (b *breaker) report(t *ticket, h health) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t.epoch != b.epoch {
		return // issued before the last state change
	}
	if t.probe {
		b.probing = false
		switch h {
		case healthy:
			b.failures = 0
			b.setLocked(stateClosed)
			b.log.Warn("circuit breaker closed: the probe request succeeded")
		case failing:
			b.openLocked("the probe request failed")
		default:
			b.notifyLocked() // inconclusive: let another waiter probe
		}
		return
	}
	if b.state != stateClosed {
		return
	}
	switch h {
	case healthy:
		b.failures = 0
	case failing:
		b.failures++
		if b.failures >= b.threshold {
			b.openLocked(fmt.Sprintf("%d consecutive transient failures", b.failures))
		}
	}
}

func (b *breaker) openLocked(why string) {
	b.openings++
	b.failures = 0
	b.stats.opened()
	if b.openings >= b.maxOpenings {
		b.setLocked(stateDead)
		b.log.Warn("circuit breaker open for good: every further request fails",
			"reason", why, "openings", b.openings, "max_openings", b.maxOpenings)
		return
	}
	b.openedAt = b.now()
	b.setLocked(stateOpen)
	b.log.Warn("circuit breaker opened: pausing all requests",
		"reason", why, "cooldown", b.cooldown.String(), "openings", b.openings, "max_openings", b.maxOpenings)
}

func (b *breaker) setLocked(s breakerState) {
	b.state = s
	b.epoch++
	b.notifyLocked()
	if b.onChange != nil {
		b.onChange(s.String(), b.openings)
	}
}

func (b *breaker) notifyLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}
