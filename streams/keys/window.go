package keys

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Window is one slice [Start, End) of an incremental sync: Start is
// inclusive, End exclusive.
//
// A request for a window sends incremental.param = Start, meaning
// "updated at >= Start", and incremental.end_param = End, meaning
// "updated at < End". Consecutive windows share their border (one's End
// is the next one's Start), so every instant is read exactly once: none
// falls between two windows and none belongs to both. Both borders are
// formatted the same way (Format), so a coarse format (date, unix
// seconds) truncates both sides alike and the windows stay contiguous.
type Window struct {
	Start, End time.Time
}

// PlanWindows splits [start, now) into contiguous windows of chunkDays
// calendar days each (in start's location), the last one ending at now
// and possibly shorter. chunkDays <= 0 gives the single window
// [start, now). start at or after now gives no window.
func PlanWindows(start, now time.Time, chunkDays int) []Window {
	if !start.Before(now) {
		return nil
	}
	if chunkDays <= 0 {
		return []Window{{Start: start, End: now}}
	}
	var ws []Window
	for cur := start; cur.Before(now); {
		end := cur.AddDate(0, 0, chunkDays)
		if !end.Before(now) || !end.After(cur) { // the last window, or an overflow
			end = now
		}
		ws = append(ws, Window{Start: cur, End: end})
		cur = end
	}
	return ws
}

// KeepEnd splits the first of ws, the window a run resumes at start, at
// the end its STATE recorded when that comes earlier; the rest becomes a
// window of its own. Without it a run killed in the last window, the one
// ending at that run's clock, would resume in a longer window than the
// one its STATE describes, and its saved page position with it.
func KeepEnd(ws []Window, start, end time.Time) []Window {
	if len(ws) == 0 || start.IsZero() || !ws[0].Start.Equal(start) || !end.After(start) || !end.Before(ws[0].End) {
		return ws
	}
	out := make([]Window, 0, len(ws)+1)
	out = append(out, Window{Start: start, End: end}, Window{Start: end, End: ws[0].End})
	return append(out, ws[1:]...)
}

// Shard is the part of a chunked backfill that one process reads
// (--shard I/N): the windows whose index is I modulo N, counted over the
// full window plan from the stream's start, so that N processes started
// alike read every window once between them. The zero Shard reads all.
type Shard struct{ I, N int }

// ParseShard reads "I/N" with 0 <= I < N.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("expected I/N with 0 <= I < N, e.g. 0/4, got %q", s)
	}
	return Shard{I: i, N: n}, nil
}

// On reports whether sharding is on (N > 1).
func (s Shard) On() bool { return s.N > 1 }

// String is "I/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// Windows are the shard's windows of the plan [origin, now) in chunks of
// chunkDays, that end after from (where this shard's own state resumes);
// a window holding from starts there.
func (s Shard) Windows(origin, from, now time.Time, chunkDays int) []Window {
	ws := []Window{}
	for i, w := range PlanWindows(origin, now, chunkDays) {
		if i%s.N != s.I || !w.End.After(from) {
			continue
		}
		if w.Start.Before(from) {
			w.Start = from
		}
		ws = append(ws, w)
	}
	return ws
}
