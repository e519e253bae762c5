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

// Integers are Python's, exact at any size: int64 arithmetic once wrapped
// (n * 100 with n = 10^17 was negative, 3 ** 100 garbage). Each want is
// what Python 3 evaluates the expression to, as the record holds it; an
// integer of more than 4,300 digits, which Python will not write, fails
// the record.
func TestIntegersAreExact(t *testing.T) {
	props := map[string]map[string]any{"n": {"type": "integer"}, "big": {"type": "integer"}}
	rec := map[string]any{"n": json.Number("100000000000000000"), "big": json.Number("123456789012345678901234567890")}
	for _, tt := range []struct {
		src, want, err string
	}{
		{src: "n * 100", want: "10000000000000000000"},
		{src: "3 ** 100", want: "515377520732011331036461129765621272702107522001"},
		{src: "n * 100 - n * 100 + 1", want: "1"},
		{src: "-(-9223372036854775807 - 1)", want: "9223372036854775808"},
		{src: "9223372036854775807 + 1", want: "9223372036854775808"},
		{src: "-9223372036854775807 - 2", want: "-9223372036854775809"},
		{src: "(-9223372036854775807 - 1) // -1", want: "9223372036854775808"},
		{src: "n * n * n", want: "1000000000000000000000000000000000000000000000000000"},
		{src: "123456789012345678901234567890 * 2", want: "246913578024691357802469135780"},
		{src: "big + 1", want: "123456789012345678901234567891"},
		{src: "big - big", want: "0"},
		{src: "-big", want: "-123456789012345678901234567890"},
		{src: "big * big", want: "15241578753238836750495351562536198787501905199875019052100"},
		{src: "big // 7", want: "17636684144620811271604938270"},
		{src: "big % 1000", want: "890"},
		{src: "-big % 1000", want: "110"},
		{src: "-big // 1000", want: "-123456789012345678901234568"},
		{src: "big // -1000", want: "-123456789012345678901234568"},
		{src: "2 ** 64 % -3", want: "-2"},
		{src: "-(2 ** 64) // 3", want: "-6148914691236517206"},
		{src: "big / 3", want: "4.115226300411523e+28"},
		{src: "big + 0.5", want: "1.2345678901234568e+29"},
		{src: "float(big)", want: "1.2345678901234568e+29"},
		{src: "big > n", want: "true"},
		{src: "big == big", want: "true"},
		{src: "big == 1.2345678901234568e+29", want: "false"},
		{src: "big > 1.2345678901234568e+29", want: "true"},
		{src: "big < 1.2345678901234568e+29", want: "false"},
		{src: "str(big)", want: `"123456789012345678901234567890"`},
		{src: "json.dumps([big])", want: `"[123456789012345678901234567890]"`},
		{src: "int('123456789012345678901234567890')", want: "123456789012345678901234567890"},
		{src: "int(1e20)", want: "100000000000000000000"},
		{src: "1 ** 10 ** 18", want: "1"},
		{src: "(-1) ** (10 ** 18 + 1)", want: "-1"},
		{src: "big if big else 0", want: "123456789012345678901234567890"},
		{src: "not big", want: "false"},
		{src: "10 ** 4299 // 10 ** 4298", want: "10"},
		{src: "10 ** 4300", err: "integer result has more than 4300 digits"},
		{src: "2 ** 10 ** 9", err: "integer result has more than 4300 digits"},
		{src: "10 ** 4000 * 10 ** 4000", err: "integer result has more than 4300 digits"},
		{src: "10 ** 400 + 0.5", err: "int too large to convert to float"},
	} {
		got, err := run(t, tt.src, props, rec)
		var text string
		if err == nil {
			var v any
			if v, err = Value(got); err == nil {
				b, _ := json.Marshal(v)
				text = string(b)
			}
		}
		switch {
		case tt.err != "":
			if err == nil || err.Error() != tt.err {
				t.Errorf("%s = %s, %v; want the error %q", tt.src, text, err, tt.err)
			}
		case err != nil || text != tt.want:
			t.Errorf("%s = %s, %v; want %s", tt.src, text, err, tt.want)
		}
	}
}
