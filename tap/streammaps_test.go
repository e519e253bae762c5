package tap

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mappedConfig is testConfig with orders aliased and copied, its note
// removed and a hash added.
func mappedConfig() *Config {
	cfg := testConfig()
	cfg.Path = "config.json"
	cfg.StreamMaps = map[string]any{
		"orders":      map[string]any{"__alias__": "sales", "note": nil, "note_hash": "md5(str(note))"},
		"orders_copy": map[string]any{"__source__": "orders", "id": "id", "__else__": nil},
	}
	return cfg
}

// The catalog describes the streams the maps write: names, schemas, keys
// and the replication key where the mapped schema keeps it.
func TestDiscoverShowsMappedStreams(t *testing.T) {
	cat := Discover(mappedConfig())
	var names []string
	for _, e := range cat.Streams {
		names = append(names, e.TapStreamID)
	}
	if diff := cmp.Diff([]string{"sales", "orders_copy", "items"}, names); diff != "" {
		t.Fatalf("streams (-want +got):\n%s", diff)
	}
	sales, cp := cat.Streams[0], cat.Streams[1]
	props := sales.Schema["properties"].(map[string]any)
	if _, ok := props["note"]; ok {
		t.Error("sales still has note")
	}
	if _, ok := props["note_hash"]; !ok || sales.ReplicationKey != "updated_at" {
		t.Errorf("sales: properties %v, replication key %q", slices.Sorted(maps.Keys(props)), sales.ReplicationKey)
	}
	if cp.ReplicationKey != "" || !slices.Equal(cp.KeyProperties, []string{"id"}) {
		t.Errorf("orders_copy: replication key %q (its schema has no updated_at), keys %v", cp.ReplicationKey, cp.KeyProperties)
	}
	for _, m := range sales.Metadata[1:] {
		if m.Breadcrumb[1] == "note_hash" && m.Metadata["inclusion"] != "available" {
			t.Errorf("note_hash metadata %v", m.Metadata)
		}
	}
}

// A catalog selects the mapped streams by their names; the engine walks
// the source of a selected output and writes only the selected outputs.
func TestCatalogSelectsMappedStreams(t *testing.T) {
	cfg := mappedConfig()
	path := filepath.Join(t.TempDir(), "catalog.json")
	os.WriteFile(path, []byte(`{"streams": [{"tap_stream_id": "orders_copy", "metadata": [{"breadcrumb": [], "metadata": {"selected": true}}]}]}`), 0o644)
	sel, err := LoadCatalog(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := compileMaps(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := &node{def: &cfg.Streams[0], selected: sel.Selected("orders")}
	attachMaps(n, m, sel)
	if !n.selected || !slices.Equal(n.selectedOutputs(), []string{"orders_copy"}) {
		t.Errorf("selected %v, outputs %v; want the source walked for orders_copy only", n.selected, n.selectedOutputs())
	}
	os.WriteFile(path, []byte(`{"streams": [{"tap_stream_id": "orders"}]}`), 0o644)
	if _, err := LoadCatalog(path, cfg); err == nil || !strings.Contains(err.Error(), `unknown stream "orders"`) {
		t.Errorf("a catalog naming the aliased source: error %v", err)
	}
}

func TestBadStreamMapIsBadInput(t *testing.T) {
	cfg := testConfig()
	cfg.Path = "config.json"
	cfg.StreamMaps = map[string]any{"orders": map[string]any{"x": "[i for i in note]"}}
	_, err := compileMaps(cfg)
	if err == nil || ExitCode(err) != ExitBadInput || !strings.Contains(err.Error(), `config.json: stream_maps.orders.x: "[i for i in note]"`) {
		t.Errorf("error %v (exit %d), want a bad-input error naming the file, the map and the expression", err, ExitCode(err))
	}
}
