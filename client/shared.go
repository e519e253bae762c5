package client

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Shared is a rate limit kept in Redis under one key, so that every
// process naming the same key shares one requests-per-second bucket, the
// weights spent from it and one daily quota. Give it to Config.Shared;
// the Client closes it.
type Shared struct {
	rdb *redis.Client
	key string
}

// DialShared connects to the Redis at rawURL (redis:// or rediss://) and
// checks that it answers, within 5 seconds. The error never holds the
// URL's password.
func DialShared(ctx context.Context, rawURL, key string) (*Shared, error) {
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, errors.New("not a redis:// or rediss:// URL") // its text may quote the password
	}
	// go-redis logs dial failures to stderr through a logger of its
	// package; the tap reports them itself, once, in its own words.
	quietRedis.Do(func() { redis.SetLogger(discardLogger{}) })
	opt.MaxRetries = -1 // a failed call is retried by the request's retry loop, not hidden here
	opt.DialerRetries = 1
	rdb := redis.NewClient(opt)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, err
	}
	return &Shared{rdb: rdb, key: key}, nil
}

var quietRedis sync.Once

type discardLogger struct{}

func (discardLogger) Printf(context.Context, string, ...any) {}

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

// reserveScript is the whole shared limiter, run atomically by Redis.
//
// The model is GCRA (the generic cell rate algorithm) with reservations,
// as golang.org/x/time/rate's ReserveN in a process: one theoretical
// arrival time TAT (microseconds, Redis's own clock, so the processes'
// clocks need not agree) is kept at KEYS[1]. A request of n tokens, with
// T = 1e6 ÷ rate the emission interval and B the burst, is given
//
//	tat'  = max(TAT, now) + n·T
//	wait  = max(tat' − B·T − now, 0)
//
// and TAT becomes tat': the tokens are reserved at once and the caller
// sleeps wait before sending, so waiters queue in arrival order instead
// of polling. Over any interval the reservations granted never exceed
// B + rate × interval, whichever processes asked. With rate 0 (T = 0)
// the bucket is off.
//
// The daily quota Q (0 = off) is a counter at KEYS[2], a key of the UTC
// day, kept two days. A request that finds it at Q is refused (-1) and
// reserves nothing; else the counter grows by 1 (an attempt counts once,
// whatever its weight). A retry after a failure other than 429, with
// FreeRetries, asks for n = 0 tokens: it counts against the quota but
// takes nothing from the bucket.
//
// Returns {wait in microseconds or -1, attempts counted today}.
var reserveScript = redis.NewScript(`
local T = tonumber(ARGV[1])
local B = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local Q = tonumber(ARGV[4])
local used = 0
if Q > 0 then
  used = tonumber(redis.call('GET', KEYS[2]) or '0')
  if used >= Q then
    return {-1, used}
  end
  used = redis.call('INCR', KEYS[2])
  redis.call('EXPIRE', KEYS[2], 172800)
end
if T <= 0 or n <= 0 then
  return {0, used}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then
  tat = now
end
local newTat = tat + n * T
local wait = newTat - B * T - now
if wait < 0 then
  wait = 0
end
redis.call('SET', KEYS[1], string.format('%d', newTat), 'PX', math.ceil((newTat - now) / 1000) + 1000)
return {wait, used}
`)

// sharedLimiter is the limiter of a Client with Config.Shared: the
// bucket and the daily quota are kept in Redis (reserveScript), the rest
// of the in-process model (in-flight slots, a 429's pause, the API's
// rate-limit headers, the weight minute, the cost budget) in the
// process. With a shared bucket a 429 pauses this process but does not
// lower the rate: every process spends the configured rate together.
type sharedLimiter struct {
	local    *limiter // its bucket unlimited and its daily quota off
	s        *Shared
	interval float64 // microseconds per token; 0 = unlimited
	burst    int
	quota    int
	now      func() time.Time
	sleep    func(context.Context, time.Duration) error
	stats    *stats

	mu        sync.Mutex
	quotaDay  string
	quotaUsed int // the shared count, as of the last reservation
}

func newSharedLimiter(cfg *Config, st *stats, local *limiter) *sharedLimiter {
	l := &sharedLimiter{
		local: local, s: cfg.Shared, burst: cfg.Burst, quota: cfg.DailyQuota,
		now: cfg.Now, sleep: cfg.Sleep, stats: st,
	}
	if cfg.RequestsPerSecond > 0 {
		l.interval = 1e6 / cfg.RequestsPerSecond
	}
	return l
}

func (l *sharedLimiter) acquire(ctx context.Context, sp spend) (func(), error) {
	release, err := l.local.acquire(ctx, sp)
	if err != nil {
		return nil, err
	}
	n := max(sp.weight, 1)
	if sp.retry {
		n = 0 // FreeRetries, as in the process: a retry's backoff paces it, not the bucket
	}
	day := utcDay(l.now())
	keys := []string{l.s.key + ":gcra", l.s.key + ":quota:" + day}
	v, err := reserveScript.Run(ctx, l.s.rdb, keys, l.interval, l.burst, n, l.quota).Int64Slice()
	if err != nil {
		release()
		l.local.settle(sp, reply{})
		return nil, fmt.Errorf("rate_limit.shared: Redis: %w", err)
	}
	wait, used := v[0], int(v[1])
	l.mu.Lock()
	l.quotaDay, l.quotaUsed = day, used
	l.mu.Unlock()
	if wait < 0 {
		release()
		l.local.settle(sp, reply{})
		return nil, errQuotaReached
	}
	if wait > 0 {
		d := time.Duration(wait) * time.Microsecond
		if err := l.sleep(ctx, d); err != nil {
			release()
			l.local.settle(sp, reply{})
			return nil, err
		}
		l.stats.wait(ctx, bucketWait, d)
	}
	return release, nil
}

func (l *sharedLimiter) settle(sp spend, rp reply)        { l.local.settle(sp, rp) }
func (l *sharedLimiter) trueUpCost(sp spend, body []byte) { l.local.trueUpCost(sp, body) }

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
