package records

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// TestDraftFor: a schema is read as 2019-09 only when it uses nothing
// whose meaning differs from 2020-12, and then it gives every record the
// verdict 2020-12 gives.
func TestDraftFor(t *testing.T) {
	cases := []struct {
		name    string
		schema  string
		want    *jsonschema.Draft
		records []string
	}{
		{"plain", `{"type":"object","properties":{"id":{"type":"integer"},"at":{"type":"string","format":"date-time"}},"required":["id"]}`,
			jsonschema.Draft2019, []string{`{"id":1,"at":"2026-01-01T00:00:00Z"}`, `{"id":"x"}`, `{"at":"yesterday","id":1}`, `{}`}},
		{"ref beside a keyword", `{"type":"object","$defs":{"n":{"type":"integer"}},"properties":{"n":{"$ref":"#/$defs/n","minimum":3}}}`,
			jsonschema.Draft2019, []string{`{"n":3}`, `{"n":2}`, `{"n":"3"}`}},
		{"unevaluated and dependent", `{"type":"object","properties":{"a":{}},"dependentRequired":{"a":["b"]},"unevaluatedProperties":{"type":"string"}}`,
			jsonschema.Draft2019, []string{`{"a":1,"b":"x"}`, `{"a":1}`, `{"a":1,"b":2}`}},
		{"list items", `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}}}}`,
			jsonschema.Draft2019, []string{`{"tags":["a"]}`, `{"tags":[1]}`}},
		{"prefixItems", `{"type":"object","properties":{"p":{"type":"array","prefixItems":[{"type":"string"}]}}}`,
			jsonschema.Draft2020, []string{`{"p":["a",1]}`, `{"p":[1]}`}},
		{"dynamic anchor", `{"$dynamicAnchor":"node","type":"object","properties":{"kids":{"type":"array","items":{"$dynamicRef":"#node"}}}}`,
			jsonschema.Draft2020, []string{`{"kids":[{}]}`, `{"kids":[1]}`}},
		{"a keyword's name in a description", `{"type":"object","description":"no \"prefixItems\" here","properties":{}}`,
			jsonschema.Draft2019, []string{`{}`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var schema map[string]any
			if err := json.Unmarshal([]byte(c.schema), &schema); err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(schema)
			if got := draftFor(b); got != c.want {
				t.Fatalf("draftFor = %v, want %v", draftName(got), draftName(c.want))
			}
			ours, err := Compile("s", schema)
			if err != nil {
				t.Fatal(err)
			}
			c20 := jsonschema.NewCompiler()
			c20.AssertFormat = true
			c20.Draft = jsonschema.Draft2020
			if err := c20.AddResource("tap:///s.json", strings.NewReader(c.schema)); err != nil {
				t.Fatal(err)
			}
			ref, err := c20.Compile("tap:///s.json")
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range c.records {
				var v any
				if err := json.Unmarshal([]byte(r), &v); err != nil {
					t.Fatal(err)
				}
				if got, want := ours.Validate(v) == nil, ref.Validate(v) == nil; got != want {
					t.Errorf("record %s: valid = %v, 2020-12 says %v", r, got, want)
				}
			}
		})
	}
}

func draftName(d *jsonschema.Draft) string {
	switch d {
	case jsonschema.Draft2019:
		return "2019-09"
	case jsonschema.Draft2020:
		return "2020-12"
	}
	return fmt.Sprint(d)
}

// BenchmarkCompileWide compiles one schema of many objects, as a config
// written from a large API document holds: linear in its size with the
// draft draftFor picks (before it, 2020-12's scan made it quadratic).
func BenchmarkCompileWide(b *testing.B) {
	for _, n := range []int{250, 1000} {
		props := map[string]any{}
		for i := range n {
			props[fmt.Sprintf("p%d", i)] = map[string]any{"type": "object", "properties": map[string]any{
				"id": map[string]any{"type": "string"}, "at": map[string]any{"type": "string", "format": "date-time"}}}
		}
		schema := map[string]any{"type": "object", "properties": props}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			start := time.Now()
			for range b.N {
				if _, err := Compile("s", schema); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N)/float64(n), "µs/object")
		})
	}
}
