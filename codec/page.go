package codec

import "strings"

// A Page finds the records of a JSON response body without building a
// tree, and walks each against a Shape.
type Page struct {
	shape     *Shape
	records   []string // records_path, split at dots; empty: the body is the array
	errorPath []string // error_path, split; nil: none
	walker    Walker
	skip      Walker
	recs      []Record // the records of the scan in progress
	// never: the error path holds the records (or is deeper inside
	// them): its emptiness is the tree's to judge.
	never bool
}

// A Record is one record's place in a page.
type Record struct {
	Raw []byte
	// Splicable: certainly valid against the Shape, and Raw is what the
	// tree path would write (values; key order is the API's).
	Splicable bool
	// Captures are the raw values of the Shape's captured properties,
	// nil where absent.
	Captures [MaxCaptures][]byte
}

// NewPage prepares the scan of a stream's pages. recordsPath and
// errorPath are dotted paths of object keys, as the stream's settings
// spell them.
func NewPage(s *Shape, recordsPath, errorPath string) *Page {
	p := &Page{shape: s}
	if recordsPath != "" {
		p.records = strings.Split(recordsPath, ".")
	}
	if errorPath != "" {
		p.errorPath = strings.Split(errorPath, ".")
		p.never = true
		for i := range p.errorPath {
			if i >= len(p.records) || p.records[i] != p.errorPath[i] {
				p.never = false
				break
			}
		}
	}
	return p
}

// Scan checks the whole body and appends its records to recs[:0]; they
// point into body. ok is false when the scan is not sure of the page — not
// JSON, an error at error_path, a path through an array or a null, a
// records value that is not an array, a key repeated on the way — and
// the caller decodes the page instead, whose answer (records or the
// error to report) is then the same as ever.
func (p *Page) Scan(recs []Record, body []byte) (_ []Record, ok bool) {
	if p.never {
		return recs[:0], false
	}
	p.recs = recs[:0]
	defer func() { p.recs = nil }()
	pos := skipSpace(body, 0)
	found, pos, ok := p.scan(body, pos, 0)
	if !ok || !found || skipSpace(body, pos) != len(body) {
		return p.recs[:0], false
	}
	return p.recs, true
}

// scan walks the value at pos, depth segments down both paths; found
// reports the records array met.
func (p *Page) scan(b []byte, pos, depth int) (found bool, end int, ok bool) {
	if depth == len(p.records) {
		end, ok := p.array(b, pos)
		return ok, end, ok
	}
	if pos >= len(b) || b[pos] != '{' {
		return false, pos, false
	}
	pos = skipSpace(b, pos+1)
	if pos < len(b) && b[pos] == '}' {
		return false, pos + 1, true
	}
	seen := false
	for {
		if pos >= len(b) || b[pos] != '"' {
			return false, pos, false
		}
		p.skip.b, p.skip.pos = b, pos
		escaped, err := p.skip.str()
		if err != nil || escaped {
			return false, pos, false
		}
		key := string(b[pos+1 : p.skip.pos-1])
		pos = skipSpace(b, p.skip.pos)
		if pos >= len(b) || b[pos] != ':' {
			return false, pos, false
		}
		pos = skipSpace(b, pos+1)
		onRecords := key == p.records[depth]
		onError := len(p.errorPath) > depth && key == p.errorPath[depth] && p.onErrorPath(depth)
		switch {
		case onRecords && seen:
			return false, pos, false // a repeated key: the tree keeps the last
		case onRecords:
			seen = true
			f, e, ok := p.scan(b, pos, depth+1)
			if !ok {
				return false, e, false
			}
			found, pos = found || f, e
		default:
			start := pos
			p.skip.b, p.skip.pos, p.skip.depth = b, pos, 0
			if err := p.skip.value(anyShape, false); err != nil {
				return false, pos, false
			}
			pos = p.skip.pos
			if onError && (depth+1 < len(p.errorPath) || !emptyValue(b[start:pos])) {
				return false, pos, false // the tree path reports the error
			}
		}
		pos = skipSpace(b, pos)
		if pos >= len(b) {
			return false, pos, false
		}
		switch b[pos] {
		case ',':
			pos = skipSpace(b, pos+1)
		case '}':
			return found, pos + 1, true
		default:
			return false, pos, false
		}
	}
}

// onErrorPath: the keys so far are the error path's as well.
func (p *Page) onErrorPath(depth int) bool {
	for i := 0; i < depth; i++ {
		if p.records[i] != p.errorPath[i] {
			return false
		}
	}
	return true
}

// array walks the records array at pos.
func (p *Page) array(b []byte, pos int) (end int, ok bool) {
	if pos >= len(b) || b[pos] != '[' {
		return pos, false // null or not an array: the tree path's answer
	}
	pos = skipSpace(b, pos+1)
	if pos < len(b) && b[pos] == ']' {
		return pos + 1, true
	}
	for {
		end, splicable, caps, err := p.walker.Walk(b, pos, p.shape)
		if err != nil {
			return end, false
		}
		p.recs = append(p.recs, Record{Raw: b[pos:end], Splicable: splicable, Captures: caps})
		pos = skipSpace(b, end)
		if pos >= len(b) {
			return pos, false
		}
		switch b[pos] {
		case ',':
			pos = skipSpace(b, pos+1)
		case ']':
			return pos + 1, true
		default:
			return pos, false
		}
	}
}

func skipSpace(b []byte, p int) int {
	for p < len(b) && (b[p] == ' ' || b[p] == '\t' || b[p] == '\n' || b[p] == '\r') {
		p++
	}
	return p
}

// emptyValue: the error_path values that mean "no error" (null, false,
// "", [] and {}), as the tree path reads them.
func emptyValue(v []byte) bool {
	switch string(v) {
	case "null", "false", `""`, "[]", "{}":
		return true
	}
	return false
}
