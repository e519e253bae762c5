package tap

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streammap"
	"github.com/tap-dev/tap/streams"
)

// Splicing: a record the stream's compiled Shape is certain of is written
// from the page's bytes as they came, into the RECORD line, without a
// tree, a library validation or a re-encoding; every other record of the
// page takes the tree path (decode, validate, encode) as before, so the
// output holds the same records, with their keys in the API's order.
//
// A stream splices only when nothing needs a record's tree: JSON pages,
// no GraphQL, no deselected properties, no parent key to inject, no
// children to walk, stream maps of named properties only (streammaps.go),
// a primary key (the walk's stale-page guard and dedupe read only it),
// and a paginator that does not read the body (none, keyset,
// link_header). The primary key, the replication key and the keyset field
// are read from the record's bytes.

// splicer scans the pages of one walk of a stream.
type splicer struct {
	page    *codec.Page
	capture []string           // the captured keys, the Shape's first slots
	maps    *streammap.Splicer // nil: no stream maps

	mu   sync.Mutex // the fetch takes slots, the walk puts them back
	free []*pageSlot
}

// A pageSlot holds one page from its request until the walk has handled
// it: the buffer its body is read into, its records, and the captured
// keys the paginator, the walk's guard and the bookmark read. Slots are
// reused, as a page's body and a map per record were most of what a
// spliced page allocated.
type pageSlot struct {
	of   *splicer
	body []byte
	recs []codec.Record
	keys []any // per record, a map of its captured properties (or its tree)
	maps []map[string]any
	text []byte // the captured values' text, one string per page
	ends []int  // where each captured value ends in text
}

// maxKeptBody bounds the body buffer a slot keeps for the next page.
const maxKeptBody = 8 << 20

// take returns a slot no page holds.
func (s *splicer) take() *pageSlot {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.free); n > 0 {
		p := s.free[n-1]
		s.free = s.free[:n-1]
		return p
	}
	return &pageSlot{of: s}
}

// put gives back a slot whose page is handled, or was never spliced.
func (s *splicer) put(p *pageSlot) {
	if cap(p.body) > maxKeptBody {
		p.body = nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.free = append(s.free, p)
}

// buffer is the slot's body buffer, of at least size bytes; with room
// to spare, as the next pages are rarely of one size.
func (p *pageSlot) buffer(size int) []byte {
	if cap(p.body) < size {
		p.body = make([]byte, 0, size+size/8)
	}
	return p.body[:0]
}

// newSplicer returns nil when the stream cannot splice.
func (e *engine) newSplicer(n *node) *splicer {
	d := n.def
	if e.tree || !n.selected || len(n.children) > 0 || len(n.dropped) > 0 && n.outs == nil || d.Parent != nil ||
		d.GraphQL != nil || d.BodyFormat() != streams.FormatJSON || len(d.PrimaryKey) == 0 {
		return nil
	}
	capture := append([]string{}, d.PrimaryKey...)
	switch d.Pagination.Type {
	case streams.PageNone, streams.PageLinkHeader:
	case streams.PageKeyset:
		k, _ := d.Pagination.Options.(*streams.KeysetOptions)
		if k == nil {
			return nil
		}
		capture = appendNew(capture, k.KeyField)
	default:
		return nil
	}
	capture = appendNew(capture, d.ReplicationKey)
	for _, c := range capture {
		if c == "" || bytes.IndexByte([]byte(c), '.') >= 0 {
			return nil // a path into the record: the tree's
		}
	}
	schema := e.cfg.Schemas[d.Name]
	maps, all, ok := spliceMaps(n, schema, capture)
	if !ok {
		return nil
	}
	shape, err := codec.CompileShape(schema, all...)
	if err != nil {
		return nil // a schema outside the subset, or too much to capture
	}
	return &splicer{page: codec.NewPage(shape, d.RecordsPath, d.ErrorPath), capture: capture, maps: maps}
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

// scan reads a page body into p; ok is false when the page takes the
// tree path.
func (s *splicer) scan(p *pageSlot, body []byte) (ok bool) {
	p.recs, ok = s.page.Scan(p.recs, body)
	if !ok {
		return false
	}
	// The captured values' text, one string for the page.
	p.text, p.ends = p.text[:0], p.ends[:0]
	for i := range p.recs {
		r := &p.recs[i]
		for slot := range s.capture {
			if raw := r.Captures[slot]; r.Splicable && raw != nil {
				p.text = append(p.text, raw...)
			}
			p.ends = append(p.ends, len(p.text))
		}
	}
	text := string(p.text)
	p.keys = p.keys[:0]
	from := 0
	for i := range p.recs {
		r := &p.recs[i]
		if !r.Splicable {
			v, err := codec.Decode(r.Raw)
			if err != nil {
				return false
			}
			p.keys = append(p.keys, v)
			from = p.ends[(i+1)*len(s.capture)-1]
			continue
		}
		for len(p.maps) <= i {
			p.maps = append(p.maps, make(map[string]any, len(s.capture)))
		}
		m := p.maps[i]
		clear(m)
		for slot, name := range s.capture {
			to := p.ends[i*len(s.capture)+slot]
			if to > from {
				v, err := rawValue(text[from:to])
				if err != nil {
					return false
				}
				m[name] = v
			}
			from = to
		}
		if len(m) < len(s.capture) {
			// The guard hashes a record without its whole primary key
			// by content: it gets the tree.
			v, err := codec.Decode(r.Raw)
			if err != nil {
				return false
			}
			p.keys = append(p.keys, v)
			continue
		}
		p.keys = append(p.keys, m)
	}
	return true
}

// rawValue decodes a captured value as Decode would, without its
// decoder for the common ones.
func rawValue(raw string) (any, error) {
	switch c := raw[0]; {
	case c == '"' && strings.IndexByte(raw, '\\') < 0:
		return raw[1 : len(raw)-1], nil
	case c == '-' || (c >= '0' && c <= '9'):
		return json.Number(raw), nil
	case c == 'n':
		return nil, nil
	}
	return codec.Decode([]byte(raw))
}

// handlePage takes a page's records in order: on a spliced page the
// splicable ones are written from their bytes; the others go through
// handle.
func (e *engine) handlePage(ctx context.Context, n *node, resp *streams.Response, extracted time.Time, part streams.Partition) (err error) {
	// The walk has just started fetching the next page. On one CPU that
	// fetch would wait for this page to be written (nothing blocks until
	// then), and the API's time would add to ours: let it send its
	// request first, and the answer arrive while this page is written.
	runtime.Gosched()
	if len(n.children) == 0 && len(n.selectedOutputs()) == 1 {
		// Nothing else of the stream is written in the middle of the
		// page: its lines go out together.
		n.lines.Start(e.out)
		defer func() {
			if ferr := n.lines.End(); err == nil {
				err = ferr
			}
		}()
	}
	p, spliced := resp.Body.(*pageSlot)
	if !spliced {
		for _, rec := range resp.Records {
			if err := e.handle(ctx, n, rec, extracted, part); err != nil {
				return err
			}
		}
		return nil
	}
	defer p.of.put(p)
	d := n.def
	for i := range p.recs {
		r := &p.recs[i]
		if s := p.of.maps; s != nil && r.Splicable && !s.Map(r) {
			v, err := codec.Decode(r.Raw) // the map is not sure of its bytes: the tree's
			if err != nil {
				return err
			}
			r.Splicable, p.keys[i] = false, v
		}
		if !r.Splicable {
			if err := e.handle(ctx, n, p.keys[i], extracted, part); err != nil {
				return err
			}
			continue
		}
		keys, _ := p.keys[i].(map[string]any)
		if n.seen != nil {
			k := primaryKeyString(keys, d.PrimaryKey)
			if _, dup := n.seen[k]; dup {
				n.dupes.Add(1)
				continue
			}
			n.seen[k] = struct{}{}
		}
		if e.full(n) {
			return errRecordLimit
		}
		if rk := d.ReplicationKey; rk != "" {
			if err := e.observe(n, part, keys[rk]); err != nil {
				return err
			}
		}
		if err := e.schema(n); err != nil {
			return err
		}
		if s := p.of.maps; s != nil {
			if err := e.writeMapped(n, s, extracted); err != nil {
				return err
			}
			continue
		}
		if err := e.record(n, d.Name, r.Raw, extracted); err != nil {
			return err
		}
		n.records.Add(1)
	}
	return nil
}
