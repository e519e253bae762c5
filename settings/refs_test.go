package settings

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRefs(t *testing.T) {
	defs := `{
		"address": {"type": "object", "properties": {"city": {"type": "string"}}},
		"customer": {"type": ["object", "null"], "properties": {"id": {"type": "string"}, "address": {"$ref": "#/definitions/address"}}},
		"node": {"type": "object", "properties": {"id": {"type": "integer"}, "next": {"$ref": "#/definitions/node"}}}
	}`
	cases := []struct {
		name, schema, want, err string
	}{
		{name: "no ref", schema: `{"type":"object","properties":{"id":{"type":"integer"}}}`,
			want: `{"type":"object","properties":{"id":{"type":"integer"}}}`},
		{name: "top level and nested", schema: `{"type":"object","properties":{"id":{"type":"integer"},"customer":{"$ref":"#/definitions/customer"}}}`,
			want: `{"type":"object","properties":{"id":{"type":"integer"},"customer":{"type":["object","null"],"properties":{"id":{"type":"string"},"address":{"type":"object","properties":{"city":{"type":"string"}}}}}}}`},
		{name: "a ref as the stream's schema", schema: `{"$ref":"#/definitions/address"}`,
			want: `{"type":"object","properties":{"city":{"type":"string"}}}`},
		{name: "keywords beside the ref", schema: `{"type":"object","properties":{"a":{"$ref":"#/definitions/address","description":"where"}}}`,
			want: `{"type":"object","properties":{"a":{"type":"object","description":"where","properties":{"city":{"type":"string"}}}}}`},
		{name: "recursion ends at the depth", schema: `{"$ref":"#/definitions/node"}`,
			want: `{"type":"object","properties":{"id":{"type":"integer"},"next":{"type":"object","properties":{"id":{"type":"integer"},"next":{}}}}}`},
		{name: "a schema with definitions of its own", schema: `{"type":"object","definitions":{"address":{"type":"integer"}},"properties":{"a":{"$ref":"#/definitions/address"}}}`,
			want: `{"type":"object","definitions":{"address":{"type":"integer"}},"properties":{"a":{"$ref":"#/definitions/address"}}}`},
		{name: "another kind of ref", schema: `{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`,
			want: `{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`},
		{name: "no such definition", schema: `{"type":"object","properties":{"items":{"type":"array","items":{"$ref":"#/definitions/nope"}}}}`,
			err: `schema /properties/items/items: $ref "#/definitions/nope": no definition "nope" in definitions`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRefs(decode(t, defs).(map[string]any))
			got, err := r.schema(decode(t, c.schema).(map[string]any))
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("error %v, want %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(decode(t, c.want), any(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestRefsShareExpansions: streams that reach one definition share its
// expansion, and each stream's top level is its own.
func TestRefsShareExpansions(t *testing.T) {
	r := newRefs(decode(t, `{"address": {"type": "object", "properties": {"city": {"type": "string"}}}}`).(map[string]any))
	one := `{"type":"object","properties":{"home":{"$ref":"#/definitions/address"}}}`
	a, _ := r.schema(decode(t, one).(map[string]any))
	b, _ := r.schema(decode(t, one).(map[string]any))
	homeA := a["properties"].(map[string]any)["home"]
	homeB := b["properties"].(map[string]any)["home"]
	if reflect.ValueOf(homeA).UnsafePointer() != reflect.ValueOf(homeB).UnsafePointer() {
		t.Error("two streams' expansions of one definition are two copies")
	}
	a["properties"].(map[string]any)["_sdc_deleted_at"] = map[string]any{}
	if _, leaked := b["properties"].(map[string]any)["_sdc_deleted_at"]; leaked {
		t.Error("a property added to one stream's schema appeared in another's")
	}
}

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.NewDecoder(strings.NewReader(s)).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
