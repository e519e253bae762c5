package codec

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// An Appender appends its own JSON form: a typed value held in a tree
// that is encoded often (a resume point in a STATE written every page).
type Appender interface {
	AppendJSON(b []byte) ([]byte, error)
}

// Append appends the JSON text of a decoded value (maps, slices, strings,
// json.Number, bools and nil, as Decode makes them) and writes exactly
// what Marshal writes. It is the per-record hot path: no reflection, keys
// sorted as encoding/json sorts them, numbers written with their original
// text (a json.Number is trusted to be one, as Decode makes it), and
// <, >, & left as they are. An Appender writes itself; other types go
// through Marshal.
func Append(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return AppendString(b, v), nil
	case json.Number:
		if v == "" {
			return append(b, '0'), nil
		}
		return append(b, v...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(AppendString(b, k), ':')
			var err error
			if b, err = Append(b, v[k]); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = Append(b, e); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case Appender:
		return v.AppendJSON(b)
	}
	data, err := Marshal(v)
	return append(b, data...), err
}

// AppendObject appends an object like Append, reusing the sorted key order
// of the previous object appended with the same order: records of a
// stream mostly share their keys, and sorting them again for each record
// was a fifth of the encoder's time. order is updated when the keys
// differ.
func AppendObject(b []byte, m map[string]any, order *[]string) ([]byte, error) {
	if keys := *order; len(keys) == len(m) {
		start := len(b)
		b = append(b, '{')
		same := true
		for i, k := range keys {
			v, ok := m[k]
			if !ok {
				same = false
				break
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = append(AppendString(b, k), ':')
			var err error
			if b, err = Append(b, v); err != nil {
				return b, err
			}
		}
		if same {
			return append(b, '}'), nil
		}
		b = b[:start]
	}
	keys := (*order)[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	*order = keys
	return AppendObject(b, m, order)
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string, escaped as encoding/json does
// with HTML escaping off: invalid UTF-8 becomes U+FFFD, and U+2028/U+2029
// are escaped for JavaScript's sake.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := plainPrefix(s); i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plainPrefix is how many of s's first bytes, in whole 8-byte words, are
// printable ASCII other than '"' and '\\': written as they are. Most
// strings (ids, hashes' hex, timestamps) are plain throughout, and a word
// is checked in a few instructions where the loop takes a branch a byte.
func plainPrefix(s string) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// below has the high bit of each byte of w that is below n, for the
	// bytes of w below 0x80 (a word with a byte above is not plain anyway).
	below := func(w, n uint64) uint64 { return (w - ones*n) &^ w & highs }
	i := 0
	for ; i+8 <= len(s); i += 8 {
		c := s[i : i+8] // one bounds check for the word's eight loads
		w := uint64(c[0]) | uint64(c[1])<<8 | uint64(c[2])<<16 | uint64(c[3])<<24 |
			uint64(c[4])<<32 | uint64(c[5])<<40 | uint64(c[6])<<48 | uint64(c[7])<<56
		if w&highs|below(w, 0x20)|below(w^(ones*'"'), 1)|below(w^(ones*'\\'), 1) != 0 {
			break
		}
	}
	return i
}
