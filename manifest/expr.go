package manifest

import (
	"fmt"
	"strconv"

	"github.com/tap-dev/tap/manifest/interp"
)

// Expr is a value of the manifest that the CDK interpolates: a string
// that may hold Jinja expressions ("{{ config['start_date'] }}"). Numbers
// and booleans written where an interpolated string may stand (a
// page_size of 100) are kept as the text they read as, as the CDK does.
type Expr struct {
	Src string
	T   *interp.Template // nil when the manifest did not give the field
}

// IsSet reports whether the manifest gave the field.
func (e Expr) IsSet() bool { return e.T != nil }

func (e Expr) String() string { return e.Src }

// compileExpr is the one place an expression is compiled at load; an
// invalid expression is bad input, reported at its place.
func compileExpr(src string) (Expr, error) {
	t, err := interp.Compile(src)
	if err != nil {
		return Expr{}, err
	}
	return Expr{Src: src, T: t}, nil
}

// Cond is an interpolated boolean (a RecordFilter's condition, a
// paginator's stop_condition, a response filter's predicate), true or
// false as the CDK's InterpolatedBoolean decides.
type Cond struct {
	Src string
	C   *interp.Condition // nil when the manifest did not give the field
}

// IsSet reports whether the manifest gave the field.
func (c Cond) IsSet() bool { return c.C != nil }

func compileCond(src string) (Cond, error) {
	c, err := interp.CompileCondition(src)
	if err != nil {
		return Cond{}, err
	}
	return Cond{Src: src, C: c}, nil
}

// Value is a tree of the manifest (a request body, the values of a list
// partition) whose strings are interpolated: maps, lists and scalars, with
// every string an Expr.
type Value struct {
	V any
}

// IsSet reports whether the manifest gave the field.
func (v Value) IsSet() bool { return v.V != nil }

// scalarText is the text of a scalar of the manifest, as an interpolated
// string reads it.
func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		if x {
			return "True", true // as Python writes it, so a literal reads back the same
		}
		return "False", true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	}
	return "", false
}

// kindOf names a manifest value's kind for an error.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64, uint64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
