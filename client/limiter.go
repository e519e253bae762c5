package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// minSlowRate is the slowest the rate-limit headers can make the bucket;
// at that pace the remaining budget is soon 0, and the limiter then waits
// for the window to reset instead.
const minSlowRate = rate.Limit(0.1)

// errQuotaReached is turned into a *DeferError by the transport.
var errQuotaReached = errors.New("daily quota reached")

// limiter decides when an attempt may leave. Every attempt, retries and
// redirects included, goes through acquire:
//
//  1. If the API's remaining budget (see below) is used up, wait until its
//     window resets.
//  2. Take an in-flight slot (a buffered channel of MaxInFlight), held until
//     the response body has been read.
//  3. Take a token from the bucket: one rate.Limiter shared by every
//     goroutine, RequestsPerSecond tokens a second, Burst at most. The
//     reservation is made on the injectable clock and waited out with the
//     injectable Sleep: rate.Limiter.Wait with testable time. The token
//     comes after the slot so that it is spent the moment it is granted:
//     tokens granted to goroutines then queued for a slot would leave
//     together, faster than the rate.
//  4. Check the API's budget again (a response may have used it up
//     meanwhile; then give the slot back and start over), and count the
//     attempt against the daily quota.
//
// The API's budget comes from rate-limit response headers
// (X-RateLimit-Remaining / -Reset / -Limit, or the unprefixed RateLimit-*
// of the IETF draft). A Reset above 10^9 is a Unix time (above 10^12, in
// milliseconds), else delay-seconds. Within one window the smallest
// Remaining seen is the API's latest count: every attempt it had answered
// before is in it, so only the attempts still awaiting their response may
// be missing, and they are subtracted. The budget left is thus never
// overestimated, whatever order the API handled concurrent attempts in.
//
// The budget also slows the bucket down: when what is left, spread over the
// time until the reset, is below the configured rate, the bucket runs at
// left/seconds-until-reset (never faster than configured, never slower than
// 0.1/s, burst 1) until the reset, then goes back to the configured rate.
// With nothing left, attempts wait for the reset (step 1).
type limiter struct {
	bucket *rate.Limiter
	rate   rate.Limit // configured
	burst  int        // configured
	slots  chan struct{}
	quota  int
	now    func() time.Time
	sleep  func(context.Context, time.Duration) error
	log    *slog.Logger
	stats  *stats

	mu          sync.Mutex
	sent        int       // attempts that passed acquire, for the daily quota
	outstanding int       // attempts sent whose response headers are not in
	slowUntil   time.Time // non-zero while the headers slowed the bucket
	budget      budget    // the API's last word on its window
	gen         uint64    // incremented when budget changes
	loggedGen   uint64    // the budget whose exhaustion was logged
}

// budget is what the API said of its current window.
type budget struct {
	valid     bool
	remaining float64 // the smallest Remaining seen in the window
	resetAt   time.Time
}

func newLimiter(cfg *Config, st *stats, log *slog.Logger) *limiter {
	r := rate.Inf
	if cfg.RequestsPerSecond > 0 {
		r = rate.Limit(cfg.RequestsPerSecond)
	}
	return &limiter{
		bucket: rate.NewLimiter(r, cfg.Burst),
		rate:   r,
		burst:  cfg.Burst,
		slots:  make(chan struct{}, cfg.MaxInFlight),
		quota:  cfg.DailyQuota,
		now:    cfg.Now,
		sleep:  cfg.Sleep,
		log:    log,
		stats:  st,
	}
}

// quotaReached reports whether the daily quota is used up.
func (l *limiter) quotaReached() bool {
	if l.quota <= 0 {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sent >= l.quota
}

// acquire waits until an attempt may be sent. On success the attempt holds
// an in-flight slot, to give back with release, and must report its
// response headers (or failure) with settle.
func (l *limiter) acquire(ctx context.Context) (release func(), err error) {
	release = func() { <-l.slots }
	// A round that finds the budget used up again (other attempts took it
	// while this one waited for its slot) starts over, waiting for the next
	// reset. Each round waits for a reset or ends, so rounds are few; the
	// bound is only a guard against an API whose budget never refills.
	const rounds = 1000
	for round := 1; round <= rounds; round++ {
		if err := l.waitWindow(ctx); err != nil {
			return nil, err
		}
		if err := l.waitSlot(ctx); err != nil {
			return nil, err
		}
		if err := l.waitToken(ctx); err != nil {
			release()
			return nil, err
		}
		l.mu.Lock()
		if !l.blockedUntilLocked(l.now()).IsZero() {
			l.mu.Unlock()
			release()
			continue
		}
		if l.quota > 0 && l.sent >= l.quota {
			l.mu.Unlock()
			release()
			return nil, errQuotaReached
		}
		l.sent++
		l.outstanding++
		l.mu.Unlock()
		return release, nil
	}
	return nil, fmt.Errorf("rate limiter: the API's rate-limit budget stayed used up for %d windows", rounds)
}

// leftLocked is the API's budget left for new attempts.
func (l *limiter) leftLocked() float64 {
	return l.budget.remaining - float64(l.outstanding)
}

// blockedUntilLocked is the API's window reset if its budget is used up.
func (l *limiter) blockedUntilLocked(now time.Time) time.Time {
	b := l.budget
	if !b.valid || !now.Before(b.resetAt) || l.leftLocked() >= 1 {
		return time.Time{}
	}
	return b.resetAt
}

// waitWindow waits, if the API's budget is used up, until its window
// resets. The budget is then forgotten (whatever the clock says), so that
// a clock that does not move cannot block for ever.
func (l *limiter) waitWindow(ctx context.Context) error {
	l.mu.Lock()
	now := l.now()
	until := l.blockedUntilLocked(now)
	gen := l.gen
	if !until.IsZero() && l.loggedGen != gen {
		l.loggedGen = gen
		l.log.Info("rate limit: budget used up, waiting for the window to reset",
			"reset_in", until.Sub(now).Round(time.Millisecond).String())
	}
	l.mu.Unlock()
	if until.IsZero() {
		return nil
	}
	d := until.Sub(now)
	if err := l.sleep(ctx, d); err != nil {
		return err
	}
	l.stats.wait(ctx, bucketWait, d)
	l.mu.Lock()
	if l.gen == gen {
		l.budget.valid = false
		l.gen++
	}
	l.mu.Unlock()
	return nil
}

func (l *limiter) waitToken(ctx context.Context) error {
	now := l.now()
	l.mu.Lock()
	l.restoreLocked(now)
	l.mu.Unlock()
	r := l.bucket.ReserveN(now, 1)
	if !r.OK() {
		return fmt.Errorf("rate limiter: cannot take a token (burst %d)", l.bucket.Burst())
	}
	d := r.DelayFrom(now)
	if d <= 0 {
		return nil
	}
	if err := l.sleep(ctx, d); err != nil {
		r.CancelAt(l.now())
		return err
	}
	l.stats.wait(ctx, bucketWait, d)
	return nil
}

func (l *limiter) waitSlot(ctx context.Context) error {
	select {
	case l.slots <- struct{}{}:
		return nil
	default:
	}
	start := l.now()
	select {
	case l.slots <- struct{}{}:
		l.stats.wait(ctx, slotWait, l.now().Sub(start))
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// restoreLocked puts the configured rate back once the window the headers
// spoke of has reset.
func (l *limiter) restoreLocked(now time.Time) {
	if l.slowUntil.IsZero() || now.Before(l.slowUntil) {
		return
	}
	l.bucket.SetLimitAt(now, l.rate)
	l.bucket.SetBurstAt(now, l.burst)
	l.slowUntil = time.Time{}
	l.log.Info("rate limit: back to the configured rate", "requests_per_second", rateString(l.rate))
}

// settle ends an attempt that acquire let go, with the headers of its
// response (nil if it got none), and applies its rate-limit headers.
func (l *limiter) settle(h http.Header) {
	now := l.now()
	w, ok := parseWindow(h, now)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.outstanding--
	b := &l.budget
	switch {
	case !ok:
		// No word from the API's limiter: the attempt probably counted.
		if b.valid && h != nil {
			b.remaining = max(b.remaining-1, 0)
		}
		return
	case !b.valid || !now.Before(b.resetAt) || w.resetAt.Sub(b.resetAt) >= time.Second:
		// First word, the old window is over, or a later window began.
		*b = budget{valid: true, remaining: w.remaining, resetAt: w.resetAt}
		l.gen++
	case b.resetAt.Sub(w.resetAt) >= time.Second:
		return // a late answer from the previous window
	default:
		// The same window (delay-seconds resets jitter by rounding).
		if w.remaining < b.remaining {
			b.remaining = w.remaining
			l.gen++
		}
		if w.resetAt.After(b.resetAt) {
			b.resetAt = w.resetAt
		}
	}
	l.adjustLocked(now, w.limit)
}

// adjustLocked sets the bucket's rate from the budget left.
func (l *limiter) adjustLocked(now time.Time, limit float64) {
	b := l.budget
	left := l.leftLocked()
	until := b.resetAt.Sub(now)
	if left < 1 || until <= 0 {
		return // acquire waits for the reset
	}
	perSec := rate.Limit(left / until.Seconds())
	if l.rate != rate.Inf && perSec >= l.rate {
		if !l.slowUntil.IsZero() { // plenty left again
			l.slowUntil = now
			l.restoreLocked(now)
		}
		return
	}
	r := max(perSec, minSlowRate)
	if l.rate != rate.Inf {
		r = min(r, l.rate)
	}
	prev := l.bucket.Limit()
	wasSlow := !l.slowUntil.IsZero()
	l.bucket.SetLimitAt(now, r)
	l.bucket.SetBurstAt(now, 1)
	l.slowUntil = b.resetAt
	if !wasSlow || r < prev/2 {
		l.log.Info("rate limit: slowing down to spread the remaining budget until the reset",
			"remaining", b.remaining, "limit", limit, "reset_in", until.Round(time.Millisecond).String(),
			"requests_per_second", rateString(r))
	}
}

// window is what one response's rate-limit headers say.
type window struct {
	remaining, limit float64
	resetAt          time.Time
}

// parseWindow reads the rate-limit headers; ok is false without both
// Remaining and a Reset in the future.
func parseWindow(h http.Header, now time.Time) (w window, ok bool) {
	if h == nil {
		return w, false
	}
	var reset float64
	if w.remaining, ok = headerNumber(h, "X-RateLimit-Remaining", "RateLimit-Remaining"); !ok {
		return w, false
	}
	if reset, ok = headerNumber(h, "X-RateLimit-Reset", "RateLimit-Reset"); !ok {
		return w, false
	}
	switch {
	case reset > 1e12: // Unix milliseconds
		w.resetAt = time.UnixMilli(int64(reset))
	case reset > 1e9: // Unix seconds
		sec, frac := math.Modf(reset)
		w.resetAt = time.Unix(int64(sec), int64(frac*1e9))
	default: // delay-seconds
		w.resetAt = now.Add(time.Duration(reset * float64(time.Second)))
	}
	if !w.resetAt.After(now) {
		return w, false // the window has already reset
	}
	w.limit, _ = headerNumber(h, "X-RateLimit-Limit", "RateLimit-Limit")
	return w, true
}

// headerNumber reads the first number of the first header present: "12",
// "12.5", or a draft-RFC list such as "100, 100;w=60" (its first item).
func headerNumber(h http.Header, names ...string) (float64, bool) {
	for _, n := range names {
		v := h.Get(n)
		if v == "" {
			continue
		}
		if i := strings.IndexAny(v, ",;"); i >= 0 {
			v = v[:i]
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return 0, false
		}
		return f, true
	}
	return 0, false
}

func rateString(r rate.Limit) string {
	if r == rate.Inf {
		return "unlimited"
	}
	return strconv.FormatFloat(float64(r), 'g', 4, 64)
}

// nextUTCMidnight is when a daily quota is assumed to renew.
func nextUTCMidnight(now time.Time) time.Time {
	return now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
}
