package codec

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Decode decodes exactly one JSON value into maps, slices, strings,
// json.Number, bools and nil — what encoding/json makes with UseNumber, so
// a number keeps its exact text (ids beyond 2^53, decimal amounts).
// Anything but whitespace after the value is an error: a body with
// trailing data is not the document the API meant to send.
//
// It is a single-pass decoder because every page of every stream goes
// through it: encoding/json scans each value twice and allocates every
// object key anew, which made decoding half the tap's CPU time. Its
// output equals encoding/json's for every input (a differential fuzz test
// holds it to that), invalid UTF-8 and lone surrogates becoming U+FFFD.
//
// Its errors are *SyntaxError.
func Decode(b []byte) (any, error) { return decode(b, false) }

// CollisionKey is the key DecodeRecords adds to an object in which (or
// below which) two keys became one once their invalid UTF-8 was replaced
// by U+FFFD, so that one value was lost. No decoded key holds it: its
// byte 0xff is invalid UTF-8, which decoding always replaces. Its value
// is the JSON pointer, from that object, of the first such key.
const CollisionKey = "\xffkeys collided"

// DecodeRecords is Decode for records: an object whose keys collide once
// repaired (above) is marked with CollisionKey, and so is every object
// it is in, so that a record can be told from its top-level keys alone
// (TakeCollision) and refused rather than written without the value.
func DecodeRecords(b []byte) (any, error) { return decode(b, true) }

// TakeCollision removes the CollisionKey marks from v and every value in
// it, and returns the pointer of the first collision; ok is false, and v
// is untouched, when v is not marked.
func TakeCollision(v map[string]any) (pointer string, ok bool) {
	pointer, ok = v[CollisionKey].(string)
	if ok {
		unmark(v)
	}
	return pointer, ok
}

func unmark(v any) {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v[CollisionKey]; !ok {
			return // nothing below is marked either
		}
		delete(v, CollisionKey)
		for _, e := range v {
			unmark(e)
		}
	case []any:
		for _, e := range v {
			unmark(e)
		}
	}
}

func decode(b []byte, mark bool) (any, error) {
	d := decoder{data: b, keys: make(map[string]string), mark: mark}
	d.skipSpace()
	if d.pos == len(d.data) {
		return nil, &SyntaxError{Offset: d.pos, Msg: "empty JSON document"}
	}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.pos != len(d.data) {
		return nil, &SyntaxError{Offset: d.pos, Msg: "data after the first value"}
	}
	return v, nil
}

// A SyntaxError says where a document stops being JSON.
type SyntaxError struct {
	// Offset is the index of the byte at fault, len(input) when the
	// input ends too soon. (encoding/json counts one more.)
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Msg)
}

// MaxDepth bounds nesting, as encoding/json does, so a hostile body
// cannot exhaust the stack.
const MaxDepth = 10000

type decoder struct {
	data []byte
	pos  int
	// keys interns object keys: records of a page repeat the same keys,
	// and a lookup with string(bytes) does not allocate.
	keys map[string]string
	// mark: DecodeRecords. collisions counts the keys that collided so
	// far; at is the pointer of the first one in the value last decoded,
	// from that value.
	mark       bool
	collisions int
	at         string
}

func (d *decoder) errorf(format string, args ...any) error {
	return &SyntaxError{Offset: d.pos, Msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) unexpected(what string) error {
	if d.pos >= len(d.data) {
		return d.errorf("unexpected end of input in %s", what)
	}
	return d.errorf("invalid character %q in %s", d.data[d.pos], what)
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) value(depth int) (any, error) {
	if d.pos >= len(d.data) {
		return nil, d.unexpected("value")
	}
	if c := d.data[d.pos]; (c == '{' || c == '[') && depth >= MaxDepth {
		return nil, d.errorf("nested deeper than %d levels", MaxDepth)
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		return d.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	}
	return nil, d.unexpected("value")
}

func (d *decoder) literal(word string) error {
	if len(d.data)-d.pos < len(word) || string(d.data[d.pos:d.pos+len(word)]) != word {
		return d.unexpected("literal " + word)
	}
	d.pos += len(word)
	return nil
}

func (d *decoder) object(depth int) (any, error) {
	d.pos++ // {
	m := make(map[string]any)
	at := "" // DecodeRecords: the pointer of the first collision in m
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return m, nil
	}
	for {
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, d.unexpected("object key")
		}
		key, err := d.key()
		if err != nil {
			return nil, err
		}
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, d.unexpected("object after key")
		}
		d.pos++
		d.skipSpace()
		before := d.collisions
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n := len(m)
		m[key] = v
		if d.mark {
			switch {
			case len(m) == n && strings.ContainsRune(key, utf8.RuneError):
				// Keys with invalid UTF-8 repaired into one: the value
				// before is lost. (A duplicate key otherwise is JSON's
				// own, and the last one wins, as in encoding/json.)
				d.collisions++
				at = firstPointer(at, key, "")
			case d.collisions != before:
				at = firstPointer(at, key, d.at)
			}
		}
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.unexpected("object")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case '}':
			d.pos++
			if at != "" {
				m[CollisionKey], d.at = at, at
			}
			return m, nil
		default:
			return nil, d.unexpected("object after value")
		}
	}
}

func (d *decoder) array(depth int) (any, error) {
	d.pos++ // [
	a := []any{}
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return a, nil
	}
	at := "" // DecodeRecords: the pointer of the first collision in a
	for {
		d.skipSpace()
		before := d.collisions
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if d.collisions != before && at == "" {
			at = "/" + strconv.Itoa(len(a)) + d.at
		}
		a = append(a, v)
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.unexpected("array")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			if at != "" {
				d.at = at
			}
			return a, nil
		default:
			return nil, d.unexpected("array after value")
		}
	}
}

// firstPointer is at, or when at is "" the pointer of key followed by
// the pointer below it.
func firstPointer(at, key, below string) string {
	if at != "" {
		return at
	}
	return "/" + strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1") + below
}

// key reads an object key, interned.
func (d *decoder) key() (string, error) {
	raw, plain, err := d.scanString()
	if err != nil {
		return "", err
	}
	if !plain {
		return unescape(raw), nil
	}
	if k, ok := d.keys[string(raw)]; ok {
		return k, nil
	}
	k := string(raw)
	d.keys[k] = k
	return k, nil
}

func (d *decoder) str() (any, error) {
	raw, plain, err := d.scanString()
	if err != nil {
		return nil, err
	}
	if plain {
		return string(raw), nil
	}
	return unescape(raw), nil
}

// scanString moves past a string and returns its raw contents (without
// quotes); plain is true when they need no unescaping or UTF-8 repair.
func (d *decoder) scanString() (raw []byte, plain bool, err error) {
	d.pos++ // "
	start := d.pos
	plain = true
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			raw = d.data[start:d.pos]
			d.pos++
			return raw, plain, nil
		case c == '\\':
			plain = false
			d.pos++
			if d.pos >= len(d.data) {
				return nil, false, d.unexpected("string escape")
			}
			switch d.data[d.pos] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				d.pos++
			case 'u':
				d.pos++
				for i := 0; i < 4; i++ {
					if d.pos >= len(d.data) || !isHex(d.data[d.pos]) {
						return nil, false, d.unexpected(`\u escape`)
					}
					d.pos++
				}
			default:
				return nil, false, d.unexpected("string escape")
			}
		case c < 0x20:
			return nil, false, d.unexpected("string literal")
		case c < utf8.RuneSelf:
			d.pos++
		default:
			r, size := utf8.DecodeRune(d.data[d.pos:])
			if r == utf8.RuneError && size == 1 {
				plain = false
			}
			d.pos += size
		}
	}
	return nil, false, d.unexpected("string literal")
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// unescape decodes the contents of a scanned string the way encoding/json
// does: escapes resolved, surrogate pairs joined, invalid UTF-8 and lone
// surrogates replaced by U+FFFD.
func unescape(raw []byte) string {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c == '\\' {
			switch e := raw[i+1]; e {
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := hex4(raw[i+2 : i+6])
				i += 6
				if utf16.IsSurrogate(r) {
					if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
						if pair := utf16.DecodeRune(r, hex4(raw[i+2:i+6])); pair != utf8.RuneError {
							out = utf8.AppendRune(out, pair)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				out = utf8.AppendRune(out, r)
				continue
			default: // " \ /
				out = append(out, e)
			}
			i += 2
			continue
		}
		if c < utf8.RuneSelf {
			out = append(out, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, raw[i:i+size]...)
		}
		i += size
	}
	return string(out)
}

func hex4(b []byte) rune {
	v, _ := strconv.ParseUint(string(b), 16, 32)
	return rune(v)
}

// number reads a number per the JSON grammar and keeps its text.
func (d *decoder) number() (any, error) {
	start := d.pos
	if d.data[d.pos] == '-' {
		d.pos++
	}
	switch {
	case d.pos < len(d.data) && d.data[d.pos] == '0':
		d.pos++
	case d.pos < len(d.data) && d.data[d.pos] >= '1' && d.data[d.pos] <= '9':
		d.digits()
	default:
		return nil, d.unexpected("numeric literal")
	}
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		d.pos++
		if !d.digits() {
			return nil, d.unexpected("numeric literal")
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if !d.digits() {
			return nil, d.unexpected("numeric literal")
		}
	}
	return json.Number(d.data[start:d.pos]), nil
}

// digits moves past a run of digits and reports whether there was one.
func (d *decoder) digits() bool {
	start := d.pos
	for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
		d.pos++
	}
	return d.pos > start
}
