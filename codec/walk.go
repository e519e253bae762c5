package codec

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// A Walker checks one record's bytes against a Shape in a single pass,
// without building a tree: JSON syntax, UTF-8 and the schema. Its answer
// is "splicable" — certainly valid, and the bytes are what the tap would
// write — or "not sure", and a record it is not sure of takes the tree
// path (Decode, the schema library, re-encoding), which stays the
// authority. Not sure are: a schema the value may not meet, escaped or
// duplicate keys (the tree keeps the last), invalid UTF-8 and lone
// surrogates (the tree writes U+FFFD), a newline inside the record (it
// would break one-message-per-line), numbers with an exponent, a
// top-level property the schema does not list (drift wants its value),
// a record that is not an object.
//
// Its zero value is ready; it is not safe for concurrent use.
type Walker struct {
	b     []byte
	pos   int
	depth int
	// unsure: the record may be invalid or not splicable as is.
	unsure bool
	caps   [MaxCaptures][]byte
	// keys holds the unknown keys of the objects being walked, to find
	// duplicates among them.
	keys [][]byte
	// hints guess each key: per object node of shape, the property that
	// followed each property the last time (index+1; [0]: the first
	// key), as records of a page mostly repeat one key order. A key that
	// is its guess, byte for byte, needs no scan and no lookup.
	shape *Shape
	hints [][]uint16
	// wide holds, per object being walked of more than 64 properties,
	// the bits of the keys seen beyond the 64th.
	wide []uint64
}

// Walk checks the value that starts at b[pos] (no leading space) and
// returns where it ends. err is a *SyntaxError when the bytes are not
// JSON; otherwise splicable says whether the record is certainly valid
// and may be written as is, and captures holds the raw values of the
// Shape's captured properties (nil where absent).
func (w *Walker) Walk(b []byte, pos int, s *Shape) (end int, splicable bool, captures [MaxCaptures][]byte, err error) {
	w.b, w.pos, w.depth, w.unsure = b, pos, 0, false
	w.caps = [MaxCaptures][]byte{}
	w.keys = w.keys[:0]
	w.wide = w.wide[:0]
	if w.shape != s {
		w.shape, w.hints = s, make([][]uint16, s.objects)
	}
	if pos >= len(b) || b[pos] != '{' {
		w.unsure = true // the tap reports a record that is not an object
	}
	err = w.value(s.root, true)
	return w.pos, err == nil && !w.unsure, w.caps, err
}

func (w *Walker) unexpected(what string) error {
	if w.pos >= len(w.b) {
		return &SyntaxError{Offset: w.pos, Msg: "unexpected end of input in " + what}
	}
	return &SyntaxError{Offset: w.pos, Msg: "invalid character " + quoteByte(w.b[w.pos]) + " in " + what}
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f && c != '\'' {
		return "'" + string(rune(c)) + "'"
	}
	const hex = "0123456789abcdef"
	return `'\x` + string(hex[c>>4]) + string(hex[c&15]) + "'"
}

// space skips whitespace; a line break makes the record unsure, as it
// cannot be spliced into a line. Records rarely hold any: the first
// byte is checked inline, four times per member.
func (w *Walker) space() {
	if w.pos < len(w.b) && w.b[w.pos] > ' ' {
		return
	}
	w.spaces()
}

// skip is space for a caller that keeps its place, and w.b, in
// variables: it returns where the whitespace at pos ends.
func (w *Walker) skip(b []byte, pos int) int {
	if pos < len(b) && b[pos] > ' ' {
		return pos
	}
	w.pos = pos
	w.spaces()
	return w.pos
}

func (w *Walker) spaces() {
	for w.pos < len(w.b) {
		switch w.b[w.pos] {
		case ' ', '\t':
		case '\n', '\r':
			w.unsure = true
		default:
			return
		}
		w.pos++
	}
}

// maxUnknownKeys bounds the keys of one object compared for duplicates.
const maxUnknownKeys = 32

func (w *Walker) want(n *shapeNode, k kind) {
	if n.types&k == 0 {
		w.unsure = true
	}
}

// value walks the value at w.pos against n.
func (w *Walker) value(n *shapeNode, top bool) error {
	if n.lib == nil {
		return w.walkValue(n, top)
	}
	start := w.pos
	if err := w.walkValue(n, top); err != nil {
		return err
	}
	if !w.unsure && !(n.nullOK && w.b[start] == 'n') && !library(n.lib, w.b[start:w.pos]) {
		w.unsure = true
	}
	return nil
}

// library decodes a value's bytes and asks check of it.
func library(check func(any) bool, b []byte) bool {
	v, err := Decode(b)
	return err == nil && check(v)
}

func (w *Walker) walkValue(n *shapeNode, top bool) error {
	b := w.b
	if w.pos >= len(b) {
		return w.unexpected("value")
	}
	switch b[w.pos] {
	case '{':
		w.want(n, kObj)
		return w.object(n, top)
	case '[':
		w.want(n, kArr)
		items := n.items
		if items == nil {
			items = anyShape
		}
		return w.array(items)
	case '"':
		w.want(n, kStr)
		start := w.pos + 1
		escaped, err := w.str()
		if err != nil {
			return err
		}
		if n.strChecks && !w.unsure && !n.stringOK(b[start:w.pos-1], escaped) &&
			(n.fallback == nil || !library(n.fallback, b[start-1:w.pos])) {
			w.unsure = true // the library decides
		}
		return nil
	case 't':
		w.want(n, kBool)
		return w.literal("true")
	case 'f':
		w.want(n, kBool)
		return w.literal("false")
	case 'n':
		w.want(n, kNull)
		return w.literal("null")
	}
	start := w.pos
	isInt, err := w.number()
	if err != nil {
		return err
	}
	if isInt {
		w.want(n, kInt)
	} else {
		w.want(n, kNum) // 1.0 is an integer too: the library's call
	}
	if n.numChecks && !w.unsure && !n.numberOK(b[start:w.pos]) &&
		(n.numFallback == nil || !library(n.numFallback, b[start:w.pos])) {
		w.unsure = true
	}
	return nil
}

// stringOK reports whether the string s (its bytes between the quotes)
// certainly meets n's string keywords; an escaped one is the library's.
func (n *shapeNode) stringOK(s []byte, escaped bool) bool {
	if escaped {
		return n.format == fNone && n.enum == nil && n.minLen < 0 && n.maxLen < 0 && n.pattern == nil
	}
	if n.format != fNone && !n.format.valid(s) {
		return false
	}
	if n.enum != nil && !n.inEnum(s) {
		return false
	}
	if n.minLen >= 0 || n.maxLen >= 0 {
		// len(s) bytes hold len(s)/4 (rounded up) to len(s) code
		// points: most strings need no count.
		if lo, hi := (len(s)+3)/4, len(s); lo < n.minLen || n.maxLen >= 0 && hi > n.maxLen {
			l := utf8.RuneCount(s)
			if l < n.minLen || n.maxLen >= 0 && l > n.maxLen {
				return false
			}
		}
	}
	// The library's pattern is Go's regexp too: on the same string, the
	// same answer.
	return n.pattern == nil || n.pattern.match(s)
}

// inEnum reports whether the string s is one of n's enum: a short enum
// is compared string by string, cheaper than hashing.
func (n *shapeNode) inEnum(s []byte) bool {
	if n.enumList == nil {
		return n.enum[string(s)]
	}
	for _, e := range n.enumList {
		if len(e) == len(s) && e == string(s) {
			return true
		}
	}
	return false
}

func (w *Walker) literal(word string) error {
	if len(w.b)-w.pos < len(word) || string(w.b[w.pos:w.pos+len(word)]) != word {
		return w.unexpected("literal " + word)
	}
	w.pos += len(word)
	return nil
}

func (w *Walker) object(n *shapeNode, top bool) error {
	if w.depth++; w.depth > MaxDepth {
		return &SyntaxError{Offset: w.pos, Msg: "nested too deep"}
	}
	from, wfrom := len(w.keys), len(w.wide)
	var wide []uint64
	if n.reqWide != nil {
		for range n.reqWide {
			w.wide = append(w.wide, 0)
		}
		wide = w.wide[wfrom:]
	}
	err := w.members(n, top, from, wide)
	w.keys, w.wide = w.keys[:from], w.wide[:wfrom]
	w.depth--
	return err
}

// members walks an object's members; wide holds the bits of its
// properties beyond the 64th.
func (w *Walker) members(n *shapeNode, top bool, from int, wide []uint64) error {
	b := w.b
	w.pos++ // {
	w.space()
	var seen uint64
	if w.pos < len(b) && b[w.pos] == '}' {
		w.pos++
		if len(n.required) > 0 {
			w.unsure = true
		}
		return nil
	}
	var hints []uint16
	if s := w.shape; len(n.props) > 0 && n.id < len(w.hints) && s != nil {
		if hints = w.hints[n.id]; hints == nil {
			hints = make([]uint16, len(n.props)+1)
			w.hints[n.id] = hints
		}
	}
	last := 0 // the hint slot of the key before: 0 for the first
	// The loop keeps its place in pos, not w.pos, and sets w.pos for
	// what it calls: a member costs a few dozen instructions, and a
	// field written and read back at each step showed.
	pos := w.pos
	for {
		if pos >= len(b) || b[pos] != '"' {
			w.pos = pos
			return w.unexpected("object key")
		}
		var p *shapeProp
		var key []byte
		known, escaped := false, false
		if hints != nil {
			if h := hints[last]; h != 0 {
				// The guess, its quotes and the colon in one compare.
				q := &n.props[h-1]
				if q.plain && q.at(b, pos) {
					p, known, pos = q, true, pos+len(q.member)
				}
			}
		}
		if p == nil {
			w.pos = pos
			kstart := pos + 1
			var err error
			if escaped, err = w.str(); err != nil {
				return err
			}
			key = b[kstart : w.pos-1]
			if p, known = n.find(key); known && hints != nil {
				hints[last] = p.i + 1
			}
			w.space()
			if w.pos >= len(b) || b[w.pos] != ':' {
				return w.unexpected("object after key")
			}
			pos = w.pos + 1
		}
		pos = w.skip(b, pos)
		child := anyShape
		switch {
		case escaped:
			w.unsure = true // the tree compares it unescaped
		case known:
			if p.bit != 0 {
				if seen&p.bit != 0 {
					w.unsure = true // a duplicate: the tree keeps the last
				}
				seen |= p.bit
			} else {
				j := int(p.i) - 64
				bit := uint64(1) << uint(j%64)
				if wide[j/64]&bit != 0 {
					w.unsure = true
				}
				wide[j/64] |= bit
			}
			child = p.node
			last = int(p.i) + 1
		default:
			if n.noExtra || top {
				w.unsure = true
			}
			if n.extra != nil {
				child = n.extra
			}
			if len(w.keys)-from >= maxUnknownKeys {
				w.unsure = true // too many to compare cheaply
				break
			}
			for _, k := range w.keys[from:] {
				if string(k) == string(key) {
					w.unsure = true
				}
			}
			w.keys = append(w.keys, key)
		}
		start := pos
		w.pos = pos
		// Strings and numbers, most values, without value's switch.
		var err error
		switch {
		case pos >= len(b):
			err = w.value(child, false)
		case b[pos] == '"' && !child.strChecks:
			w.want(child, kStr)
			_, err = w.str()
		case b[pos] == '"' && child.lib == nil:
			// A string with keywords, without value's switch.
			w.want(child, kStr)
			var escaped bool
			if escaped, err = w.str(); err == nil && !w.unsure && !child.stringOK(b[pos+1:w.pos-1], escaped) &&
				(child.fallback == nil || !library(child.fallback, b[pos:w.pos])) {
				w.unsure = true // the library decides
			}
		case child.numChecks && child.lib == nil && b[pos]-'1' <= 8:
			// A positive integer with keywords: its value read with
			// its digits, here.
			q, v := pos, int64(0)
			for q < len(b) && b[q]-'0' <= 9 && q-pos < 18 {
				v = v*10 + int64(b[q]-'0')
				q++
			}
			if q < len(b) && (b[q]-'0' <= 9 || b[q] == '.' || b[q]|0x20 == 'e') {
				err = w.value(child, false) // long, or not whole
				break
			}
			w.want(child, kInt)
			w.pos = q
			if !w.unsure && !child.intOK(v, b[pos:q]) &&
				(child.numFallback == nil || !library(child.numFallback, b[pos:q])) {
				w.unsure = true
			}
		case child.numChecks:
			err = w.value(child, false)
		case b[pos]-'1' <= 8:
			// Most numbers are positive integers: their digits, here.
			q := pos + 1
			for q < len(b) && b[q]-'0' <= 9 {
				q++
			}
			if q < len(b) && (b[q] == '.' || b[q]|0x20 == 'e') {
				err = w.anyNumber(child)
			} else {
				w.want(child, kInt)
				w.pos = q
			}
		case b[pos] == '-' || b[pos] == '0':
			err = w.anyNumber(child)
		default:
			err = w.value(child, false)
		}
		if err != nil {
			return err
		}
		pos = w.pos
		if top && child.capture >= 0 {
			w.caps[child.capture] = b[start:pos]
		}
		if pos = w.skip(b, pos); pos >= len(b) {
			w.pos = pos
			return w.unexpected("object")
		}
		switch b[pos] {
		case ',':
			pos = w.skip(b, pos+1)
		case '}':
			w.pos = pos + 1
			if seen&n.reqMask != n.reqMask {
				w.unsure = true
			}
			for i, req := range n.reqWide {
				if wide[i]&req != req {
					w.unsure = true
				}
			}
			return nil
		default:
			w.pos = pos
			return w.unexpected("object after value")
		}
	}
}

// anyNumber walks the number at w.pos against n.
func (w *Walker) anyNumber(n *shapeNode) error {
	isInt, err := w.number()
	if isInt {
		w.want(n, kInt)
	} else {
		w.want(n, kNum) // 1.0 is an integer too: the library's call
	}
	return err
}

func (w *Walker) array(items *shapeNode) error {
	if w.depth++; w.depth > MaxDepth {
		return &SyntaxError{Offset: w.pos, Msg: "nested too deep"}
	}
	err := w.elements(items)
	w.depth--
	return err
}

func (w *Walker) elements(items *shapeNode) error {
	b := w.b
	w.pos++ // [
	w.space()
	if w.pos < len(b) && b[w.pos] == ']' {
		w.pos++
		return nil
	}
	for {
		if err := w.value(items, false); err != nil {
			return err
		}
		w.space()
		if w.pos >= len(b) {
			return w.unexpected("array")
		}
		switch b[w.pos] {
		case ',':
			w.pos++
			w.space()
		case ']':
			w.pos++
			return nil
		default:
			return w.unexpected("array after value")
		}
	}
}

// plain[c]: c needs no attention inside a string.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// str moves past the string at w.pos; escaped reports any escape.
func (w *Walker) str() (escaped bool, err error) {
	b := w.b
	p := w.pos + 1
	for {
		// Eight bytes at a time while none is a quote, a backslash, a
		// control character or non-ASCII: strings are most of a record.
		for p+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[p:])
			q := x ^ 0x2222222222222222 // a zero byte where '"'
			s := x ^ 0x5c5c5c5c5c5c5c5c // a zero byte where '\\'
			m := (((q - ones) &^ q) | ((s - ones) &^ s) | (x - 0x2020202020202020) | x) & highs
			if m != 0 {
				p += bits.TrailingZeros64(m) >> 3 // the bytes before the first flagged one are plain
				break
			}
			p += 8
		}
		for p < len(b) && plain[b[p]] {
			p++
		}
		if p >= len(b) {
			w.pos = p
			return escaped, w.unexpected("string literal")
		}
		switch c := b[p]; {
		case c == '"':
			w.pos = p + 1
			return escaped, nil
		case c == '\\':
			escaped = true
			if p+1 >= len(b) {
				w.pos = p + 1
				return escaped, w.unexpected("string escape")
			}
			switch b[p+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p += 2
			case 'u':
				for i := p + 2; i < p+6; i++ {
					if i >= len(b) || !isHex(b[i]) {
						w.pos = i
						return escaped, w.unexpected(`\u escape`)
					}
				}
				r := hex4(b[p+2 : p+6])
				p += 6
				if r >= 0xD800 && r < 0xDC00 && p+6 <= len(b) && b[p] == '\\' && b[p+1] == 'u' &&
					isHex(b[p+2]) && isHex(b[p+3]) && isHex(b[p+4]) && isHex(b[p+5]) {
					if r2 := hex4(b[p+2 : p+6]); r2 >= 0xDC00 && r2 < 0xE000 {
						p += 6 // a surrogate pair
						continue
					}
				}
				if r >= 0xD800 && r < 0xE000 {
					w.unsure = true // a lone surrogate: the tree writes U+FFFD
				}
			default:
				w.pos = p + 1
				return escaped, w.unexpected("string escape")
			}
		case c < 0x20:
			w.pos = p
			return escaped, w.unexpected("string literal")
		default:
			r, size := utf8.DecodeRune(b[p:])
			if r == utf8.RuneError && size == 1 {
				w.unsure = true // invalid UTF-8: the tree writes U+FFFD
			}
			p += size
		}
	}
}

// number moves past a number; isInt: no fraction, no exponent. An
// exponent makes the record unsure: a huge one is beyond what the
// library can read, which the tree path reports.
func (w *Walker) number() (isInt bool, err error) {
	b := w.b
	p := w.pos
	if p < len(b) && b[p] == '-' {
		p++
	}
	switch {
	case p < len(b) && b[p] == '0':
		p++
	case p < len(b) && b[p] >= '1' && b[p] <= '9':
		for p++; p < len(b) && b[p] >= '0' && b[p] <= '9'; p++ {
		}
	default:
		w.pos = p
		return false, w.unexpected("numeric literal")
	}
	isInt = true
	if p < len(b) && b[p] == '.' {
		isInt = false
		p++
		s := p
		for p < len(b) && b[p] >= '0' && b[p] <= '9' {
			p++
		}
		if p == s {
			w.pos = p
			return false, w.unexpected("numeric literal")
		}
	}
	if p < len(b) && (b[p] == 'e' || b[p] == 'E') {
		isInt = false
		w.unsure = true
		p++
		if p < len(b) && (b[p] == '+' || b[p] == '-') {
			p++
		}
		s := p
		for p < len(b) && b[p] >= '0' && b[p] <= '9' {
			p++
		}
		if p == s {
			w.pos = p
			return false, w.unexpected("numeric literal")
		}
	}
	w.pos = p
	return isInt, nil
}
