package settings

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

func TestConnectionSpecification(t *testing.T) {
	spec := ConnectionSpecification()
	if spec["$schema"] != "http://json-schema.org/draft-07/schema#" || spec["type"] != "object" {
		t.Errorf("root: $schema %v, type %v", spec["$schema"], spec["type"])
	}
	if diff := cmp.Diff([]string{"base_url"}, spec["required"]); diff != "" {
		t.Errorf("required (-want +got):\n%s", diff)
	}
	props := spec["properties"].(map[string]any)
	auth, ok := props["auth"].(map[string]any)
	if !ok || auth["type"] != "object" {
		t.Fatalf("auth is not a nested object: %v", props["auth"])
	}
	authProps := auth["properties"].(map[string]any)
	for name, secret := range map[string]bool{"token": true, "password": true, "value": true, "username": false, "name": false, "type": false, "in": false} {
		p, ok := authProps[name].(map[string]any)
		if !ok {
			t.Errorf("auth.%s missing", name)
			continue
		}
		if got := p["airbyte_secret"] == true; got != secret {
			t.Errorf("auth.%s airbyte_secret = %v, want %v", name, got, secret)
		}
	}
	if d := authProps["type"].(map[string]any)["default"]; d != "none" {
		t.Errorf("auth.type default %v", d)
	}
	rps := props["rate_limit"].(map[string]any)["properties"].(map[string]any)["requests_per_second"].(map[string]any)
	if rps["type"] != "number" || rps["default"] != 10 {
		t.Errorf("rate_limit.requests_per_second: %v", rps)
	}
	streamsProp := props["streams"].(map[string]any)
	if streamsProp["type"] != "array" || streamsProp["items"].(map[string]any)["type"] != "object" {
		t.Errorf("streams: %v", streamsProp)
	}
	// Every setting is in the spec with its type, default and description.
	for _, s := range Settings() {
		node := spec
		for _, part := range strings.Split(s.Name, ".") {
			node, _ = node["properties"].(map[string]any)[part].(map[string]any)
			if node == nil {
				break
			}
		}
		if node == nil {
			t.Errorf("setting %s is not in the spec", s.Name)
			continue
		}
		if s.Title == "" || node["title"] != s.Title {
			t.Errorf("setting %s: title %q in the spec, want the registry's, which must be set (%q)", s.Name, node["title"], s.Title)
		}
		if node["type"] != s.Type || node["description"] != s.Description || node["default"] != s.Default {
			t.Errorf("setting %s: spec %v", s.Name, node)
		}
	}
	// The spec encodes as JSON.
	if _, err := json.Marshal(AirbyteSpec()); err != nil {
		t.Fatal(err)
	}
}

// TestSpecCoversConfig keeps the registry (and so the spec, whose
// additionalProperties is false) in step with the Config struct.
func TestSpecCoversConfig(t *testing.T) {
	spec := ConnectionSpecification()
	var walk func(prefix string, typ reflect.Type, node map[string]any)
	walk = func(prefix string, typ reflect.Type, node map[string]any) {
		props, _ := node["properties"].(map[string]any)
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			child, ok := props[name].(map[string]any)
			if !ok {
				t.Errorf("config field %s%s is not in the spec", prefix, name)
				continue
			}
			if _, nested := child["properties"]; nested && child["additionalProperties"] == false && f.Type.Kind() == reflect.Struct {
				walk(prefix+name+".", f.Type, child)
			}
		}
	}
	walk("", reflect.TypeFor[Config](), spec)
}

func TestAirbyteSpecEnums(t *testing.T) {
	props := AirbyteSpec()["connectionSpecification"].(map[string]any)["properties"].(map[string]any)
	// The spec gives auth as a oneOf (TestSpecAuthOneOf); --about, as one object.
	auth := ConnectionSpecification()["properties"].(map[string]any)["auth"].(map[string]any)["properties"].(map[string]any)
	if diff := cmp.Diff([]string{"none", "bearer", "basic", "api_key", "oauth2", "jwt", "session"}, auth["type"].(map[string]any)["enum"]); diff != "" {
		t.Errorf("auth.type enum (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"fail", "dead_letter", "emit"}, props["on_schema_violation"].(map[string]any)["enum"]); diff != "" {
		t.Errorf("on_schema_violation enum (-want +got):\n%s", diff)
	}
}

// Airbyte's form shows auth as one branch per auth type: every type has
// its branch, every auth setting is in one, and the spec takes the
// configs the tap takes and refuses a member of another type's branch.
func TestSpecAuthOneOf(t *testing.T) {
	spec := AirbyteSpec()["connectionSpecification"].(map[string]any)
	auth := spec["properties"].(map[string]any)["auth"].(map[string]any)
	seen := map[string]bool{}
	var consts []string
	for _, b := range auth["oneOf"].([]any) {
		props := b.(map[string]any)["properties"].(map[string]any)
		consts = append(consts, props["type"].(map[string]any)["const"].(string))
		for name := range props {
			seen["auth."+name] = true
		}
	}
	for _, s := range Settings() {
		if strings.HasPrefix(s.Name, "auth.") && !seen[s.Name] {
			t.Errorf("%s is in no auth type's branch", s.Name)
		}
		if s.Name == "auth.type" {
			if diff := cmp.Diff(s.Enum, consts); diff != "" {
				t.Errorf("branches' consts differ from auth.type's values (-enum +branches):\n%s", diff)
			}
		}
	}

	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("spec.json", bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("spec.json")
	if err != nil {
		t.Fatalf("the spec is not a JSON Schema: %v", err)
	}
	for _, tc := range []struct {
		config string
		ok     bool
	}{
		{`{"base_url": "https://api.example.com"}`, true},
		{`{"base_url": "https://api.example.com", "auth": {"type": "bearer", "token": "t"}}`, true},
		{`{"base_url": "https://api.example.com", "auth": {"type": "api_key", "name": "X-Key", "value": "k", "in": "query"}}`, true},
		{`{"base_url": "https://api.example.com", "auth": {"type": "oauth2", "token_url": "/oauth/token", "client_id": "i", "client_secret": "s", "scopes": ["a"]}}`, true},
		{`{"base_url": "https://api.example.com", "auth": {"type": "bearer"}}`, false},
		{`{"base_url": "https://api.example.com", "auth": {"type": "basic", "username": "u", "token": "t"}}`, false},
		{`{"base_url": "https://api.example.com", "auth": {"type": "oauth"}}`, false},
	} {
		var v any
		if err := json.Unmarshal([]byte(tc.config), &v); err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(v); (err == nil) != tc.ok {
			t.Errorf("spec on %s: %v, want ok=%v", tc.config, err, tc.ok)
		}
	}
	for _, name := range []string{"sample_config.json", "sample_feeds.json"} {
		raw, err := os.ReadFile("../" + name)
		if err != nil {
			t.Fatal(err)
		}
		var sample any
		if err := json.Unmarshal(raw, &sample); err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(sample); err != nil {
			t.Errorf("the spec refuses %s: %v", name, err)
		}
	}
}
