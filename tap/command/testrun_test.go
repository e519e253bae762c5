package command

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/internal/taptest"
	"github.com/tap-dev/tap/tap"
	"github.com/tap-dev/tap/tap/inputs"
)

// singerLines decodes Singer output into (type, stream) pairs.
func singerLines(t *testing.T, out []byte) [][2]string {
	t.Helper()
	var lines [][2]string
	for _, l := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var m struct{ Type, Stream string }
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("not JSON: %s", l)
		}
		lines = append(lines, [2]string{m.Type, m.Stream})
	}
	return lines
}

func TestSingerTestAll(t *testing.T) {
	cfg, path := taptest.DemoConfig(t, nil)
	var names []string
	versioned := false
	for _, s := range cfg["streams"].([]any) {
		d := s.(map[string]any)
		names = append(names, d["name"].(string))
		versioned = versioned || d["full_table_versioning"] == true
	}
	if !versioned {
		t.Fatal("the sample has no full_table_versioning stream any more; the test needs one")
	}
	// A catalog selecting one stream: --test syncs them all regardless.
	catalog := filepath.Join(filepath.Dir(path), "catalog.json")
	sel := `{"streams":[{"tap_stream_id":"customers","stream":"customers","schema":{},"metadata":[{"breadcrumb":[],"metadata":{"selected":true}}]}]}`
	if err := os.WriteFile(catalog, []byte(sel), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := SingerTest(context.Background(), inputs.Files{Config: path, Catalog: catalog}, TestAll, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	records := map[string]int{}
	for _, l := range singerLines(t, out.Bytes()) {
		switch l[0] {
		case "RECORD":
			records[l[1]]++
		case "SCHEMA":
		default:
			t.Errorf("a test run wrote %s for %q; it writes only SCHEMA and RECORD", l[0], l[1])
		}
	}
	want := map[string]int{}
	for _, n := range names {
		want[n] = 1
	}
	if d := cmp.Diff(want, records); d != "" {
		t.Errorf("records per stream (-want +got):\n%s", d)
	}
}

func TestSingerTestSchema(t *testing.T) {
	cfg, path := taptest.DemoConfig(t, nil)
	var want [][2]string
	for _, s := range cfg["streams"].([]any) {
		want = append(want, [2]string{"SCHEMA", s.(map[string]any)["name"].(string)})
	}
	var out, errb bytes.Buffer
	if err := SingerTest(context.Background(), inputs.Files{Config: path}, TestSchema, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, singerLines(t, out.Bytes())); d != "" {
		t.Errorf("messages (-want +got):\n%s", d)
	}
	if errb.Len() > 0 {
		t.Errorf("--test=schema sends no request, yet logged:\n%s", errb.String())
	}
}

func TestSingerTestBadMode(t *testing.T) {
	_, path := taptest.DemoConfig(t, nil)
	var out, errb bytes.Buffer
	err := SingerTest(context.Background(), inputs.Files{Config: path}, "some", &out, &errb)
	if tap.ExitCode(err) != 2 || out.Len() > 0 {
		t.Errorf("err %v (exit %d), stdout %q; want exit 2 and nothing on stdout", err, tap.ExitCode(err), out.String())
	}
}
