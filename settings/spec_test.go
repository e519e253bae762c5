package settings

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
	auth := props["auth"].(map[string]any)["properties"].(map[string]any)
	if diff := cmp.Diff([]string{"none", "bearer", "basic", "api_key", "oauth2", "jwt"}, auth["type"].(map[string]any)["enum"]); diff != "" {
		t.Errorf("auth.type enum (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"fail", "dead_letter", "emit"}, props["on_schema_violation"].(map[string]any)["enum"]); diff != "" {
		t.Errorf("on_schema_violation enum (-want +got):\n%s", diff)
	}
}
