package streams

import (
	"reflect"
	"strings"
	"testing"
)

// Every option of the language says what it is, and every tag parses
// (OptionsOf panics on a bad one).
func TestLanguageTags(t *testing.T) {
	for _, b := range Language() {
		for _, o := range b.Options {
			if o.Doc == "" {
				t.Errorf("option %s of block %q has no doc tag", o.Name, b.Name)
			}
		}
	}
	for _, pt := range PageTypes() {
		for _, o := range pt.Options {
			if o.Note() == "" && !strings.HasSuffix(o.Name, "_param") && !strings.HasSuffix(o.Name, "_path") && o.Name != "page_size" {
				t.Errorf("pagination %s: option %s says nothing", pt.Name, o.Name)
			}
		}
	}
}

// Every rule's paths name options of the language: lookup panics on one
// that does not.
func TestRulesNameOptions(t *testing.T) {
	d := &Definition{Name: "a", Pagination: Pagination{Type: PageCursor, Options: &CursorOptions{}},
		Feed: &Feed{}, Deletes: &Deletes{Incremental: &Incremental{}}, Reconcile: &Reconcile{},
		Incremental: &Incremental{ChunkDays: 1}, Async: &Async{}, CSV: &CSVOptions{}, GraphQL: &GraphQL{}}
	// A pagination type's rules are read of a definition of that type.
	for _, pt := range pageTypes {
		d.Pagination = Pagination{Type: pt.name, Options: pt.options()}
		for _, r := range allRules() {
			if len(r.when) > 0 && strings.HasPrefix(r.when[0].text, "`pagination.type` is") && !r.when[0].holds(d) {
				continue
			}
			for _, c := range append(r.when, r.need) {
				c.holds(d)
			}
		}
	}
	for _, typ := range []string{PageGraphQL, PageNone} {
		d.Pagination = Pagination{Type: typ}
		checkRules(d)
	}
	if got := reflect.TypeOf(RuleSchemas()).Kind(); got != reflect.Slice {
		t.Fatal(got)
	}
}
