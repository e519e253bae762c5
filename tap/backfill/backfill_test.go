package backfill

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/keys"
)

// day is the one-day window starting on January d, 2026.
func day(d int) keys.Window {
	start := time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC)
	return keys.Window{Start: start, End: start.AddDate(0, 0, 1)}
}

var (
	unavailable = &client.StatusError{Stream: "s", Method: "GET", Path: "/s", Status: 503, Attempts: 3}
	deferred    = &client.DeferError{Stream: "s", Reason: "daily quota reached", RetryAt: time.Date(2026, 1, 12, 0, 0, 0, 0, time.UTC)}
	circuit     = fmt.Errorf("stream %q: GET /s: %w (opened 5 times in this run)", "s", client.ErrCircuitOpen)
)

func TestKindOf(t *testing.T) {
	for _, c := range []struct {
		name     string
		err      error
		want     Kind
		endsWalk bool
	}{
		{"a request that failed after its retries", unavailable, Failed, false},
		{"wrapped", fmt.Errorf("page 3: %w", unavailable), Failed, false},
		{"a 404 is the window's too", &client.StatusError{Status: 404}, Failed, false},
		{"the circuit breaker giving up", circuit, Failed, true},
		{"deferred", deferred, Deferred, true},
		{"wrapped deferral", fmt.Errorf("x: %w", deferred), Deferred, true},
		{"credentials refused (401): every window alike", &client.StatusError{Status: 401}, "", false},
		{"forbidden (403)", &client.StatusError{Status: 403}, "", false},
		{"a cancelled run", context.Canceled, "", false},
		{"a record the stream refuses", errors.New(`stream "s": record 3: schema violation`), "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := KindOf(c.err); got != c.want {
				t.Errorf("KindOf(%v) = %q, want %q", c.err, got, c.want)
			}
			o := OutcomeOf(c.err)
			if o.Kind != c.want || o.Err != c.err {
				t.Errorf("OutcomeOf = %+v", o)
			}
			if o.Kind != "" && o.EndsWalk() != c.endsWalk {
				t.Errorf("EndsWalk() = %v, want %v", o.EndsWalk(), c.endsWalk)
			}
		})
	}
	if (Outcome{Kind: Lettered}).EndsWalk() {
		t.Error("a lettered window ends the walk")
	}
}

func TestOneLine(t *testing.T) {
	long := strings.Repeat("é", 300) // 600 bytes
	for _, c := range []struct{ in, want string }{
		{"gave up\nafter 3 attempts:\t 503", "gave up after 3 attempts: 503"},
		{"  short  ", "short"},
		{strings.Repeat("a", 500), strings.Repeat("a", 500)},
		{strings.Repeat("a", 501), strings.Repeat("a", 497) + "..."},
		// 497 bytes end inside a two-byte rune: the half is dropped.
		{long, strings.Repeat("é", 248) + "..."},
	} {
		got := OneLine(c.in)
		if got != c.want {
			t.Errorf("OneLine(%.20q…) = %.40q… (%d bytes), want %.40q… (%d bytes)", c.in, got, len(got), c.want, len(c.want))
		}
		if len(got) > 500 {
			t.Errorf("OneLine gives %d bytes", len(got))
		}
	}
}

// event is one step of a run, as the engine reports it to a Book.
type event struct {
	w      int   // the window's day
	done   bool  // its walk reached its end
	resume bool  // a window taken up from an earlier run
	err    error // the walk's error; nil and not done: lettered
}

func (e event) apply(b *Book) {
	switch {
	case e.resume:
		b.Resume()
	case e.done:
		b.Done(day(e.w))
	case e.err == nil:
		b.Record(day(e.w), Outcome{Kind: Lettered})
	default:
		b.Record(day(e.w), OutcomeOf(e.err))
	}
}

// failed is the plan's failed windows at the end of the walk: the days
// given, with the error text STATE keeps.
func failed(days ...int) []streams.FailedWindow {
	var out []streams.FailedWindow
	for _, d := range days {
		out = append(out, streams.FailedWindow{Window: day(d), Error: fmt.Sprintf("error of day %d", d)})
	}
	return out
}

func TestBookCounts(t *testing.T) {
	for _, c := range []struct {
		name      string
		events    []event
		failed    []streams.FailedWindow
		want      Counts
		line      string
		readAgain []int // the failed days read once more at the end
	}{{
		name:   "every window read",
		events: []event{{w: 1, done: true}, {w: 2, done: true}, {w: 3, done: true}},
		want:   Counts{Completed: 3},
		line:   "windows completed=3 failed=0 deferred=0 resumed=0",
	}, {
		name:      "a window that fails, read again at the end and failing again",
		events:    []event{{w: 1, done: true}, {w: 2, err: unavailable}, {w: 3, done: true}, {w: 2, err: unavailable}},
		failed:    failed(2),
		want:      Counts{Completed: 2, Failed: 1, Unlettered: 1},
		line:      "windows completed=2 failed=1 deferred=0 resumed=0",
		readAgain: []int{2},
	}, {
		name:   "a window that fails once: read again, it is completed",
		events: []event{{w: 1, err: unavailable}, {w: 2, done: true}, {w: 1, done: true}},
		want:   Counts{Completed: 2},
		line:   "windows completed=2 failed=0 deferred=0 resumed=0",
	}, {
		name:   "a lettered window counts as failed, with its letter",
		events: []event{{w: 1, done: true}, {w: 2}, {w: 3, done: true}},
		failed: failed(2),
		want:   Counts{Completed: 2, Failed: 1},
		line:   "windows completed=2 failed=1 deferred=0 resumed=0",
	}, {
		name:      "a failed window, then a deferred one",
		events:    []event{{w: 1, done: true}, {w: 2, err: unavailable}, {w: 3, done: true}, {w: 4, err: deferred}},
		failed:    failed(2, 4),
		want:      Counts{Completed: 2, Failed: 1, Deferred: 1, Unlettered: 1},
		line:      "windows completed=2 failed=1 deferred=1 resumed=0",
		readAgain: []int{2},
	}, {
		name:   "windows taken up from the last run; one it left failed is not walked in this run",
		events: []event{{resume: true}, {resume: true}, {w: 3, done: true}, {w: 5, done: true}},
		failed: failed(2),
		want:   Counts{Completed: 2, Resumed: 2},
		line:   "windows completed=2 failed=0 deferred=0 resumed=2",
	}} {
		t.Run(c.name, func(t *testing.T) {
			var b Book
			for _, e := range c.events {
				e.apply(&b)
			}
			got := b.Count(c.failed)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
			if s := got.String(); s != c.line {
				t.Errorf("summary %q, want %q", s, c.line)
			}
			var again []int
			for _, f := range c.failed {
				if b.ReadAgain(f.Window) {
					again = append(again, f.Start.Day())
				}
			}
			if diff := cmp.Diff(c.readAgain, again); diff != "" {
				t.Errorf("read again (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunError(t *testing.T) {
	// stream is a chunked stream whose windows had the outcomes given (by
	// day), each left in its plan's failed windows.
	stream := func(name string, outcomes map[int]error) Stream {
		s := Stream{Name: name, Book: &Book{}}
		for d := 1; d <= 9; d++ {
			if err, ok := outcomes[d]; ok {
				event{w: d, err: err}.apply(s.Book)
				s.Failed = append(s.Failed, failed(d)...)
			}
		}
		return s
	}
	cancelled := errors.New("cancelled\nby the user")
	for _, c := range []struct {
		name    string
		streams []Stream
		also    error
		want    string // "" no error
		is      []error
	}{{
		name:    "no chunked stream",
		streams: nil,
	}, {
		name:    "no chunked stream: the error that ended the run is the run's",
		streams: nil,
		also:    cancelled,
		want:    "cancelled\nby the user",
	}, {
		name:    "a lettered window: the letter records it, the run does not fail",
		streams: []Stream{stream("s", map[int]error{3: nil})},
	}, {
		name:    "a deferred window alone: the deferral is the run's error",
		streams: []Stream{stream("s", map[int]error{3: deferred})},
		also:    deferred,
		want:    deferred.Error(),
		is:      []error{deferred},
	}, {
		name:    "one failed window",
		streams: []Stream{stream("s", map[int]error{3: unavailable})},
		want: `stream "s": 1 backfill window still failed after a second try (failed_windows in the state; the next run reads them first); ` +
			`the first, 2026-01-03T00:00:00Z to 2026-01-04T00:00:00Z: error of day 3`,
		is: []error{unavailable},
	}, {
		name: "two failed windows, a lettered one before them, and a deferral that ended the run",
		streams: []Stream{
			stream("quiet", nil),
			stream("s", map[int]error{2: nil, 4: unavailable, 5: circuit, 6: deferred}),
		},
		also: cancelled,
		want: `stream "s": 2 backfill windows still failed after a second try (failed_windows in the state; the next run reads them first); ` +
			`the first, 2026-01-04T00:00:00Z to 2026-01-05T00:00:00Z: error of day 4; also: cancelled; by the user`,
		is: []error{unavailable, cancelled},
	}, {
		name: "failed windows in three streams: the first named, the others counted",
		streams: []Stream{
			stream("a", map[int]error{7: unavailable}),
			stream("b", map[int]error{1: nil}),
			stream("c", map[int]error{1: unavailable}),
			stream("d", map[int]error{1: circuit}),
		},
		want: `stream "a": 1 backfill window still failed after a second try (failed_windows in the state; the next run reads them first); ` +
			`the first, 2026-01-07T00:00:00Z to 2026-01-08T00:00:00Z: error of day 7; 2 more streams have failed windows`,
	}, {
		name:    "one more stream",
		streams: []Stream{stream("a", map[int]error{7: unavailable}), stream("c", map[int]error{1: unavailable})},
		want: `stream "a": 1 backfill window still failed after a second try (failed_windows in the state; the next run reads them first); ` +
			`the first, 2026-01-07T00:00:00Z to 2026-01-08T00:00:00Z: error of day 7; 1 more stream has failed windows`,
	}} {
		t.Run(c.name, func(t *testing.T) {
			err := RunError(c.streams, c.also)
			if c.want == "" {
				if err != nil {
					t.Fatalf("RunError = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != c.want {
				t.Fatalf("RunError = %v,\nwant %s", err, c.want)
			}
			for _, target := range c.is {
				if !errors.Is(err, target) {
					t.Errorf("the error does not wrap %v", target)
				}
			}
			var we *Error
			if failedRun := strings.Contains(c.want, "backfill"); errors.As(err, &we) != failedRun {
				t.Errorf("errors.As(*Error) = %v, want %v", !failedRun, failedRun)
			}
		})
	}
}
