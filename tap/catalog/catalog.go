// Package catalog describes the streams of a config to the tools that run
// the tap, and reads back what they select: the Singer catalog (what
// --discover prints and --catalog reads) and Airbyte's catalog and
// configured catalog.
//
// Both catalogs are made from one description (Discover), so the two modes
// describe the same streams. With stream maps, a catalog describes the
// streams the maps write, not the streams read: a catalog's stream names
// are the mapped names, each resolved to the definition it is read from.
//
// What a catalog selects is a Selection: the streams to sync, the
// properties dropped from each, and the streams the catalog asks to read
// as full tables. The properties that identify and order a record (its
// primary key, replication key and parent key) are "automatic": always
// kept, whatever the catalog says.
package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/inputfile"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streammap"
	"github.com/tap-dev/tap/streams"
)

// Catalog is a Singer catalog: what --discover prints and --catalog reads.
type Catalog struct {
	Streams []Stream `json:"streams"`
}

// Stream is one stream of a catalog.
type Stream struct {
	TapStreamID       string         `json:"tap_stream_id"`
	Stream            string         `json:"stream"`
	Schema            map[string]any `json:"schema"`
	KeyProperties     []string       `json:"key_properties"`
	ReplicationKey    string         `json:"replication_key,omitempty"`
	ReplicationMethod string         `json:"replication_method"`
	Metadata          []Metadata     `json:"metadata"`
}

// Metadata is one breadcrumb's metadata.
type Metadata struct {
	Breadcrumb []string       `json:"breadcrumb"`
	Metadata   map[string]any `json:"metadata"`
}

// Discover builds the catalog of every stream of cfg; with stream maps (m
// not nil: the config's, compiled), of the streams they write.
func Discover(cfg *settings.Config, m *streammap.Mapper) *Catalog {
	cat := &Catalog{Streams: []Stream{}}
	for i := range cfg.Streams {
		d := &cfg.Streams[i]
		schema := cfg.Schemas[d.Name]
		method := "FULL_TABLE"
		validKeys := []string{}
		if d.ReplicationKey != "" {
			method = "INCREMENTAL"
			validKeys = []string{d.ReplicationKey}
		}
		keys := d.PrimaryKey
		if keys == nil {
			keys = []string{}
		}
		md := []Metadata{{
			Breadcrumb: []string{},
			Metadata: map[string]any{
				"inclusion":                 "available",
				"selected-by-default":       true,
				"table-key-properties":      keys,
				"valid-replication-keys":    validKeys,
				"forced-replication-method": method,
			},
		}}
		if d.Parent != nil && d.Parent.Stream != "" {
			md[0].Metadata["parent-tap-stream-id"] = d.Parent.Stream
		}
		props, _ := schema["properties"].(map[string]any)
		for _, p := range slices.Sorted(maps.Keys(props)) {
			inclusion := "available"
			if automatic(d, p) {
				inclusion = "automatic"
			}
			md = append(md, Metadata{
				Breadcrumb: []string{"properties", p},
				Metadata:   map[string]any{"inclusion": inclusion, "selected-by-default": true},
			})
		}
		cat.Streams = append(cat.Streams, Stream{
			TapStreamID:       d.Name,
			Stream:            d.Name,
			Schema:            schema,
			KeyProperties:     keys,
			ReplicationKey:    d.ReplicationKey,
			ReplicationMethod: method,
			Metadata:          md,
		})
	}
	return mapped(cfg, m, cat)
}

// automatic reports whether a property must always be synced: the keys
// that identify a record and order the stream.
func automatic(d *streams.Definition, prop string) bool {
	if prop == d.ReplicationKey {
		return true
	}
	if d.Parent != nil && prop == d.Parent.As {
		return true
	}
	for _, k := range d.PrimaryKey {
		if k == prop {
			return true
		}
	}
	return false
}

// Selection says which streams and properties a run syncs. A nil
// *Selection selects everything.
type Selection struct {
	streams map[string]*streamSelection
}

type streamSelection struct {
	// dropped holds the deselected properties.
	dropped map[string]bool
	// fullTable: the catalog's replication-method is FULL_TABLE.
	fullTable bool
	// namespace is the stream's namespace in an Airbyte configured
	// catalog; "" for none.
	namespace string
}

// Namespace is the stream's namespace in an Airbyte configured catalog:
// "" for none, and for a stream the catalog does not list.
func (s *Selection) Namespace(stream string) string {
	if s == nil || s.streams[stream] == nil {
		return ""
	}
	return s.streams[stream].namespace
}

// Selected reports whether the stream syncs.
func (s *Selection) Selected(stream string) bool {
	if s == nil {
		return true
	}
	_, ok := s.streams[stream]
	return ok
}

// Dropped returns the deselected properties of a stream (nil when none).
func (s *Selection) Dropped(stream string) map[string]bool {
	if s == nil || s.streams[stream] == nil {
		return nil
	}
	return s.streams[stream].dropped
}

// FullTable reports whether the catalog asks for the stream to be read as
// a full table (metadata "replication-method": "FULL_TABLE"), whatever its
// replication key.
func (s *Selection) FullTable(stream string) bool {
	return s != nil && s.streams[stream] != nil && s.streams[stream].fullTable
}

// Load reads a Singer catalog and turns it into a Selection of the
// streams of cfg (with stream maps, m, of the streams they write). Every
// error is an *settings.InputError naming the file and the field.
func Load(path string, cfg *settings.Config, m *streammap.Mapper) (*Selection, error) {
	tree, err := settings.ReadJSONFile(path, "catalog", inputfile.MaxCatalog)
	if err != nil {
		return nil, err
	}
	sel, err := selection(tree, cfg, m)
	if err != nil {
		return nil, inputErr(path, err)
	}
	return sel, nil
}

// Parse reads a Singer catalog from data, as Load does from a file.
func Parse(data []byte, cfg *settings.Config, m *streammap.Mapper) (*Selection, error) {
	tree, err := codec.Decode(data)
	if err != nil {
		return nil, err
	}
	return selection(tree, cfg, m)
}

func selection(tree any, cfg *settings.Config, m *streammap.Mapper) (*Selection, error) {
	var cat Catalog
	if err := decodeLoose(tree, &cat); err != nil {
		return nil, err
	}
	if _, ok := tree.(map[string]any)["streams"]; !ok {
		return nil, errors.New(`streams: expected the catalog's "streams" array`)
	}
	sel := &Selection{streams: map[string]*streamSelection{}}
	resolve := resolver(cfg, m)
	for i, e := range cat.Streams {
		name := e.TapStreamID
		if name == "" {
			name = e.Stream
		}
		d := resolve(name)
		if d == nil {
			return nil, fmt.Errorf("streams[%d].tap_stream_id: unknown stream %q (the config defines %s)", i, name, streamNames(cfg))
		}
		selected, dropped, err := readSelection(e, d)
		if err != nil {
			return nil, fmt.Errorf("streams[%d] (stream %q).%w", i, name, err)
		}
		if selected {
			sel.streams[name] = &streamSelection{dropped: dropped, fullTable: fullTableMethod(e)}
		}
	}
	return sel, nil
}

func inputErr(file string, err error) error {
	var ie *settings.InputError
	if errors.As(err, &ie) {
		return err
	}
	return &settings.InputError{File: file, Err: err}
}

// readSelection reads the "selected" metadata of one catalog entry.
// Without a stream-level "selected", "selected-by-default" decides, as the
// Singer spec says; a property without "selected" is kept.
// A "selected" that is not true or false ("false", 0, null) is an error:
// read as absent, it would sync a stream the user meant to leave out.
func readSelection(e Stream, d *streams.Definition) (bool, map[string]bool, error) {
	selected := false
	dropped := map[string]bool{}
	for j, m := range e.Metadata {
		field := fmt.Sprintf("metadata[%d].metadata.", j)
		sel, hasSel, err := flag(m.Metadata, "selected", field)
		if err != nil {
			return false, nil, err
		}
		switch {
		case len(m.Breadcrumb) == 0:
			byDefault, hasDefault, err := flag(m.Metadata, "selected-by-default", field)
			if err != nil {
				return false, nil, err
			}
			if hasSel {
				selected = sel
			} else if hasDefault {
				selected = byDefault
			}
		case len(m.Breadcrumb) == 2 && m.Breadcrumb[0] == "properties":
			prop := m.Breadcrumb[1]
			if automatic(d, prop) {
				continue
			}
			if hasSel && !sel {
				dropped[prop] = true
			} else if m.Metadata["inclusion"] == "unsupported" {
				dropped[prop] = true
			}
		}
	}
	v, has, err := flag(e.Schema, "selected", "schema.")
	if err != nil {
		return false, nil, err
	}
	if has && v {
		selected = true // the legacy form: "selected" inside the schema
	}
	if len(dropped) == 0 {
		dropped = nil
	}
	return selected, dropped, nil
}

// flag reads the boolean m[key]: has is false when m has no such key, and
// a value that is not true or false is an error naming field+key.
func flag(m map[string]any, key, field string) (v, has bool, err error) {
	raw, has := m[key]
	if !has {
		return false, false, nil
	}
	v, ok := raw.(bool)
	if !ok {
		text, _ := codec.Marshal(raw)
		return false, true, fmt.Errorf("%s%s: expected true or false, got %s", field, key, text)
	}
	return v, true, nil
}

// fullTableMethod reads the stream-level "replication-method" metadata.
func fullTableMethod(e Stream) bool {
	for _, m := range e.Metadata {
		if len(m.Breadcrumb) == 0 && m.Metadata["replication-method"] == "FULL_TABLE" {
			return true
		}
	}
	return false
}

func streamNames(cfg *settings.Config) string {
	s := ""
	for i, d := range cfg.Streams {
		if i > 0 {
			s += ", "
		}
		s += d.Name
	}
	return s
}

// decodeLoose decodes a resolved tree into out, ignoring unknown fields
// (catalogs carry fields of other tools).
func decodeLoose(tree any, out any) error {
	if _, ok := tree.(map[string]any); !ok {
		return errors.New("expected a JSON object at the top level")
	}
	b, err := json.Marshal(tree)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, out); err != nil {
		return settings.DescribeDecodeError(err)
	}
	return nil
}
