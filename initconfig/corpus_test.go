package initconfig

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestCorpusSample runs init on the sample of real documents in
// testdata/corpus: each gives a config the tap loads as it is, with the
// streams listed, or says it has no list operation. (The whole corpus,
// 567 documents, is go run ./bench -openapi DIR.)
func TestCorpusSample(t *testing.T) {
	want := map[string]int{ // streams; 0: no list operation
		"1forge.com_0.0.1.json":                              0,
		"citycontext.com_1.0.0.json":                         2,
		"deutschebahn.com_flinkster_v1.json":                 10,
		"getsandbox.com_v1.json":                             4,
		"googleapis.com_kgsearch_v1.json":                    0,
		"healthcare.gov_1.0.0.json":                          4,
		"nrel.gov_transportation-incentives-laws_0.1.0.json": 3,
		"nytimes.com_most_popular_api_2.0.0.json":            3,
		"nytimes.com_top_stories_2.0.0.json":                 1,
		"slack.com_1.0.0.json":                               5,
		"xkcd.com_1.0.0.json":                                0,
	}
	files, _ := filepath.Glob("testdata/corpus/*.json")
	if len(files) != len(want) {
		t.Fatalf("%d documents in testdata/corpus, the table lists %d", len(files), len(want))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r, err := generate(t, f, Options{})
			var ie *InputError
			switch {
			case errors.As(err, &ie) && strings.Contains(ie.Msg, "no GET operation whose success response is a list"):
				if n := want[filepath.Base(f)]; n != 0 {
					t.Fatalf("no list operation, want %d streams", n)
				}
			case err != nil:
				t.Fatal(err)
			default:
				names := []string{}
				for _, d := range r.Config.Streams {
					names = append(names, d.Name)
				}
				t.Logf("streams: %s", strings.Join(names, " "))
				if n := want[filepath.Base(f)]; len(names) != n {
					t.Errorf("%d streams, want %d", len(names), n)
				}
				loadsAsIs(t, r)
			}
		})
	}
}
