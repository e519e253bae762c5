package settings

import "testing"

func TestDidYouMean(t *testing.T) {
	known := []string{"replication_key", "records_path", "primary_key", "rate_limit", "param", "path"}
	for _, c := range []struct{ name, want string }{
		{"replication_kye", ` (did you mean "replication_key"?)`}, // a swap counts one
		{"recordspath", ` (did you mean "records_path"?)`},
		{"rate_limt", ` (did you mean "rate_limit"?)`},
		{"parm", ` (did you mean "param"?)`},
		{"Primary_Key", ` (did you mean "primary_key"?)`},
		{"color", ""}, // nothing close: no guess
		{"x", ""},
	} {
		if got := didYouMean(c.name, known); got != c.want {
			t.Errorf("didYouMean(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestTrailingComma(t *testing.T) {
	for _, c := range []struct {
		text string
		off  int64
		want int64
	}{
		{`{"a":1,}`, 7, 6},     // at the bracket
		{`{"a":1,}`, 8, 6},     // just past it
		{"[1,\n ]", 5, 2},      // white space between
		{`{"a":1 "b"}`, 7, -1}, // no comma: another error
	} {
		if got := trailingComma([]byte(c.text), c.off); got != c.want {
			t.Errorf("trailingComma(%q, %d) = %d, want %d", c.text, c.off, got, c.want)
		}
	}
}
