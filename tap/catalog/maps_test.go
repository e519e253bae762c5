package catalog_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/internal/taptest"
	"github.com/tap-dev/tap/tap/catalog"
	"github.com/tap-dev/tap/tap/inputs"
)

// The catalog describes the streams the maps write: names, schemas, keys
// and the replication key where the mapped schema keeps it.
func TestDiscoverShowsMappedStreams(t *testing.T) {
	cfg := taptest.MappedConfig()
	m, err := inputs.Maps(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.Discover(cfg, m)
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
