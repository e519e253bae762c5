package codec

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// A bound is one of minimum, maximum, exclusiveMinimum and
// exclusiveMaximum, as an exact decimal: the library compares a number
// with it exactly (math/big), and so does the walker, on the number's
// text.
type bound struct {
	d     decimal
	upper bool // a maximum: the value is at most d
	excl  bool // and not d itself
	// small: d is a whole number of at most 18 digits, i.
	small bool
	i     int64
}

// newBound is a bound of value d.
func newBound(d decimal, upper, excl bool) bound {
	b := bound{d: d, upper: upper, excl: excl}
	if len(d.frac) == 0 && len(d.int) <= 18 {
		b.small = true
		for _, c := range d.int {
			b.i = b.i*10 + int64(c-'0')
		}
		if d.neg {
			b.i = -b.i
		}
	}
	return b
}

// A decimal is a number's exact value: its digits before and after the
// point, without leading or trailing zeros (zero: both empty, not neg).
type decimal struct {
	neg       bool
	int, frac []byte
}

// maxExponent bounds the exponent of a schema's bound the walker reads:
// beyond it the library compares.
const maxExponent = 400

// compileBounds reads the node's bounds from m and returns the keywords
// it cannot read exactly, for the library. A draft 4 exclusiveMinimum of
// true makes minimum exclusive, as the library reads it whatever the
// draft; a keyword left to the library takes that flag along.
func (n *shapeNode) compileBounds(m map[string]any) (left []string) {
	for _, side := range [2][2]string{{"minimum", "exclusiveMinimum"}, {"maximum", "exclusiveMaximum"}} {
		upper := side[0] == "maximum"
		plain, hasPlain := m[side[0]]
		excl, hasExcl := m[side[1]]
		flag, isFlag := excl.(bool)
		if hasPlain {
			if d, ok := schemaDecimal(plain); ok {
				n.bounds = append(n.bounds, newBound(d, upper, isFlag && flag))
			} else {
				left = append(left, side[0])
				if isFlag {
					left = append(left, side[1])
				}
			}
		}
		if hasExcl && !isFlag {
			if d, ok := schemaDecimal(excl); ok {
				n.bounds = append(n.bounds, newBound(d, upper, true))
			} else {
				left = append(left, side[1])
			}
		}
	}
	return left
}

// schemaDecimal reads a schema's number: json.Number's text, or a
// float64 as encoding/json writes it (the text the library reads).
func schemaDecimal(v any) (decimal, bool) {
	switch x := v.(type) {
	case json.Number:
		return parseDecimal(string(x))
	case float64:
		return parseDecimal(strconv.FormatFloat(x, 'g', -1, 64))
	}
	return decimal{}, false
}

// parseDecimal reads a JSON number, exponent included.
func parseDecimal(s string) (decimal, bool) {
	var d decimal
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > maxExponent || e < -maxExponent || !isJSONNumber(s) {
			return d, false
		}
		exp = e
	}
	if !isJSONNumber(mant) {
		return d, false
	}
	if mant[0] == '-' {
		d.neg, mant = true, mant[1:]
	}
	ip, fp, _ := strings.Cut(mant, ".")
	digits := ip + fp
	point := len(ip) + exp
	switch {
	case point <= 0:
		d.frac = []byte(strings.Repeat("0", -point) + digits)
	case point >= len(digits):
		d.int = []byte(digits + strings.Repeat("0", point-len(digits)))
	default:
		d.int, d.frac = []byte(digits[:point]), []byte(digits[point:])
	}
	d.int = bytes.TrimLeft(d.int, "0")
	d.frac = bytes.TrimRight(d.frac, "0")
	if len(d.int) == 0 && len(d.frac) == 0 {
		d.neg = false
	}
	return d, true
}

// isJSONNumber reports whether s is a number in JSON's syntax.
func isJSONNumber(s string) bool {
	var w Walker
	w.b = []byte(s)
	_, err := w.number()
	return err == nil && w.pos == len(s)
}

// splitNumber is the exact value of a number's text without exponent.
func splitNumber(b []byte) (neg bool, ip, fp []byte) {
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	ip = b
	if dot := bytes.IndexByte(b, '.'); dot >= 0 {
		ip, fp = b[:dot], b[dot+1:]
	}
	for len(ip) > 0 && ip[0] == '0' {
		ip = ip[1:]
	}
	for len(fp) > 0 && fp[len(fp)-1] == '0' {
		fp = fp[:len(fp)-1]
	}
	if len(ip) == 0 && len(fp) == 0 {
		neg = false
	}
	return neg, ip, fp
}

// compare orders the number neg, ip, fp (splitNumber's) and d.
func (d *decimal) compare(neg bool, ip, fp []byte) int {
	if neg != d.neg {
		if neg {
			return -1
		}
		return 1
	}
	c := len(ip) - len(d.int)
	if c == 0 {
		c = bytes.Compare(ip, d.int)
	}
	if c == 0 {
		c = bytes.Compare(fp, d.frac) // no trailing zeros: digit by digit
	}
	switch {
	case c > 0 && neg, c < 0 && !neg:
		return -1
	case c == 0:
		return 0
	}
	return 1
}

// inBounds reports whether the number b (as the walker passed it) is
// certainly within n's bounds; a number with an exponent is not.
func (n *shapeNode) inBounds(b []byte) bool {
	// Most numbers are whole and short: compared as int64.
	whole, v := len(b) > 0 && len(b) <= 18, int64(0)
	for i, c := range b {
		switch {
		case c-'0' <= 9:
			v = v*10 + int64(c-'0')
		case c == '-' && i == 0:
		default:
			whole = false
		}
	}
	if whole && b[0] == '-' {
		v = -v
	}
	if !whole {
		return n.inBoundsExact(b)
	}
	return n.intInBounds(v, b)
}

// intInBounds is inBounds of the whole number v, b its text.
func (n *shapeNode) intInBounds(v int64, b []byte) bool {
	for i := range n.bounds {
		bd := &n.bounds[i]
		if !bd.small {
			return n.inBoundsExact(b)
		}
		c := v - bd.i
		if bd.upper {
			c = -c
		}
		if c < 0 || c == 0 && bd.excl {
			return false
		}
	}
	return true
}

// inBoundsExact is inBounds on the number's digits.
func (n *shapeNode) inBoundsExact(b []byte) bool {
	for _, c := range b {
		if c == 'e' || c == 'E' {
			return false
		}
	}
	neg, ip, fp := splitNumber(b)
	for i := range n.bounds {
		bd := &n.bounds[i]
		c := bd.d.compare(neg, ip, fp)
		if bd.upper {
			c = -c
		}
		if c < 0 || c == 0 && bd.excl {
			return false
		}
	}
	return true
}

// multiple is a multipleOf the walker checks: a power of ten, 10^e (a
// number of at most -e decimals, or a whole one ending in e zeros), or
// a whole number of at most 18 digits that a short whole value is
// divided by.
type multiple struct {
	pow bool
	e   int
	i   int64 // !pow
}

// schemaMultiple reads multipleOf; false: the library's.
func schemaMultiple(v any) (*multiple, bool) {
	d, ok := schemaDecimal(v)
	if !ok || d.neg {
		return nil, false
	}
	digits := string(d.int) + string(d.frac)
	e := -len(d.frac)
	for len(digits) > 0 && digits[0] == '0' {
		digits = digits[1:]
	}
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits, e = digits[:len(digits)-1], e+1
	}
	switch {
	case digits == "1":
		return &multiple{pow: true, e: e}, true
	case e >= 0 && len(digits)+e <= 18:
		b := newBound(d, false, false)
		return &multiple{i: b.i}, b.small && b.i > 0
	}
	return nil, false
}

// of reports whether the number b (no exponent) is certainly a multiple.
func (m *multiple) of(b []byte) bool {
	_, ip, fp := splitNumber(b)
	if m.pow {
		if m.e <= 0 {
			return len(fp) <= -m.e
		}
		if len(fp) > 0 {
			return false
		}
		z := 0
		for z < len(ip) && ip[len(ip)-1-z] == '0' {
			z++
		}
		return len(ip) == 0 || z >= m.e
	}
	if len(fp) > 0 || len(ip) > 18 {
		return false
	}
	var v int64
	for _, c := range ip {
		v = v*10 + int64(c-'0')
	}
	return v%m.i == 0
}

// intOK is numberOK of the whole number v of at most 18 digits, b its
// text.
func (n *shapeNode) intOK(v int64, b []byte) bool {
	return (len(n.bounds) == 0 || n.intInBounds(v, b)) && (n.multiple == nil || n.multiple.of(b))
}

// numberOK reports whether the number b certainly meets n's number
// keywords.
func (n *shapeNode) numberOK(b []byte) bool {
	return (len(n.bounds) == 0 || n.inBounds(b)) && (n.multiple == nil || n.multiple.of(b))
}
