package tap

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streammap"
	"github.com/tap-dev/tap/streams"
)

// Stream maps and flattening (package records) sit between validation and
// the writer: a record is checked against its API schema, then written as
// each stream its maps make of it. State stays keyed by the source stream,
// whose bookmark the records move. The catalog describes the mapped
// streams, so a catalog's stream names are the names the maps write.

// compileMaps compiles the config's stream maps; nil when the config has
// none (and no flattening).
func compileMaps(cfg *Config) (*streammap.Mapper, error) {
	if len(cfg.StreamMaps) == 0 && !cfg.FlatteningEnabled {
		return nil, nil
	}
	srcs := make(map[string]streammap.StreamSchema, len(cfg.Streams))
	for i := range cfg.Streams {
		d := &cfg.Streams[i]
		srcs[d.Name] = streammap.StreamSchema{Schema: cfg.Schemas[d.Name], KeyProperties: d.PrimaryKey}
	}
	m, err := streammap.NewMapper(streammap.MapConfig{
		StreamMaps:         cfg.StreamMaps,
		StreamMapConfig:    cfg.StreamMapConfig,
		FlatteningEnabled:  cfg.FlatteningEnabled,
		FlatteningMaxDepth: cfg.FlatteningMaxDepth,
	}, srcs)
	if err != nil {
		return nil, &InputError{File: cfg.Path, Err: err}
	}
	if !m.Active() {
		return nil, nil
	}
	return m, nil
}

// loadConfig is settings.Load with the stream maps compiled: a map that
// does not compile is a bad config, reported before anything is sent.
func loadConfig(path string) (*Config, error) {
	cfg, err := settings.Load(path)
	if err != nil {
		return nil, err
	}
	if _, err := compileMaps(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// catalogStreams resolves a catalog's stream names: the config's streams,
// or with stream maps the streams the maps write, each to the definition
// of the stream it is read from.
func catalogStreams(cfg *Config) func(name string) *streams.Definition {
	m, err := compileMaps(cfg)
	if err != nil || m == nil {
		return cfg.Stream
	}
	byOutput := map[string]*streams.Definition{}
	for i := range cfg.Streams {
		d := &cfg.Streams[i]
		for _, o := range m.Outputs(d.Name) {
			byOutput[o.Name] = d
		}
	}
	return func(name string) *streams.Definition { return byOutput[name] }
}

// catalogSchema is the schema of a catalog's stream: mapped when maps
// write it.
func catalogSchema(cfg *Config, name string) map[string]any {
	if m, err := compileMaps(cfg); err == nil && m != nil {
		for i := range cfg.Streams {
			for _, o := range m.Outputs(cfg.Streams[i].Name) {
				if o.Name == name {
					return o.Schema
				}
			}
		}
	}
	return cfg.Schemas[name]
}

// mapCatalog replaces each stream of a discovered catalog by the streams
// its maps write, with their schemas and keys.
func mapCatalog(cfg *Config, cat *Catalog) *Catalog {
	m, err := compileMaps(cfg)
	if err != nil || m == nil {
		return cat // the config was checked when it was loaded
	}
	out := &Catalog{Streams: []CatalogEntry{}}
	for _, e := range cat.Streams {
		d := cfg.Stream(e.TapStreamID)
		for _, o := range m.Outputs(d.Name) {
			me := e
			me.TapStreamID, me.Stream, me.Schema = o.Name, o.Name, o.Schema
			me.KeyProperties = append([]string{}, o.KeyProperties...)
			props, _ := o.Schema["properties"].(map[string]any)
			if _, ok := props[me.ReplicationKey]; !ok {
				me.ReplicationKey = ""
			}
			validKeys := []string{}
			if me.ReplicationKey != "" {
				validKeys = []string{me.ReplicationKey}
			}
			top := map[string]any{}
			for k, v := range e.Metadata[0].Metadata {
				top[k] = v
			}
			top["table-key-properties"] = me.KeyProperties
			top["valid-replication-keys"] = validKeys
			me.Metadata = []Metadata{{Breadcrumb: []string{}, Metadata: top}}
			for _, p := range slices.Sorted(maps.Keys(props)) {
				inclusion := "available"
				if p == me.ReplicationKey || slices.Contains(me.KeyProperties, p) || d.Parent != nil && p == d.Parent.As {
					inclusion = "automatic"
				}
				me.Metadata = append(me.Metadata, Metadata{
					Breadcrumb: []string{"properties", p},
					Metadata:   map[string]any{"inclusion": inclusion, "selected-by-default": true},
				})
			}
			out.Streams = append(out.Streams, me)
		}
	}
	return out
}

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
}

// attachMaps gives a node the streams its maps write; the node is
// selected when one of them is.
func attachMaps(n *node, m *streammap.Mapper, sel *Selection) {
	if m == nil {
		return
	}
	n.outs = []*mappedOutput{}
	n.selected = false
	rk := n.def.ReplicationKey
	for _, o := range m.Outputs(n.def.Name) {
		mo := &mappedOutput{o: o, tr: o.Transformer(), selected: sel.Selected(o.Name), dropped: sel.Dropped(o.Name)}
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
	wrote := false
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
		if rec == nil {
			continue
		}
		if len(mo.dropped) > 0 {
			kept := make(map[string]any, len(rec))
			for k, v := range rec {
				if !mo.dropped[k] {
					kept[k] = v
				}
			}
			rec = kept
		}
		if mo.buf, err = codec.AppendObject(mo.buf[:0], rec, &mo.keys); err != nil {
			return fmt.Errorf("stream %q: %w", mo.o.Name, err)
		}
		if err := e.recordAs(n, mo.o.Name, mo.buf, extracted); err != nil {
			return err
		}
		wrote = true
	}
	if wrote {
		n.records.Add(1)
	}
	return nil
}

// mapError is a map's error for a record of n. Config values are
// compiled into the expressions: the message is scrubbed of secrets like
// any other.
func (e *engine) mapError(n *node, err error) error {
	return fmt.Errorf("stream %q: %s", n.def.Name, e.redact.Redact(err.Error()))
}

// recordAs writes a record of n as the stream name: into the lines of its
// page when they are gathered (its only selected output).
func (e *engine) recordAs(n *node, name string, rec []byte, extracted time.Time) error {
	if ok, err := n.lines.Add(name, rec, extracted, n.version); ok {
		return err
	}
	return e.out.Record(name, rec, extracted, n.version)
}

// Stream maps on the splice path: a map that reads only named top-level
// properties (streammap.Output.SpliceProps) is applied to a splicable
// record's bytes, its properties read from the walker's captures, so a
// mapped stream keeps the splice path. A map that needs the tree (it
// reads the record whole, or flattens), properties deselected in the
// catalog, or more properties to capture than the walker holds
// (codec.MaxCaptures, keys included) send the stream down the tree path.

// splicedOutput is a selected stream a map writes from a record's bytes.
type splicedOutput struct {
	mo *mappedOutput
	// slots are the capture slots of the properties the map reads, in
	// SpliceProps' order; -1 for a property the schema does not list,
	// which no splicable record holds (the walker is not sure of it).
	slots []int
	vals  [][]byte
	buf   []byte
	keep  bool // the filter keeps the record in buf
}

// spliceOutputs are n's selected outputs as spliced records take them,
// and capture with the properties their maps read appended; ok is false
// when one of them needs the record's tree.
func spliceOutputs(n *node, schema map[string]any, capture []string) (outs []splicedOutput, all []string, ok bool) {
	all = append([]string{}, capture...)
	if n.outs == nil {
		return nil, all, true
	}
	props, _ := schema["properties"].(map[string]any)
	for _, mo := range n.outs {
		if !mo.selected {
			continue
		}
		names, ok := mo.o.SpliceProps()
		if !ok || len(mo.dropped) > 0 {
			return nil, nil, false
		}
		so := splicedOutput{mo: mo, slots: make([]int, len(names)), vals: make([][]byte, len(names))}
		for i, name := range names {
			slot := slices.Index(all, name)
			if slot < 0 && props[name] != nil {
				slot = len(all)
				all = append(all, name)
			}
			so.slots[i] = slot
		}
		outs = append(outs, so)
	}
	return outs, all, true
}

// mapRecord maps a splicable record into each output's buffer. sure is
// false when the record must take the tree path; err is a map's error,
// which the caller reports where the tree path would (after dedupe and
// the bookmark).
func (s *splicer) mapRecord(r *codec.Record) (sure bool, err error) {
	for i := range s.outs {
		so := &s.outs[i]
		for j, slot := range so.slots {
			so.vals[j] = nil
			if slot >= 0 {
				so.vals[j] = r.Captures[slot]
			}
		}
		so.buf, so.keep, err = so.mo.tr.AppendSpliced(so.buf[:0], r.Raw, so.vals)
		if errors.Is(err, streammap.ErrNeedsTree) {
			return false, nil
		}
		if err != nil {
			return true, err
		}
	}
	return true, nil
}

// writeMapped writes the outputs mapRecord made.
func (e *engine) writeMapped(n *node, s *splicer, extracted time.Time) error {
	wrote := false
	for i := range s.outs {
		so := &s.outs[i]
		if !so.keep {
			continue
		}
		if err := e.recordAs(n, so.mo.o.Name, so.buf, extracted); err != nil {
			return err
		}
		wrote = true
	}
	if wrote {
		n.records.Add(1)
	}
	return nil
}

// handleRaw takes a record of a spliced page down the tree path.
func (e *engine) handleRaw(ctx context.Context, n *node, raw []byte, extracted time.Time, part streams.Partition) error {
	v, err := codec.Decode(raw)
	if err != nil {
		return fmt.Errorf("stream %q: %w", n.def.Name, err)
	}
	return e.handle(ctx, n, v, extracted, part)
}

// schemaMapped writes the SCHEMA of each selected stream a node's maps
// write.
func (e *engine) schemaMapped(n *node) error {
	for _, mo := range n.outs {
		if !mo.selected {
			continue
		}
		schema := (&node{dropped: mo.dropped}).outputSchema(mo.o.Schema)
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
