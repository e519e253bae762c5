package lang

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var funcs = map[string]Func{
	"py_join": func(a []Value) (Value, error) {
		var s string
		for _, v := range a {
			s += fmt.Sprint(v.Any())
		}
		return StringValue(s), nil
	},
	"py_fail":  func(a []Value) (Value, error) { return Value{}, fmt.Errorf("failed on %v", a[0].Any()) },
	"py_panic": func(a []Value) (Value, error) { panic("boom") },
}

var lib = &Library{
	Funcs: funcs,
	Unary: map[string]Unary{
		"py_twice": func(_ *Env, v Value) (Value, error) { return IntValue(2 * v.Int()), nil },
	},
	// The slots of the names the tests' programs read.
	Slot: func(name string) (int, bool) {
		i := slices.Index([]string{"p0", "p1", "missing"}, name)
		return i, i >= 0
	},
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
		{code: "(p9 + 1)", err: "unknown name p9"},
		{code: "py_twice(p0)", env: map[string]any{"p0": 4}, want: 8},
		{code: "py_twice(1, 2)", err: "py_twice takes one argument, got 2"},
	}
	for _, tc := range tests {
		p, err := Compile(tc.code, lib)
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
	p, err := Compile("[1, 2]", lib)
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
		// A record's number is held as json.Number: the user reads
		// "number", not the Go type (issue 29).
		{code: "(p0 && true)", env: map[string]any{"p0": json.Number("7")}, err: "invalid operation: number &&"},
		{code: "(!p0)", env: map[string]any{"p0": []any{1}}, err: "invalid operation: ! list"},
		{code: "(-p0)", env: map[string]any{"p0": map[string]any{}}, err: "invalid operation: - dict"},
	}
	for _, tc := range tests {
		p, err := Compile(tc.code, lib)
		if err != nil {
			t.Errorf("%s: %v", tc.code, err)
			continue
		}
		if _, err := p.Run(tc.env); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want one containing %q", tc.code, err, tc.err)
		}
	}
}

// Calls nest: an argument that is itself a call pushes its arguments
// above the outer call's and pops them, on one Env reused run after run.
func TestNestedCallsShareTheStack(t *testing.T) {
	p, err := Compile(`py_join(p0, py_join(p1, "-", py_join(p0)), p1)`, lib)
	if err != nil {
		t.Fatal(err)
	}
	e := &Env{Vars: make([]Value, 2)}
	for i, tc := range []struct {
		p0, p1 Value
		want   string
	}{
		{StringValue("a"), IntValue(1), "a1-a1"},
		{IntValue(2), StringValue("b"), "2b-2b"},
	} {
		e.Vars[0], e.Vars[1] = tc.p0, tc.p1
		got, err := p.Eval(e)
		if err != nil || got.Kind() != String || got.Str() != tc.want {
			t.Errorf("run %d: %#v, %v; want %q", i, got.Any(), err, tc.want)
		}
	}
}

// Strings and numbers stay unboxed: a program over them allocates only
// what it makes (here nothing).
func TestEvalDoesNotAllocate(t *testing.T) {
	p, err := Compile(`((py_twice(p0) * 2) + 1 > 3 ? p1 : "none")`, lib)
	if err != nil {
		t.Fatal(err)
	}
	e := &Env{Vars: []Value{IntValue(123456), StringValue("x")}}
	allocs := testing.AllocsPerRun(100, func() {
		if v, err := p.Eval(e); err != nil || v.Str() != "x" {
			t.Fatalf("%#v, %v", v.Any(), err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations a run, want 0", allocs)
	}
}

// Of and Any are inverses, and Of unboxes exactly the kinds Value holds.
func TestOfAny(t *testing.T) {
	for _, tc := range []struct {
		x    any
		kind Kind
	}{
		{nil, Nil}, {true, Bool}, {false, Bool}, {7, Int}, {-1.5, Float}, {"s", String},
		{int64(7), Other}, {[]any{1}, Other}, {map[string]any{"a": 1}, Other},
	} {
		v := Of(tc.x)
		if v.Kind() != tc.kind || !reflect.DeepEqual(v.Any(), tc.x) {
			t.Errorf("Of(%#v): kind %d, Any %#v; want kind %d", tc.x, v.Kind(), v.Any(), tc.kind)
		}
	}
}
