package codec

import (
	"fmt"
	"slices"
	"strings"
)

// A Page finds the records of a JSON response body without building a
// tree, and walks each against a Shape. It also keeps the raw text of the
// values outside the records its caller reads (a paginator's cursor, next
// URL or total: PageSpec.Envelope), from the same one pass.
type Page struct {
	shape     *Shape
	records   []string // records_path, split at dots; empty: the body is the array
	errorPath []string // error_path, split; nil: none
	// connection: the records are those of a GraphQL connection at
	// records: its edges' nodes, or its nodes.
	connection bool
	envelope   []envelopePath
	walker     Walker
	skip       Walker
	recs       []Record // the records of the scan in progress
	env        [][]byte // the envelope values of the scan in progress
	// never: the error path holds the records (or is deeper inside
	// them): its emptiness is the tree's to judge.
	never bool
}

// envelopePath is where Scan keeps one envelope path's value: the member
// key of the object depth keys down the records path (the rest of the
// path is read from the member's value), or, when the path encloses the
// records, nothing: it is an object whenever the records are found.
type envelopePath struct {
	depth     int
	key       string
	enclosing bool
}

// A Record is one record's place in a page.
type Record struct {
	Raw []byte
	// Splicable: certainly valid against the Shape, and Raw is what the
	// tree path would write (values; key order is the API's).
	Splicable bool
	// caps are where the raw values of the Shape's captured properties
	// lie in Raw, from and to ({0, 0}: absent): offsets, not slices, so
	// that a page's records are half the bytes and one pointer each
	// for the collector to scan, where five slices were.
	caps [MaxCaptures][2]int32
}

// NewRecord is the Record of raw, whose captured values (Walk's
// captures) are nil or subslices of raw.
func NewRecord(raw []byte, splicable bool, captures [MaxCaptures][]byte) Record {
	r := Record{Raw: raw, Splicable: splicable}
	for i, c := range captures {
		if c != nil {
			from := cap(raw) - cap(c) // both end where raw's array does
			r.caps[i] = [2]int32{int32(from), int32(from + len(c))}
		}
	}
	return r
}

// Capture is the raw value of the Shape's captured property slot, nil
// where the record has none: a subslice of Raw that ends where Raw's
// array does, as Walk's captures (streammap finds it in Raw by its
// capacity).
func (r *Record) Capture(slot int) []byte {
	c := r.caps[slot]
	if c[1] == 0 {
		return nil
	}
	return r.Raw[c[0]:c[1]]
}

// PageSpec says where a page holds its records and what else of it is
// read. Paths are dotted paths of object keys, as the stream's settings
// spell them.
type PageSpec struct {
	Records string // records_path, or a GraphQL connection_path
	Error   string // error_path; "errors" for a GraphQL connection
	// Connection: Records is a GraphQL connection, whose records are
	// its edges' nodes (edges[].node) or its nodes.
	Connection bool
	// Envelope lists the paths outside the records whose values are
	// kept (Page.Envelope, in this order).
	Envelope []string
}

// NewPage prepares the scan of a stream's pages. It fails for an
// envelope path the scan cannot keep: one into or equal to the records.
func NewPage(s *Shape, spec PageSpec) (*Page, error) {
	p := &Page{shape: s, connection: spec.Connection}
	if spec.Records != "" {
		p.records = strings.Split(spec.Records, ".")
	}
	if spec.Error != "" {
		p.errorPath = strings.Split(spec.Error, ".")
		p.never = true
		for i := range p.errorPath {
			if i >= len(p.records) || p.records[i] != p.errorPath[i] {
				p.never = false
				break
			}
		}
	}
	for _, path := range spec.Envelope {
		e, err := p.place(path)
		if err != nil {
			return nil, err
		}
		p.envelope = append(p.envelope, e)
	}
	return p, nil
}

// place finds where the scan meets path.
func (p *Page) place(path string) (envelopePath, error) {
	segs := strings.Split(path, ".")
	k := 0
	for k < len(segs) && k < len(p.records) && segs[k] == p.records[k] {
		k++
	}
	switch {
	case k == len(segs) && (k < len(p.records) || p.connection):
		// Encloses the records (a connection encloses its edges).
		return envelopePath{enclosing: true}, nil
	case k < len(p.records):
		return envelopePath{depth: k, key: segs[k]}, nil
	case p.connection && segs[k] != "edges" && segs[k] != "nodes":
		return envelopePath{depth: k, key: segs[k]}, nil
	}
	return envelopePath{}, fmt.Errorf("envelope path %q is the records or inside them", path)
}

// EnvelopeRest is what is left of envelope path i once its member is
// found: the path to read in the member's value ("" for the value
// itself); enclosing reports a path that encloses the records.
func (p *Page) EnvelopeRest(i int, path string) (rest string, enclosing bool) {
	e := p.envelope[i]
	if e.enclosing {
		return "", true
	}
	segs := strings.Split(path, ".")
	return strings.Join(segs[e.depth+1:], "."), false
}

// Scan checks the whole body and appends its records to recs[:0], and the
// raw values of the envelope's members to env[:0] (nil where absent; a
// repeated member's last, as a tree keeps it); both point into body. ok
// is false when the scan is not sure of the page — not JSON, an error at
// error_path, a path through an array or a null, a records value that is
// not an array, a key repeated on the way — and the caller decodes the
// page instead, whose answer (records or the error to report) is then the
// same as ever.
func (p *Page) Scan(recs []Record, env [][]byte, body []byte) (_ []Record, _ [][]byte, ok bool) {
	env = slices.Grow(env[:0], len(p.envelope))[:len(p.envelope)]
	clear(env)
	if p.never {
		return recs[:0], env, false
	}
	p.recs, p.env = recs[:0], env
	defer func() { p.recs, p.env = nil, nil }()
	pos := skipSpace(body, 0)
	found, pos, ok := p.scan(body, pos, 0)
	if !ok || !found || skipSpace(body, pos) != len(body) {
		return p.recs[:0], env, false
	}
	return p.recs, env, true
}

// keep keeps the value b at the member key, depth objects down the
// records path, for the envelope paths that read it.
func (p *Page) keep(depth int, key string, b []byte) {
	for i, e := range p.envelope {
		if !e.enclosing && e.depth == depth && e.key == key {
			p.env[i] = b
		}
	}
}

// scan walks the value at pos, depth segments down both paths; found
// reports the records array met.
func (p *Page) scan(b []byte, pos, depth int) (found bool, end int, ok bool) {
	if depth == len(p.records) {
		if p.connection {
			return p.object(b, pos, depth)
		}
		end, ok := p.array(b, pos, false)
		return ok, end, ok
	}
	return p.object(b, pos, depth)
}

// object walks the object at pos, depth segments down the records path
// (a connection's object when depth is the path's length).
func (p *Page) object(b []byte, pos, depth int) (found bool, end int, ok bool) {
	if pos >= len(b) || b[pos] != '{' {
		return false, pos, false
	}
	pos = skipSpace(b, pos+1)
	if pos < len(b) && b[pos] == '}' {
		return false, pos + 1, true
	}
	seen := false
	conn := depth == len(p.records) // inside the connection
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
		onRecords := !conn && key == p.records[depth]
		edges := conn && key == "edges"
		onError := !conn && len(p.errorPath) > depth && key == p.errorPath[depth] && p.onErrorPath(depth)
		switch {
		case (onRecords || conn && (edges || key == "nodes")) && seen:
			// A repeated key, or edges beside nodes: the tree's to
			// judge (it keeps the last; edges before nodes).
			return false, pos, false
		case onRecords:
			seen = true
			f, e, ok := p.scan(b, pos, depth+1)
			if !ok {
				return false, e, false
			}
			found, pos = found || f, e
		case conn && (edges || key == "nodes"):
			seen = true
			e, ok := p.array(b, pos, edges)
			if !ok {
				return false, e, false
			}
			found, pos = true, e
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
			p.keep(depth, key, b[start:pos])
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

// array walks the records array at pos; edges: its elements are a
// connection's edges, each holding its record at "node".
func (p *Page) array(b []byte, pos int, edges bool) (end int, ok bool) {
	if pos >= len(b) || b[pos] != '[' {
		return pos, false // null or not an array: the tree path's answer
	}
	pos = skipSpace(b, pos+1)
	if pos < len(b) && b[pos] == ']' {
		return pos + 1, true
	}
	for {
		if edges {
			pos, ok = p.edge(b, pos)
			if !ok {
				return pos, false
			}
		} else {
			if p.connection && pos < len(b) && b[pos] == 'n' {
				return pos, false // a null node: the tree drops it
			}
			end, splicable, caps, err := p.walker.Walk(b, pos, p.shape)
			if err != nil {
				return end, false
			}
			p.recs = append(p.recs, NewRecord(b[pos:end], splicable, caps))
			pos = end
		}
		pos = skipSpace(b, pos)
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

// edge walks one edge of a connection, {"node": record, …}: its node is
// the record. An edge without a node, with a null one, or with two, is
// the tree's to judge.
func (p *Page) edge(b []byte, pos int) (end int, ok bool) {
	if pos >= len(b) || b[pos] != '{' {
		return pos, false
	}
	pos = skipSpace(b, pos+1)
	node := false
	for pos < len(b) && b[pos] != '}' {
		if b[pos] != '"' {
			return pos, false
		}
		p.skip.b, p.skip.pos = b, pos
		escaped, err := p.skip.str()
		if err != nil || escaped {
			return pos, false
		}
		isNode := string(b[pos+1:p.skip.pos-1]) == "node"
		pos = skipSpace(b, p.skip.pos)
		if pos >= len(b) || b[pos] != ':' {
			return pos, false
		}
		pos = skipSpace(b, pos+1)
		switch {
		case isNode && (node || pos >= len(b) || b[pos] == 'n'):
			return pos, false
		case isNode:
			node = true
			end, splicable, caps, err := p.walker.Walk(b, pos, p.shape)
			if err != nil {
				return end, false
			}
			p.recs = append(p.recs, NewRecord(b[pos:end], splicable, caps))
			pos = end
		default:
			p.skip.b, p.skip.pos, p.skip.depth = b, pos, 0
			if err := p.skip.value(anyShape, false); err != nil {
				return pos, false
			}
			pos = p.skip.pos
		}
		pos = skipSpace(b, pos)
		if pos < len(b) && b[pos] == ',' {
			pos = skipSpace(b, pos+1)
			if pos < len(b) && b[pos] == '}' {
				return pos, false // a trailing comma
			}
		} else if pos < len(b) && b[pos] != '}' {
			return pos, false
		}
	}
	if pos >= len(b) || !node {
		return pos, false
	}
	return pos + 1, true
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
