package settings

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v5"
	"go.yaml.in/yaml/v4"
)

// The committed plugin definition is what the registry generates now: a
// setting added without regenerating it fails here, with the command.
func TestMeltanoFileIsCurrent(t *testing.T) {
	committed, err := os.ReadFile("../" + MeltanoFile)
	if err != nil {
		t.Fatalf("%v; generate it from the repository root: %s", err, MeltanoCommand)
	}
	if diff := cmp.Diff(strings.Split(string(committed), "\n"), strings.Split(AboutInfo().Meltano(), "\n")); diff != "" {
		t.Errorf("%s is stale (-committed +generated):\n%s\nregenerate it from the repository root: %s", MeltanoFile, diff, MeltanoCommand)
	}
}

func TestMeltanoKind(t *testing.T) {
	for _, tc := range []struct {
		s    Setting
		want string
	}{
		{Setting{Type: "string"}, "string"},
		{Setting{Type: "string", Secret: true}, "string"}, // sensitive, not the deprecated password kind
		{Setting{Type: "string", Enum: []string{"a", "b"}}, "options"},
		{Setting{Type: "string", Format: "date-time"}, "date_iso8601"},
		{Setting{Type: "integer"}, "integer"},
		{Setting{Type: "number"}, "decimal"},
		{Setting{Type: "boolean"}, "boolean"},
		{Setting{Type: "object"}, "object"},
		{Setting{Type: "array"}, "array"},
	} {
		if got := tc.s.MeltanoKind(); got != tc.want {
			t.Errorf("%+v: kind %q, want %q", tc.s, got, tc.want)
		}
	}
}

// Every kind and capability is one meltano.yml's schema allows, so that
// Meltano loads the definition.
func TestMeltanoKindsAndCapabilitiesAreMeltanos(t *testing.T) {
	kinds := []string{"oauth", "date_iso8601", "file", "email", "integer", "decimal", "options", "object", "array", "boolean", "string"}
	for _, s := range Settings() {
		if k := s.MeltanoKind(); !slices.Contains(kinds, k) {
			t.Errorf("setting %s: kind %q is not a Meltano setting kind", s.Name, k)
		}
	}
	capabilities := []string{"properties", "catalog", "discover", "state", "about", "stream-maps", "activate-version",
		"batch", "test", "log-based", "schema-flattening", "structured-logging"}
	for _, c := range AboutInfo().Capabilities {
		if !slices.Contains(capabilities, c) {
			t.Errorf("capability %q is not a Meltano extractor capability", c)
		}
	}
}

// TestMeltanoFileValidInMeltanoYML: the plugin definition, pasted as an
// item under plugins.extractors, makes a meltano.yml that meltano.yml's
// published JSON Schema (testdata/meltano, MIT, from the Meltano
// repository) accepts; Hub-only keys (quality, maintenance_status) and
// the demo's settings are not in it.
func TestMeltanoFileValidInMeltanoYML(t *testing.T) {
	var plugin map[string]any
	if err := yaml.Unmarshal([]byte(AboutInfo().Meltano()), &plugin); err != nil {
		t.Fatalf("the plugin definition is not YAML: %v", err)
	}
	project := map[string]any{"version": 1, "plugins": map[string]any{"extractors": []any{plugin}}}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource("meltano.schema.json", mustOpen(t, "testdata/meltano/meltano.schema.json")); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("meltano.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(project)
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(doc); err != nil {
		t.Errorf("meltano.yml's schema refuses the plugin definition: %v", err)
	}
	for _, key := range []string{"quality", "maintenance_status"} {
		if _, ok := plugin[key]; ok {
			t.Errorf("the plugin definition carries Meltano Hub's key %q", key)
		}
	}
	settings, _ := plugin["settings"].([]any)
	for _, s := range settings {
		if name, _ := s.(map[string]any)["name"].(string); name == "demo" || strings.HasPrefix(name, "demo.") {
			t.Errorf("the plugin definition exposes the demo's setting %q", name)
		}
	}
	// The schema does refuse a Hub-only key: the check above is not empty.
	plugin["quality"] = "unknown"
	b, _ = json.Marshal(project)
	_ = json.Unmarshal(b, &doc)
	if schema.Validate(doc) == nil {
		t.Errorf("meltano.yml's schema accepts quality on an extractor: the test proves nothing")
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
