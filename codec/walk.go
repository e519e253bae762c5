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
	hints [][]uint8
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
	if w.shape != s {
		w.shape, w.hints = s, make([][]uint8, s.objects)
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

func (w *Walker) value(n *shapeNode, top bool) error {
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
		if !n.strChecks {
			return nil
		}
		if n.dateTime && (escaped || !dateTime(b[start:w.pos-1])) {
			w.unsure = true // the library decides
		}
		if n.enum != nil && (escaped || !n.enum[string(b[start:w.pos-1])]) {
			w.unsure = true
		}
		if n.minLen >= 0 || n.maxLen >= 0 {
			l := utf8.RuneCount(b[start : w.pos-1])
			if escaped || l < n.minLen || n.maxLen >= 0 && l > n.maxLen {
				w.unsure = true
			}
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
	isInt, err := w.number()
	if err != nil {
		return err
	}
	if isInt {
		w.want(n, kInt)
	} else {
		w.want(n, kNum) // 1.0 is an integer too: the library's call
	}
	return nil
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
	from := len(w.keys)
	err := w.members(n, top, from)
	w.keys = w.keys[:from]
	w.depth--
	return err
}

func (w *Walker) members(n *shapeNode, top bool, from int) error {
	b := w.b
	w.pos++ // {
	w.space()
	var seen uint64
	if w.pos < len(b) && b[w.pos] == '}' {
		w.pos++
		if n.reqMask != 0 {
			w.unsure = true
		}
		return nil
	}
	var hints []uint8
	if s := w.shape; len(n.props) > 0 && n.id < len(w.hints) && s != nil {
		if hints = w.hints[n.id]; hints == nil {
			hints = make([]uint8, len(n.props)+1)
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
			if seen&p.bit != 0 {
				w.unsure = true // a duplicate: the tree keeps the last
			}
			seen |= p.bit
			child = p.node
			last = int(p.i) + 1
		default:
			if n.noExtra || top {
				w.unsure = true
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

// dateTime accepts a strict subset of the library's date-time:
// YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM), seconds 00-59. false means
// "ask the library".
func dateTime(s []byte) bool {
	if len(s) < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':' {
		return false
	}
	two := func(i int) int {
		a, c := s[i]-'0', s[i+1]-'0'
		if a > 9 || c > 9 {
			return -1
		}
		return int(a)*10 + int(c)
	}
	y1, y2, mo, d, h, mi, sec := two(0), two(2), two(5), two(8), two(11), two(14), two(17)
	if y1 < 0 || y2 < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 {
		return false
	}
	y := y1*100 + y2
	days := [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[mo]
	if mo == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	if d > days {
		return false
	}
	r := s[19:]
	if r[0] == '.' {
		i := 1
		for i < len(r) && r[i] >= '0' && r[i] <= '9' {
			i++
		}
		if i == 1 {
			return false
		}
		r = r[i:]
	}
	switch {
	case len(r) == 1:
		return r[0] == 'Z' || r[0] == 'z'
	case len(r) == 6 && (r[0] == '+' || r[0] == '-') && r[3] == ':':
		s = r
		zh, zm := two(1), two(4)
		return zh >= 0 && zh <= 23 && zm >= 0 && zm <= 59
	}
	return false
}
