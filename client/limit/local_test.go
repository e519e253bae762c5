package limit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/time/rate"
)

// The tests run in synctest bubbles: the limiter's default clock and
// Sleep are then the bubble's, so no clock is injected and no test waits
// for wall-clock time.

// newTestLocal is an in-process limiter with the defaults the client
// gives (burst 1, 4 slots), its clock the bubble's.
func newTestLocal(cfg Config) *local {
	cfg.Burst = max(cfg.Burst, 1)
	cfg.MaxInFlight = max(cfg.MaxInFlight, 4)
	cfg.MaxRetryAfter = max(cfg.MaxRetryAfter, 300*time.Second)
	return New(cfg).local
}

// observe sets the bucket's rate from the headers, and restore puts it
// back after the reset.
func TestObserveRate(t *testing.T) {
	tests := []struct {
		name      string
		configRPS float64
		remaining string
		reset     func(now time.Time) string
		inFlight  int // attempts sent after the observed one
		wantRate  rate.Limit
		wantPause bool
	}{
		{"plenty left", 5, "1000", func(time.Time) string { return "60" }, 0, 5, false},
		{"low: remaining/reset", 5, "30", func(time.Time) string { return "60" }, 0, 0.5, false},
		{"floor", 5, "1", func(time.Time) string { return "3600" }, 0, 0.1, false},
		{"never faster than configured", 0.05, "1", func(time.Time) string { return "1" }, 0, 0.05, false},
		{"unlimited config", 0, "30", func(time.Time) string { return "60" }, 0, 0.5, false},
		{"epoch seconds", 5, "30", func(now time.Time) string { return strconv.FormatInt(now.Add(time.Minute).Unix(), 10) }, 0, 0.5, false},
		{"epoch ms", 5, "30", func(now time.Time) string { return strconv.FormatInt(now.Add(time.Minute).UnixMilli(), 10) }, 0, 0.5, false},
		{"IETF list form", 5, "30, 100;w=3600", func(time.Time) string { return "60" }, 0, 0.5, false},
		{"in flight counted", 5, "33", func(time.Time) string { return "60" }, 3, 0.5, false},
		{"zero: pause", 5, "0", func(time.Time) string { return "60" }, 0, 5, true},
		{"in flight use the rest: pause", 5, "2", func(time.Time) string { return "60" }, 2, 5, true},
		{"reset in the past: ignored", 5, "0", func(now time.Time) string { return strconv.FormatInt(now.Add(-time.Minute).Unix(), 10) }, 0, 5, false},
		{"garbage: ignored", 5, "many", func(time.Time) string { return "60" }, 0, 5, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// The bubble's clock starts in 2000, when a Unix time was
				// below 10^9, which the limiter takes for delay-seconds.
				time.Sleep(time.Until(time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)))
				l := newTestLocal(Config{RequestsPerSecond: tt.configRPS})
				l.outstanding = 1 + tt.inFlight // the observed attempt and the others
				now := time.Now()
				h := http.Header{}
				h.Set("X-RateLimit-Remaining", tt.remaining)
				h.Set("RateLimit-Reset", tt.reset(now))
				l.settle(Spend{}, reply{header: h, status: 200})
				want := tt.wantRate
				if tt.configRPS == 0 && want == 0 {
					want = rate.Inf
				}
				if got := l.bucket.Limit(); math.Abs(float64(got-want)) > 1e-9 && !(got == rate.Inf && want == rate.Inf) {
					t.Errorf("rate %v, want %v", got, want)
				}
				if paused := !l.windowBlockedLocked(now).IsZero(); paused != tt.wantPause {
					t.Errorf("paused %v, want %v", paused, tt.wantPause)
				}
				// After the reset the configured rate is back.
				time.Sleep(2 * time.Hour)
				if err := l.waitTokens(t.Context(), 1); err != nil {
					t.Fatal(err)
				}
				wantBack := rate.Limit(tt.configRPS)
				if tt.configRPS == 0 {
					wantBack = rate.Inf
				}
				if got := l.bucket.Limit(); got != wantBack {
					t.Errorf("rate after reset %v, want %v", got, wantBack)
				}
			})
		})
	}
}

// The bucket's rate: × 0.8 on each 429, back up by a tenth of the
// configured rate after every 20 clean answers, never above it.
func TestAIMD(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newTestLocal(Config{RequestsPerSecond: 10})
		h := http.Header{}
		answer := func(status, times int) {
			for range times {
				l.outstanding++
				l.settle(Spend{Stream: "s"}, reply{header: h, status: status})
			}
		}
		steps := []struct {
			status, times int
			want          rate.Limit
		}{
			{429, 1, 8},
			{429, 1, 6.4},
			{200, 19, 6.4},
			{503, 5, 6.4}, // server errors are not clean, and do not reset the count
			{200, 1, 7.4},
			{200, 20, 8.4},
			{404, 20, 9.4},
			{200, 20, 10},
			{200, 100, 10},
			{429, 1, 8},
		}
		for i, s := range steps {
			answer(s.status, s.times)
			if got := l.bucket.Limit(); fmt.Sprintf("%.4f", float64(got)) != fmt.Sprintf("%.4f", float64(s.want)) {
				t.Fatalf("step %d (%d × %d): rate %v, want %v", i, s.times, s.status, got, s.want)
			}
		}
		for range 40 {
			answer(429, 1)
		}
		if got := l.bucket.Limit(); got != minSlowRate {
			t.Errorf("after many 429s: rate %v, want the floor %v", got, minSlowRate)
		}
	})
}

// waits records what OnWait is told.
type waits struct {
	mu sync.Mutex
	d  map[Wait]time.Duration
}

func (w *waits) add(_ context.Context, k Wait, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.d == nil {
		w.d = map[Wait]time.Duration{}
	}
	w.d[k] += d
}

func (w *waits) get() map[Wait]time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.d
}

// A wait for an in-flight slot is told as a slot wait, as long as the
// slot was held; a wait for a token as a bucket wait.
func TestWaitKinds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var w waits
		l := New(Config{RequestsPerSecond: 4, Burst: 1, MaxInFlight: 1, MaxRetryAfter: time.Minute, OnWait: w.add})
		release, err := l.Acquire(t.Context(), Spend{})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error)
		go func() {
			r, err := l.Acquire(t.Context(), Spend{})
			if err == nil {
				r()
			}
			done <- err
		}()
		time.Sleep(3 * time.Second) // the other holds the only slot
		release()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		// The bucket refilled while the slot was held: no token wait.
		if d := cmp.Diff(map[Wait]time.Duration{WaitSlot: 3 * time.Second}, w.get()); d != "" {
			t.Errorf("waits (-want +got):\n%s", d)
		}
		r, err := l.Acquire(t.Context(), Spend{})
		if err != nil {
			t.Fatal(err)
		}
		r()
		if got := w.get()[WaitBucket]; got != 250*time.Millisecond {
			t.Errorf("bucket wait %v, want 250ms (4/s, the last token taken just before)", got)
		}
	})
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	tests := []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"120", 120 * time.Second, true},
		{" 0 ", 0, true},
		{"1.5", 1500 * time.Millisecond, true},
		{now.Add(120 * time.Second).Format(http.TimeFormat), 120 * time.Second, true},
		{now.Add(90 * time.Second).Format(time.RFC850), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"", 0, false},
		{"-5", 0, false},
		{"soon", 0, false},
		{"12s", 0, false},
		{"Mon, 99 Foo 2026", 0, false},
		{"99999999999999999999", 9223372035 * time.Second, true}, // clamped, no overflow
	}
	for _, tt := range tests {
		got, ok := ParseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("ParseRetryAfter(%q) = %s, %v; want %s, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

// A budget used up (Remaining 0) until a reset further than
// MaxRetryAfter is a WindowError at once, as a Retry-After that long is a
// deferral: the limiter once slept until the reset, a day or years away.
// A reset within MaxRetryAfter is waited for.
func TestFarWindowResetIsAWindowError(t *testing.T) {
	tests := []struct {
		name     string
		reset    func(now time.Time) string
		wantWait time.Duration // 0: no error, the reset is waited for
	}{
		{"a day, delay-seconds", func(time.Time) string { return "86400" }, 24 * time.Hour},
		{"31 years, delay-seconds", func(time.Time) string { return "999999999" }, 999999999 * time.Second},
		{"a day, Unix time", func(now time.Time) string { return strconv.FormatInt(now.Add(24*time.Hour).Unix(), 10) }, 24 * time.Hour},
		{"at the bound", func(time.Time) string { return "300" }, 0},
		{"a minute", func(time.Time) string { return "60" }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// Later than 2001 (a Unix-time reset is above 10^9).
				time.Sleep(time.Until(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)))
				l := New(Config{RequestsPerSecond: 10, Burst: 1, MaxInFlight: 4, MaxRetryAfter: 300 * time.Second})
				release, err := l.Acquire(t.Context(), Spend{})
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				l.Settle(Spend{}, http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {tt.reset(start)}}, 200)
				release()
				release, err = l.Acquire(t.Context(), Spend{})
				waited := time.Since(start)
				var we *WindowError
				switch {
				case tt.wantWait == 0:
					if err != nil {
						t.Fatalf("err = %v, want the reset waited for", err)
					}
					release()
				case !errors.As(err, &we):
					t.Fatalf("err = %v, want a WindowError", err)
				case we.Wait != tt.wantWait || !we.ResetAt.Equal(start.Add(tt.wantWait)) || waited != 0:
					t.Errorf("WindowError %+v after %s, want a wait of %s and none spent", we, waited, tt.wantWait)
				}
			})
		})
	}
}
