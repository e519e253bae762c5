package integration_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// ecosystemSchema compiles one of the schemas of testdata/ecosystem:
// written for these tests from the ecosystems' published schemas (each
// says which file at which commit in its $comment), of the fields and
// types they require, so that Airbyte's registry, Meltano Hub and Hub's
// tooling take our files.
func ecosystemSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	b, err := os.ReadFile("testdata/ecosystem/" + name)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft7
	c.AssertFormat = true
	if err := c.AddResource(name, bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// asJSON turns a parsed document into what a JSON decoder gives, as the
// schemas expect.
func asJSON(t *testing.T, v any) any {
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

func TestEcosystemFiles(t *testing.T) {
	t.Parallel()
	read := func(path string) any {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return asJSON(t, parseYAML(t, string(b)))
	}
	about := runTap(t, t.TempDir(), time.Minute, nil, "--about", "--format", "json")
	if about.code != 0 {
		t.Fatalf("--about: exit %d: %s", about.code, about.stderr)
	}
	var aboutDoc any
	if err := json.Unmarshal(about.stdout, &aboutDoc); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ what, schema string }{
		{"../metadata.yaml", "airbyte_metadata.schema.json"},
		{meltanoFile, "meltano_extractor.schema.json"},
		{"--about --format json", "meltano_sdk_about.schema.json"},
	} {
		doc := aboutDoc
		if !strings.HasPrefix(c.what, "--") {
			doc = read(c.what)
		}
		if c.what == meltanoFile {
			// The file is for meltano.yml, whose schema refuses Meltano
			// Hub's own keys (settings' TestMeltanoFileValidInMeltanoYML);
			// a Hub entry is the file plus the rating Hub gives after its
			// review, which Hub's schema requires.
			doc.(map[string]any)["quality"] = "unknown"
		}
		if err := ecosystemSchema(t, c.schema).Validate(doc); err != nil {
			t.Errorf("%s does not fit %s: %#v", c.what, c.schema, err)
		}
	}
	// The tap writes ACTIVATE_VERSION after a full-table stream, so both
	// files declare it.
	caps := aboutDoc.(map[string]any)["capabilities"]
	if !strings.Contains(string(mustJSON(t, caps)), `"activate-version"`) {
		t.Errorf("--about's capabilities %v lack activate-version", caps)
	}
	meta := read("../metadata.yaml").(map[string]any)["data"].(map[string]any)
	if tag := meta["dockerImageTag"]; "tap "+tag.(string)+"\n" != string(runTap(t, t.TempDir(), time.Minute, nil, "--version").stdout) {
		t.Errorf("metadata.yaml dockerImageTag %v is not the tap's version", tag)
	}
	// The version breaks what 0.1.0 took (the Airbyte guide's "Upgrading
	// to 0.2.0"): Airbyte shows its entry to connections upgrading.
	releases, _ := meta["releases"].(map[string]any)
	breaking, _ := releases["breakingChanges"].(map[string]any)
	if _, ok := breaking[meta["dockerImageTag"].(string)]; !ok {
		t.Errorf("metadata.yaml releases.breakingChanges has no entry for %v: %v", meta["dockerImageTag"], releases)
	}
	dockerfile, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	base := meta["connectorBuildOptions"].(map[string]any)["baseImage"].(string)
	if !bytes.Contains(dockerfile, []byte("\nFROM "+base+" AS build\n")) {
		t.Errorf("metadata.yaml connectorBuildOptions.baseImage %s is not the root Dockerfile's build stage", base)
	}
}

// The schemas reject what the ecosystems reject: the files as they were
// before (no githubIssueLabel; no variant; settings as a list).
func TestEcosystemSchemasReject(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ schema, doc string }{
		{"airbyte_metadata.schema.json", `{"metadataSpecVersion":"1.0","data":{"name":"n","definitionId":"3c9d0d54-8a4e-4f3e-9a64-5b0f7c2d1e11","connectorType":"source",
			"dockerRepository":"r","dockerImageTag":"0.1.0","license":"MIT","documentationUrl":"https://x.example","connectorSubtype":"api","releaseStage":"alpha"}}`},
		{"airbyte_metadata.schema.json", `{"metadataSpecVersion":"1.0","data":{"name":"n","definitionId":"not-a-uuid","connectorType":"source","githubIssueLabel":"l",
			"dockerRepository":"r","dockerImageTag":"0.1.0","license":"MIT","documentationUrl":"https://x.example","connectorSubtype":"api","releaseStage":"alpha"}}`},
		{"airbyte_metadata.schema.json", `{"metadataSpecVersion":"1.0","data":{"name":"n","definitionId":"3c9d0d54-8a4e-4f3e-9a64-5b0f7c2d1e11","connectorType":"source","githubIssueLabel":"l",
			"dockerRepository":"r","dockerImageTag":"0.2.0","license":"MIT","documentationUrl":"https://x.example","connectorSubtype":"api","releaseStage":"alpha",
			"releases":{"breakingChanges":{"0.2.0":{"message":"no deadline"}}}}}`},
		{"airbyte_metadata.schema.json", `{"metadataSpecVersion":"1.0","data":{"name":"n","definitionId":"3c9d0d54-8a4e-4f3e-9a64-5b0f7c2d1e11","connectorType":"source","githubIssueLabel":"l",
			"dockerRepository":"r","dockerImageTag":"0.2.0","license":"MIT","documentationUrl":"https://x.example","connectorSubtype":"api","releaseStage":"alpha",
			"releases":{"breakingChanges":{"v0.2":{"upgradeDeadline":"2027-01-31","message":"not a version"}}}}}`},
		{"meltano_extractor.schema.json", `{"name":"tap-x","namespace":"tap_x","quality":"unknown"}`},
		{"meltano_extractor.schema.json", `{"name":"tap-x","namespace":"tap_x","variant":"v","quality":"unknown","capabilities":["cataloging"]}`},
		{"meltano_sdk_about.schema.json", `{"name":"tap","description":"d","version":"0.1.0","capabilities":[],"settings":[{"name":"base_url"}]}`},
	} {
		var doc any
		if err := json.Unmarshal([]byte(c.doc), &doc); err != nil {
			t.Fatal(err)
		}
		if err := ecosystemSchema(t, c.schema).Validate(doc); err == nil {
			t.Errorf("%s takes %s", c.schema, c.doc)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
