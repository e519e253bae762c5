package catalog

import (
	"maps"
	"slices"

	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streammap"
	"github.com/tap-dev/tap/streams"
)

// resolver resolves a catalog's stream names: the config's streams, or
// with stream maps the streams the maps write, each to the definition of
// the stream it is read from.
func resolver(cfg *settings.Config, m *streammap.Mapper) func(name string) *streams.Definition {
	if m == nil {
		return cfg.Stream
	}
	return func(name string) *streams.Definition {
		if o := m.Output(name); o != nil {
			return cfg.Stream(o.Source)
		}
		return nil
	}
}

// schemaOf is the schema of a catalog's stream: mapped when maps write it.
func schemaOf(cfg *settings.Config, m *streammap.Mapper, name string) map[string]any {
	if m != nil {
		if o := m.Output(name); o != nil {
			return o.Schema
		}
	}
	return cfg.Schemas[name]
}

// mapped replaces each stream of a discovered catalog by the streams its
// maps write, with their schemas and keys.
func mapped(cfg *settings.Config, m *streammap.Mapper, cat *Catalog) *Catalog {
	if m == nil {
		return cat
	}
	out := &Catalog{Streams: []Stream{}}
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
