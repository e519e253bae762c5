package metrics

import (
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/client"
)

func TestStreamDone(t *testing.T) {
	waits := client.Waits{WaitSlot: 1500 * time.Millisecond, WaitBucket: 250 * time.Millisecond,
		WaitRetryAfter: 3 * time.Second, WaitBackoff: 40 * time.Millisecond, WaitBreaker: time.Hour}
	tests := []struct {
		name  string
		count func(*Stream)
		want  string
	}{
		{
			name:  "nothing happened",
			count: func(*Stream) {},
			want: `
INFO stream done stream=s records=0 pages=0 requests=0 wait_slot_s=1.5 wait_bucket_s=0.2 wait_retry_after_s=3.0 wait_backoff_s=0.0
INFO METRIC: {"metric":"record_count","tags":{"endpoint":"s"},"type":"counter","value":0}
INFO METRIC: {"metric":"http_request_count","tags":{"endpoint":"s"},"type":"counter","value":0}`,
		},
		{
			name: "every count",
			count: func(s *Stream) {
				s.Received.Add(9)
				s.Records.Add(7)
				s.Pages.Add(2)
				s.Request(200)
				s.Request(200)
				s.Request(503)
				s.Dupes.Add(1)
				s.NullKeys.Add(2)
				s.BadKeys.Add(3)
				s.Ignored.Add(4)
			},
			want: `
INFO stream done stream=s records=7 pages=2 duplicates_dropped=1 null_replication_keys=2 uncomparable_replication_keys=3 ignored_requests=4 requests=3 wait_slot_s=1.5 wait_bucket_s=0.2 wait_retry_after_s=3.0 wait_backoff_s=0.0
INFO METRIC: {"metric":"record_count","tags":{"endpoint":"s"},"type":"counter","value":7}
INFO METRIC: {"metric":"http_request_count","tags":{"endpoint":"s"},"type":"counter","value":3}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, rec := newReporter(slog.LevelInfo, slog.LevelInfo)
			s := &Stream{Name: "s"}
			tt.count(s)
			r.StreamDone(s, waits)
			if diff := cmp.Diff(lines(tt.want), rec.Lines()); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStreamRequestByClass(t *testing.T) {
	var s Stream
	for _, status := range []int{0, 200, 201, 304, 404, 429, 500} {
		s.Request(status)
	}
	var got [6]int64
	for i := range got {
		got[i] = s.ByClass[i].Load()
	}
	if want := [6]int64{1, 0, 2, 1, 2, 1}; got != want || s.Requests.Load() != 7 {
		t.Errorf("by class %v, requests %d; want %v, 7", got, s.Requests.Load(), want)
	}
}

// In a synctest bubble the ticker and the clock are the bubble's: each
// tick writes a line per running selected stream, with its rate since it
// started and its own waits, and nothing for a stream stopped, never
// started or not selected.
func TestProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rep, rec := newReporter(slog.LevelInfo, slog.LevelDebug) // METRIC lines hidden
		r := NewRun(rep)
		a, b, c, d := &Stream{Name: "a"}, &Stream{Name: "b"}, &Stream{Name: "c"}, &Stream{Name: "d"}
		r.Add(a, true)
		r.Add(b, true)
		r.Add(c, true)
		r.Add(d, false)
		waits := map[string]client.Waits{"a": {WaitSlot: 2 * time.Second, WaitBucket: 500 * time.Millisecond}}
		stop := r.Progress(10*time.Second, func() map[string]client.Waits { return waits })
		d.Start(time.Now()) // not selected: no line
		a.Start(time.Now())
		b.Start(time.Now().Add(-30 * time.Second))
		a.Records.Add(150)
		a.Pages.Add(3)
		a.Request(200)
		b.Records.Add(40)
		time.Sleep(10 * time.Second) // the first tick
		synctest.Wait()
		b.Stop()
		a.Records.Add(150)
		time.Sleep(10 * time.Second) // the second
		synctest.Wait()
		stop()
		time.Sleep(time.Minute) // no tick after stop
		synctest.Wait()
		want := lines(`
INFO progress stream=a records=150 pages=3 records_per_s=15 requests=1 wait_slot_s=2.0 wait_bucket_s=0.5
INFO progress stream=b records=40 pages=0 records_per_s=1 requests=0 wait_slot_s=0.0 wait_bucket_s=0.0 waiting_on=api
INFO progress stream=a records=300 pages=3 records_per_s=15 requests=1 wait_slot_s=2.0 wait_bucket_s=0.5 waiting_on=api`)
		if diff := cmp.Diff(want, rec.Lines()); diff != "" {
			t.Errorf("lines (-want +got):\n%s", diff)
		}
	})
}

// The progress lines carry the aggregate METRIC lines of their stream.
func TestProgressCounters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rep, rec := newReporter(slog.LevelInfo, slog.LevelInfo)
		r := NewRun(rep)
		s := &Stream{Name: "s"}
		r.Add(s, true)
		s.Start(time.Now())
		s.Records.Add(5)
		stop := r.Progress(time.Second, func() map[string]client.Waits { return nil })
		time.Sleep(time.Second)
		synctest.Wait()
		stop()
		want := lines(`
INFO progress stream=s records=5 pages=0 records_per_s=5 requests=0 wait_slot_s=0.0 wait_bucket_s=0.0 waiting_on=api
INFO METRIC: {"metric":"record_count","tags":{"endpoint":"s"},"type":"counter","value":5}
INFO METRIC: {"metric":"http_request_count","tags":{"endpoint":"s"},"type":"counter","value":0}`)
		if diff := cmp.Diff(want, rec.Lines()); diff != "" {
			t.Errorf("lines (-want +got):\n%s", diff)
		}
	})
}

// The client's hook counts an attempt for the stream it names, selected
// or not, and none for a name the run does not know.
func TestAttempt(t *testing.T) {
	rep, rec := newReporter(slog.LevelDebug, slog.LevelInfo)
	r := NewRun(rep)
	a, p := &Stream{Name: "a"}, &Stream{Name: "parent"}
	r.Add(a, true)
	r.Add(p, false)
	r.Attempt("a", "GET", "/a", 200, time.Second)
	r.Attempt("parent", "GET", "/p", 503, time.Second)
	r.Attempt("parent", "GET", "/p", 0, time.Second)
	r.Attempt("other", "GET", "/o", 200, time.Second)
	if got := [4]int64{a.Requests.Load(), a.ByClass[2].Load(), p.Requests.Load(), p.ByClass[5].Load() + p.ByClass[0].Load()}; got != [4]int64{1, 1, 2, 2} {
		t.Errorf("a: requests, 2xx; parent: requests, 5xx + no response = %v, want [1 1 2 2]", got)
	}
	if got := len(rec.Lines()); got != 4 {
		t.Errorf("%d timer lines, want one per attempt (4):\n%s", got, strings.Join(rec.Lines(), "\n"))
	}
}

// stop waits for a tick under way: once it returns, no progress line can
// come after the lines that end the run.
func TestProgressStopWaitsForTheTick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rep, rec := newReporter(slog.LevelInfo, slog.LevelDebug)
		r := NewRun(rep)
		s := &Stream{Name: "s"}
		r.Add(s, true)
		s.Start(time.Now())
		inTick, release := make(chan struct{}), make(chan struct{})
		stop := r.Progress(time.Second, func() map[string]client.Waits {
			close(inTick)
			<-release
			return nil
		})
		<-inTick // the first tick is under way
		stopped := make(chan struct{})
		go func() {
			stop()
			close(stopped)
		}()
		synctest.Wait()
		select {
		case <-stopped:
			t.Fatal("stop returned while a tick was writing")
		default:
		}
		close(release)
		<-stopped
		if got := rec.Lines(); len(got) != 1 || !strings.HasPrefix(got[0], "INFO progress stream=s ") {
			t.Errorf("lines %q, want the tick's progress line", got)
		}
	})
}

// A stream that made no page between two progress lines is said to wait
// on the wait that grew most, else on the API.
func TestWaitingOn(t *testing.T) {
	for _, tt := range []struct {
		before, now client.Waits
		want        string
	}{
		{client.Waits{}, client.Waits{}, "api"},
		{client.Waits{WaitBucket: time.Second}, client.Waits{WaitBucket: 9 * time.Second, WaitSlot: time.Second}, "bucket"},
		{client.Waits{}, client.Waits{WaitRetryAfter: 30 * time.Second, WaitBackoff: time.Second}, "retry_after"},
	} {
		if got := waitingOn(tt.before, tt.now); got != tt.want {
			t.Errorf("waitingOn(%+v, %+v) = %s, want %s", tt.before, tt.now, got, tt.want)
		}
	}
}
