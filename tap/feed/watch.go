package feed

import "time"

// watch keeps the times a feed's rules are judged by: a connection is
// dead after idle without any message; a batch run ends after stopAfter
// from its start, or stopIdle without a record. Zero durations are rules
// that do not apply. It is pure: the runner gives it the clock's times.
type watch struct {
	idle, stopAfter, stopIdle time.Duration

	start       time.Time // the run's
	lastMessage time.Time // of this connection (its start, before one)
	lastRecord  time.Time // of the run (its start, before one)
}

// why a deadline came.
type reason int

const (
	none      reason = iota
	silent           // no message for idle: the connection is dead
	stopAfter        // the run has read the feed for stop.after_s
	stopIdle         // no record for stop.idle_s
)

func newWatch(idle, stopAfter, stopIdle time.Duration, now time.Time) *watch {
	return &watch{idle: idle, stopAfter: stopAfter, stopIdle: stopIdle, start: now, lastMessage: now, lastRecord: now}
}

func (w *watch) connected(now time.Time) { w.lastMessage = now }
func (w *watch) message(now time.Time)   { w.lastMessage = now }
func (w *watch) record(now time.Time)    { w.lastRecord = now }

// next is the earliest deadline and what it is for; a stop wins over a
// silence at the same time.
func (w *watch) next() (time.Time, reason) {
	at, why := time.Time{}, none
	consider := func(d time.Duration, from time.Time, r reason) {
		if d <= 0 {
			return
		}
		if t := from.Add(d); why == none || t.Before(at) {
			at, why = t, r
		}
	}
	consider(w.stopAfter, w.start, stopAfter)
	consider(w.stopIdle, w.lastRecord, stopIdle)
	consider(w.idle, w.lastMessage, silent)
	return at, why
}

// due is the rule whose deadline has passed at now, or none.
func (w *watch) due(now time.Time) reason {
	at, why := w.next()
	if why == none || now.Before(at) {
		return none
	}
	return why
}
