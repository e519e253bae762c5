// Package interp evaluates the Jinja interpolation of Airbyte's
// declarative manifests ("{{ config['start_date'] }}", a RecordFilter's
// condition) as the CDK's JinjaInterpolation does: the template renders
// to text, and text that reads as a Python literal becomes that literal
// (ast.literal_eval), so "{{ config['page_size'] }}" is an int and
// "{{ record }}" a dict.
//
// A template is compiled once, when the manifest loads; a syntax error,
// an unknown variable, macro, filter or test is a Compile error naming
// the place in the expression. Eval then costs no parse and, for an
// expression that only reads a value, no allocation: the result of a
// template made of one {{ expression }} is typed from the value itself
// rather than printed and parsed back.
//
// Our own interpreter rather than a Go Jinja library (gonja was measured,
// see the benchmarks): the CDK's meaning lies as much in Python's values
// (str() of a dict, int versus float, None, datetime and timedelta,
// floor division and modulo) as in Jinja's syntax, and a Go engine that
// renders to text would still need Python's literal_eval behind it.
//
// Where it parts from the CDK, knowingly: Go's maps keep no order, so a
// dict (decoded JSON's too) iterates and prints in sorted key order
// where Python keeps the order it was written in; a float64 inside a
// list or dict with no fraction prints as an int (JSON's ints arrive as
// float64; pass json.Number to keep them apart); ints are 64-bit, and a
// result past them is an error; tuples and sets are lists; a list or
// dict a caller passed in is never changed (append and update work on a
// template's own {% set %} values). today_with_timezone needs the
// system's time zone database.
package interp

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Var names a variable the CDK passes to an interpolation.
type Var uint32

// The variables. StreamInterval and StreamPartition are the CDK's aliases
// of StreamSlice: they read the same value.
const (
	Config Var = 1 << iota
	Parameters
	StreamSlice
	StreamInterval
	StreamPartition
	NextPageToken
	Response
	Headers
	LastRecord
	LastPageSize
	Record
	// The variables of components beyond the core ones (dynamic
	// streams, async jobs, schema type identifiers); their values are in
	// Vars.Extra, by name.
	ComponentsValues
	CreationResponse
	PollingResponse
	DownloadTarget
	RawSchema
	Property
	// Clock is not a variable: a template that calls now_utc(),
	// today_utc(), day_delta() or generate_uuid() reads it.
	Clock
)

// VarSet is a set of variables.
type VarSet uint32

// Has tells whether the set holds v.
func (s VarSet) Has(v Var) bool { return s&VarSet(v) != 0 }

var varNames = []struct {
	name string
	v    Var
}{
	{"config", Config},
	{"parameters", Parameters},
	{"stream_slice", StreamSlice},
	{"stream_interval", StreamInterval},
	{"stream_partition", StreamPartition},
	{"next_page_token", NextPageToken},
	{"response", Response},
	{"headers", Headers},
	{"last_record", LastRecord},
	{"last_page_size", LastPageSize},
	{"record", Record},
	{"components_values", ComponentsValues},
	{"creation_response", CreationResponse},
	{"polling_response", PollingResponse},
	{"download_target", DownloadTarget},
	{"raw_schema", RawSchema},
	{"property", Property},
}

// String lists the set's variable names, as a template writes them.
func (s VarSet) String() string {
	var names []string
	for _, n := range varNames {
		if s.Has(n.v) {
			names = append(names, n.name)
		}
	}
	if s.Has(Clock) {
		names = append(names, "(clock)")
	}
	return strings.Join(names, ", ")
}

// Vars are the values a template reads. Records, responses and configs
// are decoded JSON: map[string]any, []any, string, float64 or
// json.Number, bool, nil. A nil field is Python's None, as the CDK
// passes None for, say, the first page's next_page_token.
type Vars struct {
	Config      map[string]any
	Parameters  map[string]any
	StreamSlice map[string]any // also stream_interval and stream_partition
	// The parts of the CDK's StreamSlice that stream_slice.partition,
	// .cursor_slice and .extra_fields read; when nil, those read the
	// StreamSlice's key of that name.
	Partition, CursorSlice, ExtraFields map[string]any
	NextPageToken                       map[string]any
	Response                            any
	Headers                             map[string]any // see ResponseHeaders
	LastRecord                          map[string]any
	LastPageSize                        int
	Record                              map[string]any
	// Extra holds the other variables (components_values, ...) by name.
	Extra map[string]any
	// Now is the clock of now_utc() and its kin; nil is time.Now.
	Now func() time.Time
}

func (v *Vars) now() time.Time {
	if v.Now != nil {
		return v.Now().UTC()
	}
	return time.Now().UTC()
}

// ErrUndefined is wrapped by an Eval error that comes from an operation
// on an undefined value (an attribute of a missing key, say), Jinja's
// UndefinedError. The CDK then evaluates the component's default.
var ErrUndefined = errors.New("undefined value")

// Template is a compiled interpolated string. It is immutable: one
// Template serves any number of goroutines.
type Template struct {
	src    string
	body   []stmt
	single node // the body is one {{ expression }} and nothing else
	reads  VarSet
	slots  int // local variables ({% set %}, {% for %})
	size   int // a guess at the rendered text's length
	// constant: the template reads no variable and no clock, so its
	// result, computed at Compile, is val.
	constant bool
	val      any
	valErr   error
}

// Compile compiles an interpolated string: literal text with {{ ... }}
// expressions and {% if %}, {% for %}, {% set %} statements. Text with
// no Jinja in it is a template too, whose value is the text (read as a
// literal, as the CDK reads it).
func Compile(src string) (*Template, error) {
	// Jinja drops one newline at the end of a template
	// (keep_trailing_newline is off), which YAML's block scalars leave.
	text := strings.TrimSuffix(src, "\n")
	if len(text) < len(src) {
		text = strings.TrimSuffix(text, "\r")
	}
	p := &parser{src: text}
	body, err := p.template()
	if err != nil {
		return nil, err
	}
	t := &Template{src: src, body: body, reads: p.reads, slots: p.nslots}
	if len(body) == 1 {
		if o, ok := body[0].(*outputStmt); ok {
			t.single = o.x
		}
	}
	for _, s := range body {
		t.size += 24 // an expression's text
		if s, ok := s.(*textStmt); ok {
			t.size += len(s.s) - 24
		}
	}
	if p.reads == 0 {
		t.constant = true
		t.val, t.valErr = t.eval(&Vars{})
	}
	return t, nil
}

// MustCompile is Compile for templates written in Go code; it panics on
// an error.
func MustCompile(src string) *Template {
	t, err := Compile(src)
	if err != nil {
		panic(err)
	}
	return t
}

// Source is the text the template was compiled from.
func (t *Template) Source() string { return t.src }

// Reads is the set of variables the template reads (and Clock if it
// reads the time).
func (t *Template) Reads() VarSet { return t.reads }

// Constant tells whether the template reads nothing: its value is the
// same at every Eval.
func (t *Template) Constant() bool { return t.constant }

// Eval evaluates the template and types its result as the CDK does: the
// rendered text read as a Python literal (int64, float64, bool, nil,
// []any, map[string]any, or a json.Number for an int past int64) when it
// reads as one, else the text. A result that renders empty is "" (the
// CDK then evaluates the component's default, if it has one). A list or
// dict that came in as decoded JSON ({{ record }}) comes back as it is,
// numbers and all, not copied: the caller must not change it. v may be
// nil: no variables.
func (t *Template) Eval(v *Vars) (any, error) {
	if t.constant {
		return fresh(t.val), t.valErr
	}
	if v == nil {
		v = &Vars{}
	}
	return t.eval(v)
}

// fresh copies a constant's list or dict, which a caller may change.
func fresh(x any) any {
	switch v := x.(type) {
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = fresh(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = fresh(e)
		}
		return out
	}
	return x
}

// EvalDefault evaluates the template as the CDK's JinjaInterpolation does
// when a component gives a default: a result that renders empty, or an
// operation on an undefined value, gives the default's value instead
// (nil, None, when def is nil, as the CDK's mappings — request
// parameters, headers, bodies — evaluate their values).
func (t *Template) EvalDefault(v *Vars, def *Template) (any, error) {
	x, err := t.Eval(v)
	if err == nil && x != "" {
		return x, nil
	}
	if err != nil && !errors.Is(err, ErrUndefined) {
		return nil, err
	}
	if def == nil {
		return nil, nil
	}
	return def.Eval(v)
}

func (t *Template) eval(v *Vars) (any, error) {
	f := frame{v: v}
	if t.slots > 0 {
		f.locals = make([]any, t.slots)
	}
	if t.single != nil {
		x, err := f.eval(t.single)
		if err != nil {
			return nil, t.wrap(err)
		}
		return typed(x), nil
	}
	var b strings.Builder
	b.Grow(t.size)
	if err := f.exec(&b, t.body); err != nil {
		return nil, t.wrap(err)
	}
	s := b.String()
	if x, ok := LiteralEval(s); ok {
		return x, nil
	}
	return s, nil
}

// Render evaluates the template to its text, before the CDK reads it as
// a literal (what a component that wants a string, such as AddFields
// with a value_type of string, keeps).
func (t *Template) Render(v *Vars) (string, error) {
	if v == nil {
		v = &Vars{}
	}
	f := frame{v: v}
	if t.slots > 0 {
		f.locals = make([]any, t.slots)
	}
	var b strings.Builder
	b.Grow(t.size)
	if err := f.exec(&b, t.body); err != nil {
		return "", t.wrap(err)
	}
	return b.String(), nil
}

func (t *Template) wrap(err error) error {
	return fmt.Errorf("evaluating %q: %w", t.src, err)
}

// typed is the result of a template that is one expression: the value x
// printed by str() and read back by ast.literal_eval, without the trip
// through text where the value survives it unchanged.
func typed(x any) any {
	switch v := x.(type) {
	case nil, bool, int64:
		return x
	case float64:
		if isFinite(v) {
			return x // x, not v: no new interface value
		}
	case string:
		if r, ok := LiteralEval(v); ok {
			return r
		}
		return x
	case undefined:
		return ""
	case []any, map[string]any:
		if plain(x) {
			return x
		}
	}
	s := pyStr(x)
	if r, ok := LiteralEval(s); ok {
		return r
	}
	return s
}

// plain tells whether x holds only values whose repr literal_eval reads
// back as they are.
func plain(x any) bool {
	switch x := x.(type) {
	case nil, bool, int64, string:
		return true
	case float64:
		return isFinite(x)
	case []any:
		for _, e := range x {
			if !plain(e) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, e := range x {
			if !plain(e) {
				return false
			}
		}
		return true
	}
	return false
}

// Macros, Filters and Tests name what templates may call, sorted (for
// the docs' table of what is supported).
func Macros() []string  { return sortedNames(macros) }
func Filters() []string { return sortedNames(filters) }
func Tests() []string   { return sortedNames(tests) }

// Condition is a compiled InterpolatedBoolean: a RecordFilter's
// condition, a paginator's stop_condition, a response filter's
// predicate.
type Condition struct{ t *Template }

// CompileCondition compiles a boolean condition.
func CompileCondition(src string) (*Condition, error) {
	t, err := Compile(src)
	if err != nil {
		return nil, err
	}
	return &Condition{t: t}, nil
}

// Template is the condition's template (its Reads, its Source).
func (c *Condition) Template() *Template { return c.t }

// Eval tells whether the condition holds. As in the CDK, the result is
// false when it is one of False, 0, 0.0, "", "false", [], {} or
// undefined, and true otherwise — None included, since the CDK's
// FALSE_VALUES do not list it.
func (c *Condition) Eval(v *Vars) (bool, error) {
	x, err := c.t.Eval(v)
	if err != nil {
		if errors.Is(err, ErrUndefined) {
			return false, nil
		}
		return false, err
	}
	switch x := x.(type) {
	case bool:
		return x, nil
	case int64:
		return x != 0, nil
	case float64:
		return x != 0, nil
	case string:
		switch x {
		case "", "False", "false", "{}", "[]", "()", "0", "0.0":
			return false, nil
		}
		return true, nil
	case []any:
		return len(x) != 0, nil
	case map[string]any:
		return len(x) != 0, nil
	}
	return true, nil
}
