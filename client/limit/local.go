package limit

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

// minSlowRate is the slowest the limiter ever makes the bucket; at that
// pace the API's remaining budget is soon 0, and the limiter then waits for
// the window to reset instead.
const minSlowRate = rate.Limit(0.1)

// AIMD constants: a 429 multiplies the bucket's ceiling by decrease; after
// cleanRun responses in a row without a 429 the ceiling grows by the
// configured rate ÷ increaseSteps, up to the configured rate.
const (
	decrease      = 0.8
	cleanRun      = 20
	increaseSteps = 10
)

// reply is what the limiter learns from an attempt's response.
type reply struct {
	header http.Header // nil: no response
	status int
}

// local is the limiter kept in the process (see the package doc for the
// model). Order of one acquire: wait out what is known to block (pause,
// API window, weight minute, cost); take a slot; take the tokens; then,
// under the lock, check again (another stream may have used the budget
// meanwhile: give the slot back and start over) and commit the spend.
// Tokens come after the slot so that they are spent the moment they are
// granted.
type local struct {
	bucket *rate.Limiter
	rate   rate.Limit // configured
	burst  int        // configured
	slots  chan struct{}
	quota  int
	wpm    int    // weight per minute, 0 = off
	wHdr   string // used-weight header
	cost   Cost
	pause  time.Duration // the longest Retry-After that pauses; longer defers
	now    func() time.Time
	sleep  func(context.Context, time.Duration) error
	log    *slog.Logger
	onWait func(context.Context, Wait, time.Duration)

	mu          sync.Mutex
	ceiling     rate.Limit // AIMD ceiling of the bucket's rate
	clean       int        // answers without a 429 since the last change of ceiling
	pausedUntil time.Time  // a 429's Retry-After, for every stream
	quotaDay    string     // UTC date of quotaUsed
	quotaUsed   int        // attempts sent on quotaDay, earlier runs included
	outstanding int        // attempts sent whose response headers are not in
	slowUntil   time.Time  // non-zero while the headers slowed the bucket
	budget      budget     // the API's last word on its window
	gen         uint64     // incremented when budget changes
	loggedGen   uint64     // the budget whose exhaustion was logged
	wMinute     time.Time  // the UTC minute wUsed counts
	wUsed       float64    // weight spent in wMinute
	cAvail      float64    // cost points available at cAt
	cAt         time.Time
	cOut        float64            // estimates of cost-billed attempts in flight
	cLast       map[string]float64 // last actual cost by stream
}

// budget is what the API said of its current window.
type budget struct {
	valid     bool
	remaining float64 // the smallest Remaining seen in the window
	resetAt   time.Time
}

func newLocal(cfg *Config) *local {
	r := rate.Inf
	if cfg.RequestsPerSecond > 0 {
		r = rate.Limit(cfg.RequestsPerSecond)
	}
	return &local{
		bucket:    rate.NewLimiter(r, cfg.Burst),
		rate:      r,
		burst:     cfg.Burst,
		slots:     make(chan struct{}, cfg.MaxInFlight),
		quota:     cfg.DailyQuota,
		wpm:       cfg.WeightPerMinute,
		wHdr:      http.CanonicalHeaderKey(cfg.UsedWeightHeader),
		cost:      cfg.Cost,
		pause:     cfg.MaxRetryAfter,
		now:       cfg.Now,
		sleep:     cfg.Sleep,
		log:       cfg.Logger,
		onWait:    cfg.OnWait,
		ceiling:   r,
		quotaDay:  cfg.QuotaDay,
		quotaUsed: cfg.QuotaUsed,
		cAvail:    cfg.Cost.Points,
		cLast:     map[string]float64{},
	}
}

// quotaUsage returns the UTC day and the attempts counted against the
// daily quota on it.
func (l *local) quotaUsage() (day string, used int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rollDayLocked(l.now())
	return l.quotaDay, l.quotaUsed
}

func (l *local) rollDayLocked(now time.Time) {
	switch d := utcDay(now); {
	case l.quotaDay == "": // QuotaUsed is today's
		l.quotaDay = d
	case d != l.quotaDay:
		l.quotaDay, l.quotaUsed = d, 0
	}
}

// quotaReached reports whether the daily quota is used up.
func (l *local) quotaReached() bool {
	if l.quota <= 0 {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rollDayLocked(l.now())
	return l.quotaUsed >= l.quota
}

// acquire waits until an attempt may be sent. On success the attempt holds
// an in-flight slot, to give back with release, and must report its
// response headers (or failure) with settle.
func (l *local) acquire(ctx context.Context, sp Spend) (release func(), err error) {
	release = func() { <-l.slots }
	if sp.Weight < 1 {
		sp.Weight = 1
	}
	// A round that finds a budget used up again (other attempts took it
	// while this one waited for its slot) starts over. Each round waits
	// for something to reset or ends, so rounds are few; the bound is only
	// a guard against an API whose budget never refills.
	const rounds = 1000
	for round := 1; round <= rounds; round++ {
		if err := l.waitBlocked(ctx, sp); err != nil {
			return nil, err
		}
		if err := l.waitSlot(ctx); err != nil {
			return nil, err
		}
		if !sp.Retry {
			if err := l.waitTokens(ctx, sp.Weight); err != nil {
				release()
				return nil, err
			}
		}
		l.mu.Lock()
		now := l.now()
		if _, _, blocked := l.blockedLocked(now, sp); blocked {
			l.mu.Unlock()
			release()
			continue
		}
		if l.quota > 0 {
			l.rollDayLocked(now)
			if l.quotaUsed >= l.quota {
				l.mu.Unlock()
				release()
				return nil, ErrQuotaReached
			}
		}
		l.quotaUsed++
		l.outstanding++
		if l.wpm > 0 {
			l.wUsed += float64(sp.Weight)
		}
		if sp.Cost > 0 && l.cost.Points > 0 {
			e := l.estimateLocked(sp)
			l.cAvail -= e
			l.cOut += e
		}
		l.mu.Unlock()
		return release, nil
	}
	return nil, fmt.Errorf("rate limiter: the API's rate-limit budget stayed used up for %d windows", rounds)
}

// estimateLocked is the cost a query reserves: the last actual cost of its
// stream, else the caller's estimate (the page size), within the budget.
func (l *local) estimateLocked(sp Spend) float64 {
	e := sp.Cost
	if last, ok := l.cLast[sp.Stream]; ok {
		e = last
	}
	return min(e, l.cost.Points)
}

// blockedLocked says what, if anything, keeps an attempt from leaving at
// now, and until when: a 429's pause, the API's window, the weight minute
// or the cost budget. why is for the log and the wait's kind.
func (l *local) blockedLocked(now time.Time, sp Spend) (until time.Time, why string, blocked bool) {
	if now.Before(l.pausedUntil) {
		return l.pausedUntil, "429", true
	}
	if t := l.windowBlockedLocked(now); !t.IsZero() {
		return t, "window", true
	}
	if l.wpm > 0 {
		m := now.UTC().Truncate(time.Minute)
		if !m.Equal(l.wMinute) {
			l.wMinute, l.wUsed = m, 0
		}
		if l.wUsed > 0 && l.wUsed+float64(sp.Weight) > float64(l.wpm) {
			return m.Add(time.Minute), "weight", true
		}
	}
	if sp.Cost > 0 && l.cost.Points > 0 {
		l.restoreCostLocked(now)
		need := l.estimateLocked(sp)
		if l.cAvail < need {
			if l.cost.RestorePerS <= 0 {
				return now.Add(time.Second), "cost", true
			}
			d := time.Duration((need - l.cAvail) / l.cost.RestorePerS * float64(time.Second))
			return now.Add(max(d, time.Millisecond)), "cost", true
		}
	}
	return time.Time{}, "", false
}

func (l *local) restoreCostLocked(now time.Time) {
	if dt := now.Sub(l.cAt); dt > 0 && !l.cAt.IsZero() {
		l.cAvail = min(l.cost.Points, l.cAvail+dt.Seconds()*l.cost.RestorePerS)
	}
	l.cAt = now
}

// waitBlocked sleeps until nothing known blocks the attempt. The API's
// window is forgotten once waited for (whatever the clock says), so that a
// clock that does not move cannot block for ever.
func (l *local) waitBlocked(ctx context.Context, sp Spend) error {
	for range 1000 {
		l.mu.Lock()
		now := l.now()
		until, why, blocked := l.blockedLocked(now, sp)
		gen := l.gen
		if why == "window" && l.loggedGen != gen {
			l.loggedGen = gen
			l.log.Info("rate limit: budget used up, waiting for the window to reset",
				"reset_in", until.Sub(now).Round(time.Millisecond).String())
		}
		l.mu.Unlock()
		if !blocked {
			return nil
		}
		d := until.Sub(now)
		if why == "window" && d > l.pause {
			// As a Retry-After that long: the caller defers the run
			// rather than sleep for a day (or for years).
			return &WindowError{ResetAt: until, Wait: d}
		}
		if d >= longWait && why != "window" { // a window's wait is logged above
			l.log.Info("rate limit: waiting", "why", why, "wait_s", d.Round(time.Millisecond).Seconds())
		}
		if err := l.sleep(ctx, d); err != nil {
			return err
		}
		kind := WaitBucket
		if why == "429" {
			kind = WaitRetryAfter
		}
		l.onWait(ctx, kind, d)
		if why == "window" {
			l.mu.Lock()
			if l.gen == gen {
				l.budget.valid = false
				l.gen++
			}
			l.mu.Unlock()
		}
	}
	return errors.New("rate limiter: still blocked after 1000 waits")
}

// waitTokens takes n tokens from the bucket, one reservation each, and
// waits until the last is granted.
func (l *local) waitTokens(ctx context.Context, n int) error {
	now := l.now()
	l.mu.Lock()
	l.restoreLocked(now)
	l.mu.Unlock()
	var d time.Duration
	rs := make([]*rate.Reservation, 0, n)
	for range n {
		r := l.bucket.ReserveN(now, 1)
		if !r.OK() {
			for _, r := range rs {
				r.CancelAt(now)
			}
			return fmt.Errorf("rate limiter: cannot take a token (burst %d)", l.bucket.Burst())
		}
		rs = append(rs, r)
		d = max(d, r.DelayFrom(now))
	}
	if d <= 0 {
		return nil
	}
	if d >= longWait {
		l.log.Info("rate limit: waiting for the bucket (requests_per_second)", "wait_s", d.Round(time.Millisecond).Seconds())
	}
	if err := l.sleep(ctx, d); err != nil {
		at := l.now()
		for _, r := range rs {
			r.CancelAt(at)
		}
		return err
	}
	l.onWait(ctx, WaitBucket, d)
	return nil
}

func (l *local) waitSlot(ctx context.Context) error {
	select {
	case l.slots <- struct{}{}:
		return nil
	default:
	}
	start := l.now()
	select {
	case l.slots <- struct{}{}:
		l.onWait(ctx, WaitSlot, l.now().Sub(start))
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// restoreLocked puts the ceiling back once the window the headers spoke of
// has reset.
func (l *local) restoreLocked(now time.Time) {
	if l.slowUntil.IsZero() || now.Before(l.slowUntil) {
		return
	}
	l.bucket.SetLimitAt(now, l.ceiling)
	l.bucket.SetBurstAt(now, l.burst)
	l.slowUntil = time.Time{}
	l.log.Info("rate limit: back to the configured rate", "requests_per_second", rateString(l.ceiling))
}

// settle ends an attempt that acquire let go, with its response (header
// nil if it got none): a 429's pause and decrease, the AIMD recovery, the
// rate-limit and used-weight headers.
func (l *local) settle(sp Spend, rp reply) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.outstanding--
	if rp.header == nil {
		if sp.Cost > 0 && l.cost.Points > 0 {
			// No answer: the API billed nothing we can learn of; keep the
			// reservation spent, but it is no longer in flight.
			l.cOut = max(l.cOut-l.estimateLocked(sp), 0)
		}
		return
	}
	l.aimdLocked(now, sp, rp)
	if l.wpm > 0 && l.wHdr != "" {
		if v, ok := headerNumber(rp.header, l.wHdr); ok {
			if m := now.UTC().Truncate(time.Minute); m.Equal(l.wMinute) {
				l.wUsed = max(l.wUsed, v)
			} else {
				l.wMinute, l.wUsed = m, v
			}
		}
	}
	l.windowLocked(now, rp.header)
}

// aimdLocked applies a 429 (pause for every stream, ceiling × 0.8) or
// counts a clean answer towards the ceiling's recovery.
func (l *local) aimdLocked(now time.Time, sp Spend, rp reply) {
	if rp.status != http.StatusTooManyRequests {
		if rp.status >= 500 || l.ceiling >= l.rate {
			return
		}
		if l.clean++; l.clean >= cleanRun {
			l.clean = 0
			l.ceiling = min(l.rate, l.ceiling+l.rate/increaseSteps)
			l.applyCeilingLocked(now)
			l.log.Info("rate limit: raising the rate after clean answers", "requests_per_second", rateString(l.ceiling))
		}
		return
	}
	l.clean = 0
	var args []any
	if d, ok := ParseRetryAfter(rp.header.Get("Retry-After"), now); ok && d > 0 && d <= l.pause {
		if until := now.Add(d); until.After(l.pausedUntil) {
			l.pausedUntil = until
			args = append(args, "pause", d.String())
		}
	}
	if l.rate != rate.Inf {
		l.ceiling = max(l.ceiling*decrease, minSlowRate)
		l.applyCeilingLocked(now)
		args = append(args, "requests_per_second", rateString(l.ceiling))
	}
	l.log.Warn("rate limit: 429 answered; every stream waits and the rate drops", append([]any{"stream", sp.Stream}, args...)...)
}

// applyCeilingLocked caps the bucket's current rate at the ceiling.
func (l *local) applyCeilingLocked(now time.Time) {
	if !l.slowUntil.IsZero() && l.bucket.Limit() < l.ceiling {
		return // the headers hold it lower until their reset
	}
	l.bucket.SetLimitAt(now, l.ceiling)
}

// windowLocked applies a response's rate-limit headers.
func (l *local) windowLocked(now time.Time, h http.Header) {
	w, ok := parseWindow(h, now)
	b := &l.budget
	switch {
	case !ok:
		// No word from the API's limiter: the attempt probably counted.
		if b.valid {
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

// trueUpCost applies a cost-billed answer's actual cost and remaining
// points; body is nil when the response had none to read.
func (l *local) trueUpCost(sp Spend, body []byte) {
	if sp.Cost <= 0 || l.cost.Points <= 0 {
		return
	}
	actual, okA := jsonNumberAt(body, l.cost.ActualPath)
	remaining, okR := jsonNumberAt(body, l.cost.RemainingPath)
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.estimateLocked(sp)
	l.cOut = max(l.cOut-e, 0)
	l.restoreCostLocked(now)
	if okA {
		l.cAvail += e - actual
		l.cLast[sp.Stream] = actual
	}
	if okR {
		l.cAvail = remaining - l.cOut
	}
	l.cAvail = min(l.cAvail, l.cost.Points)
}

// releaseCost gives back the reservation of a cost-billed attempt whose
// answer ran no query: a redirect hop, the attempt at whose target is
// billed and trued up.
func (l *local) releaseCost(sp Spend) {
	if sp.Cost <= 0 || l.cost.Points <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.estimateLocked(sp)
	l.cOut = max(l.cOut-e, 0)
	l.cAvail = min(l.cAvail+e, l.cost.Points)
}

// windowBlockedLocked is the API's window reset if its budget is used up.
func (l *local) windowBlockedLocked(now time.Time) time.Time {
	b := l.budget
	if !b.valid || !now.Before(b.resetAt) || l.leftLocked() >= 1 {
		return time.Time{}
	}
	return b.resetAt
}

// leftLocked is the API's budget left for new attempts.
func (l *local) leftLocked() float64 {
	return l.budget.remaining - float64(l.outstanding)
}

// adjustLocked sets the bucket's rate from the budget left.
func (l *local) adjustLocked(now time.Time, limit float64) {
	b := l.budget
	left := l.leftLocked()
	until := b.resetAt.Sub(now)
	if left < 1 || until <= 0 {
		return // acquire waits for the reset
	}
	// The pace that sends the left attempts before the reset and the
	// next one at the reset. At left ÷ until instead, the last of them
	// waited for the reset and the first of the new window an interval
	// more: every window slowed down lost a slot (the bench's quota
	// scenario lost about 1 s in 35 so). Grants already reserved (tokens
	// below 0) come first, and the part of a token already refilled
	// brings the first grant at the new pace forward.
	// Rounded: a token just spent is 0, not -1e-10 (a whole reservation).
	tok := min(math.Round(l.bucket.TokensAt(now)*1e6)/1e6, 1) // the burst becomes 1 below
	reserved := 0.0
	if tok < 0 {
		reserved = math.Ceil(-tok)
	}
	perSec := rate.Limit((left + 1 - reserved - tok) / until.Seconds())
	if l.ceiling != rate.Inf && perSec >= l.ceiling {
		if !l.slowUntil.IsZero() { // plenty left again
			l.slowUntil = now
			l.restoreLocked(now)
		}
		return
	}
	r := max(perSec, minSlowRate)
	if l.ceiling != rate.Inf {
		r = min(r, l.ceiling)
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
	if w.remaining, ok = headerNumber(h, "X-Ratelimit-Remaining", "Ratelimit-Remaining"); !ok {
		return w, false
	}
	if reset, ok = headerNumber(h, "X-Ratelimit-Reset", "Ratelimit-Reset"); !ok {
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
	w.limit, _ = headerNumber(h, "X-Ratelimit-Limit", "Ratelimit-Limit")
	return w, true
}

// headerNumber reads the first number of the first header present: "12",
// "12.5", or a draft-RFC list such as "100, 100;w=60" (its first item).
// names are in canonical form (http.CanonicalHeaderKey), read from the
// map as they are: every answer is read for them, and h.Get made a new
// string of each non-canonical name on every call.
func headerNumber(h http.Header, names ...string) (float64, bool) {
	for _, n := range names {
		var v string
		if vs := h[n]; len(vs) > 0 {
			v = vs[0]
		}
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

// utcDay is the UTC date of t, the day a daily quota counts.
func utcDay(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// NextUTCMidnight is when a daily quota renews.
func NextUTCMidnight(now time.Time) time.Time {
	return now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
}
