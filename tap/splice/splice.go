// Package splice reads a stream's JSON pages, and the lines of a jsonl
// body or the rows of a csv body read as it arrives (as their records'
// JSON texts), as spliced records.
//
// A record the stream's compiled codec.Shape is certain of is written from
// the page's bytes as they came, into the RECORD line, without a tree, a
// library validation or a re-encoding; every other record of the page
// takes the tree path (decode, validate, encode), so the output holds the
// same records, with their keys in the API's order.
//
// A stream splices only when nothing needs a record's tree: JSON pages
// (or a jsonl or csv body read as it arrives, a record a line or row), a parent key to
// inject only without maps (inject.go), stream maps of named properties
// only (streammap.NewSplicer), a primary key (the walk's stale-page guard
// and offset dedupe read only it), and a paginator that reads only
// record fields and values of the body outside the records
// (streams.Definition.PageReads); the run says what it does with the
// records (Stream: a stream written or read only for its children,
// deselected properties). The primary key, the replication
// key, the record fields the paginator reads and the keys the stream's
// children read are captured from the record's bytes as the walker
// passes them, and the body's values the paginator reads from the page
// scan's one pass (codec.PageSpec.Envelope).
//
// A Reader serves one walk of a stream; each page fetched takes a Page
// from it, which holds the body buffer, the records found in it and their
// captured keys until the run has written the page and releases it. Pages
// are reused: a body and its records were most of what a page allocated.
package splice

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streammap"
	"github.com/tap-dev/tap/streams"
)

// A Stream is what decides whether a stream's pages splice: its
// definition and schema, and what the run does with its records.
type Stream struct {
	Def    *streams.Definition
	Schema map[string]any
	// Written: the run writes the stream's records (it is selected).
	Written bool
	// Children are the top-level properties of the stream's records its
	// children's walks read (each child's parent.key); they are captured
	// as the primary key is, and a stream not written splices for them.
	Children []string
	// Drops: the catalog deselected properties of the stream.
	Drops bool
	// Maps are the transformers of the stream maps the records are
	// written through, one per selected output; nil: no maps.
	Maps []*streammap.Transformer
	// Library checks the schema's keywords outside the walker's subset,
	// value by value (records.Validator.Library); nil: a schema with
	// such a keyword does not splice.
	Library codec.Library
}

// feedCapture is what a feed reads of a message before it writes it as
// a record: its seq and its type (tap/feed).
func feedCapture(d *streams.Definition) []string {
	if f := d.Feed; f != nil {
		return []string{f.SeqPath, f.TypePath}
	}
	return nil
}

// trees reports whether the run needs every record's tree: deselected
// properties to drop without maps that drop them, a stream neither
// written nor read for its children.
func (s Stream) trees() bool {
	if !s.Written {
		return len(s.Children) == 0
	}
	return s.Drops && s.Maps == nil
}

// A Reader reads the pages of one walk of a stream.
type Reader struct {
	page    *codec.Page
	shape   *codec.Shape
	capture []string // the captured keys, the Shape's first slots
	// envelope lists the paths of the body the paginator reads, in
	// codec.PageSpec.Envelope's order.
	envelope []string
	maps     *streammap.Splicer // nil: no stream maps
	inject   *injection         // a child's parent.as (inject.go); nil: none

	mu   sync.Mutex // the fetch takes pages, the run releases them
	free []*Page
	// bodies are the body buffers no page holds, held the bytes of
	// those pages hold; freed says a page gave its buffer back.
	bodies [][]byte
	held   int
	freed  chan struct{}
	wait   time.Duration // aheadWait
}

// New returns the Reader of s's pages, or nil when its records cannot
// splice.
func New(s Stream) *Reader {
	d := s.Def
	// A soft-deleted record gains a property, and a reconciled stream's
	// keys are noted record by record: both are read as trees.
	// A jsonl body read as it arrives (an export, a report's files), a
	// record a line, splices line by line (Page.ScanLines).
	// So does a csv body, its rows given as their records' JSON texts,
	// and a page of either of a paginated stream.
	lines := d.Async == nil && linesOf(d.BodyFormat(), d) || d.Async != nil && linesOf(d.Async.DownloadFormat(d), d)
	// A feed's messages are records a message each, scanned as lines
	// (Page.ScanLines): it needs no primary key (the walk's guard and
	// dedupe read it; a feed has its seq), nor a paginator.
	feed := d.Feed != nil
	if s.trees() || d.BodyFormat() != streams.FormatJSON && !lines || len(d.PrimaryKey) == 0 && !feed ||
		d.SoftDelete != nil || d.Reconcile != nil {
		return nil
	}
	schema, inj, ok := injected(s)
	if !ok {
		return nil
	}
	var capture []string
	for _, k := range d.PrimaryKey {
		if inj == nil || k != inj.name { // the injected key is the page's
			capture = appendNew(capture, k)
		}
	}
	reads, ok := d.PageReads()
	if feed {
		reads, ok = streams.PageReads{Fields: feedCapture(d)}, true
	}
	if !ok || d.Pagination.Type == "" && !lines && !feed {
		// A stream that names no pagination has always been read through
		// the tree: splicing it would change the bytes of its records.
		// Otherwise the paginator reads the body's tree.
		return nil
	}
	for _, f := range reads.Fields {
		if f == "" && !feed {
			return nil // an option unset: the stream does not check
		}
		capture = appendNew(capture, f) // a feed's unset type_path: none
	}
	capture = appendNew(capture, d.ReplicationKey)
	if inj != nil && slices.Contains(capture, inj.name) {
		// The paginator or the bookmark would read the record before
		// the tree path injects the key: the tree's.
		return nil
	}
	for _, k := range s.Children {
		if inj == nil || k != inj.name {
			capture = appendNew(capture, k)
		}
	}
	for _, c := range capture {
		if c == "" || strings.IndexByte(c, '.') >= 0 {
			return nil // a path into the record: the tree's
		}
	}
	all := capture
	var maps *streammap.Splicer
	if s.Maps != nil {
		var ok bool
		if maps, all, ok = streammap.NewSplicer(s.Maps, s.Schema, capture); !ok {
			return nil
		}
	}
	shape, err := codec.CompileShapeWith(schema, s.Library, all...)
	if err != nil {
		return nil // a schema outside the subset, or too much to capture
	}
	if d.RecordsWildcard() || d.RecordStep != nil {
		return nil // records gathered from many places, or filtered: the tree's
	}
	spec := codec.PageSpec{Records: d.RecordsPath, Error: d.ErrorPath, Envelope: reads.Envelope}
	if g := d.GraphQL; g != nil {
		if d.ErrorPath != "" {
			return nil // two error paths: the tree's
		}
		spec.Records, spec.Error, spec.Connection = g.ConnectionPath, "errors", true
	}
	page, err := codec.NewPage(shape, spec)
	if err != nil {
		return nil // the paginator reads the records' own array
	}
	return &Reader{page: page, shape: shape, capture: capture, envelope: reads.Envelope, maps: maps, inject: inj,
		freed: make(chan struct{}, 1), wait: aheadWait}
}

// linesOf reports whether d's body of format is read as a record's
// text a line (decoder.Decoder.SplitsLines).
func linesOf(format string, d *streams.Definition) bool {
	return format == streams.FormatJSONL || format == streams.FormatCSV
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	if s == "" {
		return list
	}
	return append(list, s)
}

// A Page holds one page from its request until the run has written it:
// the buffer its body is read into, its records, and the captured keys the
// paginator, the walk's guard and the bookmark read. A spliced record's
// keys are a view of the page's text of them (pages.Fields), so that a page
// allocates nothing per record.
type Page struct {
	of      *Reader
	body    []byte
	scanned []byte // the body Scan read, which recs point into
	recs    []codec.Record
	given   []given  // by record, the tree it was given as (ScanLines)
	env     [][]byte // the envelope values' text, by path
	records []any    // per record, its keys (a *keys) or its tree
	keys    []keys   // the spliced records' views, by record
	buf     []byte   // the captured values' text
	text    string   // buf, one string per page
	ends    []int    // where each captured value ends in text
	parent  parentKey
	walker  codec.Walker
}

// given is the tree a record was given as (Lines.Tree), if ok.
type given struct {
	tree any
	ok   bool
}

// keys is a spliced record's captured values, as the walk reads them.
type keys struct {
	p *Page
	i int // the record
}

// Field returns the JSON text of a captured property of the record, or
// of the parent key a child's record gains (once the page is given it).
func (k *keys) Field(name string) (string, bool) {
	if inj := k.p.of.inject; inj != nil && name == inj.name {
		return k.p.parent.text, k.p.parent.text != ""
	}
	c := k.p.of.capture
	for slot, n := range c {
		if n == name {
			at := k.i*len(c) + slot
			from := 0
			if at > 0 {
				from = k.p.ends[at-1]
			}
			to := k.p.ends[at]
			return k.p.text[from:to], to > from
		}
	}
	return "", false
}

// maxKeptBody bounds a body buffer kept for a later page.
const maxKeptBody = 8 << 20

// aheadBytes bounds the body buffers a walk's pages hold at once, but
// for the first: the next page's body is read while the last page is
// written (the walk's look-ahead) when the two fit in it. A larger body
// waits, up to aheadWait, for the page before to be written and to give
// its buffer back: its bytes wait in the connection's buffers meanwhile,
// and the walk holds one large body rather than two. Two 2 MB pages (a
// thousand records of 100 properties) were two thirds of such a walk's
// live heap. The wait is bounded so that a page held long (a target
// slow to read the tap's output) never makes the next request time out.
const (
	aheadBytes = 1 << 20
	aheadWait  = time.Second
)

// Take returns a page no fetch holds.
func (r *Reader) Take() *Page {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.free); n > 0 {
		p := r.free[n-1]
		r.free = r.free[:n-1]
		return p
	}
	return &Page{of: r}
}

// Release gives p back to its Reader, once its records are written or
// when it was never scanned; its body buffer goes back for the next
// page.
func (p *Page) Release() {
	clear(p.given) // the trees go with the page
	p.scanned = nil
	r := p.of
	r.mu.Lock()
	if b := p.body; b != nil {
		p.body = nil
		r.held -= cap(b)
		if cap(b) <= maxKeptBody && len(r.bodies) < 2 {
			r.bodies = append(r.bodies, b)
		}
	}
	r.free = append(r.free, p)
	r.mu.Unlock()
	select {
	case r.freed <- struct{}{}:
	default: // a waiter is told already
	}
}

// Buffer is the page's body buffer, of at least size bytes (client.Request's
// Buffer): the walk's buffer that is free, or a new one with room to
// spare, as the next pages are rarely of one size. It may wait for
// another page of the walk to be released (aheadBytes), until ctx is done.
func (p *Page) Buffer(ctx context.Context, size int) []byte {
	if cap(p.body) < size {
		p.body = p.of.body(ctx, p.body, size, true)
	}
	return p.body[:0]
}

// body returns a buffer of at least size bytes in place of old, which
// is too small; wait: it may wait for one (aheadBytes).
func (r *Reader) body(ctx context.Context, old []byte, size int, wait bool) []byte {
	r.mu.Lock()
	r.held -= cap(old)
	var timer *time.Timer
	for waited := !wait; ; {
		for i, b := range r.bodies {
			if cap(b) >= size {
				r.bodies = slices.Delete(r.bodies, i, i+1)
				r.held += cap(b)
				r.mu.Unlock()
				return b
			}
		}
		if waited || r.held == 0 || r.held+size <= aheadBytes {
			break
		}
		r.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(r.wait)
			defer timer.Stop()
		}
		select {
		case <-r.freed:
		case <-timer.C:
			waited = true
		case <-ctx.Done():
			waited = true
		}
		r.mu.Lock()
	}
	c := size + size/16
	// The kept buffers are too small for this page, and likely for the
	// next: a walk keeps the larger one.
	r.bodies = r.bodies[:0]
	r.held += c
	r.mu.Unlock()
	return make([]byte, 0, c)
}

// Scan reads a page body into p; ok is false when the page takes the tree
// path (codec.Page.Scan), and the caller decodes it.
func (p *Page) Scan(body []byte) (ok bool) {
	s := p.of
	p.scanned = body
	p.recs, p.env, ok = s.page.Scan(p.recs, p.env, body)
	p.given = p.given[:0]
	p.parent.clear()
	if !ok {
		return false
	}
	return p.found()
}

// Lines are a page of records given as their JSON texts, one each (a
// jsonl body's lines, a csv body's rows: decoder.Lines).
type Lines interface {
	Len() int
	// Line is record i's JSON text, when Tree(i) gives none.
	Line(i int) []byte
	// Tree is record i as its tree (ok) when it has no text to walk
	// (the tree path's record).
	Tree(i int) (tree any, ok bool)
}

// ScanLines reads a page of records given as their texts into p, each
// walked against the stream's Shape; a record given as its tree takes
// the tree path. The texts are copied into the page's buffer, so lines
// may be reused once ScanLines returns. ok is false when a text is not
// one JSON text, and the caller decodes them (decoder.Lines.Records),
// which then answers as ever: their records, or the error naming the
// line.
func (p *Page) ScanLines(lines Lines) (ok bool) {
	s := p.of
	n := lines.Len()
	size := 0
	for i := range n {
		size += len(lines.Line(i))
	}
	if cap(p.body) < size {
		// Read as the body arrives, with no context to wait on: it
		// does not wait for the page before (aheadBytes).
		p.body = s.body(context.Background(), p.body, size, false)
	}
	body := p.body[:0]
	p.recs = slices.Grow(p.recs[:0], n)[:n]
	p.given = slices.Grow(p.given[:0], n)[:n]
	p.env = p.env[:0]
	p.parent.clear()
	for i := range n {
		if t, ok := lines.Tree(i); ok {
			p.recs[i], p.given[i] = codec.Record{}, given{t, true}
			continue
		}
		from := len(body)
		body = append(body, lines.Line(i)...)
		b := body[from:len(body):len(body)]
		end, splicable, captures, err := p.walker.Walk(b, 0, s.shape)
		if err != nil || end != len(b) {
			return false
		}
		p.recs[i], p.given[i] = codec.NewRecord(b, splicable, captures), given{}
	}
	p.body = body
	return p.found()
}

// found makes the captured keys and the walk's view of the records found
// by a scan.
func (p *Page) found() bool {
	s := p.of
	// The captured values' text, one string for the page.
	p.buf, p.ends = p.buf[:0], p.ends[:0]
	for i := range p.recs {
		r := &p.recs[i]
		for slot := range s.capture {
			if raw := r.Capture(slot); r.Splicable && raw != nil {
				p.buf = append(p.buf, raw...)
			}
			p.ends = append(p.ends, len(p.buf))
		}
	}
	p.text = string(p.buf)
	p.keys = slices.Grow(p.keys[:0], len(p.recs))[:len(p.recs)]
	p.records = p.records[:0]
	for i := range p.recs {
		r := &p.recs[i]
		p.keys[i] = keys{p: p, i: i}
		if r.Splicable && p.complete(i) {
			p.records = append(p.records, &p.keys[i])
			continue
		}
		// The tree: a record the walker is not sure of; or for the walk
		// alone, a spliced one without a captured key (the guard hashes
		// a record without its whole primary key by content); or the
		// tree a record was given as.
		if len(p.given) > 0 && p.given[i].ok {
			p.records = append(p.records, p.given[i].tree)
			continue
		}
		v, err := codec.DecodeRecords(r.Raw)
		if err != nil {
			return false
		}
		p.records = append(p.records, v)
	}
	return true
}

// complete reports whether record i has every captured property.
func (p *Page) complete(i int) bool {
	n := len(p.of.capture)
	from := 0
	if n == 0 {
		return true // a child keyed by its parent's key alone
	}
	if i > 0 {
		from = p.ends[i*n-1]
	}
	for _, to := range p.ends[i*n : (i+1)*n] {
		if to == from {
			return false
		}
		from = to
	}
	return true
}

// value decodes a captured value as codec.Decode would, without its
// decoder for the common ones.
func value(raw string) (any, error) {
	if s, number, ok := codec.Scalar(raw); ok {
		if number {
			return json.Number(s), nil
		}
		return s, nil
	}
	return codec.Decode([]byte(raw))
}

// Keys are the values of the top-level properties names of rec, a
// record of a page as the walk reads it (Page.Records: a tree, or a
// spliced record's captured keys), as codec.Decode gives them; a name
// the record does not have is not in the map. A tree is its own map.
// ok is false when rec is not an object.
func Keys(rec any, names []string) (m map[string]any, ok bool) {
	switch r := rec.(type) {
	case map[string]any:
		return r, true
	case *keys:
		m = make(map[string]any, len(names))
		for _, name := range names {
			text, ok := r.Field(name)
			if !ok {
				continue
			}
			v, err := value(text)
			if err != nil {
				continue // not met: the walker checked its syntax
			}
			m[name] = v
		}
		return m, true
	}
	return nil, false
}

// Records are the page's records as the walk reads them (the paginator,
// its guard): a spliced record's captured keys, another record's tree.
func (p *Page) Records() []any { return p.records }

// Raw returns record i's bytes when they are written as they came
// (through the maps, when the stream has them: see Mapped); when ok is
// false, Records()[i] is the record's tree, for the tree path.
func (p *Page) Raw(i int) (raw []byte, ok bool, err error) {
	r := &p.recs[i]
	if !r.Splicable {
		return r.Raw, false, nil
	}
	inj := p.of.inject != nil
	if _, isTree := p.records[i].(map[string]any); inj && isTree {
		// A child's record without a captured key: the walk read its
		// tree, which the tree path gives the parent key.
		r.Splicable = false
		return r.Raw, false, nil
	}
	// The map is not sure of its bytes, or the parent key to inject is
	// not known to be valid: the tree's.
	s := p.of.maps
	if s != nil && !s.Map(r) || inj && p.parent.text == "" {
		v, err := codec.DecodeRecords(r.Raw)
		if err != nil {
			return nil, false, err
		}
		r.Splicable, p.records[i] = false, v
		return r.Raw, false, nil
	}
	if inj {
		return p.parent.append(r.Raw), true, nil
	}
	return r.Raw, true, nil
}

// Field is the JSON text of the captured property name of spliced
// record i; ok is false when the record has none.
func (p *Page) Field(i int, name string) (text string, ok bool) { return p.keys[i].Field(name) }

// Value is the captured property name of spliced record i, as
// codec.Decode would give it; nil when the record has none.
func (p *Page) Value(i int, name string) (any, error) {
	text, ok := p.keys[i].Field(name)
	if !ok {
		return nil, nil
	}
	return value(text)
}

// Lookup is the body's value at path, one the paginator reads
// (streams.Envelope), decoded from the text the scan kept of it.
func (p *Page) Lookup(path string) (any, bool) {
	for i, e := range p.of.envelope {
		if e != path {
			continue
		}
		rest, enclosing := p.of.page.EnvelopeRest(i, path)
		if enclosing {
			return streams.Enclosing{}, true
		}
		raw := p.env[i]
		if raw == nil {
			return nil, false
		}
		v, err := value(string(raw))
		if err != nil {
			return nil, false // not met: the scan checked its syntax
		}
		return streams.LookupNullable(v, rest)
	}
	return nil, false
}

// KeysNear names the keys of the body near path (streams.KeysNear), for
// a warning that the paginator's path is not in the body: the body is
// decoded for it, which only such a warning pays for.
func (p *Page) KeysNear(path string) string {
	v, err := codec.Decode(p.scanned)
	if err != nil {
		return ""
	}
	return streams.KeysNear(v, path)
}

// Mapped is, on a stream with maps, what they made of the last record
// Raw returned (streammap.Splicer's Record and Err); nil without maps.
func (p *Page) Mapped() streams.Mapped {
	if p.of.maps == nil {
		return nil
	}
	return p.of.maps
}
