package tap

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streammap"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/tap/catalog"
	"github.com/tap-dev/tap/tap/mapped"
	"github.com/tap-dev/tap/tap/splice"
)

// errRecordLimit ends the walk of a stream that has its Options.RecordLimit.
var errRecordLimit = errors.New("record limit reached")

// full reports whether a stream has all the records a test run wants.
func (n *node) full() bool {
	e := n.e
	return e.policy.testRun() && n.model.selected && n.counts.Records.Load() >= e.policy.recordLimit
}

// handle takes one record through dedupe, validation, the bookmark, the
// writer and the record's children.
func (n *node) handle(ctx context.Context, rec any, extracted time.Time, ws walkStart) error {
	d, part := n.def, ws.part
	m, err := RecordObject(d, rec, part)
	if err != nil {
		return err
	}
	if step := d.RecordStep; step != nil {
		var keep bool
		if m, keep, err = step.Step(m, part.Context); err != nil || !keep {
			return err // dropped: not written, and no children walked
		}
	}
	if dup, err := n.repeated(m); dup || err != nil {
		return err
	}
	if n.full() {
		return errRecordLimit
	}
	if n.model.selected {
		if err := n.out.write(m, extracted, part, fromWalk); err != nil {
			return err
		}
	}
	// A parent that failed its schema still exists upstream: its
	// children are walked all the same.
	return n.walkChildren(ctx, m, ws)
}

// walkChildren walks n's children for one of its records, in ws: parent
// holds the record's values of the children's parent keys, or all of it.
func (n *node) walkChildren(ctx context.Context, parent map[string]any, ws walkStart) error {
	if n.track.SkipChildren() {
		return nil // walked before the last run stopped
	}
	var tracker *node
	if ws.kids {
		tracker = n
	}
	for _, c := range n.children {
		from, walk := n.track.ChildFrom(c.def.Name)
		if !walk {
			continue
		}
		if err := c.walkChild(ctx, parent, from, tracker); err != nil {
			return err
		}
	}
	return nil
}

// parentKeys are the keys of n's record rec (a tree, or a spliced
// record's captured keys) that its children's walks read.
func parentKeys(n *node, rec any) (map[string]any, bool) {
	if m, ok := rec.(map[string]any); ok {
		return m, true // no copy for a tree
	}
	return splice.Keys(rec, n.childKeys())
}

// childKeys are the properties of n's records its children's walks read.
func (n *node) childKeys() []string {
	var names []string
	for _, c := range n.children {
		if !slices.Contains(names, c.def.Parent.Key) {
			names = append(names, c.def.Parent.Key)
		}
	}
	return names
}

// observe shows a record's replication-key value to the stream's plan.
// It returns an error only when the record must not be written: a sorted
// stream that is not, with on_unsorted "fail"; the bookmark then falls
// back to a value no unread row is below, checkpointed before the error.
func (o *sink) observe(part streams.Partition, v any) error {
	n := o.n
	e := n.e
	obs, err := n.plan.Observe(part, v)
	switch obs {
	case streams.NullKey:
		n.counts.NullKeys.Add(1)
	case streams.Uncomparable:
		// A value that cannot be ordered with the others (a malformed
		// time let through by on_schema_violation: emit) is written
		// but never becomes the bookmark.
		if n.counts.BadKeys.Add(1) == 1 {
			e.log.Warn("replication key value cannot be compared; the record is emitted but does not move the bookmark",
				"stream", n.def.Name, "replication_key", n.def.ReplicationKey, "error", e.cfg.Redactor.Redact(err.Error()))
		}
	case streams.Demoted:
		e.log.Warn(err.Error(), "stream", n.def.Name)
	case streams.Unsorted:
		if err := o.writer.Flush(); err != nil {
			return err // the records before it go out before its STATE
		}
		if o.commit() {
			err = errors.Join(err, o.checkpoint())
		}
		return err
	}
	return nil
}

// encode renders the selected properties of a record, leaving the record
// itself whole for the children that read it.
func (o *sink) encode(m map[string]any) ([]byte, error) {
	return o.writer.Encode(m, o.n.model.dropped)
}

// RecordObject is a record as the engine sees it: a JSON object, with the
// parent's key copied in under parent.as.
func RecordObject(d *streams.Definition, rec any, part streams.Partition) (map[string]any, error) {
	m, ok := rec.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("stream %q: a record is not a JSON object (got a JSON %s); check records_path", d.Name, codec.TypeName(rec))
	}
	if p := d.Parent; p != nil && p.As != "" {
		m[p.As] = part.Key
	}
	return m, nil
}

// handlePage takes a page's records in order (handleAt).
func (n *node) handlePage(ctx context.Context, resp *streams.Page, extracted time.Time, ws walkStart) (err error) {
	e := n.e
	// The walk has just started fetching the next page. On one CPU that
	// fetch would wait for this page to be written (nothing blocks until
	// then), and the API's time would add to ours: let it send its
	// request first, and the answer arrive while this page is written.
	runtime.Gosched()
	if len(n.children) == 0 && len(n.out.selectedOutputs()) == 1 {
		// Nothing else of the stream is written in the middle of the
		// page: its lines go out together.
		n.out.writer.StartPage(e.out)
		defer func() {
			if ferr := n.out.writer.EndPage(); err == nil {
				err = ferr
			}
		}()
	}
	if p := resp.Spliced; p != nil {
		defer p.Release()
		if n.def.Parent != nil {
			p.Inject(ws.part.Key) // the parent key, copied into the records
		}
	}
	for i := range resp.Records {
		if err := n.handleAt(ctx, resp, i, extracted, ws); err != nil {
			return err
		}
	}
	return nil
}

// handleAt takes record i of a page: on a spliced page a splicable
// record is written from its bytes, its children walked from its captured
// keys; any other record goes through handle.
func (n *node) handleAt(ctx context.Context, resp *streams.Page, i int, extracted time.Time, ws walkStart) error {
	p := resp.Spliced
	if p == nil {
		return n.handle(ctx, resp.Records[i], extracted, ws)
	}
	raw, ok, err := p.Raw(i)
	if err != nil {
		return err
	}
	if !ok {
		return n.handle(ctx, resp.Records[i], extracted, ws)
	}
	rec := resp.Records[i]
	if dup, err := n.repeated(rec); dup || err != nil {
		return err
	}
	if n.full() {
		return errRecordLimit
	}
	if n.model.selected {
		if err := n.out.emitSpliced(p, i, raw, extracted, ws.part); err != nil {
			return err
		}
	}
	if len(n.children) == 0 {
		return nil
	}
	keys, _ := parentKeys(n, rec)
	return n.walkChildren(ctx, keys, ws)
}

// emitSpliced is emit for spliced record i of page p, raw its bytes:
// certainly valid, it is written as it came (or as the maps make it).
func (o *sink) emitSpliced(p streams.Spliced, i int, raw []byte, extracted time.Time, part streams.Partition) error {
	n := o.n
	d := n.def
	if rk := d.ReplicationKey; rk != "" {
		v, err := p.Value(i, rk)
		if err != nil {
			return err
		}
		if n.below.Below(part, v) {
			return nil // client-side incremental: an earlier run wrote it
		}
		if err := o.observe(part, v); err != nil {
			return err
		}
	}
	if s := p.Mapped(); s != nil {
		return o.put(nil, s, extracted)
	}
	return o.put(raw, nil, extracted)
}

// repeated reports whether rec (a tree or a spliced record's keys)
// repeats a row of the last pages of an offset stream, counting it.
func (n *node) repeated(rec any) (bool, error) {
	if n.dedupe == nil {
		return false, nil
	}
	dup, err := n.dedupe.Repeated(rec)
	if err != nil {
		return false, fmt.Errorf("stream %q: primary key: %w", n.def.Name, err)
	}
	if dup {
		n.counts.Dupes.Add(1)
	}
	return dup, nil
}

// attachMaps gives a node the streams its maps write (tap/mapped); the
// node is selected when one of them is.
func attachMaps(n *node, m *streammap.Mapper, sel *catalog.Selection, redact func(string) string) {
	if outs := mapped.New(m, n.def.Name, n.def.ReplicationKey, sel, redact); outs != nil {
		n.out.outs, n.model.selected, n.model.fullTable = outs, outs.Selected(), n.model.fullTable || outs.FullTable()
	}
}

// schemaMapped writes the SCHEMA of each selected stream a node's maps
// write.
func (o *sink) schemaMapped() error { return o.outs.Schemas(o.n.e.out.Schema) }

// selectedOutputs lists the names of the streams a node writes: its own,
// or with maps the selected streams they write.
func (o *sink) selectedOutputs() []string {
	if o.outs == nil {
		return []string{o.n.def.Name}
	}
	return o.outs.Names()
}
