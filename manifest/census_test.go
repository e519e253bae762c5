package manifest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCensusOfTheRealManifests(t *testing.T) {
	c, err := TakeCensus(filepath.Join("testdata", "airbyte"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[Outcome]int{Loaded: 25, NeedsPython: 1}, c.Outcomes); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	// Of those that load, those whose every stream compiles for a run
	// with a sample config: the ones the integration tests run, and
	// dockerhub, whose login is on a host of its own (auth.docker.io),
	// which a test server cannot stand in for.
	var runs []string
	for _, f := range c.Files {
		if f.Runs {
			runs = append(runs, filepath.Base(f.Path))
		}
	}
	if diff := cmp.Diff([]string{"airbyte.yaml", "box.yaml", "breezy-hr.yaml", "configcat.yaml", "delighted.yaml", "dockerhub.yaml", "flexmail.yaml", "google-tasks.yaml", "hellobaton.yaml", "mailjet-sms.yaml", "nasa.yaml", "navan.yaml", "persona.yaml", "reply-io.yaml", "savvycal.yaml", "stockdata.yaml", "trustpilot.yaml", "unleash.yaml", "uppromote.yaml", "wikipedia-pageviews.yaml", "xkcd.yaml", "yotpo.yaml"}, runs); diff != "" {
		t.Errorf("manifests that run (-want +got):\n%s", diff)
	}
	if got := c.Types["DeclarativeStream"]; got == nil || got.Manifests != 26 || got.Loaded != 25 || got.Refused != 0 {
		t.Errorf("DeclarativeStream %+v", got)
	}
	if got := c.Types["CustomSchemaLoader"]; got == nil || got.Manifests != 1 || got.Refused != 1 {
		t.Errorf("CustomSchemaLoader %+v", got)
	}
	if first := c.Sorted()[0]; first.Refused == 0 {
		t.Errorf("the most refused type first, got %+v", first)
	}
}

func TestCensusOutcomes(t *testing.T) {
	dir := t.TempDir()
	good := streamHead + `
streams:
  - name: s
    retriever: {requester: {url_base: "https://a"}, record_selector: {extractor: {field_path: []}}}
`
	files := map[string]string{
		"connectors/source-a/manifest.yaml": good,
		"connectors/source-a/metadata.yaml": "not: a manifest",
		"b.json":                            `{"streams": [{"name": "s", "retriever": {"requester": {"url_base": "https://a"}, "record_selector": {"extractor": {"field_path": []}}}}]}`,
		"bad.yaml":                          "streams: [",
		"ni.yml":                            good + "    incremental_sync: {type: IncrementingCountCursor, cursor_field: id}\n",
		"py.yaml":                           good + "    transformations: [{class_name: x.T}]\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := TakeCensus(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Outcome{}
	for _, f := range c.Files {
		rel, _ := filepath.Rel(dir, f.Path)
		got[filepath.ToSlash(rel)] = f.Outcome
	}
	want := map[string]Outcome{
		"connectors/source-a/manifest.yaml": Loaded,
		"b.json":                            Loaded,
		"bad.yaml":                          BadInput,
		"ni.yml":                            NotImplemented,
		"py.yaml":                           NeedsPython,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if tt := c.Types["IncrementingCountCursor"]; tt == nil || tt.Refused != 1 || tt.Loaded != 0 {
		t.Errorf("IncrementingCountCursor %+v", tt)
	}
	if tt := c.Types["CustomTransformation"]; tt == nil || tt.Refused != 1 {
		t.Errorf("CustomTransformation %+v", tt)
	}
}
