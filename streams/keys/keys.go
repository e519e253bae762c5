// Package keys orders replication-key values, writes them as the bounds
// of a request (Format, InclusiveEnd), moves a bookmark back by its
// overlap (Subtract), and splits a range of times into the windows of a
// chunked backfill (PlanWindows), of which a Shard reads its share. The
// stream plan (package streams) decides which bounds a run uses.
//
// Replication-key values arrive in whatever representation the API and
// the state file use: json.Number (the decoder keeps numbers as text),
// strings (RFC 3339 times, dates, or opaque versions), or, from Go code,
// float64, integers and time.Time. A bookmark is the largest value seen,
// so the tap has to order them; this package does so by meaning, never by
// the text of mixed formats:
//
//   - numbers compare numerically and exactly, even beyond 2^53;
//   - strings that are times (RFC 3339 with any offset and any fraction,
//     or "2006-01-02" dates, taken as midnight UTC) compare as instants;
//   - other strings compare lexically (opaque but sortable versions);
//   - nil (a record without a value) is smaller than everything;
//   - anything else, or two values of different kinds, is an error.
package keys

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tap-dev/tap/codec"
)

// keyKind is the meaning of a replication-key value.
type keyKind int

const (
	kindNil keyKind = iota
	kindNumber
	kindTime
	kindString
)

func (k keyKind) String() string {
	switch k {
	case kindNumber:
		return "a number"
	case kindTime:
		return "a time"
	case kindString:
		return "a string"
	}
	return "null"
}

// keyValue is a replication-key value classified for comparison.
type keyValue struct {
	kind keyKind
	num  *big.Rat
	t    time.Time
	s    string
}

func classifyKey(v any) (keyValue, error) {
	if v == nil {
		return keyValue{kind: kindNil}, nil
	}
	if t, ok := ParseTime(v); ok {
		return keyValue{kind: kindTime, t: t}, nil
	}
	if s, ok := v.(string); ok {
		return keyValue{kind: kindString, s: s}, nil
	}
	r, isNum, err := toRat(v)
	if err != nil {
		return keyValue{}, err
	}
	if isNum {
		return keyValue{kind: kindNumber, num: r}, nil
	}
	return keyValue{}, fmt.Errorf("a replication key must be a number, a time or a string, got %s (%T)", codec.TypeName(v), v)
}

// toRat converts a numeric value exactly. isNum is false for a value that
// is not a number type at all.
func toRat(v any) (r *big.Rat, isNum bool, err error) {
	switch n := v.(type) {
	case json.Number:
		if r, ok := codec.ParseRat(string(n)); ok {
			return r, true, nil
		}
		return nil, true, fmt.Errorf("%q is not a number (or its exponent is out of range)", shorten(string(n)))
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return nil, true, fmt.Errorf("%v is not a finite number", n)
		}
		return new(big.Rat).SetFloat64(n), true, nil
	case float32:
		return toRat(float64(n))
	case int:
		return new(big.Rat).SetInt64(int64(n)), true, nil
	case int8:
		return new(big.Rat).SetInt64(int64(n)), true, nil
	case int16:
		return new(big.Rat).SetInt64(int64(n)), true, nil
	case int32:
		return new(big.Rat).SetInt64(int64(n)), true, nil
	case int64:
		return new(big.Rat).SetInt64(n), true, nil
	case uint:
		return new(big.Rat).SetInt(new(big.Int).SetUint64(uint64(n))), true, nil
	case uint8:
		return new(big.Rat).SetInt64(int64(n)), true, nil
	case uint16:
		return new(big.Rat).SetInt64(int64(n)), true, nil
	case uint32:
		return new(big.Rat).SetInt64(int64(n)), true, nil
	case uint64:
		return new(big.Rat).SetInt(new(big.Int).SetUint64(n)), true, nil
	case *big.Int:
		return new(big.Rat).SetInt(n), true, nil
	}
	return nil, false, nil
}

// compareInts orders two json.Numbers that are 64-bit integers without
// allocating, the common case of a key compared once per record; ok is
// false for anything else.
func compareInts(a, b any) (c int, ok bool) {
	na, okA := a.(json.Number)
	nb, okB := b.(json.Number)
	if !okA || !okB {
		return 0, false
	}
	return compareIntTexts(string(na), string(nb))
}

// CompareNumberTexts is CompareNumbers of two JSON numbers' texts, without
// boxing them when they are 64-bit integers (a spliced record's key).
func CompareNumberTexts(a, b string) (int, error) {
	if c, ok := compareIntTexts(a, b); ok {
		return c, nil
	}
	return CompareNumbers(json.Number(a), json.Number(b))
}

func compareIntTexts(na, nb string) (c int, ok bool) {
	if c, ok := compareDigits(na, nb); ok {
		return c, true
	}
	x, errA := strconv.ParseInt(na, 10, 64)
	y, errB := strconv.ParseInt(nb, 10, 64)
	if errA != nil || errB != nil {
		return 0, false
	}
	return cmp.Compare(x, y), true
}

// compareDigits orders two non-negative integers in canonical form ("0",
// "17", never "017") without parsing: the longer is the larger, and
// digits of one length order as text, checked and compared in one pass
// (a key is compared several times per record). ok is false when either
// is not such an integer.
func compareDigits(a, b string) (c int, ok bool) {
	if a == "" || b == "" || (a[0] == '0' && len(a) > 1) || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	if len(a) != len(b) {
		return cmp.Compare(len(a), len(b)), digits(a) && digits(b)
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i]-'0', b[i]-'0'
		if x > 9 || y > 9 {
			return 0, false
		}
		if c == 0 {
			c = cmp.Compare(x, y)
		}
	}
	return c, true
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i]-'0' > 9 {
			return false
		}
	}
	return true
}

// CompareNumbers orders two numeric values exactly.
func CompareNumbers(a, b any) (int, error) {
	if c, ok := compareInts(a, b); ok {
		return c, nil
	}
	ra, aNum, err := toRat(a)
	if err != nil {
		return 0, err
	}
	rb, bNum, err := toRat(b)
	if err != nil {
		return 0, err
	}
	if !aNum || !bNum {
		return 0, fmt.Errorf("cannot order %s against %s as numbers", codec.TypeName(a), codec.TypeName(b))
	}
	return ra.Cmp(rb), nil
}

// Compare orders two replication-key values: -1 if a < b, 0 if they
// are equal, +1 if a > b. See the rules in the package doc; a number
// against a time, or a time against a non-time string, is an error.
//
// "2026-08-18T11:00:00+02:00" and "2026-08-18T09:00:00Z" are equal;
// json.Number("9007199254740993") is larger than 9007199254740992.
func Compare(a, b any) (int, error) {
	if c, ok := compareInts(a, b); ok {
		return c, nil
	}
	ka, err := classifyKey(a)
	if err != nil {
		return 0, err
	}
	kb, err := classifyKey(b)
	if err != nil {
		return 0, err
	}
	switch {
	case ka.kind == kindNil && kb.kind == kindNil:
		return 0, nil
	case ka.kind == kindNil:
		return -1, nil
	case kb.kind == kindNil:
		return 1, nil
	case ka.kind != kb.kind:
		return 0, fmt.Errorf("cannot compare replication key values of different kinds: %s (%s) and %s (%s)",
			ka.kind, Describe(a), kb.kind, Describe(b))
	}
	switch ka.kind {
	case kindNumber:
		return ka.num.Cmp(kb.num), nil
	case kindTime:
		return ka.t.Compare(kb.t), nil
	default:
		return strings.Compare(ka.s, kb.s), nil
	}
}

// Max returns the larger of a and b in its original representation (a
// itself when they are equal), so a bookmark keeps the text the API sent.
func Max(a, b any) (any, error) {
	c, err := Compare(a, b)
	if err != nil {
		return nil, err
	}
	if c >= 0 {
		return a, nil
	}
	return b, nil
}

// ParseTime reads a time-like replication-key value: a string in RFC
// 3339 (any offset, optional fractional seconds) or a "2006-01-02" date
// (midnight UTC), or a time.Time. Numbers are never taken as times: a
// unix timestamp is a number and compares as one.
func ParseTime(v any) (time.Time, bool) {
	switch x := v.(type) {
	case time.Time:
		return x, true
	case string:
		if len(x) < len("2006-01-02") || x[4] != '-' {
			return time.Time{}, false
		}
		if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return t, true
		}
		if t, err := time.Parse(time.DateOnly, x); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// Describe prints a key value for an error message.
func Describe(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", shorten(x))
	case time.Time:
		return x.Format(time.RFC3339Nano)
	}
	return shorten(fmt.Sprint(v))
}

// shorten cuts s for an error message.
func shorten(s string) string {
	const limit = 80
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
