package lang

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

var funcs = map[string]Func{
	"py_join":  func(a ...any) (any, error) { return fmt.Sprint(a...), nil },
	"py_fail":  func(a ...any) (any, error) { return nil, fmt.Errorf("failed on %v", a[0]) },
	"py_panic": func(a ...any) (any, error) { panic("boom") },
}

func TestCompileCode(t *testing.T) {
	tests := []struct {
		code string
		env  map[string]any
		want any
		err  string // a compile error containing it
	}{
		{code: "(1 + 2)", want: 3},
		{code: "(1 / 2)", want: 0.5},
		{code: `("a" + "b")`, want: "ab"},
		{code: "(p0 * 2.5)", env: map[string]any{"p0": 2}, want: 5.0},
		{code: "(true ? 1 : 2)", want: 1},
		{code: "(!false)", want: true},
		{code: `{"k": [1, nil, "x"]}`, want: map[string]any{"k": []any{1, nil, "x"}}},
		{code: `py_join("a", 1)`, want: "a1"},
		{code: "missing", want: nil},
		{code: "(false && py_panic())", want: false},
		{code: "(true || py_panic())", want: true},
		{code: "(p0 && 1)", env: map[string]any{"p0": true}, want: 1},
		{code: `(1 + "a")`, err: "invalid operation: int + string"},
		{code: `(1 == "a")`, err: "mismatched types"},
		{code: `(-"a")`, err: "invalid operation: - string"},
		{code: `("a" ? 1 : 2)`, err: "non-bool"},
		{code: "py_nothing(1)", err: "unknown function"},
		{code: "(1 + )", err: "unexpected"},
		{code: "(1 + 2", err: `expected ")"`},
		{code: "010", err: "leading zero"},
		{code: "1 2", err: "unexpected"},
	}
	for _, tc := range tests {
		p, err := Compile(tc.code, funcs)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one containing %q", tc.code, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.code, err)
			continue
		}
		got, err := p.Run(tc.env)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s = %#v, %v; want %#v", tc.code, got, err, tc.want)
		}
	}
}

// A list a run returns is the caller's: changing it changes no later run.
func TestConstantListIsFresh(t *testing.T) {
	p, err := Compile("[1, 2]", funcs)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := p.Run(nil)
	a.([]any)[0] = "changed"
	if b, _ := p.Run(nil); b.([]any)[0] != 1 {
		t.Errorf("second run gives %v", b)
	}
}

func TestRunErrors(t *testing.T) {
	tests := []struct {
		code string
		env  map[string]any
		err  string
	}{
		{code: "(p0 + 1)", env: map[string]any{"p0": "a"}, err: "invalid operation: string + int"},
		{code: "(p0 < p1)", env: map[string]any{"p0": 1, "p1": "a"}, err: "invalid operation: int < string"},
		{code: "(p0 && true)", env: map[string]any{"p0": nil}, err: "invalid operation: nil &&"},
		{code: "(!p0)", env: map[string]any{"p0": 1}, err: "invalid operation: ! int"},
		{code: "(p0 ? 1 : 2)", err: "non-bool nil used as condition"},
		{code: "py_fail(p0)", env: map[string]any{"p0": 3}, err: "failed on 3"},
		{code: "py_panic()", err: "boom"},
	}
	for _, tc := range tests {
		p, err := Compile(tc.code, funcs)
		if err != nil {
			t.Errorf("%s: %v", tc.code, err)
			continue
		}
		if _, err := p.Run(tc.env); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want one containing %q", tc.code, err, tc.err)
		}
	}
}
