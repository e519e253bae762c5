package mapped

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tap-dev/tap/internal/taptest"
	"github.com/tap-dev/tap/tap/catalog"
	"github.com/tap-dev/tap/tap/inputs"
)

// A catalog selects the mapped streams by their names; the source is
// walked for a selected output, and only the selected outputs are
// written.
func TestCatalogSelectsMappedStreams(t *testing.T) {
	cfg := taptest.MappedConfig()
	path := filepath.Join(t.TempDir(), "catalog.json")
	m, err := inputs.Maps(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		catalog  string
		selected bool
		names    []string
	}{
		{"one output selected", `{"streams": [{"tap_stream_id": "orders_copy", "metadata": [{"breadcrumb": [], "metadata": {"selected": true}}]}]}`, true, []string{"orders_copy"}},
		{"both", `{"streams": [{"tap_stream_id": "orders_copy", "metadata": [{"breadcrumb": [], "metadata": {"selected": true}}]}, {"tap_stream_id": "sales", "metadata": [{"breadcrumb": [], "metadata": {"selected": true}}]}]}`, true, []string{"sales", "orders_copy"}},
		{"none: the source is not walked", `{"streams": [{"tap_stream_id": "items", "metadata": [{"breadcrumb": [], "metadata": {"selected": true}}]}]}`, false, []string{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os.WriteFile(path, []byte(tt.catalog), 0o644)
			sel, err := catalog.Load(path, cfg, m)
			if err != nil {
				t.Fatal(err)
			}
			o := New(m, "orders", "updated_at", sel, strings.ToUpper)
			if o.Selected() != tt.selected || !slices.Equal(o.Names(), tt.names) {
				t.Errorf("selected %v, outputs %v; want %v, %v", o.Selected(), o.Names(), tt.selected, tt.names)
			}
			if got := len(o.Transformers()); got != len(tt.names) || tt.selected != (o.Transformers() != nil) {
				t.Errorf("%d transformers for %d outputs", got, len(tt.names))
			}
		})
	}
	os.WriteFile(path, []byte(`{"streams": [{"tap_stream_id": "orders"}]}`), 0o644)
	if _, err := catalog.Load(path, cfg, m); err == nil || !strings.Contains(err.Error(), `unknown stream "orders"`) {
		t.Errorf("a catalog naming the aliased source: error %v", err)
	}
}

// The stream maps compile once: the outputs a run writes through are the
// ones loading the config compiled, and a second read of the maps
// compiles nothing.
func TestStreamMapsCompiledOnce(t *testing.T) {
	cfg := taptest.MappedConfig()
	m, err := inputs.Maps(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := inputs.Maps(cfg)
	if err != nil || again != m {
		t.Fatalf("the second read of the maps compiled them again (%p, then %p; %v)", m, again, err)
	}
	o := New(m, "orders", "updated_at", nil, strings.ToUpper)
	if len(o.outs) == 0 {
		t.Fatal("orders writes no mapped stream")
	}
	for i, out := range o.outs {
		if want := m.Outputs("orders")[i]; out.o != want {
			t.Errorf("output %q is not the one compiled at load: the maps were compiled again", out.o.Name)
		}
	}
	if New(nil, "orders", "updated_at", nil, strings.ToUpper) != nil {
		t.Error("outputs without maps: the stream is written as itself")
	}
}

// Map and Write: each selected output's record by its name, a filtered
// one not written, a map's error named for the source and scrubbed.
func TestMapAndWrite(t *testing.T) {
	cfg := taptest.MappedConfig()
	cfg.StreamMaps["orders_copy"] = map[string]any{"__source__": "orders", "id": "id", "__else__": nil, "__filter__": "id > 1"}
	cfg.StreamMaps["orders"].(map[string]any)["bad"] = "int(note)"
	cfg.Maps = nil
	m, err := inputs.Maps(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o := New(m, "orders", "updated_at", nil, strings.ToUpper)
	for _, tt := range []struct {
		name string
		rec  map[string]any
		want []string
		err  bool
	}{
		{"filtered out of orders_copy", map[string]any{"id": 1, "note": "7"}, []string{`sales {"bad":7,"id":1,"note_hash":"8f14e45fceea167a5a36dedd4bea2543"}`}, false},
		{"both written", map[string]any{"id": 2, "note": "8"}, []string{`sales {"bad":8,"id":2,"note_hash":"c9f0f895fb98ab9159f51fd0297e236d"}`, `orders_copy {"id":2}`}, false},
		{"a map's error", map[string]any{"id": 3, "note": "x"}, nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := o.Map(tt.rec, true)
			if tt.err {
				if err == nil || !strings.HasPrefix(err.Error(), `stream "orders": `) || !strings.Contains(err.Error(), "INT(") {
					t.Fatalf("Map: %v, want the source's name and the scrubbed error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			wrote, err := o.Write(nil, func(stream string, rec []byte) error {
				got = append(got, stream+" "+string(rec))
				return nil
			})
			if err != nil || !wrote || !slices.Equal(got, tt.want) {
				t.Errorf("Write: %v %v\n got %q\nwant %q", wrote, err, got, tt.want)
			}
		})
	}
}
