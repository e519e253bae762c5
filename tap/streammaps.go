package tap

import (
	"fmt"
	"time"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streammap"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/tap/catalog"
)

// Stream maps and flattening (package records) sit between validation and
// the writer: a record is checked against its API schema, then written as
// each stream its maps make of it. State stays keyed by the source stream,
// whose bookmark the records move. The catalog describes the mapped
// streams, so a catalog's stream names are the names the maps write.

// mappedOutput is one stream a mapped node writes.
type mappedOutput struct {
	o            *streammap.Output
	tr           *streammap.Transformer
	selected     bool
	sole         bool // the only selected output: it may take the record
	dropped      map[string]bool
	bookmarkKeys []string

	buf  []byte
	keys []string
	keep bool // buf holds the record in hand
}

// attachMaps gives a node the streams its maps write; the node is
// selected when one of them is.
func attachMaps(n *node, m *streammap.Mapper, sel *catalog.Selection) {
	if m == nil {
		return
	}
	n.outs = []*mappedOutput{}
	n.selected = false
	rk := n.def.ReplicationKey
	for _, o := range m.Outputs(n.def.Name) {
		dropped := sel.Dropped(o.Name)
		mo := &mappedOutput{o: o, tr: o.Transformer().Without(dropped), selected: sel.Selected(o.Name), dropped: dropped}
		if props, _ := o.Schema["properties"].(map[string]any); rk != "" && props[rk] != nil {
			mo.bookmarkKeys = []string{rk}
		}
		if mo.selected {
			n.selected = true
			n.fullTable = n.fullTable || sel.FullTable(o.Name)
		}
		n.outs = append(n.outs, mo)
	}
	if len(n.selectedOutputs()) == 1 {
		for _, mo := range n.outs {
			mo.sole = mo.selected
		}
	}
}

// emitMapped writes a validated record as each selected stream its maps
// make of it.
func (e *engine) emitMapped(n *node, m map[string]any, extracted time.Time) error {
	if err := e.schema(n); err != nil {
		return err
	}
	for _, mo := range n.outs {
		if !mo.selected {
			continue
		}
		var rec map[string]any
		var err error
		if mo.sole && len(n.children) == 0 {
			// Nothing reads the record after its one output: map it
			// in place rather than copy it.
			rec, err = mo.tr.TransformInPlace(m)
		} else {
			rec, err = mo.tr.Transform(m)
		}
		if err != nil {
			return e.mapError(n, err)
		}
		if mo.keep = rec != nil; mo.keep {
			if mo.buf, err = codec.AppendObject(mo.buf[:0], rec, &mo.keys); err != nil {
				return fmt.Errorf("stream %q: %w", mo.o.Name, err)
			}
		}
	}
	return e.writeMapped(n, nil, extracted)
}

// mapError is a map's error for a record of n, scrubbed of secrets like
// any other (config values are compiled into the expressions).
func (e *engine) mapError(n *node, err error) error {
	return fmt.Errorf("stream %q: %s", n.def.Name, e.cfg.Redactor.Redact(err.Error()))
}

// writeMapped writes a record as each selected output's map made it: a
// spliced record as s did, else the outputs' buffers.
func (e *engine) writeMapped(n *node, s streams.Mapped, extracted time.Time) error {
	if s != nil && s.Err() != nil {
		return e.mapError(n, s.Err())
	}
	i, wrote := 0, false
	for _, mo := range n.outs {
		if !mo.selected {
			continue
		}
		rec, keep := mo.buf, mo.keep
		if s != nil {
			rec, keep = s.Record(i)
		}
		if i++; keep {
			if err := e.record(n, mo.o.Name, rec, extracted); err != nil {
				return err
			}
			wrote = true
		}
	}
	if wrote {
		n.counts.Records.Add(1)
	}
	return nil
}

// schemaMapped writes the SCHEMA of each selected stream a node's maps
// write.
func (e *engine) schemaMapped(n *node) error {
	for _, mo := range n.outs {
		if !mo.selected {
			continue
		}
		schema := catalog.OutputSchema(mo.o.Schema, mo.dropped)
		keys := append([]string{}, mo.o.KeyProperties...)
		if err := e.out.Schema(mo.o.Name, schema, keys, mo.bookmarkKeys); err != nil {
			return err
		}
	}
	return nil
}

// selectedOutputs lists the names of the streams a node writes: its own,
// or with maps the selected streams they write.
func (n *node) selectedOutputs() []string {
	if n.outs == nil {
		return []string{n.def.Name}
	}
	var names []string
	for _, mo := range n.outs {
		if mo.selected {
			names = append(names, mo.o.Name)
		}
	}
	return names
}
