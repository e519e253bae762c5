package codec

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestAppendKeyIsExact(t *testing.T) {
	key := func(m map[string]any, fields ...string) string { return string(AppendKey(nil, m, fields)) }
	long := strings.Repeat("x", 300)
	distinct := []struct {
		name string
		a, b string
	}{
		{"a string is not a number", key(map[string]any{"id": "7"}, "id"), key(map[string]any{"id": json.Number("7")}, "id")},
		{"a missing field is not null", key(map[string]any{}, "id"), key(map[string]any{"id": nil}, "id")},
		{"null is not the text <nil>", key(map[string]any{"id": nil}, "id"), key(map[string]any{"id": "<nil>"}, "id")},
		{"a missing field is not the text <nil>", key(map[string]any{}, "id"), key(map[string]any{"id": "<nil>"}, "id")},
		{"composite fields do not run together", key(map[string]any{"a": "x\x00y", "b": "z"}, "a", "b"), key(map[string]any{"a": "x", "b": "y\x00z"}, "a", "b")},
		{"composite, one field empty", key(map[string]any{"a": "", "b": "ab"}, "a", "b"), key(map[string]any{"a": "a", "b": "b"}, "a", "b")},
		{"long values", key(map[string]any{"a": long, "b": "1"}, "a", "b"), key(map[string]any{"a": long + "1"}, "a", "b")},
		{"true is not the text true", key(map[string]any{"id": true}, "id"), key(map[string]any{"id": "true"}, "id")},
	}
	for _, c := range distinct {
		if c.a == c.b {
			t.Errorf("%s: both keys are %q", c.name, c.a)
		}
	}
	same := []struct {
		name string
		a, b string
	}{
		{"the same values", key(map[string]any{"a": "x", "b": json.Number("2")}, "a", "b"), key(map[string]any{"b": json.Number("2"), "a": "x", "c": 1}, "a", "b")},
		{"the same long value", key(map[string]any{"a": long}, "a"), key(map[string]any{"a": long}, "a")},
		{"objects whatever their key order", key(map[string]any{"a": map[string]any{"x": 1, "y": 2}}, "a"), key(map[string]any{"a": map[string]any{"y": 2, "x": 1}}, "a")},
	}
	for _, c := range same {
		if c.a != c.b {
			t.Errorf("%s: keys %q and %q differ", c.name, c.a, c.b)
		}
	}
}

// fieldsText is a record as the JSON text of its fields.
type fieldsText map[string]string

func (f fieldsText) Field(name string) (string, bool) { s, ok := f[name]; return s, ok }

// TestAppendFieldsKey: a record read from its bytes has the key of its
// tree, whatever form its fields' text takes.
func TestAppendFieldsKey(t *testing.T) {
	for _, text := range []string{`"7"`, `7`, `7.0`, `-12`, `null`, `true`, `"a\"b"`, `"\u00e9"`, `"é"`, `{"y":2,"x":1}`, `[1,"2"]`, `""`} {
		tree, err := Decode([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		for _, fields := range [][]string{{"id"}, {"id", "missing"}, {"missing", "id"}} {
			want := AppendKey(nil, map[string]any{"id": tree}, fields)
			got, err := AppendFieldsKey(nil, fieldsText{"id": text}, fields)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("%s %v: key %q, the tree's %q", text, fields, got, want)
			}
		}
	}
}
