package streams

import (
	"encoding/json"
	"fmt"
	"math/big"
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
