package streams

import (
	"os"
	"strings"
	"testing"
)

// The docs' tables of pagination types are PaginationTable, generated from
// the types' units, as the settings table is the registry's.
func TestPaginationDocsAreGenerated(t *testing.T) {
	for _, doc := range []string{"docs/reference/streams.md", "docs/guides/pagination.md"} {
		b, err := os.ReadFile("../" + doc)
		if err != nil {
			t.Fatal(err)
		}
		_, section, ok := strings.Cut(string(b), "<!-- pagination table: begin -->")
		section, _, ok2 := strings.Cut(section, "<!-- pagination table: end -->")
		if !ok || !ok2 {
			t.Fatalf("%s has no pagination table between its markers", doc)
		}
		if strings.TrimSpace(section) != strings.TrimSpace(PaginationTable()) {
			t.Errorf("%s: the pagination table is stale; run go generate ./...", doc)
		}
	}
}

// Every registered type describes itself: a name the table finds, its
// doc line, and a JSON type for each option (what a schema generator
// reads).
func TestPageTypesDescribeThemselves(t *testing.T) {
	seen := map[string]bool{}
	for _, pt := range PageTypes() {
		if seen[pt.Name] {
			t.Errorf("type %q registered twice", pt.Name)
		}
		seen[pt.Name] = true
		if got, ok := lookupPageType(pt.Name); !ok || got.options().pageType() != pt.Name {
			t.Errorf("type %q: its options say they belong to another type", pt.Name)
		}
		if pt.Next == "" || pt.End == "" {
			t.Errorf("type %q: no doc line (next page, end)", pt.Name)
		}
		for _, o := range pt.Options {
			switch o.Type {
			case "string", "integer", "boolean":
			default:
				t.Errorf("type %q option %q: JSON type %q", pt.Name, o.Name, o.Type)
			}
		}
	}
	if len(CommonPageOptions()) != 2 {
		t.Errorf("common options: %+v, want max_pages and inject", CommonPageOptions())
	}
}
