package codec

import (
	"regexp"
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// A pattern is a schema's pattern, compiled once: Go's regexp, the
// schema library's engine too, or for the patterns most schemas have —
// literals and character classes, repeated or not, in sequence, ^ and $
// — a matcher that reads the string once without backtracking, which
// is exact when no repeated class shares a character with what may
// follow it (so taking as many as it can is always right). The tests
// hold the two to each other.
type pattern struct {
	re     *regexp.Regexp
	simple *simplePattern // nil: re
}

type simplePattern struct {
	begin, end bool
	items      []patItem
}

// A patItem is one character class, min to max times (max -1: any), or
// a literal: lit, once (a run of literal characters, compared whole).
type patItem struct {
	ranges   []rune    // lo, hi pairs, sorted
	ascii    [2]uint64 // the ASCII characters of ranges, a bit each
	min, max int
	lit      []byte
}

func compilePattern(p string) (*pattern, error) {
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, err
	}
	return &pattern{re: re, simple: simple(p)}, nil
}

func (p *pattern) match(s []byte) bool {
	if p.simple != nil && (p.simple.begin || len(s) <= maxSimpleInput) {
		return p.simple.match(s)
	}
	return p.re.Match(s)
}

// simple compiles p to a simplePattern; nil when it is not one.
func simple(p string) *simplePattern {
	re, err := syntax.Parse(p, syntax.Perl) // as regexp.Compile parses
	if err != nil {
		return nil
	}
	subs := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		subs = re.Sub
	}
	sp := &simplePattern{}
	for i, r := range subs {
		switch {
		case r.Op == syntax.OpBeginText && i == 0:
			sp.begin = true
		case r.Op == syntax.OpEndText && i == len(subs)-1:
			sp.end = true
		case r.Op == syntax.OpLiteral:
			if r.Flags&syntax.FoldCase != 0 {
				return nil
			}
			for _, c := range r.Rune {
				sp.items = append(sp.items, patItem{ranges: []rune{c, c}, min: 1, max: 1})
			}
		default:
			it, ok := item(r)
			if !ok {
				return nil
			}
			sp.items = append(sp.items, it)
		}
	}
	for i := range sp.items {
		it := &sp.items[i]
		for c := rune(0); c < utf8.RuneSelf; c++ {
			if it.inRanges(c) {
				it.ascii[c/64] |= 1 << uint(c%64)
			}
		}
	}
	// Greedy is exact when a repeated class shares no character with
	// any item that may come next (up to the first that must).
	for i, it := range sp.items {
		if it.min == it.max {
			continue
		}
		for _, next := range sp.items[i+1:] {
			if overlap(it.ranges, next.ranges) {
				return nil
			}
			if next.min > 0 {
				break
			}
		}
	}
	sp.items = literals(sp.items)
	return sp
}

// literals merges each run of items that match one character once into
// one literal item: a prefix such as ^/products/ is one compare.
func literals(items []patItem) []patItem {
	out := items[:0:0]
	for _, it := range items {
		if it.min != 1 || it.max != 1 || len(it.ranges) != 2 || it.ranges[0] != it.ranges[1] {
			out = append(out, it)
			continue
		}
		c := it.ranges[0]
		if n := len(out); n > 0 && out[n-1].lit != nil {
			out[n-1].lit = utf8.AppendRune(out[n-1].lit, c)
			continue
		}
		out = append(out, patItem{min: 1, max: 1, lit: utf8.AppendRune(nil, c)})
	}
	return out
}

// item reads one class, repeated or not.
func item(r *syntax.Regexp) (patItem, bool) {
	it := patItem{min: 1, max: 1}
	switch r.Op {
	case syntax.OpStar:
		it.min, it.max = 0, -1
	case syntax.OpPlus:
		it.min, it.max = 1, -1
	case syntax.OpQuest:
		it.min, it.max = 0, 1
	case syntax.OpRepeat:
		if r.Max > 1000 {
			return it, false
		}
		it.min, it.max = r.Min, r.Max
	default:
		ranges, ok := class(r)
		it.ranges = ranges
		return it, ok
	}
	ranges, ok := class(r.Sub[0])
	it.ranges = ranges
	return it, ok
}

// class is the characters one character of r matches.
func class(r *syntax.Regexp) ([]rune, bool) {
	switch r.Op {
	case syntax.OpLiteral:
		if len(r.Rune) != 1 || r.Flags&syntax.FoldCase != 0 {
			return nil, false
		}
		return []rune{r.Rune[0], r.Rune[0]}, true
	case syntax.OpCharClass:
		return r.Rune, len(r.Rune) > 0
	case syntax.OpAnyCharNotNL:
		return []rune{0, '\n' - 1, '\n' + 1, unicode.MaxRune}, true
	case syntax.OpAnyChar:
		return []rune{0, unicode.MaxRune}, true
	}
	return nil, false
}

func overlap(a, b []rune) bool {
	for i := 0; i+1 < len(a); i += 2 {
		for j := 0; j+1 < len(b); j += 2 {
			if a[i] <= b[j+1] && b[j] <= a[i+1] {
				return true
			}
		}
	}
	return false
}

func (it *patItem) has(c rune) bool {
	if c < utf8.RuneSelf {
		return it.ascii[c/64]&(1<<uint(c%64)) != 0
	}
	return it.inRanges(c)
}

func (it *patItem) inRanges(c rune) bool {
	for i := 0; i+1 < len(it.ranges); i += 2 {
		if c >= it.ranges[i] && c <= it.ranges[i+1] {
			return true
		}
	}
	return false
}

// maxSimpleInput bounds the strings an unanchored pattern is tried at
// every start of.
const maxSimpleInput = 1024

func (sp *simplePattern) match(s []byte) bool {
	if sp.begin {
		return sp.matchAt(s)
	}
	for start := 0; start <= len(s); {
		if sp.matchAt(s[start:]) {
			return true
		}
		if start == len(s) {
			break
		}
		_, size := utf8.DecodeRune(s[start:])
		start += size
	}
	return false
}

// matchAt matches the items at the start of s.
func (sp *simplePattern) matchAt(s []byte) bool {
	pos := 0
	for i := range sp.items {
		it := &sp.items[i]
		if it.lit != nil {
			if len(s)-pos < len(it.lit) || string(s[pos:pos+len(it.lit)]) != string(it.lit) {
				return false
			}
			pos += len(it.lit)
			continue
		}
		n := 0
		for it.max < 0 || n < it.max {
			if pos >= len(s) {
				break
			}
			c, size := rune(s[pos]), 1
			if c >= utf8.RuneSelf {
				c, size = utf8.DecodeRune(s[pos:])
			}
			if !it.has(c) {
				break
			}
			pos += size
			n++
		}
		if n < it.min {
			return false
		}
	}
	return !sp.end || pos == len(s)
}
