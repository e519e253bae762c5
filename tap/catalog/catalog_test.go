package catalog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/internal/taptest"
	"github.com/tap-dev/tap/settings"
)

func TestDiscoverMetadata(t *testing.T) {
	cat := Discover(taptest.OrdersConfig(), nil)
	orders := cat.Streams[0]
	if orders.ReplicationMethod != "INCREMENTAL" || cat.Streams[1].ReplicationMethod != "FULL_TABLE" {
		t.Errorf("replication methods %s, %s", orders.ReplicationMethod, cat.Streams[1].ReplicationMethod)
	}
	got := map[string]any{}
	for _, m := range append(orders.Metadata, cat.Streams[1].Metadata...) {
		if len(m.Breadcrumb) == 2 {
			got[m.Breadcrumb[1]] = m.Metadata["inclusion"]
		}
	}
	want := map[string]any{"id": "automatic", "updated_at": "automatic", "amount": "available", "note": "available", "order_id": "automatic", "sku": "available"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("inclusion (-want +got):\n%s", diff)
	}
	if orders.Metadata[0].Metadata["forced-replication-method"] != "INCREMENTAL" {
		t.Errorf("stream metadata: %v", orders.Metadata[0].Metadata)
	}
}

func TestLoadCatalogSelection(t *testing.T) {
	tests := []struct {
		name        string
		catalog     string
		selected    []string
		dropped     map[string]bool // of orders
		wantErrPart string
	}{
		{
			name:     "selected-by-default without selected",
			catalog:  `{"streams": [{"tap_stream_id": "orders", "metadata": [{"breadcrumb": [], "metadata": {"selected-by-default": true}}]}]}`,
			selected: []string{"orders"},
		},
		{
			name: "explicit selection with deselected and automatic properties",
			catalog: `{"streams": [
				{"tap_stream_id": "orders", "metadata": [
					{"breadcrumb": [], "metadata": {"selected": true, "selected-by-default": false}},
					{"breadcrumb": ["properties", "note"], "metadata": {"selected": false}},
					{"breadcrumb": ["properties", "id"], "metadata": {"selected": false}},
					{"breadcrumb": ["properties", "amount"], "metadata": {"inclusion": "unsupported"}}]},
				{"tap_stream_id": "items", "metadata": [{"breadcrumb": [], "metadata": {"selected": false}}]}]}`,
			selected: []string{"orders"},
			dropped:  map[string]bool{"note": true, "amount": true},
		},
		{
			name:     "legacy selected in the schema",
			catalog:  `{"streams": [{"stream": "items", "schema": {"selected": true}, "metadata": []}]}`,
			selected: []string{"items"},
		},
		{name: "unknown stream", catalog: `{"streams": [{"tap_stream_id": "nope"}]}`, wantErrPart: `unknown stream "nope" (the config defines orders, items)`},
		{name: "streams not an array", catalog: `{"streams": 1}`, wantErrPart: "streams: expected an array"},
		{name: "selected a string", catalog: `{"streams": [{"tap_stream_id": "orders", "metadata": [{"breadcrumb": [], "metadata": {"selected-by-default": true, "selected": "false"}}]}]}`,
			wantErrPart: `streams[0] (stream "orders").metadata[0].metadata.selected: expected true or false, got "false"`},
		{name: "selected-by-default a number", catalog: `{"streams": [{"tap_stream_id": "orders", "metadata": [{"breadcrumb": [], "metadata": {"selected-by-default": 1}}]}]}`,
			wantErrPart: `streams[0] (stream "orders").metadata[0].metadata.selected-by-default: expected true or false, got 1`},
		{name: "a property's selected null", catalog: `{"streams": [{"tap_stream_id": "items", "metadata": [{"breadcrumb": [], "metadata": {"selected": true}}, {"breadcrumb": ["properties", "note"], "metadata": {"selected": null}}]}]}`,
			wantErrPart: `streams[0] (stream "items").metadata[1].metadata.selected: expected true or false, got null`},
		{name: "legacy selected a string", catalog: `{"streams": [{"stream": "items", "schema": {"selected": "true"}, "metadata": []}]}`,
			wantErrPart: `streams[0] (stream "items").schema.selected: expected true or false, got "true"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "catalog.json")
			os.WriteFile(path, []byte(tt.catalog), 0o644)
			sel, err := Load(path, taptest.OrdersConfig(), nil)
			if tt.wantErrPart != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrPart) {
					t.Fatalf("error %v, want %q", err, tt.wantErrPart)
				}
				if ie := (*settings.InputError)(nil); !errors.As(err, &ie) || ie.File != path {
					t.Errorf("error %T, want a *settings.InputError naming %s (exit 2)", err, path)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range []string{"orders", "items"} {
				if sel.Selected(s) {
					got = append(got, s)
				}
			}
			if diff := cmp.Diff(tt.selected, got); diff != "" {
				t.Errorf("selected (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.dropped, sel.Dropped("orders")); diff != "" {
				t.Errorf("dropped (-want +got):\n%s", diff)
			}
		})
	}
}
