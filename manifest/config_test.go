package manifest

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheckConfig(t *testing.T) {
	yotpo := loadReal(t, "yotpo")
	good := func() map[string]any {
		return map[string]any{"access_token": "secret-value", "app_key": "k", "email": "a@b.c", "start_date": "2022-03-01T00:00:00.000Z"}
	}
	declaresTap := mustLoad(t, streamHead+`
spec:
  connection_specification:
    type: object
    required: [tap]
    properties:
      tap: {type: string}
      since: {type: string, format: date}
      credentials:
        type: object
        oneOf:
          - {required: [api_key], properties: {api_key: {type: string}}}
          - {required: [client_id], properties: {client_id: {type: string}}}
streams:
  - name: s
    retriever: {requester: {url_base: "https://a"}, record_selector: {extractor: {field_path: []}}}
`)
	tests := []struct {
		name   string
		m      *Manifest
		patch  func(c map[string]any)
		want   []string // the error's lines; none: it passes
		verify func(t *testing.T, c *Config)
	}{
		{name: "a good config", m: yotpo, patch: func(map[string]any) {}},
		{name: "a required field missing", m: yotpo, patch: func(c map[string]any) { delete(c, "app_key"); delete(c, "email") },
			want: []string{"config.json: app_key: missing, required by the manifest's spec", "config.json: email: missing, required by the manifest's spec"}},
		{name: "a wrong type", m: yotpo, patch: func(c map[string]any) { c["app_key"] = 7.0 },
			want: []string{"config.json: app_key: expected string, but got number"}},
		{name: "a pattern not matched, with the value kept out of the line", m: yotpo, patch: func(c map[string]any) { c["start_date"] = "yesterday" },
			want: []string{`config.json: start_date: does not match pattern '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}.[0-9]{3}Z$'`}},
		{name: "the tap's settings under tap", m: yotpo, patch: func(c map[string]any) { c["tap"] = map[string]any{"log_level": "debug"} },
			verify: func(t *testing.T, c *Config) {
				if c.Tap["log_level"] != "debug" || c.Connector["tap"] != nil || c.Connector["app_key"] != "k" {
					t.Errorf("split %+v", c)
				}
			}},
		{name: "tap not an object", m: yotpo, patch: func(c map[string]any) { c["tap"] = "x" },
			want: []string{"config.json: tap: expected an object of the tap's settings, got a string"}},
		{name: "streams of the tap's own with a manifest", m: yotpo, patch: func(c map[string]any) { c["tap"] = map[string]any{"streams": []any{}} },
			want: []string{"config.json: tap.streams: a manifest's streams are the manifest's: give either --manifest or a config with streams, not both"}},
		{name: "a spec that declares tap keeps it the connector's", m: declaresTap,
			patch: func(c map[string]any) {
				clear(c)
				c["tap"] = "mine"
				c["credentials"] = map[string]any{"client_id": "x"}
			},
			verify: func(t *testing.T, c *Config) {
				if c.Connector["tap"] != "mine" || c.Tap != nil {
					t.Errorf("split %+v", c)
				}
			}},
		{name: "formats are not asserted, as the CDK does not",
			m: declaresTap, patch: func(c map[string]any) { clear(c); c["tap"] = "mine"; c["since"] = "last tuesday" }},
		{name: "an auth choice that matches no option", m: declaresTap,
			patch: func(c map[string]any) { clear(c); c["tap"] = "mine"; c["credentials"] = map[string]any{"other": 1} },
			want:  []string{"config.json: credentials: matches none of the options the manifest's spec allows"}},
		{name: "the injected manifest is not the connector's", m: yotpo, patch: func(c map[string]any) { c[InjectedKey] = map[string]any{} },
			verify: func(t *testing.T, c *Config) {
				if _, ok := c.Connector[InjectedKey]; ok {
					t.Error("the injected manifest stayed in the connector's config")
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := good()
			tt.patch(cfg)
			c, err := tt.m.CheckConfig("config.json", cfg)
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if tt.verify != nil {
					tt.verify(t, c)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("expected an error, got %v", err)
			}
			if diff := cmp.Diff(tt.want, e.Lines()); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			if strings.Contains(err.Error(), "secret-value") {
				t.Error("a secret in the error")
			}
		})
	}
}

func TestFromConfig(t *testing.T) {
	tree := map[string]any{
		"version": "6.0.0",
		"streams": []any{map[string]any{"name": "s", "retriever": map[string]any{
			"requester":       map[string]any{"url_base": "https://a"},
			"record_selector": map[string]any{"extractor": map[string]any{"field_path": []any{}}},
		}}},
	}
	t.Run("an object", func(t *testing.T) {
		m, ok, err := FromConfig("config.json", map[string]any{InjectedKey: tree})
		if err != nil || !ok || m.Streams[0].Name != "s" {
			t.Fatalf("m %v ok %v err %v", m, ok, err)
		}
		if _, ok := tree["type"]; ok {
			t.Error("reading the injected manifest changed the config's tree")
		}
	})
	t.Run("YAML text", func(t *testing.T) {
		m, ok, err := FromConfig("config.json", map[string]any{InjectedKey: "streams: [{name: s, retriever: {requester: {url_base: 'https://a'}, record_selector: {extractor: {field_path: []}}}}]"})
		if err != nil || !ok || m.Streams[0].Name != "s" {
			t.Fatalf("m %v ok %v err %v", m, ok, err)
		}
	})
	t.Run("none", func(t *testing.T) {
		if m, ok, err := FromConfig("config.json", map[string]any{"a": 1}); m != nil || ok || err != nil {
			t.Fatalf("m %v ok %v err %v", m, ok, err)
		}
	})
	tests := []struct {
		name   string
		config map[string]any
		want   string
	}{
		{"python components", map[string]any{InjectedKey: tree, InjectedComponentsKey: "class X: pass"},
			"config.json: refused: __injected_components_py: components.py: Python code (a custom component), which the tap cannot run"},
		{"not a manifest", map[string]any{InjectedKey: 3.0}, "config.json: __injected_declarative_manifest: expected a manifest (an object), got a number"},
		{"a bad manifest names the config's field", map[string]any{InjectedKey: map[string]any{"streams": "#/nowhere"}},
			`config.json: __injected_declarative_manifest: streams: reference "#/nowhere" points at nothing in the manifest`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := FromConfig("config.json", tt.config)
			if err == nil || err.Error() != tt.want {
				t.Errorf("got %v, want %s", err, tt.want)
			}
		})
	}
}

// TestCompileSpecRequired: a spec's required list may name a field twice
// (the CDK takes it) or be empty; either way a missing field is still
// missing.
func TestCompileSpecRequired(t *testing.T) {
	for _, tt := range []struct {
		spec    map[string]any
		missing bool // a config without "a" is refused
	}{
		{map[string]any{"type": "object", "required": []any{"a", "a"}}, true},
		{map[string]any{"type": "object", "required": []any{}}, false},
		{map[string]any{"type": "object", "properties": map[string]any{"required": map[string]any{"type": "string"}}}, false},
	} {
		s, err := compileSpec(tt.spec)
		if err != nil {
			t.Fatalf("%v: %v", tt.spec, err)
		}
		if err := s.Validate(map[string]any{}); (err != nil) != tt.missing {
			t.Errorf("%v: validating {}: %v, want refused %v", tt.spec, err, tt.missing)
		}
	}
}
