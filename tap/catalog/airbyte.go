package catalog

import (
	"errors"
	"fmt"

	"github.com/tap-dev/tap/inputfile"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streammap"
	"github.com/tap-dev/tap/streams"
)

// Airbyte sync modes.
const (
	SyncFullRefresh = "full_refresh"
	SyncIncremental = "incremental"
)

// AirbyteStream is one stream of an Airbyte catalog (AirbyteStream).
type AirbyteStream struct {
	Name                    string         `json:"name"`
	JSONSchema              map[string]any `json:"json_schema"`
	SupportedSyncModes      []string       `json:"supported_sync_modes"`
	SourceDefinedCursor     bool           `json:"source_defined_cursor,omitempty"`
	DefaultCursorField      []string       `json:"default_cursor_field,omitempty"`
	SourceDefinedPrimaryKey [][]string     `json:"source_defined_primary_key,omitempty"`
}

// AirbyteCatalog is what `tap discover` prints.
type AirbyteCatalog struct {
	Streams []AirbyteStream `json:"streams"`
}

// DiscoverAirbyte builds the Airbyte catalog of every stream of cfg from
// the Singer catalog (Discover), so both modes describe the same streams.
func DiscoverAirbyte(cfg *settings.Config, m *streammap.Mapper) *AirbyteCatalog {
	cat := &AirbyteCatalog{Streams: []AirbyteStream{}}
	for _, e := range Discover(cfg, m).Streams {
		s := AirbyteStream{Name: e.Stream, JSONSchema: e.Schema, SupportedSyncModes: []string{SyncFullRefresh}}
		if e.ReplicationKey != "" {
			s.SupportedSyncModes = append(s.SupportedSyncModes, SyncIncremental)
			s.SourceDefinedCursor = true
			s.DefaultCursorField = []string{e.ReplicationKey}
		}
		for _, k := range e.KeyProperties {
			s.SourceDefinedPrimaryKey = append(s.SourceDefinedPrimaryKey, []string{k})
		}
		cat.Streams = append(cat.Streams, s)
	}
	return cat
}

// configuredCatalog is Airbyte's ConfiguredAirbyteCatalog, as far as a
// source reads it.
type configuredCatalog struct {
	Streams []configuredStream `json:"streams"`
}

type configuredStream struct {
	Stream              airbyteStreamRef `json:"stream"`
	SyncMode            string           `json:"sync_mode"`
	DestinationSyncMode string           `json:"destination_sync_mode"`
	CursorField         []string         `json:"cursor_field"`
	PrimaryKey          [][]string       `json:"primary_key"`
}

// airbyteStreamRef is the stream of a configured stream. (A named type:
// decode errors name the expected type from its name.)
type airbyteStreamRef struct {
	Name       string         `json:"name"`
	Namespace  string         `json:"namespace"`
	JSONSchema map[string]any `json:"json_schema"`
}

// airbyteSelection is what a configured catalog asks of a run.
type airbyteSelection struct {
	sel *Selection
	// fullRefresh lists the incremental streams and the feeds configured
	// full_refresh: they run without their incoming bookmark or seq.
	fullRefresh []string
}

// LoadConfigured reads an Airbyte ConfiguredAirbyteCatalog and turns it
// into the Selection of a run: only the listed streams sync. It returns
// the incremental streams and feeds configured for full_refresh, whose
// bookmarks (a feed's seq) the run must ignore. Every error is an *settings.InputError naming the file
// and the field.
func LoadConfigured(path string, cfg *settings.Config, m *streammap.Mapper) (*Selection, []string, error) {
	tree, err := settings.ReadJSONFile(path, "configured catalog", inputfile.MaxCatalog)
	if err != nil {
		return nil, nil, err
	}
	as, err := parseConfigured(tree, cfg, m)
	if err != nil {
		return nil, nil, inputErr(path, err)
	}
	return as.sel, as.fullRefresh, nil
}

func parseConfigured(tree any, cfg *settings.Config, m *streammap.Mapper) (*airbyteSelection, error) {
	var cat configuredCatalog
	if err := decodeLoose(tree, &cat); err != nil {
		return nil, err
	}
	if list, ok := tree.(map[string]any)["streams"]; !ok || list == nil {
		return nil, errors.New(`streams: expected the configured catalog's "streams" array`)
	}
	out := &airbyteSelection{sel: &Selection{streams: map[string]*streamSelection{}}}
	resolve := resolver(cfg, m)
	for i, cs := range cat.Streams {
		name := cs.Stream.Name
		if name == "" {
			return nil, fmt.Errorf("streams[%d].stream.name: is required", i)
		}
		d := resolve(name)
		if d == nil {
			return nil, fmt.Errorf("streams[%d].stream.name: unknown stream %q (the config defines %s)", i, name, streamNames(cfg))
		}
		if _, dup := out.sel.streams[name]; dup {
			return nil, fmt.Errorf("streams[%d].stream.name: stream %q is configured twice", i, name)
		}
		switch cs.SyncMode {
		case SyncIncremental:
			if d.ReplicationKey == "" {
				return nil, fmt.Errorf("streams[%d].sync_mode: stream %q supports only full_refresh (it has no replication_key), got incremental", i, name)
			}
			if len(cs.CursorField) > 0 && (len(cs.CursorField) != 1 || cs.CursorField[0] != d.ReplicationKey) {
				return nil, fmt.Errorf("streams[%d].cursor_field: stream %q has the source-defined cursor [%q], got %q", i, name, d.ReplicationKey, cs.CursorField)
			}
		case SyncFullRefresh, "": // the protocol's default
			// A full refresh reads all again: an incremental stream from
			// its start date, a feed from its first seq (an overwrite
			// destination would lose what came before the state's).
			if d.ReplicationKey != "" || d.Feed != nil {
				out.fullRefresh = append(out.fullRefresh, d.Name)
			}
		default:
			return nil, fmt.Errorf("streams[%d].sync_mode: expected full_refresh or incremental, got %q", i, cs.SyncMode)
		}
		out.sel.streams[name] = &streamSelection{dropped: droppedColumns(d, schemaOf(cfg, m, name), cs.Stream.JSONSchema),
			namespace: cs.Stream.Namespace}
	}
	return out, nil
}

// droppedColumns reads Airbyte's column selection: a configured stream
// whose json_schema lists properties syncs only those (and the keys that
// identify and order a record, which are always kept). A json_schema
// without "properties" selects every column.
func droppedColumns(d *streams.Definition, schema, configured map[string]any) map[string]bool {
	want, ok := configured["properties"].(map[string]any)
	if !ok {
		return nil
	}
	props, _ := schema["properties"].(map[string]any)
	dropped := map[string]bool{}
	for p := range props {
		if _, keep := want[p]; !keep && !automatic(d, p) {
			dropped[p] = true
		}
	}
	if len(dropped) == 0 {
		return nil
	}
	return dropped
}
