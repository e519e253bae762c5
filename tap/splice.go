package tap

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams"
)

// Splicing: a record the stream's compiled Shape is certain of is written
// from the page's bytes as they came, into the RECORD line, without a
// tree, a library validation or a re-encoding; every other record of the
// page takes the tree path (decode, validate, encode) as before, so the
// output holds the same records, with their keys in the API's order.
//
// A stream splices only when nothing needs a record's tree: JSON pages,
// no GraphQL, no stream maps, no deselected properties, no parent key to
// inject, no children to walk, a primary key (the walk's stale-page guard
// and dedupe read only it), and a paginator that does not read the body
// (none, keyset, link_header). The primary key, the replication key and
// the keyset field are read from the record's bytes.

// splicer scans the pages of one walk of a stream.
type splicer struct {
	page    *codec.Page
	capture []string // the Shape's captured properties, in slot order
	// keys are the key maps of the last keyRing pages, reused: a map per
	// record was half the cost of a spliced page. The walk reads a page's
	// records while it handles the page (its paginator and guard keep
	// values and hashes, not the maps), and at most one page is fetched
	// ahead, so a ring of keyRing pages is never reused while read.
	keys [keyRing][]map[string]any
	next int
}

const keyRing = 4

// splicedPage is the Body of a spliced page's Response: the records the
// paginator and the walk's guard see are only their captured keys.
type splicedPage struct {
	recs []codec.Record
	keys []any // per record, a map of its captured properties
}

// newSplicer returns nil when the stream cannot splice.
func (e *engine) newSplicer(n *node) *splicer {
	d := n.def
	if e.tree || !n.selected || len(n.children) > 0 || n.outs != nil || len(n.dropped) > 0 || d.Parent != nil ||
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
	shape, err := codec.CompileShape(e.cfg.Schemas[d.Name], capture...)
	if err != nil {
		return nil // a schema outside the subset
	}
	return &splicer{page: codec.NewPage(shape, d.RecordsPath, d.ErrorPath), capture: capture}
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

// scan reads a page body; ok is false when the page takes the tree path.
func (s *splicer) scan(body []byte) (*splicedPage, bool) {
	recs, ok := s.page.Scan(body)
	if !ok {
		return nil, false
	}
	p := &splicedPage{recs: append([]codec.Record(nil), recs...), keys: make([]any, len(recs))}
	maps := s.keys[s.next][:0]
	s.next = (s.next + 1) % keyRing
	defer func() { s.keys[(s.next+keyRing-1)%keyRing] = maps }()
	for i := range p.recs {
		r := &p.recs[i]
		if !r.Splicable {
			v, err := codec.Decode(r.Raw)
			if err != nil {
				return nil, false
			}
			p.keys[i] = v
			continue
		}
		var m map[string]any
		if len(maps) < cap(maps) {
			m = maps[:len(maps)+1][len(maps)]
		}
		if m == nil {
			m = make(map[string]any, len(s.capture))
		}
		clear(m)
		maps = append(maps, m)
		for slot, name := range s.capture {
			if raw := r.Captures[slot]; raw != nil {
				v, err := rawValue(raw)
				if err != nil {
					return nil, false
				}
				m[name] = v
			}
		}
		p.keys[i] = m
		if len(m) < len(s.capture) {
			// The guard hashes a record without its whole primary key
			// by content: it gets the tree.
			v, err := codec.Decode(r.Raw)
			if err != nil {
				return nil, false
			}
			p.keys[i] = v
		}
	}
	return p, true
}

// rawValue decodes a captured value as Decode would, without its
// decoder for the common ones.
func rawValue(raw []byte) (any, error) {
	switch c := raw[0]; {
	case c == '"' && bytes.IndexByte(raw, '\\') < 0:
		return string(raw[1 : len(raw)-1]), nil
	case c == '-' || (c >= '0' && c <= '9'):
		return json.Number(raw), nil
	case c == 'n':
		return nil, nil
	}
	return codec.Decode(raw)
}

// handlePage takes a page's records in order: on a spliced page the
// splicable ones are written from their bytes; the others go through
// handle.
func (e *engine) handlePage(ctx context.Context, n *node, resp *streams.Response, extracted time.Time, part streams.Partition) (err error) {
	if len(n.children) == 0 && n.outs == nil {
		// Nothing else of the stream is written in the middle of the
		// page: its lines go out together.
		n.lines.start(e.out)
		defer func() {
			if ferr := n.lines.end(); err == nil {
				err = ferr
			}
		}()
	}
	p, spliced := resp.Body.(*splicedPage)
	if !spliced {
		for _, rec := range resp.Records {
			if err := e.handle(ctx, n, rec, extracted, part); err != nil {
				return err
			}
		}
		return nil
	}
	d := n.def
	for i := range p.recs {
		r := &p.recs[i]
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
		if err := e.record(n, r.Raw, extracted); err != nil {
			return err
		}
		n.records.Add(1)
	}
	return nil
}
