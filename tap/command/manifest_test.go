package command

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tap-dev/tap/tap"
	"github.com/tap-dev/tap/tap/inputs"
)

const testManifest = `version: 6.0.0
spec:
  connection_specification:
    type: object
    required: [api_key]
    properties: {api_key: {type: string, airbyte_secret: true}}
streams:
  - name: items
    retriever:
      requester: {url_base: "https://example.com", path: /items}
      record_selector: {extractor: {field_path: [data]}}
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
`

func TestManifestCommands(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	manifestPath := write("manifest.yaml", testManifest)
	good := write("good.json", `{"api_key": "secret-1234"}`)
	injected := write("injected.json", `{"api_key": "secret-1234", "__injected_declarative_manifest": {"version": "6.0.0",
		"spec": {"connection_specification": {"type": "object", "properties": {"region": {"type": "string"}}}},
		"streams": [{"name": "s", "retriever": {"requester": {"url_base": "https://a"}, "record_selector": {"extractor": {"field_path": []}}}}]}}`)
	notObject := write("list.json", `[1]`)
	tests := []struct {
		name    string
		cmd     string
		f       inputs.Files
		exit    int
		stdout  string // a part of stdout
		errText string // a part of the error
	}{
		{"spec", "spec", inputs.Files{Manifest: manifestPath}, 0, `{"type":"SPEC","spec":{"connectionSpecification":{"properties":{"api_key":{"airbyte_secret":true,"type":"string"}},"required":["api_key"],"type":"object"}}}`, ""},
		{"spec of an injected manifest", "spec", inputs.Files{Config: injected}, 0, `"properties":{"region":{"type":"string"}}`, ""},
		{"read compiles the streams", "read", inputs.Files{Manifest: manifestPath, Config: good}, 0, "", ""},
		{"a Singer run compiles the streams", "", inputs.Files{Manifest: manifestPath, Config: good}, 0, "", ""},
		{"a form the tap does not run", "read", inputs.Files{Manifest: write("filter.yaml", strings.Replace(testManifest, "field_path: [data]}", "field_path: [data]}, record_filter: {condition: \"{{ record.x > stream_interval.start_time }}\"}", 1)), Config: good}, 2,
			`"failure_type":"config_error"`, "streams[0].retriever.record_selector.record_filter.condition: RecordFilter: not implemented by the tap: "},
		{"two manifests", "check", inputs.Files{Manifest: manifestPath, Config: injected}, 2, "", "carries a manifest too (__injected_declarative_manifest): give one"},
		{"a config that is not an object", "check", inputs.Files{Manifest: manifestPath, Config: notObject}, 2, "", "list.json: expected a JSON object"},
		{"no config", "check", inputs.Files{Manifest: manifestPath}, 2, "", "--config is required"},
		{"no manifest", "check", inputs.Files{Config: good}, 2, "", "--manifest is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			f, done, err := Manifest(tt.cmd, tt.f, &out)
			if got := tap.ExitCode(err); got != tt.exit {
				t.Fatalf("exit %d, want %d (error %v)", got, tt.exit, err)
			}
			if compiles := tt.exit == 0 && tt.cmd != "spec"; done == compiles || compiles != (f.Compiled != nil) {
				t.Fatalf("done %v, compiled config %v: want the command to run on a compiled config: %v", done, f.Compiled != nil, compiles)
			}
			if f.Compiled != nil {
				d := f.Compiled.Stream("items")
				if f.Compiled.BaseURL != "https://example.com" || d == nil || d.Path != "/items" || d.RecordsPath != "data" {
					t.Errorf("compiled base_url %q, stream %+v", f.Compiled.BaseURL, d)
				}
			}
			if !strings.Contains(out.String(), tt.stdout) {
				t.Errorf("stdout %s\nwant a part %s", out.String(), tt.stdout)
			}
			if tt.errText != "" && (err == nil || !strings.Contains(err.Error(), tt.errText)) {
				t.Errorf("error %v, want a part %q", err, tt.errText)
			}
			if tt.cmd == "" && out.Len() > 0 {
				t.Errorf("a Singer run wrote %s before running", out.String())
			}
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				if line != "" && !json.Valid([]byte(line)) {
					t.Errorf("not a JSON message: %s", line)
				}
			}
			if strings.Contains(out.String(), "secret-1234") || err != nil && strings.Contains(err.Error(), "secret-1234") {
				t.Error("the config's secret was printed")
			}
		})
	}
	t.Run("a manifest's problems: one line each, exit 2", func(t *testing.T) {
		bad := write("bad.yaml", strings.Replace(testManifest, "record_selector: {extractor: {field_path: [data]}}",
			"record_selector: {extractor: {class_name: x.E}}\n      paginator: {type: DefaultPaginator, pagination_strategy: {type: Nope}}", 1))
		_, _, err := Manifest("", inputs.Files{Manifest: bad}, &bytes.Buffer{})
		lined, ok := err.(interface{ Lines() []string })
		if !ok || tap.ExitCode(err) != 2 || len(lined.Lines()) != 2 {
			t.Fatalf("error %v (%T)", err, err)
		}
	})
}
