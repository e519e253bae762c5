package settings

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/tap-dev/tap/streams"
)

// compileJSON compiles v, as JSON, as a draft-07 schema.
func compileJSON(t *testing.T, name string, v any) *jsonschema.Schema {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft7
	if err := c.AddResource(name, bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(name)
	if err != nil {
		t.Fatalf("%s is not a JSON Schema: %v", name, err)
	}
	return s
}

// decodeJSON decodes b as the validator wants it (numbers as json.Number).
func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}

// The spec is a ConnectorSpecification of the vendored Airbyte protocol
// schema, its streams typed by the stream schema.
func TestAirbyteSpecFitsTheProtocol(t *testing.T) {
	b, err := os.ReadFile("../image/airbytecheck/testdata/airbyte_protocol.json")
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft7
	if err := c.AddResource("airbyte_protocol.json", bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	proto, err := c.Compile("airbyte_protocol.json#/definitions/ConnectorSpecification")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := json.Marshal(AirbyteSpec())
	if err != nil {
		t.Fatal(err)
	}
	if err := proto.Validate(decodeJSON(t, spec)); err != nil {
		t.Errorf("the spec is not a ConnectorSpecification: %v", err)
	}
	items := AirbyteSpec()["connectionSpecification"].(map[string]any)["properties"].(map[string]any)["streams"].(map[string]any)["items"]
	if !reflect.DeepEqual(items, StreamSchema()) {
		t.Errorf("the spec's streams items are not StreamSchema(): %v", items)
	}
}

// Every field of streams.Definition has its title and description (its
// tags), and every option of the language is in the schema.
func TestStreamFieldsCoverTheDefinition(t *testing.T) {
	schema := StreamSchema()
	props := schema["properties"].(map[string]any)
	for _, o := range streams.OptionsOf(reflect.TypeFor[streams.Definition]()) {
		p, _ := props[o.Name].(map[string]any)
		if p == nil || p["title"] == nil || p["description"] == nil {
			t.Errorf("stream field %s has no title and description: %v", o.Name, p)
		}
	}
	for _, b := range streams.Language() {
		node := schema
		for _, part := range strings.Split(b.Name, ".") {
			if part == "" {
				continue
			}
			node, _ = node["properties"].(map[string]any)[part].(map[string]any)
			if node == nil {
				break
			}
		}
		for _, o := range b.Options {
			if node == nil || node["properties"].(map[string]any)[o.Name] == nil {
				t.Errorf("option %s of block %q is not in the schema", o.Name, b.Name)
			}
		}
	}
	// Each pagination type is a branch, with its own options.
	pag := props["pagination"].(map[string]any)["oneOf"].([]any)
	if len(pag) != len(streams.PageTypes()) {
		t.Errorf("%d pagination branches, want one per type (%d)", len(pag), len(streams.PageTypes()))
	}
}

// The stream definitions the repository gives — sample_config.json's and
// every one in the docs — fit the schema; a definition the tap refuses
// does not.
func TestStreamSchemaValidates(t *testing.T) {
	schema := compileJSON(t, "stream.json", StreamSchema())
	var defs []any
	add := func(from string, v any) {
		m, _ := v.(map[string]any)
		if list, ok := m["streams"].([]any); ok {
			defs = append(defs, list...)
		} else if _, ok := m["name"]; ok {
			defs = append(defs, m)
		} else {
			t.Fatalf("%s: no stream definition in %v", from, v)
		}
	}
	raw, err := os.ReadFile("../sample_config.json")
	if err != nil {
		t.Fatal(err)
	}
	add("sample_config.json", decodeJSON(t, raw))
	docs, _ := filepath.Glob("../docs/*/*.md")
	block := regexp.MustCompile("(?s)<!-- config(?:: stream)? -->\\s*```json\\n(.*?)```")
	for _, path := range docs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range block.FindAllSubmatch(b, -1) {
			add(path, decodeJSON(t, m[1]))
		}
	}
	if len(defs) < 8 {
		t.Fatalf("only %d stream definitions found", len(defs))
	}
	for _, d := range defs {
		if err := schema.Validate(d); err != nil {
			t.Errorf("the stream schema refuses %v: %v", d, err)
		}
	}
	for _, bad := range []string{
		`{"path": "/a"}`,
		`{"name": "a", "pagnation": {"type": "none"}}`,
		`{"name": "a", "pagination": {"type": "scroll"}}`,
		`{"name": "a", "pagination": {"type": "link_header", "page_param": "page"}}`,
		`{"name": "a", "pagination": {"type": "offset"}}`,
		`{"name": "a", "pagination": {"type": "offset", "page_size": 10, "cursor_param": "c"}}`,
		`{"name": "a", "primary_key": "id"}`,
		`{"name": "a", "incremental": {"param": "since", "overlap_s": "5m"}}`,
		`{"name": "a", "parent": {"stream": "b", "key": "id", "on": "x"}}`,
	} {
		if err := schema.Validate(decodeJSON(t, []byte(bad))); err == nil {
			t.Errorf("the stream schema takes %s", bad)
		}
	}
}
