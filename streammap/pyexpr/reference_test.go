package pyexpr

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
)

// The tap evaluated translated code with github.com/expr-lang/expr before
// package lang; that library stays the reference here (a test dependency
// only): every expression below must compile in both or in neither, and
// give the same value, or fail in both, on every record.

// exprOptions is how the tap configured expr: a map environment, the py_*
// functions, no built-ins, undefined names as nil.
func exprOptions() []expr.Option {
	opts := []expr.Option{expr.Env(map[string]any{}), expr.DisableAllBuiltins(), expr.AllowUndefinedVariables()}
	for _, name := range slices.Sorted(maps.Keys(pyFuncs)) {
		opts = append(opts, expr.Function(name, pyFuncs[name]))
	}
	return opts
}

var diffProps = map[string]map[string]any{
	"n":     {"type": "integer"},
	"x":     {"type": []any{"number", "null"}},
	"s":     {"type": "string"},
	"flag":  {"type": "boolean"},
	"tags":  {"type": "array"},
	"obj":   {"type": "object"},
	"ts":    {"type": "string", "format": "date-time"},
	"any":   {},
	"email": {"type": "string"},
}

var diffRecords = []map[string]any{
	{"n": json.Number("7"), "x": json.Number("2.5"), "s": "Hello", "flag": true, "tags": []any{"a", "b"},
		"obj": map[string]any{"k": json.Number("1"), "l": []any{json.Number("1"), "x"}}, "ts": "2024-05-01T10:20:30+00:00",
		"any": json.Number("3"), "email": "a@example.com"},
	{"n": json.Number("0"), "x": nil, "s": "", "flag": false, "tags": []any{}, "obj": map[string]any{},
		"ts": "2024-01-02", "any": "text", "email": "nobody"},
	{"n": json.Number("-3"), "x": json.Number("0"), "s": "a", "flag": nil, "any": []any{json.Number("1"), json.Number("2.0")}},
	{"n": json.Number("9007199254740993"), "x": json.Number("1e300"), "s": "ÄÖ", "any": true, "obj": nil},
	{},
}

var diffExpressions = []string{
	// literals and names
	"1", "1.5", "1e6", "2_000", "'x'", `"quote \" and \\ back"`, "'é\\n\\t'", "True", "False", "None",
	"[1, 'a', None, [2]]", "{'a': 1, 'b': [n, s]}", "{}", "[]", "n", "x", "s", "flag", "tags", "obj", "any", "record", "_",
	"__stream_name__", "config['factor']", "config['name']", "config['ok']", "config['nothing']", "self",
	// arithmetic
	"n + 1", "n - 1", "n * 2", "n / 2", "n // 2", "n % 3", "n ** 2", "x + n", "x * 2", "x / 0.5", "n / 0", "x - x",
	"-n", "+n", "-x", "-s", "+s", "s + s", "s + '!'", "s + n", "n + s", "s * 2", "tags + tags", "n + None", "None * x", "n < None", "None >= s", "-None", "1 + 2 * 3",
	"(1 + 2) * 3", "2 ** -1", "7 // -2", "-7 % 3", "1 / 3", "10 / 4", "any + 1", "any * any", "any - 1",
	"1 + 'a'", "'a' - 1", "-'a'", "2.5 * 2", "3 - 0.5",
	// comparisons
	"n == 7", "n != 7", "n < 10", "n <= 7", "n > x", "n >= x", "x == 2.5", "s == 'Hello'", "s < 'b'", "s >= 'a'",
	"n == 7.0", "1 < n < 10", "n < s", "s < n", "flag == True", "flag != False", "tags == ['a', 'b']", "tags == []",
	"obj == {}", "x is None", "x is not None", "any == 3", "any == [1, 2]", "any == 'text'", "n == None", "None == None",
	"[1] == [1.0]", "{'a': 1} == {'a': 1}", "1 == 'a'", "'a' == 'a'", "True == 1", "x != x",
	// boolean logic
	"flag and n > 1", "flag or n > 1", "not flag", "not n", "not s", "n and s", "n or s", "s or 'empty'",
	"x and x > 1", "tags and tags[0]", "not tags", "flag and flag", "not not flag",
	"'big' if n > 5 else 'small'", "s if s else 'none'", "n if flag else -n", "1 if True else 2",
	// membership and subscripts
	"'a' in tags", "'z' not in tags", "'ell' in s", "'k' in obj", "n in tags", "tags[0]", "tags[-1]", "tags[5]",
	"s[1:3]", "s[:2]", "s[-2:]", "obj['k']", "obj['missing']", "obj['l'][1]", "record['s']", "_['n'] + 1",
	// functions and methods
	"str(n)", "str(x)", "str(flag)", "str(None)", "int('0')", "int(s)", "int(x)", "float(n)", "float('1.5')",
	"bool(s)", "bool(tags)", "md5(s)", "sha256(str(n))", "json.dumps(obj)", "json.dumps(tags, default=str)",
	"json.loads('{\"a\": [1, 2.5]}')", "s.lower()", "s.upper()", "s.strip()", "s.split('l')", "email.split('@')[1]",
	"s.startswith('He')", "email.endswith('@example.com')", "s.replace('l', 'L')", "','.join(tags)", "obj.get('k')",
	"obj.get('missing', 0)", "s.title()", "datetime.datetime.fromisoformat(ts)", "datetime.datetime.fromisoformat(ts).year",
	"datetime.datetime.fromisoformat(ts).date()", "datetime.date.fromisoformat(ts)", "datetime.datetime.fromisoformat(ts).isoformat()",
	"datetime.datetime.fromisoformat(ts).timestamp()", "datetime.datetime.fromisoformat(ts).strftime('%Y/%m')",
	"datetime.datetime.fromisoformat(ts) == datetime.datetime.fromisoformat(ts)",
	"datetime.datetime.fromisoformat(ts) < datetime.datetime.fromisoformat(ts)",
	"str(n) + '-' + str(float(n))", "md5(str(n)) if flag else None",
}

func diffEnv(rec map[string]any, sc *Scope) map[string]any {
	env := map[string]any{"rec": rec, "cfg": sc.Config, "stream": "users"}
	for prop := range sc.Vars {
		env[sc.propVar(prop)] = Normalize(rec[prop])
	}
	return env
}

func TestEvalMatchesExpr(t *testing.T) {
	config := map[string]any{"factor": json.Number("3"), "name": "cfg", "ok": true, "nothing": nil}
	for _, src := range diffExpressions {
		for _, asBool := range []bool{false, true} {
			for _, self := range []string{"", "n"} {
				sc := &Scope{Props: diffProps, Config: config, Vars: map[string]int{}, Self: self}
				c, err := Compile(src, sc, asBool)
				name := fmt.Sprintf("%s (filter %v, self %q)", src, asBool, self)
				if err != nil {
					if strings.HasPrefix(err.Error(), "cannot compile") {
						// Ours refused the code: expr must refuse it too.
						if _, xerr := expr.Compile(c0(src, sc, asBool), exprOptions()...); xerr == nil {
							t.Errorf("%s: %v, but expr compiles it", name, err)
						}
					}
					continue // the translator refused it: nothing evaluates
				}
				ref, xerr := expr.Compile(c.code, exprOptions()...)
				if xerr != nil {
					t.Errorf("%s: expr refuses %s: %v", name, c.code, xerr)
					continue
				}
				for i, rec := range diffRecords {
					env := diffEnv(rec, sc)
					got, gotErr := c.Program.Run(env)
					want, wantErr := vm.Run(ref, diffEnv(rec, sc))
					if (gotErr != nil) != (wantErr != nil) {
						t.Errorf("%s, record %d: error %v, expr's %v (code %s)", name, i, gotErr, wantErr, c.code)
						continue
					}
					if gotErr == nil && !sameValue(got, want) {
						t.Errorf("%s, record %d: %#v, expr gives %#v (code %s)", name, i, got, want, c.code)
					}
				}
			}
		}
	}
}

// c0 is the code the translator writes for src, before it is compiled.
func c0(src string, sc *Scope, asBool bool) string {
	p := &parser{src: src, sc: sc}
	if p.lex() != nil {
		return ""
	}
	v, err := p.test()
	if err != nil {
		return ""
	}
	if asBool {
		return truthy(v)
	}
	return v.code
}

// sameValue is deep equality where NaN equals NaN.
func sameValue(a, b any) bool {
	if x, ok := a.(float64); ok {
		if y, ok := b.(float64); ok && math.IsNaN(x) && math.IsNaN(y) {
			return true
		}
	}
	return reflect.DeepEqual(a, b)
}
