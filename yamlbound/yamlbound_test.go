package yamlbound

import (
	"fmt"
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
