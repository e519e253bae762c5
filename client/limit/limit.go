// Package limit decides when a request to a rate-limited API may leave,
// and learns from the answers. Every attempt, retries and redirects
// included, asks Acquire before it is sent and reports its response (or
// its failure) with Settle.
//
// The model, in the style of golang.org/x/time/rate:
//
// The bucket. One rate.Limiter shared by every stream refills at r tokens
// a second and holds at most burst. An attempt of a stream with weight N
// spends N tokens (taken one after the other, so a weight above the burst
// is spaced rather than refused). r starts at requests_per_second and never
// goes above it.
//
// 429. A 429 pauses the bucket for every stream: no attempt of any stream
// leaves before its Retry-After has passed (a Retry-After beyond
// Config.MaxRetryAfter is the caller's to defer on, and does not pause).
// It also lowers the ceiling of r multiplicatively (× 0.8, down to
// 0.1/s). Every 20 answers in a row without a 429 raise the ceiling
// additively by a tenth of requests_per_second, never above it (AIMD, as
// TCP does). With requests_per_second 0 (unlimited) there is no rate to
// lower: a 429 only pauses.
//
// Rate-limit headers. X-RateLimit-Remaining / -Reset / -Limit (or the
// unprefixed RateLimit-* of the IETF draft) describe the API's window. A
// Reset above 10^9 is a Unix time (above 10^12, in milliseconds), else
// delay-seconds. Within one window the smallest Remaining seen is the API's
// latest count; the attempts still awaiting their response are subtracted,
// so the budget left is never overestimated. When it is used up, attempts
// wait for the reset; when the ceiling would send more than what is left
// before the reset, r runs (burst 1) at the pace that sends what is left
// before the reset and the next attempt at the reset, so that a window
// slowed down still gets all it allows. A budget used up until a reset
// further away than Config.MaxRetryAfter is Acquire's *WindowError: the
// caller defers, as on such a Retry-After, rather than wait.
//
// Weight budget. With weight_per_minute W, the weights spent in one UTC
// minute stay under W; an attempt that would pass it waits for the next
// minute. used_weight_header (X-MBX-USED-WEIGHT-1M) trues the minute's
// count up to what the API reports (never down: attempts in flight may not
// be in it yet).
//
// Cost budget. With cost {points P, restore_per_s R}, a budget of P points
// refills at R a second. A GraphQL query reserves its estimate (the last
// actual cost of its stream, else the page size asked for) before it
// leaves, waiting until the budget holds it; the response's actual cost
// refunds or charges the difference (TrueUpCost), and its remaining points
// (less the estimates of the queries still in flight) replace the local
// count.
//
// Daily quota. With daily_quota Q, at most Q attempts leave per UTC day,
// counting those of earlier runs the same day (Config.QuotaUsed, carried
// in STATE); the next attempt fails with ErrQuotaReached.
//
// In-flight slots. At most max_in_flight attempts are out at once; a slot
// is held until the caller releases it (once the response body is read).
//
// Shared. With Config.Shared, the bucket, the weights, the daily quota and
// a 429's pause and rate drop are kept in Redis for every process naming
// the same key (see shared.go); the rest stays in the process.
//
// All waits use Config.Now and Config.Sleep, so the model is tested
// without wall-clock time.
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
	"time"

	"golang.org/x/time/rate"
)

// ErrQuotaReached is Acquire's error once the daily quota is used up; the
// caller defers the run until NextUTCMidnight.
var ErrQuotaReached = errors.New("daily quota reached")

// WindowError is Acquire's error when the API's rate-limit budget is
// used up until a reset further away than Config.MaxRetryAfter.
type WindowError struct {
	ResetAt time.Time
	Wait    time.Duration // from the attempt to the reset
}

func (e *WindowError) Error() string {
	return fmt.Sprintf("the API's rate-limit budget is used up until its reset in %s", e.Wait.Round(time.Second))
}

// Config configures a Limiter. Burst and MaxInFlight must be at least 1;
// the caller has checked the rest.
type Config struct {
	RequestsPerSecond float64       // the bucket's rate; 0 = unlimited
	Burst             int           // the bucket's size
	MaxInFlight       int           // attempts out at once
	DailyQuota        int           // attempts per UTC day; 0 = off
	QuotaDay          string        // the UTC date QuotaUsed counts [today]
	QuotaUsed         int           // attempts earlier runs made on QuotaDay
	WeightPerMinute   int           // weight spent per UTC minute at most; 0 = off
	UsedWeightHeader  string        // response header reporting the weight used this minute
	Cost              Cost          // GraphQL cost budget; Points 0 = off
	MaxRetryAfter     time.Duration // the longest Retry-After that pauses every stream, and window reset waited for
	Shared            *Shared       // keeps the bucket, quota and pause in Redis; nil = in the process

	Logger *slog.Logger // slowdowns (Info) and 429s (Warn) [discard]
	// OnWait, if set, is told of every wait, with the context of the
	// attempt that waited.
	OnWait func(ctx context.Context, kind Wait, d time.Duration)
	Now    func() time.Time                                 // [time.Now]
	Sleep  func(ctx context.Context, d time.Duration) error // every wait [Sleep]
}

// Cost is a GraphQL cost budget (Shopify's, GitHub's): Points at most,
// restored at RestorePerS a second; a response's ActualPath and
// RemainingPath (dotted JSON paths) true the local count up.
type Cost struct {
	Points        float64
	RestorePerS   float64
	ActualPath    string
	RemainingPath string
}

// Wait is what an attempt waited for.
type Wait int

// Kinds of wait.
const (
	WaitSlot       Wait = iota // an in-flight slot
	WaitBucket                 // bucket tokens, the API's window, the weight minute or the cost budget
	WaitRetryAfter             // a 429's pause
)

// Spend is what one attempt costs.
type Spend struct {
	Stream string
	Weight int     // tokens of the bucket and of the weight budget [1]
	Cost   float64 // GraphQL cost estimate; 0 for a request not billed by cost
	Retry  bool    // a retry that takes no bucket tokens (its backoff paces it)
}

// Limiter is safe for concurrent use; one Limiter serves every stream of
// a run.
type Limiter struct {
	local  *local
	shared *sharedLimiter // nil unless Config.Shared
}

// New returns a Limiter for cfg.
func New(cfg Config) *Limiter {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.OnWait == nil {
		cfg.OnWait = func(context.Context, Wait, time.Duration) {}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = Sleep
	}
	if cfg.Shared != nil {
		s := newSharedLimiter(&cfg)
		return &Limiter{local: s.local, shared: s}
	}
	return &Limiter{local: newLocal(&cfg)}
}

// Acquire waits until an attempt spending sp may leave. On success the
// attempt holds an in-flight slot until release, and must report its
// answer with Settle. It fails with ctx's error, ErrQuotaReached, or an
// error from Redis.
func (l *Limiter) Acquire(ctx context.Context, sp Spend) (release func(), err error) {
	if l.shared != nil {
		return l.shared.acquire(ctx, sp)
	}
	return l.local.acquire(ctx, sp)
}

// Settle reports the answer of an attempt that Acquire let go: its header
// and status, or a nil header if it got no response.
func (l *Limiter) Settle(sp Spend, header http.Header, status int) {
	rp := reply{header: header, status: status}
	if l.shared != nil {
		l.shared.settle(sp, rp)
		return
	}
	l.local.settle(sp, rp)
}

// TrueUpCost reports the body of a cost-billed attempt (nil if it had
// none to read).
func (l *Limiter) TrueUpCost(sp Spend, body []byte) { l.local.trueUpCost(sp, body) }

// ReleaseCost gives back the cost reservation of an attempt that ran no
// query (a redirect hop) instead of TrueUpCost.
func (l *Limiter) ReleaseCost(sp Spend) { l.local.releaseCost(sp) }

// QuotaReached reports whether the daily quota is used up.
func (l *Limiter) QuotaReached() bool {
	if l.shared != nil {
		return l.shared.quotaReached()
	}
	return l.local.quotaReached()
}

// QuotaUsage returns the UTC day and the attempts counted against the
// daily quota on it, earlier runs' Config.QuotaUsed included.
func (l *Limiter) QuotaUsage() (day string, used int) {
	if l.shared != nil {
		return l.shared.quotaUsage()
	}
	return l.local.quotaUsage()
}

// Limit is the in-process bucket's current rate (with Config.Shared, the
// bucket is in Redis and this is rate.Inf).
func (l *Limiter) Limit() rate.Limit { return l.local.bucket.Limit() }

// Sleep waits d or until ctx is done, whichever comes first.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ParseRetryAfter parses a Retry-After value, delay-seconds ("120") or an
// HTTP-date, into the wait from now. A date in the past is 0. ok is false
// for an absent or malformed value. Fractional seconds ("1.5"), which some
// APIs send, are accepted.
func ParseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		secs, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(secs) || math.IsInf(secs, 0) || secs < 0 {
			return 0, false
		}
		const maxSecs = math.MaxInt64/int64(time.Second) - 1
		if secs >= float64(maxSecs) {
			return time.Duration(maxSecs) * time.Second, true
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if d := t.Sub(now); d > 0 {
		return d, true
	}
	return 0, true
}
