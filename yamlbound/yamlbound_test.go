package yamlbound

import (
	"fmt"
	"github.com/google/go-cmp/cmp"
	"strings"
	"testing"
)

// doubling is a document whose aliases double at each of levels levels.
func doubling(levels int) string {
	var b strings.Builder
	b.WriteString("l0: &l0 [x, x]\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [*l%d, *l%d]\n", i, i, i-1, i-1)
	}
	return b.String()
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name, doc string
		max       int
		wantErr   string
	}{
		{"a plain document", "openapi: 3.0.3\npaths: {}\n", 100, ""},
		{"aliases within the bound", doubling(5), 1000, ""},
		{"aliases that double 40 times", doubling(40), MaxNodes, "expand it to more than"},
		{"just past the bound", doubling(5), 100, "expand it to more than 100 nodes"},
		{"the classic billion laughs", "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\nh: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\ni: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]\n", MaxNodes, "expand it to more than"},
		{"not YAML", "a: [b\n", 100, "yaml"},
	}
	for _, tt := range tests {
		err := Check([]byte(tt.doc), tt.max)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: err %v, want one saying %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name, doc string
		want      any
	}{
		{"integer keys are text", "responses:\n  200: ok\n", map[string]any{"responses": map[string]any{"200": "ok"}}},
		{"a date stays the date written", "since: 2021-01-01\n", map[string]any{"since": "2021-01-01"}},
		{"a time stays its text", "at: 2021-01-01T10:00:00Z\n", map[string]any{"at": "2021-01-01T10:00:00Z"}},
		{"numbers as decoded", "n: [1, 1.5]\n", map[string]any{"n": []any{1, 1.5}}},
		{"a key twice keeps the last", "a: 1\na: 2\n", map[string]any{"a": 2}},
		{"inside lists", "- {1: x}\n", []any{map[string]any{"1": "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode([]byte(tt.doc), MaxNodes)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	if _, err := Decode([]byte("a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n"), 5); err == nil {
		t.Error("a document past the bound was decoded")
	}
}
