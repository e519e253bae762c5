package streammap

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The cases of testdata/streammaps.json come from the Meltano SDK: its
// stream map tests and snapshots (same config, same expected schemas and
// records) and the examples of its "Inline Stream Maps" reference. Adding
// a case is adding a row there.
type mapTable struct {
	Inputs map[string]map[string]struct {
		Schema        map[string]any `json:"schema"`
		KeyProperties []string       `json:"key_properties"`
		Records       []any          `json:"records"`
	} `json:"inputs"`
	Cases []struct {
		Name   string `json:"name"`
		Source string `json:"source"`
		Input  string `json:"input"`
		Config struct {
			StreamMaps         map[string]any `json:"stream_maps"`
			StreamMapConfig    map[string]any `json:"stream_map_config"`
			FlatteningEnabled  bool           `json:"flattening_enabled"`
			FlatteningMaxDepth *int           `json:"flattening_max_depth"`
		} `json:"config"`
		Expect map[string]outputWant `json:"expect"`
		Error  string                `json:"error"`
	} `json:"cases"`
	FlattenRecord []struct {
		Name       string         `json:"name"`
		Properties map[string]any `json:"flattened_properties"`
		MaxDepth   int            `json:"max_depth"`
		Record     map[string]any `json:"record"`
		Expect     map[string]any `json:"expect"`
	} `json:"flatten_record"`
}

type outputWant struct {
	Schema        any   `json:"schema"`
	KeyProperties []any `json:"key_properties"`
	Records       []any `json:"records"`
}

func loadTable(t *testing.T) mapTable {
	t.Helper()
	b, err := os.ReadFile("testdata/streammaps.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // records as the tap's decoder makes them
	var tbl mapTable
	if err := dec.Decode(&tbl); err != nil {
		t.Fatal(err)
	}
	return tbl
}

// plain re-reads a value through JSON, so numbers compare as numbers
// whatever their text (21 and 21.0, json.Number and float64).
func plain(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// deepCopy copies decoded JSON, numbers kept as they are.
func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

func TestStreamMaps(t *testing.T) {
	tbl := loadTable(t)
	for _, tc := range tbl.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			in, ok := tbl.Inputs[tc.Input]
			if !ok {
				t.Fatalf("no input %q", tc.Input)
			}
			streams := map[string]StreamSchema{}
			for name, s := range in {
				streams[name] = StreamSchema{Schema: s.Schema, KeyProperties: s.KeyProperties}
			}
			cfg := MapConfig{
				StreamMaps:         tc.Config.StreamMaps,
				StreamMapConfig:    tc.Config.StreamMapConfig,
				FlatteningEnabled:  tc.Config.FlatteningEnabled,
				FlatteningMaxDepth: tc.Config.FlatteningMaxDepth,
			}
			m, err := NewMapper(cfg, streams)
			if tc.Error != "" {
				if err == nil || !strings.Contains(err.Error(), tc.Error) {
					t.Fatalf("error = %v, want one containing %q (%s)", err, tc.Error, tc.Source)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewMapper: %v (%s)", err, tc.Source)
			}
			got := map[string]outputWant{}
			for _, name := range slices.Sorted(maps.Keys(in)) {
				for _, o := range m.Outputs(name) {
					tr := o.Transformer()
					w := outputWant{Schema: o.Schema, KeyProperties: []any{}, Records: []any{}}
					for _, k := range o.KeyProperties {
						w.KeyProperties = append(w.KeyProperties, k)
					}
					for _, r := range in[name].Records {
						before := plain(t, r)
						out, err := tr.Transform(r.(map[string]any))
						if err != nil {
							t.Fatalf("Transform: %v", err)
						}
						if diff := cmp.Diff(before, plain(t, r)); diff != "" {
							t.Fatalf("Transform changed its input (-before +after):\n%s", diff)
						}
						// In place, the same record must come out.
						inPlace, err := o.Transformer().TransformInPlace(deepCopy(r).(map[string]any))
						if err != nil {
							t.Fatalf("TransformInPlace: %v", err)
						}
						if diff := cmp.Diff(plain(t, out), plain(t, inPlace)); diff != "" {
							t.Fatalf("TransformInPlace differs from Transform (-Transform +in place):\n%s", diff)
						}
						if out != nil {
							w.Records = append(w.Records, out)
						}
					}
					got[o.Name] = w
				}
			}
			if diff := cmp.Diff(plain(t, tc.Expect), plain(t, got)); diff != "" {
				t.Errorf("%s: outputs differ (-want +got):\n%s", tc.Source, diff)
			}
		})
	}
}

// The tap's settings decode stream_map_config without json.Number: 2
// arrives as float64(2) and must stay the integer Python reads.
func TestConfigFloatThatIsAnInteger(t *testing.T) {
	m, err := NewMapper(MapConfig{
		StreamMaps:      map[string]any{"s": map[string]any{"y": "x * config['factor']"}},
		StreamMapConfig: map[string]any{"factor": float64(2)},
	}, map[string]StreamSchema{"s": {Schema: map[string]any{"properties": map[string]any{"x": map[string]any{"type": "integer"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	o := m.Outputs("s")[0]
	out, err := o.Transformer().Transform(map[string]any{"x": json.Number("21")})
	if err != nil {
		t.Fatal(err)
	}
	if got := o.Schema["properties"].(map[string]any)["y"]; !cmp.Equal(got, map[string]any{"type": []any{"integer", "null"}}) || out["y"] != json.Number("42") {
		t.Errorf("schema %v, y = %v; want an integer 42", got, out["y"])
	}
}

func TestFlattenRecord(t *testing.T) {
	for _, tc := range loadTable(t).FlattenRecord {
		t.Run(tc.Name, func(t *testing.T) {
			got, err := flattenRecord(tc.Record, tc.Properties, tc.MaxDepth)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(plain(t, tc.Expect), plain(t, got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestFlattenKeyShortensLongNames(t *testing.T) {
	long := strings.Repeat("very_long_property_name_", 6) // 144 characters
	got := flattenKey("leaf", []string{long, long})
	if len(got) >= maxKeyLength {
		t.Fatalf("key of %d characters, want < %d: %s", len(got), maxKeyLength, got)
	}
	// The outermost part is shortened to the initials of its words.
	if want := "vlpnvlpnvlpnvlpnvlpnvlpn__" + long + "__leaf"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
