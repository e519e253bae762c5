// Package mapped is a stream's mapped outputs: with stream maps, the
// streams one source stream is written as, as the catalog selects them.
// Stream maps and flattening (package streammap) sit between validation
// and the writer: a record is checked against its API schema, then
// written as each stream its maps make of it. State stays keyed by the
// source stream, whose bookmark the records move; the catalog describes
// the mapped streams, so a catalog's stream names are the names the maps
// write.
//
// The maps are compiled once, when the config is loaded (tap/inputs);
// Outputs are made once per stream and run from them, each selected
// output's transformer made once for the properties its catalog drops.
package mapped

import (
	"fmt"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streammap"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/tap/catalog"
)

// Outputs are the streams one source stream's maps write. An Outputs is
// used by the goroutine that walks its stream.
type Outputs struct {
	source    string
	redact    func(string) string
	outs      []*output // the selected outputs, in the maps' order
	fullTable bool
}

// output is one selected stream the source is written as, and the record
// in hand, as its map made it.
type output struct {
	o            *streammap.Output
	tr           *streammap.Transformer
	dropped      map[string]bool
	bookmarkKeys []string

	buf  []byte
	keys []string
	keep bool // buf holds the record in hand
}

// New makes the outputs of stream (its replication key rk) from m, as sel
// selects them; redact scrubs a map's error, whose expressions may hold
// config values. Without maps (m nil) it returns nil: the stream is
// written as itself.
func New(m *streammap.Mapper, stream, rk string, sel *catalog.Selection, redact func(string) string) *Outputs {
	if m == nil {
		return nil
	}
	o := &Outputs{source: stream, redact: redact}
	for _, mo := range m.Outputs(stream) {
		if !sel.Selected(mo.Name) {
			continue
		}
		dropped := sel.Dropped(mo.Name)
		out := &output{o: mo, tr: mo.Transformer().Without(dropped), dropped: dropped}
		if props, _ := mo.Schema["properties"].(map[string]any); rk != "" && props[rk] != nil {
			out.bookmarkKeys = []string{rk}
		}
		o.fullTable = o.fullTable || sel.FullTable(mo.Name)
		o.outs = append(o.outs, out)
	}
	return o
}

// Selected reports whether one of the outputs is selected: the source is
// then walked.
func (o *Outputs) Selected() bool { return len(o.outs) > 0 }

// FullTable reports whether a selected output is read as a full table.
func (o *Outputs) FullTable() bool { return o.fullTable }

// Names are the names of the selected outputs, in the maps' order.
func (o *Outputs) Names() []string {
	names := make([]string, len(o.outs))
	for i, out := range o.outs {
		names[i] = out.o.Name
	}
	return names
}

// Transformers are the selected outputs' maps, in order, for a splice
// reader to run on a page's bytes; nil when none is selected, or for nil
// Outputs (no maps).
func (o *Outputs) Transformers() []*streammap.Transformer {
	if o == nil || len(o.outs) == 0 {
		return nil
	}
	trs := make([]*streammap.Transformer, len(o.outs))
	for i, out := range o.outs {
		trs[i] = out.tr
	}
	return trs
}

// Map runs each selected output's map on a validated record, keeping what
// each makes of it for Write. shared says something reads the record
// after (its children): otherwise a sole output maps it in place rather
// than copy it.
func (o *Outputs) Map(m map[string]any, shared bool) error {
	for _, out := range o.outs {
		var rec map[string]any
		var err error
		if len(o.outs) == 1 && !shared {
			rec, err = out.tr.TransformInPlace(m)
		} else {
			rec, err = out.tr.Transform(m)
		}
		if err != nil {
			return o.mapError(err)
		}
		if out.keep = rec != nil; out.keep {
			if out.buf, err = codec.AppendObject(out.buf[:0], rec, &out.keys); err != nil {
				return fmt.Errorf("stream %q: %w", out.o.Name, err)
			}
		}
	}
	return nil
}

// mapError is a map's error for a record of the source, scrubbed of
// secrets like any other (config values are compiled into the
// expressions).
func (o *Outputs) mapError(err error) error {
	return fmt.Errorf("stream %q: %s", o.source, o.redact(err.Error()))
}

// Write hands write each record the outputs keep, by output name: a
// spliced record's as s made them, else those Map made. It reports
// whether one was written.
func (o *Outputs) Write(s streams.Mapped, write func(stream string, rec []byte) error) (bool, error) {
	if s != nil && s.Err() != nil {
		return false, o.mapError(s.Err())
	}
	wrote := false
	for i, out := range o.outs {
		rec, keep := out.buf, out.keep
		if s != nil {
			rec, keep = s.Record(i)
		}
		if keep {
			if err := write(out.o.Name, rec); err != nil {
				return wrote, err
			}
			wrote = true
		}
	}
	return wrote, nil
}

// Schemas hands write the SCHEMA of each selected output: its schema
// without the properties its catalog drops, its key properties and its
// bookmark properties.
func (o *Outputs) Schemas(write func(stream string, schema map[string]any, keys, bookmarkKeys []string) error) error {
	for _, out := range o.outs {
		schema := catalog.OutputSchema(out.o.Schema, out.dropped)
		keys := append([]string{}, out.o.KeyProperties...)
		if err := write(out.o.Name, schema, keys, out.bookmarkKeys); err != nil {
			return err
		}
	}
	return nil
}
