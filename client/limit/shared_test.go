package limit

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tap-dev/tap/internal/redistest"
)

// sleeps records the waits asked of a limiter and, instead of sleeping,
// fails: the shared limiter asks Redis again after a sleep, and Redis's
// clock does not move with a fake one. A wait is the script's answer at
// the moment of the call.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

var errNoSleep = errors.New("sleeps: not sleeping")

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return errNoSleep
}

// realSleep sleeps, and records the waits in s.
func (s *sleeps) realSleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// newTestShared is a shared limiter on the real Redis at url under key.
func newTestShared(t *testing.T, url, key string, rps float64, burst, quota int, sl *sleeps) *sharedLimiter {
	t.Helper()
	s, err := DialShared(context.Background(), url, key)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return New(Config{RequestsPerSecond: rps, Burst: burst, DailyQuota: quota, MaxInFlight: 8, Shared: s, MaxRetryAfter: 300 * time.Second,
		Sleep: sl.sleep}).shared
}

func TestSharedBucketAcrossClients(t *testing.T) {
	srv := redistest.ForTest(t)
	var sa, sb sleeps
	// One token per 1000 s and a burst of 3: three attempts leave at once,
	// whichever client sends them, and the fourth is told to wait about
	// 1000 s, granted nothing. The time the test takes (far below a
	// second) cannot change that.
	const T = 1000 * time.Second
	a := newTestShared(t, srv.URL(), "t:bucket", 0.001, 3, 0, &sa)
	b := newTestShared(t, srv.URL(), "t:bucket", 0.001, 3, 0, &sb)
	other := newTestShared(t, srv.URL(), "t:other", 0.001, 3, 0, &sleeps{})
	ctx := context.Background()
	for i, l := range []*sharedLimiter{a, b, a, b, other} {
		release, err := l.acquire(ctx, Spend{Weight: 1})
		if i == 3 {
			if !errors.Is(err, errNoSleep) {
				t.Fatalf("acquire %d (the 4th of the key): %v, want a wait", i, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("acquire %d: %v", i, err)
		}
		release()
		l.settle(Spend{Weight: 1}, reply{})
	}
	if len(sa.d) != 0 {
		t.Errorf("client a waited %v within the burst", sa.d)
	}
	if len(sb.d) != 1 || sb.d[0] < T-2*time.Second || sb.d[0] > T {
		t.Errorf("client b's second attempt (the 4th of the key) was told to wait %v, want about %v", sb.d, T)
	}
	// A retry after a 5xx takes no token: it leaves at once, bucket empty.
	release, err := a.acquire(ctx, Spend{Weight: 1, Retry: true})
	if err != nil {
		t.Fatal(err)
	}
	release()
	a.settle(Spend{Weight: 1, Retry: true}, reply{})
	if len(sa.d) != 0 {
		t.Errorf("a retry waited %v for the bucket", sa.d)
	}
	// A weight of 2 needs two tokens: T more than a weight of 1.
	if _, err := a.acquire(ctx, Spend{Weight: 2}); !errors.Is(err, errNoSleep) {
		t.Fatalf("weight 2: %v, want a wait", err)
	}
	if len(sa.d) != 1 || sa.d[0] < 2*T-2*time.Second || sa.d[0] > 2*T {
		t.Errorf("a weight-2 attempt after 3 tokens was told to wait %v, want about %v", sa.d, 2*T)
	}
	// Nothing was granted to the attempts told to wait, and their slots
	// and attempts in flight were given back.
	for _, l := range []*sharedLimiter{a, b} {
		if len(l.local.slots) != 0 || l.local.outstanding != 0 {
			t.Errorf("%d slots held, %d attempts outstanding", len(l.local.slots), l.local.outstanding)
		}
	}
}

func TestSharedDailyQuota(t *testing.T) {
	srv := redistest.ForTest(t)
	a := newTestShared(t, srv.URL(), "t:quota", 0, 1, 3, &sleeps{})
	b := newTestShared(t, srv.URL(), "t:quota", 0, 1, 3, &sleeps{})
	ctx := context.Background()
	var errs []error
	for _, l := range []*sharedLimiter{a, b, a, b, a} {
		release, err := l.acquire(ctx, Spend{Weight: 5})
		if err == nil {
			release()
			l.settle(Spend{Weight: 5}, reply{})
		}
		errs = append(errs, err)
	}
	for i, err := range errs {
		if want := i >= 3; errors.Is(err, ErrQuotaReached) != want || (err != nil && !want) {
			t.Errorf("attempt %d: %v, want quota reached %v", i, err, want)
		}
	}
	if day, used := b.quotaUsage(); day != utcDay(time.Now()) || used != 3 {
		t.Errorf("quotaUsage = %s, %d; want today, 3 (the count of both clients)", day, used)
	}
	if !a.quotaReached() {
		t.Error("quotaReached is false after the quota was refused")
	}
}

func TestSharedRedisLost(t *testing.T) {
	srv := redistest.ForTest(t)
	var sl sleeps
	l := newTestShared(t, srv.URL(), "t:lost", 10, 1, 0, &sl)
	srv.Stop()
	_, err := l.acquire(context.Background(), Spend{Weight: 1})
	if err == nil || !strings.Contains(err.Error(), "rate_limit.shared: Redis") {
		t.Fatalf("acquire with Redis gone: %v", err)
	}
	// The in-process part gave back its slot and its attempt in flight.
	if n := len(l.local.slots); n != 0 {
		t.Errorf("%d in-flight slots still held", n)
	}
	if l.local.outstanding != 0 {
		t.Errorf("outstanding = %d, want 0", l.local.outstanding)
	}
}

func TestDialSharedUnreachable(t *testing.T) {
	// A port nobody listens on: the one a closed server had.
	srv := redistest.ForTest(t)
	srv.Stop()
	_, err := DialShared(context.Background(), "redis://:hunter2@"+srv.Addr+"/0", "k")
	if err == nil {
		t.Fatal("DialShared succeeded with no server")
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("the password is in the error: %v", err)
	}
	if got := RedactURL("redis://:hunter2@" + srv.Addr + "/0"); strings.Contains(got, "hunter2") {
		t.Errorf("RedactURL kept the password: %s", got)
	}
}

// A 429 with Retry-After answered to one process holds back the others
// and lowers the shared rate for all; clean answers, whichever process
// gets them, raise it again.
func TestSharedPauseAndRateAcrossClients(t *testing.T) {
	srv := redistest.ForTest(t)
	var sa, sb sleeps
	// One token a second, burst 1.
	a := newTestShared(t, srv.URL(), "t:pause", 1, 1, 0, &sa)
	b := newTestShared(t, srv.URL(), "t:pause", 1, 1, 0, &sb)
	ctx := context.Background()
	take := func(l *sharedLimiter, sp Spend) error {
		release, err := l.acquire(ctx, sp)
		if err == nil {
			release()
		}
		return err
	}
	// The waits are the script's answers at the moment of the call; the
	// test's own pace can only make them shorter, by far less than 500 ms.
	near := func(got, want time.Duration) bool { return got <= want && got > want-500*time.Millisecond }

	if err := take(a, Spend{Weight: 1}); err != nil { // TAT = now + 1 s
		t.Fatal(err)
	}
	h := http.Header{"Retry-After": {"3"}}
	a.settle(Spend{Weight: 1}, reply{header: h, status: http.StatusTooManyRequests})
	// b is told to wait out the pause (3 s), a free retry too.
	if err := take(b, Spend{Weight: 1}); !errors.Is(err, errNoSleep) {
		t.Fatalf("b after a's 429: %v, want a wait", err)
	}
	if err := take(b, Spend{Weight: 1, Retry: true}); !errors.Is(err, errNoSleep) {
		t.Fatalf("b's free retry after a's 429: %v, want a wait", err)
	}
	if len(sb.d) != 2 || !near(sb.d[0], 3*time.Second) || !near(sb.d[1], 3*time.Second) {
		t.Fatalf("b was told to wait %v after a's 429, want about [3s 3s]", sb.d)
	}
	// Once the pause is over, b leaves, and the next attempt waits for a
	// token at the rate lowered to 0.8/s: 1.25 s.
	sb.d = nil
	b.sleep = sb.realSleep
	if err := take(b, Spend{Weight: 1}); err != nil {
		t.Fatal(err)
	}
	b.sleep = sb.sleep
	if err := take(b, Spend{Weight: 1}); !errors.Is(err, errNoSleep) {
		t.Fatalf("b's second attempt after the pause: %v, want a wait", err)
	}
	if n := len(sb.d); n < 2 || !near(sb.d[n-1], 1250*time.Millisecond) {
		t.Fatalf("b was told to wait %v, the last about 1.25s", sb.d)
	}
	if a.factor != 0.8 || b.factor != 0.8 {
		t.Errorf("factors a %v, b %v after one 429, want 0.8", a.factor, b.factor)
	}
	// 20 clean answers, 10 to each, raise the shared rate by a tenth.
	for i := range 20 {
		l := a
		if i%2 == 1 {
			l = b
		}
		l.settle(Spend{Weight: 1}, reply{header: http.Header{}, status: http.StatusOK})
	}
	if err := take(b, Spend{Weight: 1}); !errors.Is(err, errNoSleep) { // asks Redis for the factor
		t.Fatal(err)
	}
	if b.factor < 0.9-1e-6 || b.factor > 0.9+1e-6 {
		t.Errorf("factor after 20 clean answers %v, want 0.9", b.factor)
	}
	// Two more tenths: back to the configured rate, and the key is gone.
	for range 40 {
		b.settle(Spend{Weight: 1}, reply{header: http.Header{}, status: http.StatusOK})
	}
	if b.factor != 1 {
		t.Errorf("factor after 60 clean answers %v, want 1", b.factor)
	}
	rdb := newRedisClient(redisOptions{addr: srv.Addr})
	defer rdb.Close()
	if n, err := rdb.do(ctx, "EXISTS", "t:pause:aimd"); err != nil || n != int64(0) {
		t.Errorf("t:pause:aimd exists (%v, %v) once the rate is back", n, err)
	}
	// A 503 neither pauses nor counts as clean; a 429 over
	// max_retry_after_s (the run defers) lowers the rate without pausing.
	pauseBefore, _ := rdb.do(ctx, "GET", "t:pause:pause")
	b.settle(Spend{Weight: 1}, reply{header: http.Header{"Retry-After": {"1"}}, status: http.StatusServiceUnavailable})
	a.settle(Spend{Weight: 1}, reply{header: http.Header{"Retry-After": {"100000"}}, status: http.StatusTooManyRequests})
	if after, _ := rdb.do(ctx, "GET", "t:pause:pause"); after != pauseBefore {
		t.Errorf("pause %v became %v: a 503 or an over-long Retry-After set a new pause", pauseBefore, after)
	}
	if f, err := rdb.do(ctx, "HGET", "t:pause:aimd", "f"); err != nil || f != "0.800000" {
		t.Errorf("shared factor after a 429 over max_retry_after_s: %v (%v), want 0.800000", f, err)
	}
}

// One limiter is shared by all streams of a run: acquires and settles
// from several goroutines read and write the shared factor at once, which
// the race detector checks (issue 29: settle read it after unlocking).
func TestSharedConcurrentAcquireSettle(t *testing.T) {
	srv := redistest.ForTest(t)
	var sl sleeps
	l := newTestShared(t, srv.URL(), "t:race", 0, 1, 0, &sl) // unlimited: acquire never sleeps
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				release, err := l.acquire(ctx, Spend{Weight: 1})
				if err != nil {
					errs <- err
					return
				}
				release()
				status := http.StatusOK
				if (g+i)%5 == 0 {
					status = http.StatusTooManyRequests
				}
				l.settle(Spend{Weight: 1}, reply{header: http.Header{}, status: status})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// A wait Redis asks for is capped as a server's Retry-After is: past
// MaxRetryAfter and the request's own turn at the slowest rate (a key
// shared with a slower config, a clock gone wrong)
// acquire defers at once with a *SharedWaitError and a WARN, instead of
// sleeping it out; under it, the wait is counted as wait_bucket_s before
// it is slept, so that the progress lines show it while it lasts.
func TestSharedWaitCapped(t *testing.T) {
	srv := redistest.ForTest(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		ahead  time.Duration // the bucket's theoretical arrival time, ahead of now
		defers bool
	}{
		{"a year ahead", 365 * 24 * time.Hour, true},
		{"past the cap", 400 * time.Second, true}, // 300 s, and a turn of 10 s at the slowest rate
		{"under the cap", 10 * time.Second, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var sl sleeps
			var logs strings.Builder
			var counted []time.Duration
			s, err := DialShared(ctx, srv.URL(), "t:cap:"+tt.name)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			l := New(Config{RequestsPerSecond: 10, Burst: 1, MaxInFlight: 8, Shared: s, MaxRetryAfter: 300 * time.Second,
				Sleep: sl.sleep, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
				OnWait: func(_ context.Context, kind Wait, d time.Duration) {
					if kind == WaitBucket {
						counted = append(counted, d)
					}
				}}).shared
			tat := time.Now().Add(tt.ahead).UnixMicro()
			if _, err := s.rdb.do(ctx, "SET", l.key("gcra"), strconv.FormatInt(tat, 10)); err != nil {
				t.Fatal(err)
			}
			_, err = l.acquire(ctx, Spend{Weight: 1})
			var sw *SharedWaitError
			if tt.defers {
				if !errors.As(err, &sw) || sw.Wait < tt.ahead-time.Minute {
					t.Fatalf("acquire: %v, want a *SharedWaitError of about %s", err, tt.ahead)
				}
				if len(sl.d) != 0 || len(counted) != 0 {
					t.Errorf("slept %v and counted %v: want neither", sl.d, counted)
				}
				if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "max_retry_after_s") {
					t.Errorf("no WARN naming max_retry_after_s: %s", logs.String())
				}
				return
			}
			if !errors.Is(err, errNoSleep) || len(sl.d) != 1 {
				t.Fatalf("acquire: %v after sleeps %v, want one sleep", err, sl.d)
			}
			if len(counted) != 1 || counted[0] != sl.d[0] || counted[0] < tt.ahead-2*time.Second {
				t.Errorf("counted %v for a sleep of %v, want the same wait of about %s", counted, sl.d, tt.ahead)
			}
			if !strings.Contains(logs.String(), "waiting on the shared bucket") {
				t.Errorf("a wait of %s is not logged: %s", tt.ahead, logs.String())
			}
		})
	}
}
