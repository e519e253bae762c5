package feed

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// The sequencer's steps: each message's seq, what it is, and the seq a
// reconnect would ask for after it.
func TestSequencer(t *testing.T) {
	steps := []struct {
		seq  int64
		want verdict
		next int64
	}{
		{1, write, 2},
		{2, write, 3},
		{2, dupe, 3}, // a reconnect replays
		{1, dupe, 3},
		{5, gap, 3}, // 3 and 4 are missing: never written past
		{3, write, 4},
		{4, write, 5},
		{5, write, 6},
		{0, dupe, 6},
	}
	s := sequencer{}
	for i, st := range steps {
		got := s.judge(st.seq)
		if got == write {
			s.wrote(st.seq)
		}
		if got != st.want || s.next() != st.next {
			t.Errorf("step %d: seq %d = %v, next %d; want %v, next %d", i, st.seq, got, s.next(), st.want, st.next)
		}
	}
}

// A resumed run starts past its STATE's seq.
func TestSequencerResumes(t *testing.T) {
	s := sequencer{last: 41}
	if s.next() != 42 || s.judge(41) != dupe || s.judge(42) != write || s.judge(43) != gap {
		t.Fatalf("resumed at 41: next %d, 41 %v, 42 %v, 43 %v", s.next(), s.judge(41), s.judge(42), s.judge(43))
	}
}

func TestBackoff(t *testing.T) {
	base, ceil := 100*time.Millisecond, time.Second
	for _, c := range []struct {
		failures int
		rand     float64
		want     time.Duration
	}{
		{0, 0, 0},
		{0, 0.5, 50 * time.Millisecond},
		{0, 0.999, 99900 * time.Microsecond},
		{1, 0.5, 100 * time.Millisecond},
		{3, 0.5, 400 * time.Millisecond},
		{4, 0.5, 500 * time.Millisecond}, // 1.6 s capped at 1 s
		{60, 0.5, 500 * time.Millisecond},
	} {
		if got := backoff(c.failures, base, ceil, c.rand); got != c.want {
			t.Errorf("backoff(%d, rand %v) = %s, want %s", c.failures, c.rand, got, c.want)
		}
	}
}

// The watch's steps on a clock that only moves when told: a message, a
// record, or a look at the time; what is due then.
func TestWatch(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	type step struct {
		at    float64
		event string // "message", "record" (a record is a message), "" (a look)
		due   reason
	}
	cases := []struct {
		name                      string
		idle, stopAfter, stopIdle float64
		steps                     []step
	}{
		{"heartbeats keep a connection alive", 2, 0, 0, []step{
			{1.9, "", none}, {1.9, "message", none}, {3.8, "message", none}, {5.7, "", none}, {5.8, "", silent},
		}},
		{"a silence is due at the idle timeout, not before", 2, 0, 0, []step{
			{0.5, "record", none}, {2.49, "", none}, {2.5, "", silent},
		}},
		{"stop.idle_s counts records, not heartbeats", 10, 0, 3, []step{
			{1, "record", none}, {2, "message", none}, {3, "message", none}, {3.9, "", none}, {4, "", stopIdle},
		}},
		{"stop.after_s counts from the start", 10, 5, 0, []step{
			{1, "record", none}, {4.9, "record", none}, {5, "", stopAfter},
		}},
		{"a stop wins over a silence due at the same time", 2, 2, 0, []step{
			{2, "", stopAfter},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
			w := newWatch(d(c.idle), d(c.stopAfter), d(c.stopIdle), t0)
			for i, st := range c.steps {
				now := at(st.at)
				switch st.event {
				case "record":
					w.record(now)
					w.message(now)
				case "message":
					w.message(now)
				}
				if got := w.due(now); got != st.due {
					t.Errorf("step %d at %.2fs: due %v, want %v", i, st.at, got, st.due)
				}
			}
		})
	}
}

func TestSubscribe(t *testing.T) {
	got, err := subscribe(json.RawMessage(`{"op": "subscribe", "from": "{from_seq}", "note": "from {from_seq} on", "list": ["{from_seq}"]}`), 42)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"list":[42],"note":"from 42 on","op":"subscribe","from":42}`; !sameJSON(t, got, want) {
		t.Errorf("subscribe = %s, want %s", got, want)
	}
}

func sameJSON(t *testing.T, a []byte, b string) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		t.Fatalf("not JSON: %s / %s", a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func TestErrorNamesTheStreamOnce(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{errors.New("a gap"), `stream "trades": feed: a gap`},
		{errors.New(`stream "trades": record {"seq":4} fails its schema`), `stream "trades": record {"seq":4} fails its schema`},
		{errors.New(`stream "trades_history": no page`), `stream "trades": feed: stream "trades_history": no page`},
	} {
		if got := (&Error{Stream: "trades", Err: c.err}).Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}
