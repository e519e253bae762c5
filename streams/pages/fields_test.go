package pages

import (
	"encoding/json"
	"testing"

	"github.com/tap-dev/tap/internal/jsontest"
	"github.com/tap-dev/tap/streams"
)

// textFields is a Fields record: the text of each top-level property, as
// the tap's splice path holds a record's captured keys.
type textFields map[string]json.RawMessage

func (f textFields) Field(name string) (string, bool) {
	text, ok := f[name]
	return string(text), ok
}

// fieldsRecords reads a JSON array of objects as Fields records.
func fieldsRecords(t *testing.T, recs string) []any {
	t.Helper()
	var objs []textFields
	if err := json.Unmarshal([]byte(recs), &objs); err != nil {
		t.Fatal(err)
	}
	out := make([]any, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out
}

// TestRowHashFields: a Fields record is told apart by its key as the
// decoded record is, whatever the key's JSON.
func TestRowHashFields(t *testing.T) {
	g := newGuard(&streams.Definition{Name: "x", PrimaryKey: []string{"id", "at"}})
	for _, rec := range []string{
		`{"id":1,"at":"2026-01-01T00:00:00Z"}`, `{"id":-1.5e3,"at":"x"}`, `{"id":"1","at":"\u00e9\"q"}`,
		`{"id":null,"at":true}`, `{"id":false,"at":{"b":[1,"2"],"a":null}}`, `{"id":[1,{"x":2}],"at":""}`,
	} {
		tree := jsontest.Decode(t, rec)
		fields := fieldsRecords(t, "["+rec+"]")[0]
		if g.rowHash(tree) != g.rowHash(fields) {
			t.Errorf("%s: hashed apart as Fields and as a tree", rec)
		}
	}
	a, b := fieldsRecords(t, `[{"id":1,"at":"a"}]`)[0], fieldsRecords(t, `[{"id":"1","at":"a"}]`)[0]
	if g.rowHash(a) == g.rowHash(b) {
		t.Error("a number key and a string key hash alike")
	}
}
