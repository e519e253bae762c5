package catalog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
)

// abConfig is a config of four streams: a full table, an incremental one,
// a parent and its child.
func abConfig() *settings.Config {
	obj := func(props ...string) map[string]any {
		p := map[string]any{}
		for _, k := range props {
			p[k] = map[string]any{}
		}
		return map[string]any{"type": "object", "properties": p}
	}
	return &settings.Config{
		Streams: []streams.Definition{
			{Name: "tickets", PrimaryKey: []string{"id"}},
			{Name: "orders", PrimaryKey: []string{"id"}, ReplicationKey: "updated_at"},
			{Name: "items", PrimaryKey: []string{"id"}, Parent: &streams.Parent{Stream: "orders", Key: "id", As: "order_id"}},
		},
		Schemas: map[string]map[string]any{
			"tickets": obj("id", "subject"),
			"orders":  obj("id", "updated_at", "amount", "note"),
			"items":   obj("id", "order_id", "sku"),
		},
	}
}

func TestDiscoverAirbyte(t *testing.T) {
	cat := DiscoverAirbyte(abConfig(), nil)
	got := map[string]AirbyteStream{}
	for _, s := range cat.Streams {
		s.JSONSchema = nil
		got[s.Name] = s
	}
	want := map[string]AirbyteStream{
		"tickets": {Name: "tickets", SupportedSyncModes: []string{"full_refresh"}, SourceDefinedPrimaryKey: [][]string{{"id"}}},
		"orders": {Name: "orders", SupportedSyncModes: []string{"full_refresh", "incremental"}, SourceDefinedCursor: true,
			DefaultCursorField: []string{"updated_at"}, SourceDefinedPrimaryKey: [][]string{{"id"}}},
		"items": {Name: "items", SupportedSyncModes: []string{"full_refresh"}, SourceDefinedPrimaryKey: [][]string{{"id"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("catalog (-want +got):\n%s", diff)
	}
}

func TestParseConfigured(t *testing.T) {
	tests := []struct {
		name        string
		catalog     string
		selected    []string
		fullRefresh []string
		dropped     map[string]map[string]bool
		wantErr     string
	}{
		{
			name: "incremental and full refresh",
			catalog: `{"streams": [
				{"stream": {"name": "orders", "json_schema": {}}, "sync_mode": "incremental", "cursor_field": ["updated_at"], "destination_sync_mode": "append_dedup", "primary_key": [["id"]]},
				{"stream": {"name": "tickets", "json_schema": {}}, "sync_mode": "full_refresh", "destination_sync_mode": "overwrite"}]}`,
			selected: []string{"orders", "tickets"},
		},
		{
			name:        "full refresh of an incremental stream drops its bookmark",
			catalog:     `{"streams": [{"stream": {"name": "orders"}, "sync_mode": "full_refresh", "destination_sync_mode": "overwrite"}]}`,
			selected:    []string{"orders"},
			fullRefresh: []string{"orders"},
		},
		{
			name:        "sync_mode defaults to full_refresh",
			catalog:     `{"streams": [{"stream": {"name": "orders"}, "destination_sync_mode": "append"}]}`,
			selected:    []string{"orders"},
			fullRefresh: []string{"orders"},
		},
		{
			name:     "incremental without cursor_field takes the source-defined cursor",
			catalog:  `{"streams": [{"stream": {"name": "orders"}, "sync_mode": "incremental", "destination_sync_mode": "append"}]}`,
			selected: []string{"orders"},
		},
		{
			name: "column selection keeps the keys",
			catalog: `{"streams": [{"stream": {"name": "orders", "json_schema": {"type": "object", "properties": {"amount": {}}}},
				"sync_mode": "incremental", "destination_sync_mode": "append"}]}`,
			selected: []string{"orders"},
			dropped:  map[string]map[string]bool{"orders": {"note": true}},
		},
		{
			name:     "a child without its parent",
			catalog:  `{"streams": [{"stream": {"name": "items"}, "sync_mode": "full_refresh", "destination_sync_mode": "append"}]}`,
			selected: []string{"items"},
		},
		{
			name:    "incremental on a full-table stream",
			catalog: `{"streams": [{"stream": {"name": "tickets"}, "sync_mode": "incremental", "destination_sync_mode": "append"}]}`,
			wantErr: `streams[0].sync_mode: stream "tickets" supports only full_refresh (it has no replication_key), got incremental`,
		},
		{
			name:    "another cursor field",
			catalog: `{"streams": [{"stream": {"name": "orders"}, "sync_mode": "incremental", "cursor_field": ["amount"], "destination_sync_mode": "append"}]}`,
			wantErr: `streams[0].cursor_field: stream "orders" has the source-defined cursor ["updated_at"], got ["amount"]`,
		},
		{
			name:    "unknown stream",
			catalog: `{"streams": [{"stream": {"name": "nope"}, "sync_mode": "full_refresh", "destination_sync_mode": "append"}]}`,
			wantErr: `streams[0].stream.name: unknown stream "nope" (the config defines tickets, orders, items)`,
		},
		{
			name:    "unknown sync mode",
			catalog: `{"streams": [{"stream": {"name": "orders"}, "sync_mode": "cdc", "destination_sync_mode": "append"}]}`,
			wantErr: `streams[0].sync_mode: expected full_refresh or incremental, got "cdc"`,
		},
		{
			name:    "stream twice",
			catalog: `{"streams": [{"stream": {"name": "orders"}, "sync_mode": "full_refresh"}, {"stream": {"name": "orders"}, "sync_mode": "incremental"}]}`,
			wantErr: `streams[1].stream.name: stream "orders" is configured twice`,
		},
		{
			name:    "no name",
			catalog: `{"streams": [{"stream": {}, "sync_mode": "full_refresh"}]}`,
			wantErr: `streams[0].stream.name: is required`,
		},
		{
			name:    "no streams",
			catalog: `{"catalog": []}`,
			wantErr: `streams: expected the configured catalog's "streams" array`,
		},
		{
			name:    "a Singer catalog is not a configured catalog",
			catalog: `{"streams": [{"tap_stream_id": "orders", "stream": "orders"}]}`,
			wantErr: `streams.stream: expected an object, got string`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree, err := codec.Decode([]byte(tt.catalog))
			if err != nil {
				t.Fatal(err)
			}
			as, err := parseConfigured(tree, abConfig(), nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var selected []string
			for _, d := range abConfig().Streams {
				if as.sel.Selected(d.Name) {
					selected = append(selected, d.Name)
				}
				if diff := cmp.Diff(tt.dropped[d.Name], as.sel.Dropped(d.Name)); diff != "" {
					t.Errorf("dropped of %s (-want +got):\n%s", d.Name, diff)
				}
			}
			if diff := cmp.Diff(tt.selected, selected, cmp.Transformer("sort", sortedCopy)); diff != "" {
				t.Errorf("selected (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.fullRefresh, as.fullRefresh); diff != "" {
				t.Errorf("full refresh (-want +got):\n%s", diff)
			}
		})
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestLoadConfiguredNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "configured.json")
	if err := os.WriteFile(path, []byte(`{"streams": [{"stream": {"name": "tickets"}, "sync_mode": "incremental"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := LoadConfigured(path, abConfig(), nil)
	var ie *settings.InputError
	if !errors.As(err, &ie) || ie.File != path {
		t.Fatalf("error %v (%T), want an *InputError naming %s", err, err, path)
	}
}
