package keys

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/tap-dev/tap/codec"
)

// Subtract is bookmark moved back by an overlap, so that rows committed
// late with an older replication key are read again:
//
//   - a time (an RFC 3339 or date string, or a time.Time): its instant
//     minus d, as a time.Time;
//   - a number: bookmark minus n, exactly (big integers and decimals keep
//     every digit), as a json.Number; d is not applied to numbers, and an
//     empty n means 0 (the bookmark itself, unchanged);
//   - a string that is not a time (an opaque but sortable version): the
//     bookmark unchanged, since there is nothing to subtract.
func Subtract(bookmark any, d time.Duration, n json.Number) (any, error) {
	if t, ok := ParseTime(bookmark); ok {
		return t.Add(-d), nil
	}
	if s, ok := bookmark.(string); ok {
		return s, nil
	}
	b, isNum, err := toRat(bookmark)
	if err != nil {
		return nil, fmt.Errorf("bookmark: %w", err)
	}
	if !isNum {
		return nil, fmt.Errorf("bookmark must be a time, a number or a string, got %s (%T)", codec.TypeName(bookmark), bookmark)
	}
	if n == "" {
		if n, ok := bookmark.(json.Number); ok {
			return n, nil
		}
		return json.Number(decimalText(b)), nil
	}
	o, ok := codec.ParseRat(string(n))
	if !ok {
		return nil, fmt.Errorf("incremental.overlap %q is not a number", n)
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

// Format writes a bound as the API expects it in a query parameter.
//
// A time (time.Time, or a string ParseTime reads) is written in UTC in
// format: "" or "rfc3339" (2026-08-18T09:00:00Z, whole seconds), "date"
// (2026-08-18), "unix" (seconds), "unix_ms" (milliseconds), or any other
// string as a Go time layout. Finer parts are truncated, never rounded
// up, so a lower bound never moves past a row. A number is written as its
// exact decimal text, unchanged; any other string as is; nil as "".
func Format(v any, format string) string {
	if t, ok := ParseTime(v); ok {
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

// TimeOf reads a replication-key value as a time in format (an
// incremental.key_format): "unix" or "unix_ms" (a number, or a string of
// digits), "date", "rfc3339", or a Go time layout. It returns the time in
// RFC 3339, UTC, as a bookmark keeps it.
//
// Several formats separated by "|" are tried in turn, the first that
// reads the value winning (an API whose keys come in more than one form,
// as a manifest's cursor_datetime_formats list them).
func TimeOf(v any, format string) (string, bool) {
	if alts := strings.Split(format, "|"); len(alts) > 1 {
		for _, f := range alts {
			if t, ok := TimeOf(v, f); ok {
				return t, true
			}
		}
		return "", false
	}
	var t time.Time
	switch format {
	case "unix", "unix_ms":
		var text string
		switch x := v.(type) {
		case json.Number:
			text = string(x)
		case string:
			text = x
		case float64:
			text = strconv.FormatFloat(x, 'f', -1, 64)
		case int64:
			text = strconv.FormatInt(x, 10)
		default:
			return "", false
		}
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return "", false
		}
		if format == "unix" {
			t = time.Unix(n, 0)
		} else {
			t = time.UnixMilli(n)
		}
	default:
		s, ok := v.(string)
		if !ok {
			return "", false
		}
		layout := format
		switch format {
		case "", "rfc3339":
			layout = time.RFC3339Nano
		case "date":
			layout = time.DateOnly
		}
		var err error
		if t, err = time.Parse(layout, s); err != nil {
			return "", false
		}
	}
	return t.UTC().Format(time.RFC3339Nano), true
}
