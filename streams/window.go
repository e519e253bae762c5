package streams

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"time"

	"github.com/tap-dev/tap/codec"
)

// Window is one slice [Start, End) of an incremental sync: Start is
// inclusive, End exclusive.
//
// A request for a window sends incremental.param = Start, meaning
// "updated at >= Start", and incremental.end_param = End, meaning
// "updated at < End". Consecutive windows share their border (one's End
// is the next one's Start), so every instant is read exactly once: none
// falls between two windows and none belongs to both. Both borders are
// formatted the same way (FormatBound), so a coarse format (date, unix
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

// LowerBound is the value of incremental.param for a run that starts from
// bookmark: what changed since then, with an overlap so that rows
// committed late with an older replication key are read again.
//
//   - no bookmark (nil): startDate, the config's start_date;
//   - a time (an RFC 3339 or date string, or a time.Time): its instant
//     minus inc.OverlapS seconds, as a time.Time;
//   - a number: bookmark minus inc.Overlap, exactly (big integers and
//     decimals keep every digit), as a json.Number; OverlapS is not
//     applied to numbers, and an empty Overlap means 0 (the bookmark
//     itself, unchanged);
//   - a string that is not a time (an opaque but sortable version): the
//     bookmark unchanged, since there is nothing to subtract.
//
// inc may be nil (no overlap).
func LowerBound(bookmark any, inc *Incremental, startDate time.Time) (any, error) {
	if bookmark == nil {
		return startDate, nil
	}
	var overlapS int
	var overlap json.Number
	if inc != nil {
		overlapS, overlap = inc.OverlapS, inc.Overlap
	}
	if t, ok := ParseTimeKey(bookmark); ok {
		return t.Add(-time.Duration(overlapS) * time.Second), nil
	}
	if s, ok := bookmark.(string); ok {
		return s, nil
	}
	b, isNum, err := toRat(bookmark)
	if err != nil {
		return nil, fmt.Errorf("bookmark: %w", err)
	}
	if !isNum {
		return nil, fmt.Errorf("bookmark must be a time, a number or a string, got %s (%T)", jsonType(bookmark), bookmark)
	}
	if overlap == "" {
		if n, ok := bookmark.(json.Number); ok {
			return n, nil
		}
		return json.Number(decimalText(b)), nil
	}
	o, ok := codec.ParseRat(string(overlap))
	if !ok {
		return nil, fmt.Errorf("incremental.overlap %q is not a number", overlap)
	}
	return json.Number(decimalText(new(big.Rat).Sub(b, o))), nil
}

// decimalText writes r as exact decimal text: an integer without a point,
// otherwise as many fraction digits as needed and no more.
func decimalText(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	// A finite decimal has a denominator 2^a·5^b and needs max(a, b)
	// fraction digits.
	d := new(big.Int).Set(r.Denom())
	a := int(d.TrailingZeroBits())
	d.Rsh(d, uint(a))
	b := 0
	five, m := big.NewInt(5), new(big.Int)
	for {
		q, rem := new(big.Int).QuoRem(d, five, m)
		if rem.Sign() != 0 {
			break
		}
		d, b = q, b+1
	}
	if d.Cmp(big.NewInt(1)) != 0 { // not a finite decimal (cannot come from JSON)
		return r.FloatString(30)
	}
	return r.FloatString(max(a, b))
}

// rfc3339Seconds is the default bound format: UTC, whole seconds, "Z".
const rfc3339Seconds = "2006-01-02T15:04:05Z"

// FormatBound writes a bound as the API expects it in a query parameter.
//
// A time (time.Time, or a string ParseTimeKey reads) is written in UTC in
// format: "" or "rfc3339" (2026-08-18T09:00:00Z, whole seconds), "date"
// (2026-08-18), "unix" (seconds), "unix_ms" (milliseconds), or any other
// string as a Go time layout. Finer parts are truncated, never rounded
// up, so a lower bound never moves past a row. A number is written as its
// exact decimal text, unchanged; any other string as is; nil as "".
func FormatBound(v any, format string) string {
	if t, ok := ParseTimeKey(v); ok {
		t = t.UTC()
		switch format {
		case "", "rfc3339":
			return t.Format(rfc3339Seconds)
		case "date":
			return t.Format(time.DateOnly)
		case "unix":
			return strconv.FormatInt(t.Unix(), 10)
		case "unix_ms":
			return strconv.FormatInt(t.UnixMilli(), 10)
		default:
			return t.Format(format)
		}
	}
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return string(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(x), 'f', -1, 32)
	case *big.Int:
		return x.String()
	}
	return fmt.Sprint(v)
}

// InclusiveEnd is the last instant of a window ending (exclusively) at
// end, in the unit of format: end − 1 day for "date", − 1 ms for
// "unix_ms", − 1 s otherwise (rfc3339, unix, a layout of whole seconds).
func InclusiveEnd(end time.Time, format string) time.Time {
	switch format {
	case "date":
		return end.AddDate(0, 0, -1)
	case "unix_ms":
		return end.Add(-time.Millisecond)
	}
	return end.Add(-time.Second)
}

// FailedWindow is a chunk window whose walk did not reach its end: it
// failed after its retries, or was deferred. Error says why, in one line.
type FailedWindow struct {
	Window
	Error string

	before any // the bookmark when it failed: every row below it was read
}

// Backfills with outcomes. A chunked walk goes on past a window that
// fails; the Plan keeps the failed windows, and holds the bookmark where
// it stood when the earliest of them failed, so that a reader knowing
// nothing of failed windows never skips their rows. The walk's position
// (the next window of Windows) moves on regardless.
//
// The largest key of the windows read (WalkHigh) is what the bookmark
// would be without them; STATE keeps it beside the position
// (window.high), so that once the last failed window is read, in this run
// or a later one, the bookmark takes it up.

func (p *Plan) initBackfill(start time.Time, b Bounds) {
	p.walkEnd = start
	if n := len(p.windows); n > 0 {
		p.walkEnd = p.windows[n-1].End
	}
	for _, f := range b.Failed {
		f.before = b.Bookmark
		p.addFailed(f)
	}
	for _, f := range p.failed {
		p.retries = append(p.retries, f.Window)
	}
	p.inHigh = b.WalkHigh
}

// Retries are the windows a previous run left unfinished, by start: they
// are read first, before Windows.
func (p *Plan) Retries() []Window { return p.retries }

// Failed lists the windows not read to their end, by start.
func (p *Plan) Failed() []FailedWindow { return slices.Clone(p.failed) }

// Next is the window the walk is at: the first of Windows neither done nor
// failed; false when the walk is over.
func (p *Plan) Next() (Window, bool) {
	if p.next < len(p.windows) {
		return p.windows[p.next], true
	}
	return Window{}, false
}

// Position is the start of the window the walk is at, or where the walk
// ends once it is over.
func (p *Plan) Position() time.Time {
	if w, ok := p.Next(); ok {
		return w.Start
	}
	return p.walkEnd
}

// WalkHigh is the largest key of the windows read to their end, in this
// run and (Bounds.WalkHigh) the earlier ones; nil when there is none.
func (p *Plan) WalkHigh() any {
	h, err := MaxKey(p.closed, p.inHigh)
	if err != nil {
		return p.closed
	}
	return h
}

// Fail says w was not read to its end, and why (one line). The walk moves
// past it; the bookmark is held where it stands until Done(w).
func (p *Plan) Fail(w Window, why string) {
	p.step(w)
	p.addFailed(FailedWindow{Window: w, Error: why, before: p.closed})
}

// Done says w was read to its end: its keys count toward the bookmark
// (Close) and it leaves the failed windows.
func (p *Plan) Done(w Window) error {
	p.step(w)
	p.failed = slices.DeleteFunc(p.failed, func(f FailedWindow) bool { return f.Window.same(w) })
	return p.Close()
}

// Reread says a window behind the walk's position is read again: its keys
// come below those read since, and that is no disorder.
func (p *Plan) Reread() { p.prev, p.prevPart = nil, "" }

// step moves the walk's position past w when w is the window it is at.
func (p *Plan) step(w Window) {
	if cur, ok := p.Next(); ok && cur.same(w) {
		p.next++
	}
}

func (w Window) same(o Window) bool { return w.Start.Equal(o.Start) && w.End.Equal(o.End) }

// addFailed adds f to the failed windows, by start; a window failing
// again keeps the bookmark it first failed at.
func (p *Plan) addFailed(f FailedWindow) {
	for i := range p.failed {
		if p.failed[i].Window.same(f.Window) {
			p.failed[i].Error = f.Error
			return
		}
	}
	i, _ := slices.BinarySearchFunc(p.failed, f.Start, func(e FailedWindow, t time.Time) int { return e.Start.Compare(t) })
	p.failed = slices.Insert(p.failed, i, f)
}

// held is the bookmark STATE may hold, given the unfinished windows, and
// whether they decided it: while a window is failed, the smallest
// bookmark one failed at; once none is, at least the largest key earlier
// runs read.
func (p *Plan) held(v any) (any, bool) {
	if len(p.failed) > 0 {
		low := p.failed[0].before
		for _, f := range p.failed[1:] {
			if c, err := CompareKeys(f.before, low); err == nil && c < 0 {
				low = f.before
			}
		}
		return low, true
	}
	if p.inHigh != nil {
		if m, err := MaxKey(v, p.inHigh); err == nil {
			return m, true
		}
	}
	return v, false
}

// sameText reports whether two bookmarks are the same value written the
// same way.
func sameText(a, b any) bool {
	return sameKey(a, b) && fmt.Sprint(a) == fmt.Sprint(b)
}
