package tap

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// keywordsSchema has each keyword the byte walker checks and some it
// leaves to the schema library, value by value.
const keywordsSchema = `{"type":"object","required":["id"],"properties":{
	"id":{"type":"integer","minimum":1},
	"score":{"type":["number","null"],"exclusiveMinimum":0,"maximum":10.5},
	"code":{"type":"string","pattern":"^[A-Z]{2}-[0-9]+$","maxLength":6},
	"status":{"type":["string","null"],"enum":["open","closed",null]},
	"day":{"type":"string","format":"date"},
	"at":{"type":"string","format":"date-time"},
	"mail":{"type":"string","format":"email"},
	"uid":{"type":"string","format":"uuid"},
	"ip":{"type":"string","format":"ipv4"},
	"host":{"type":"string","format":"hostname"},
	"tags":{"type":"array","items":{"type":"string"},"uniqueItems":true},
	"qty":{"type":"integer","multipleOf":5},
	"ref":{"$ref":"#/definitions/pos"},
	"either":{"anyOf":[{"type":"string"},{"type":"integer"}]},
	"nested":{"type":"object","required":["n"],"properties":{"n":{"type":"integer","maximum":9}}}},
	"definitions":{"pos":{"type":"integer","minimum":0}}}`

// TestSpliceKeywords holds a page of records against keywordsSchema to
// the tree path: the same records, dead letters and bookmark; and each
// valid record the walker can read as it lies is spliced, a keyword the
// library checks for it included.
func TestSpliceKeywords(t *testing.T) {
	valid := []string{
		`{"id":1,"score":10.5,"code":"AB-12","status":"open","day":"2024-02-29","at":"2026-01-01T00:00:00Z"}`,
		`{"id":2,"score":null,"status":null,"mail":"a.b@example.com","uid":"123e4567-e89b-12d3-a456-426614174000","ip":"10.0.0.1"}`,
		`{"id":3,"host":"example.com","tags":["a","b"],"qty":15,"ref":0,"either":"x","nested":{"n":9}}`,
		`{"id":4,"code":"A\u0042-1","mail":"\"a b\"@example.com"}`, // the library's, string by string
	}
	invalid := []string{
		`{"id":0}`,
		`{"id":5,"score":0}`,
		`{"id":6,"score":10.6}`,
		`{"id":7,"code":"ab-12"}`,
		`{"id":8,"code":"AB-1234"}`,
		`{"id":9,"status":"pending"}`,
		`{"id":10,"day":"2023-02-29"}`,
		`{"id":11,"mail":"a..b@example.com"}`,
		`{"id":12,"uid":"123e4567"}`,
		`{"id":13,"ip":"10.0.0.256"}`,
		`{"id":14,"host":"exa_mple.com"}`,
		`{"id":15,"tags":["a","a"]}`,
		`{"id":16,"qty":16}`,
		`{"id":17,"ref":-1}`,
		`{"id":18,"either":true}`,
		`{"id":19,"nested":{"n":10}}`,
		`{"id":20,"nested":{}}`,
	}
	spliceDifferential(t, keywordsSchema, valid, invalid)
}

// spliceDifferential syncs one page of the valid records and then the
// invalid ones against schema, on the tree path and spliced: the same
// records, dead letters and bookmark; and each valid record is spliced
// (written as it came).
func spliceDifferential(t *testing.T, schema string, valid, invalid []string) {
	t.Helper()
	page := `{"events":[` + strings.Join(append(append([]string{}, valid...), invalid...), ",") + `]}`
	tree := syncPage(t, page, []byte(schema), true, nil)
	spliced := syncPage(t, page, []byte(schema), false, nil)
	if tree.err != "" || spliced.err != "" {
		t.Fatalf("sync: tree %q, spliced %q", tree.err, spliced.err)
	}
	if len(spliced.raw) != len(valid) {
		t.Fatalf("%d records written, want %d", len(spliced.raw), len(valid))
	}
	for i, rec := range valid {
		if string(spliced.raw[i]) != rec {
			t.Errorf("record %d written as %s, want it spliced", i, spliced.raw[i])
		}
	}
	if len(tree.dead) != len(invalid) {
		t.Errorf("%d dead letters, want %d", len(tree.dead), len(invalid))
	}
	tree.raw, spliced.raw = nil, nil
	if d := cmp.Diff(tree, spliced, cmp.AllowUnexported(message{}, pageRun{})); d != "" {
		t.Errorf("(-tree +spliced):\n%s", d)
	}
}

// nullableSchema says "X or null" as generated schemas do, which the
// walker checks itself; and forms of it it leaves to the library.
const nullableSchema = `{"type":"object","required":["id"],"properties":{
	"id":{"type":"integer"},
	"name":{"anyOf":[{"type":"string","maxLength":5},{"type":"null"}],"default":null,"title":"Name"},
	"at":{"anyOf":[{"type":"null"},{"type":"string","format":"date-time"}]},
	"n":{"oneOf":[{"$ref":"#/definitions/pos"},{"type":"null"}]},
	"tags":{"anyOf":[{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"null"}]}},{"type":"null"}]},
	"obj":{"anyOf":[{"type":"object","required":["k"],"properties":{"k":{"type":"integer"}}},{"type":"null"}]},
	"any":{"oneOf":[{"minimum":1},{"type":"null"}]}},
	"definitions":{"pos":{"type":"integer","minimum":0}}}`

// TestSpliceNullable holds a page of records against nullableSchema to
// the tree path, valid records and invalid ones.
func TestSpliceNullable(t *testing.T) {
	valid := []string{
		`{"id":1,"name":"abc","at":"2026-01-01T00:00:00Z","n":0,"tags":["a",null],"obj":{"k":1},"any":2}`,
		`{"id":2,"name":null,"at":null,"n":null,"tags":null,"obj":null}`,
		`{"id":3,"tags":[]}`,
	}
	invalid := []string{
		`{"id":4,"name":"abcdef"}`,
		`{"id":5,"name":1}`,
		`{"id":6,"at":"yesterday"}`,
		`{"id":7,"n":-1}`,
		`{"id":8,"n":"1"}`,
		`{"id":9,"tags":[1]}`,
		`{"id":10,"tags":"a"}`,
		`{"id":11,"obj":{}}`,
		`{"id":12,"any":null}`, // both of oneOf's: the library says no
		`{"id":13,"any":0}`,
	}
	spliceDifferential(t, nullableSchema, valid, invalid)
}
