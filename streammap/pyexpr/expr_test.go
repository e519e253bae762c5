package pyexpr

import (
	"strings"
	"testing"
)

// Comma-separated lists (call arguments, list and dict literals): their
// items, a trailing comma, and what each refuses.
func TestCommaLists(t *testing.T) {
	tests := []struct {
		src, wantErr string
	}{
		{"[1, x, 'a']", ""},
		{"[1, 2,]", ""},
		{"[]", ""},
		{"{'a': x, 'b': [1, 2]}", ""},
		{"{'a': 1,}", ""},
		{"{}", ""},
		{"json.dumps(x, default=str)", ""},
		{"str(x,)", ""},
		{"str(x, base=2)", "keyword argument base= is not supported"},
		{"{x: 1}", "dict keys must be string literals"},
		{"[1, json]", "json is a module or function, not a value"},
		{"{'a': str}", "str is a module or function, not a value"},
		{"[1, 2", `expected "]"`},
		{"{'a' 1}", `expected ":"`},
	}
	for _, tt := range tests {
		_, err := Compile(tt.src, &Scope{Props: map[string]map[string]any{"x": {"type": "integer"}}, Vars: map[string]int{}}, false)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tt.src, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want one containing %q", tt.src, err, tt.wantErr)
		}
	}
}
