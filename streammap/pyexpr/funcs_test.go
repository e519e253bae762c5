package pyexpr

import (
	"encoding/json"
	"testing"
	"time"
)

// run compiles src over the properties of props and runs it on rec,
// failing the test if it does not finish in a few seconds (a function
// that recursed without end did not).
func run(t *testing.T, src string, props map[string]map[string]any, rec map[string]any) (any, error) {
	t.Helper()
	sc := &Scope{Props: props, Vars: map[string]int{}}
	c, err := Compile(src, sc, false)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	type result struct {
		v   any
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := c.Program.Run(diffEnv(rec, sc))
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s on %v: still running after 10 s", src, rec)
		return nil, nil
	}
}

// A JSON number beyond float64 is ±inf, as Python's json reads it; str()
// of it once recursed between str and repr without end.
func TestStrOfNumberBeyondFloat64(t *testing.T) {
	props := map[string]map[string]any{"x": {"type": "number"}}
	for _, tt := range []struct {
		x    json.Number
		want string
	}{
		{"1e400", "inf"},
		{"-1e400", "-inf"},
		{"1e-400", "0.0"},
	} {
		got, err := run(t, "str(x)", props, map[string]any{"x": tt.x})
		if err != nil || got != tt.want {
			t.Errorf("str(%s) = %v, %v; want %q", tt.x, got, err, tt.want)
		}
	}
}

// Nothing pyStr is handed sends it round between str and repr.
func TestStrOfAnyValueEnds(t *testing.T) {
	for _, v := range []any{json.Number("1e400"), json.Number("x"), []any{json.Number("1e999")}, map[string]any{"k": int8(3)}, struct{}{}} {
		done := make(chan string, 1)
		go func() { done <- pyStr(v) }()
		select {
		case s := <-done:
			if s == "" {
				t.Errorf("pyStr(%#v) is empty", v)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("pyStr(%#v): still running after 10 s", v)
		}
	}
}
