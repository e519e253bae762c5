package limit

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Shared is a rate limit kept in Redis under one key, so that every
// process naming the same key shares one requests-per-second bucket, the
// weights spent from it and one daily quota. Give it to Config.Shared, and
// close it once the Limiter is no longer used.
type Shared struct {
	rdb *redisClient
	key string
}

// DialShared connects to the Redis at rawURL (redis:// or rediss://) and
// checks that it answers, within 5 seconds. The error never holds the
// URL's password.
func DialShared(ctx context.Context, rawURL, key string) (*Shared, error) {
	opt, err := parseRedisURL(rawURL)
	if err != nil {
		return nil, err
	}
	// A failed call is not retried here (bar an idle connection found
	// closed, replaced once): the request's retry loop retries it.
	rdb := newRedisClient(opt)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := rdb.do(ctx, "PING"); err != nil {
		rdb.Close()
		return nil, err
	}
	return &Shared{rdb: rdb, key: key}, nil
}

// RedactURL is rawURL with its password masked, for messages.
func RedactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// Close closes the connections to Redis.
func (s *Shared) Close() error { return s.rdb.Close() }

// The shared limiter is three Lua scripts run atomically by Redis on four
// keys under the configured prefix K:
//
//	K:gcra           the bucket's theoretical arrival time (TAT)
//	K:quota:<day>    the daily quota's count for one UTC day
//	K:pause          until when a 429's Retry-After holds every process
//	K:aimd           {f, clean}: the rate factor a 429 lowered, and the
//	                 clean answers counted towards its recovery
//
// All times are microseconds of Redis's own clock (TIME), so the
// processes' clocks need not agree.
//
// The bucket is GCRA (the generic cell rate algorithm), granting at the
// moment of sending. A request of n tokens, with T the emission interval
// (1e6 ÷ rate, ÷ f while a 429 has lowered the rate) and b = max(B, n)
// for B the burst, conforms when
//
//	tat'  = max(TAT, now) + n·T
//	tat' − b·T ≤ now   and   now ≥ pause
//
// and is then granted at once: TAT becomes tat' and the caller sends. A
// request that does not conform is told how long until it would, and
// reserves nothing: the caller sleeps that long and asks again. Over any
// interval the grants never exceed B + rate × interval, whichever
// processes asked.
//
// Why not reserve ahead, as golang.org/x/time/rate's ReserveN does (the
// first version did)? A reservation is a promise of a moment, kept by the
// caller's sleep; on a busy machine a sleep ends late (the bench measured
// 1% of them over 140 ms late), and the late request then reaches the API
// next to the one granted after it: an API counting in fixed windows sees
// one too many. Granted at the moment of sending, a request that wakes
// late loses its turn to one on time instead, and the grants stay spaced
// on Redis's clock; what is left between grant and arrival is one Redis
// answer and the request's own trip. The cost is that waiters ask again
// rather than queue (a few calls per grant), and that the order among
// them is not first come, first served. With rate 0 (T = 0) the bucket is
// off; the pause still holds.
//
// Each grant goes to the first waiter to wake, and it wakes a little late
// (its sleep's overshoot), so TAT = max(TAT, now) would let the schedule
// drift by that much at every turn: 3–5% of the rate on a loaded machine.
// So a request is granted up to E = grantEarly before it conforms, the
// waiter is told to ask again E early, and a grant before TAT keeps TAT's
// grid (tat' = TAT + n·T). Two grants may then be E closer than T, never
// more, and over time never more than the rate.
//
// The daily quota Q (0 = off) is a counter kept two days, counted when a
// request is granted: one that finds it at Q is refused (-1) and granted
// nothing; else the counter grows by 1 (an attempt counts once, whatever
// its weight). A retry after a failure other than 429, with FreeRetries,
// asks for n = 0 tokens: it counts against the quota and waits out the
// pause but takes nothing from the bucket.
//
// A 429 (throttleScript) sets the pause to now + its Retry-After (never
// shortening one already set) and lowers f × 0.8, down to the factor of
// the slowest rate; clean answers (cleanScript, only sent while f < 1)
// raise it by 0.1 every 20, up to 1. So one process's 429 holds back and
// slows down every process, as the in-process limiter does for streams.

// reserveScript grants a request its tokens if it conforms, and counts it
// against the daily quota. ARGV: T, B, n, Q, E (grantEarly in µs). Returns {0 (granted), or µs
// to wait before asking again, or -1 when the quota is used up; attempts
// counted today as of the grant (0 otherwise); f × 1e6}.
var reserveScript = newRedisScript(`
local T = tonumber(ARGV[1])
local B = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local Q = tonumber(ARGV[4])
local E = tonumber(ARGV[5])
local f = tonumber(redis.call('HGET', KEYS[4], 'f') or '1')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local pause = tonumber(redis.call('GET', KEYS[3]) or '0')
if pause > now then
  return {pause - now, 0, math.floor(f * 1e6)}
end
local newTat = 0
if T > 0 and n > 0 then
  T = T / f
  newTat = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), now) + n * T
  local wait = newTat - math.max(B, n) * T - now
  if wait > E then
    return {math.ceil(wait - E), 0, math.floor(f * 1e6)}
  end
end
local used = 0
if Q > 0 then
  used = tonumber(redis.call('GET', KEYS[2]) or '0')
  if used >= Q then
    return {-1, used, math.floor(f * 1e6)}
  end
  used = redis.call('INCR', KEYS[2])
  redis.call('EXPIRE', KEYS[2], 172800)
end
if newTat > 0 then
  redis.call('SET', KEYS[1], string.format('%d', newTat), 'PX', math.ceil((newTat - now) / 1000) + 1000)
end
return {0, used, math.floor(f * 1e6)}
`)

// throttleScript applies a 429. ARGV: its Retry-After in µs (0: none),
// the lowest factor. Returns f × 1e6.
var throttleScript = newRedisScript(`
local d = tonumber(ARGV[1])
local fmin = tonumber(ARGV[2])
if d > 0 then
  local t = redis.call('TIME')
  local untilT = tonumber(t[1]) * 1000000 + tonumber(t[2]) + d
  if untilT > tonumber(redis.call('GET', KEYS[1]) or '0') then
    redis.call('SET', KEYS[1], string.format('%d', untilT), 'PX', math.ceil(d / 1000) + 1000)
  end
end
local f = tonumber(redis.call('HGET', KEYS[2], 'f') or '1')
f = math.max(f * 0.8, fmin)
redis.call('HSET', KEYS[2], 'f', string.format('%.6f', f), 'clean', 0)
redis.call('EXPIRE', KEYS[2], 86400)
return math.floor(f * 1e6)
`)

// cleanScript counts an answer without a 429 towards the recovery of f.
// Returns f × 1e6.
var cleanScript = newRedisScript(`
local f = tonumber(redis.call('HGET', KEYS[1], 'f') or '1')
if f >= 1 then
  return 1000000
end
if redis.call('HINCRBY', KEYS[1], 'clean', 1) >= 20 then
  f = f + 0.1
  if f >= 1 then
    redis.call('DEL', KEYS[1])
    return 1000000
  end
  redis.call('HSET', KEYS[1], 'f', string.format('%.6f', f), 'clean', 0)
end
return math.floor(f * 1e6)
`)

// sharedLimiter is the limiter of Config.Shared: the bucket, the daily
// quota, a 429's pause and the rate it lowers are kept in Redis (see the
// scripts above), the rest of the in-process model (in-flight slots, the
// API's rate-limit headers, the weight minute, the cost budget) in the
// process.
type sharedLimiter struct {
	local    *local // its bucket unlimited and its daily quota off
	s        *Shared
	interval float64 // microseconds per token; 0 = unlimited
	burst    int
	quota    int
	fmin     float64 // the factor of minSlowRate
	now      func() time.Time
	sleep    func(context.Context, time.Duration) error
	onWait   func(context.Context, Wait, time.Duration)
	log      *slog.Logger

	mu        sync.Mutex
	quotaDay  string
	quotaUsed int     // the shared count, as of the last reservation
	factor    float64 // the shared rate factor, as of the last script
}

func newSharedLimiter(cfg *Config) *sharedLimiter {
	local := *cfg
	local.RequestsPerSecond, local.DailyQuota = 0, 0
	l := &sharedLimiter{
		local: newLocal(&local), s: cfg.Shared, burst: cfg.Burst, quota: cfg.DailyQuota, fmin: 1,
		now: cfg.Now, sleep: cfg.Sleep, onWait: cfg.OnWait, log: cfg.Logger, factor: 1,
	}
	if cfg.RequestsPerSecond > 0 {
		l.interval = 1e6 / cfg.RequestsPerSecond
		l.fmin = min(float64(minSlowRate)/cfg.RequestsPerSecond, 1)
	}
	return l
}

// longWait is a wait long enough to say so in the log: a run that sits
// silent that long looks hung.
const longWait = 5 * time.Second

// maxWait is the longest wait on Redis that acquire sleeps for a request
// of n tokens: Config.MaxRetryAfter (the longest a server may pause the
// run, and so the longest pause another process can have set), plus the
// request's own turn at the slowest rate a 429 can bring this config to.
// 0 is no cap.
func (l *sharedLimiter) maxWait(n int) time.Duration {
	if l.local.pause <= 0 {
		return 0
	}
	return l.local.pause + time.Duration(float64(n)*l.interval/l.fmin)*time.Microsecond
}

// SharedWaitError is acquire's error when the shared bucket in Redis asks
// for a wait beyond Config.MaxRetryAfter: the caller defers, as on so
// long a Retry-After.
type SharedWaitError struct {
	Wait  time.Duration
	Until time.Time
}

func (e *SharedWaitError) Error() string {
	return fmt.Sprintf("the shared rate limit in Redis (rate_limit.shared) asks to wait %s", e.Wait.Round(time.Second))
}

// grantEarly is how long before its turn a request may be granted (see
// the model above): about the lateness of a sleep on a busy machine.
const grantEarly = 3 * time.Millisecond

func (l *sharedLimiter) key(k string) string { return l.s.key + ":" + k }

func (l *sharedLimiter) acquire(ctx context.Context, sp Spend) (func(), error) {
	release, err := l.local.acquire(ctx, sp)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (func(), error) {
		release()
		l.local.settle(sp, reply{})
		return nil, err
	}
	n := max(sp.Weight, 1)
	if sp.Retry {
		n = 0 // FreeRetries, as in the process: a retry's backoff paces it, not the bucket
	}
	// Each round either is granted or sleeps until it would conform; a
	// round loses only to a grant to another request, so rounds are few
	// unless many wait. The bound is a guard against a clock gone wrong.
	const rounds = 10000
	for range rounds {
		day := utcDay(l.now())
		keys := []string{l.key("gcra"), l.key("quota:" + day), l.key("pause"), l.key("aimd")}
		r, err := reserveScript.run(ctx, l.s.rdb, keys, l.interval, l.burst, n, l.quota, grantEarly.Microseconds())
		var v []int64
		if err == nil {
			v, err = int64s(r)
		}
		if err == nil && len(v) != 3 {
			err = fmt.Errorf("the reserve script answered %d values, want 3", len(v))
		}
		if err != nil {
			return fail(fmt.Errorf("rate_limit.shared: Redis: %w", err))
		}
		wait := v[0]
		l.mu.Lock()
		l.factor = float64(v[2]) / 1e6
		if wait <= 0 {
			l.quotaDay, l.quotaUsed = day, int(v[1])
		}
		l.mu.Unlock()
		switch {
		case wait < 0:
			return fail(ErrQuotaReached)
		case wait == 0:
			return release, nil
		}
		d := time.Duration(wait) * time.Microsecond
		if max := l.maxWait(n); max > 0 && d > max {
			// Redis asks for longer than any server may make the run
			// wait, beyond this config's own pace: a key shared with a
			// slower config, a pause set by another tool, or a clock gone
			// wrong on a host. The run defers, as on such a Retry-After,
			// rather than sleep it out.
			l.log.Warn("rate_limit.shared: Redis asks to wait longer than retry.max_retry_after_s; the run stops here instead", "wait_s", d.Round(time.Second).Seconds(), "max_retry_after_s", max.Seconds(), "key", l.s.key)
			return fail(&SharedWaitError{Wait: d, Until: l.now().Add(d)})
		}
		if d >= longWait {
			l.log.Info("rate_limit.shared: waiting on the shared bucket in Redis", "wait_s", d.Round(time.Millisecond).Seconds(), "key", l.s.key)
		}
		// Counted as it is waited, so that the progress lines show a
		// long wait while it lasts.
		l.onWait(ctx, WaitBucket, d)
		if err := l.sleep(ctx, d); err != nil {
			return fail(err)
		}
	}
	return fail(fmt.Errorf("rate_limit.shared: no grant after %d tries", rounds))
}

// settle applies an answer in the process and, for a 429 or while a 429
// keeps the shared rate lowered, in Redis. A failure to reach Redis here
// is logged: the process's own pause still holds, and the next acquire
// reports Redis lost.
func (l *sharedLimiter) settle(sp Spend, rp reply) {
	l.local.settle(sp, rp)
	if rp.header == nil || (rp.status >= 500 && rp.status != http.StatusTooManyRequests) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	var r any
	var err error
	if rp.status == http.StatusTooManyRequests {
		var d time.Duration
		if ra, ok := ParseRetryAfter(rp.header.Get("Retry-After"), l.now()); ok && ra > 0 && ra <= l.local.pause {
			d = ra
		}
		r, err = throttleScript.run(ctx, l.s.rdb, []string{l.key("pause"), l.key("aimd")}, d.Microseconds(), l.fmin)
	} else {
		l.mu.Lock()
		lowered := l.factor < 1
		l.mu.Unlock()
		if !lowered {
			return
		}
		r, err = cleanScript.run(ctx, l.s.rdb, []string{l.key("aimd")})
	}
	v, ok := r.(int64)
	if err == nil && !ok {
		err = fmt.Errorf("a script answered %T, want an integer", r)
	}
	if err != nil {
		l.log.Warn("rate_limit.shared: Redis: could not share what an answer said of the rate limit", "status", rp.status, "error", err.Error())
		return
	}
	f := float64(v) / 1e6
	l.mu.Lock()
	prev := l.factor
	l.factor = f
	l.mu.Unlock()
	// f, not l.factor: another stream's acquire may have set it since.
	if f != prev && l.interval > 0 {
		l.log.Info("rate_limit.shared: the shared rate changed", "requests_per_second",
			rateString(rate.Limit(1e6/l.interval*f)))
	}
}

// settleTimeout bounds settle's call to Redis, which has no context of
// its own to end it.
const settleTimeout = 2 * time.Second

// quotaReached is what the last reservation saw; the script refuses
// exactly, this only spares a call on a day already used up.
func (l *sharedLimiter) quotaReached() bool {
	if l.quota <= 0 {
		return false
	}
	day, used := l.quotaUsage()
	return day == utcDay(l.now()) && used >= l.quota
}

func (l *sharedLimiter) quotaUsage() (string, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if d := utcDay(l.now()); l.quotaDay != d {
		return d, 0
	}
	return l.quotaDay, l.quotaUsed
}
