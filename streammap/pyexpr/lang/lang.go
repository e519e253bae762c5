// Package lang compiles the small language stream-map expressions are
// translated into (package pyexpr writes it) into a tree of closures over
// the environment (rec, cfg, stream, p0, p1…).
//
// The language is the expr-lang syntax the translator was first written
// for, of which it uses literals, names, calls of the functions it is
// given, [lists], {"key": maps}, unary ! - +, the binary operators || &&
// == != < <= > >= + - * /, and c ? a : b, each with expr's meaning: int
// and float64 mix as float64, / always gives a float64, + joins strings,
// == compares numbers by value and anything else deeply, && and || want a
// bool on their left.
//
// An interpreter of our own rather than expr's VM: expr looks methods up
// by name through reflection, which makes the linker keep every exported
// method of every type in the binary; without it the binary is 43%
// smaller and the tap's resident memory ~2 MiB less.
package lang

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Func is a function programs may call by name.
type Func = func(args ...any) (any, error)

// Program is one compiled expression.
type Program struct{ eval evalFunc }

type evalFunc func(env map[string]any) (any, error)

// Run evaluates the program against env; a name env lacks is None. A
// function that panics on a value it did not foresee fails the record,
// not the tap.
func (p *Program) Run(env map[string]any) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return p.eval(env)
}

// Compile compiles code that calls funcs. An operation on literals alone
// is computed here, so that one that cannot work (1 + "a") fails the
// configuration at start rather than the first record.
func Compile(code string, funcs map[string]Func) (*Program, error) {
	c := &codeParser{src: code, funcs: funcs}
	n, err := c.ternary()
	if err != nil {
		return nil, err
	}
	if c.skip(); c.pos < len(c.src) {
		return nil, c.errorf("unexpected %q", c.src[c.pos:])
	}
	return &Program{eval: n.eval}, nil
}

// node is a compiled sub-expression; constant when it reads no name and
// calls no function.
type node struct {
	eval     evalFunc
	constant bool
}

func constNode(v any) node {
	return node{eval: func(map[string]any) (any, error) { return v, nil }, constant: true}
}

// fold computes n now when it is constant. Lists and maps are built
// anew each time: a caller may change the one it is given.
func fold(n node) (node, error) {
	if !n.constant {
		return n, nil
	}
	v, err := n.eval(nil)
	switch v.(type) {
	case []any, map[string]any:
		return n, err
	}
	return constNode(v), err
}

type codeParser struct {
	src   string
	pos   int
	funcs map[string]Func
}

func (c *codeParser) errorf(format string, args ...any) error {
	return fmt.Errorf("at %d: %s", c.pos, fmt.Sprintf(format, args...))
}

func (c *codeParser) skip() {
	for c.pos < len(c.src) && c.src[c.pos] == ' ' {
		c.pos++
	}
}

// accept consumes op if it comes next.
func (c *codeParser) accept(op string) bool {
	c.skip()
	if strings.HasPrefix(c.src[c.pos:], op) {
		c.pos += len(op)
		return true
	}
	return false
}

func (c *codeParser) expect(op string) error {
	if !c.accept(op) {
		return c.errorf("expected %q", op)
	}
	return nil
}

func (c *codeParser) ternary() (node, error) {
	cond, err := c.binary(0)
	if err != nil {
		return node{}, err
	}
	if !c.accept("?") {
		return cond, nil
	}
	a, err := c.ternary()
	if err != nil {
		return node{}, err
	}
	if err := c.expect(":"); err != nil {
		return node{}, err
	}
	b, err := c.ternary()
	if err != nil {
		return node{}, err
	}
	n := node{constant: cond.constant && a.constant && b.constant, eval: func(env map[string]any) (any, error) {
		v, err := cond.eval(env)
		if err != nil {
			return nil, err
		}
		t, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("non-bool %s used as condition", typeName(v))
		}
		if t {
			return a.eval(env)
		}
		return b.eval(env)
	}}
	return fold(n)
}

// levels of the binary operators, loosest first; two-character
// operators before their one-character prefixes.
var levels = [][]string{
	{"||"},
	{"&&"},
	{"==", "!=", "<=", ">=", "<", ">"},
	{"+", "-"},
	{"*", "/"},
}

func (c *codeParser) binary(level int) (node, error) {
	if level == len(levels) {
		return c.unary()
	}
	a, err := c.binary(level + 1)
	if err != nil {
		return node{}, err
	}
	for {
		op := ""
		for _, o := range levels[level] {
			if c.accept(o) {
				op = o
				break
			}
		}
		if op == "" {
			return a, nil
		}
		b, err := c.binary(level + 1)
		if err != nil {
			return node{}, err
		}
		if level > 1 && op != "==" && op != "!=" && (isNil(a) || isNil(b)) {
			// As expr's checker: None is no operand of arithmetic or order.
			return node{}, c.errorf("invalid operation: None %s", op)
		}
		if a, err = fold(binaryNode(op, a, b)); err != nil {
			return node{}, err
		}
	}
}

func binaryNode(op string, a, b node) node {
	constant := a.constant && b.constant
	switch op {
	case "&&", "||":
		// As expr: the left side must be a bool, the right one is the
		// value.
		short := op == "||"
		return node{constant: constant, eval: func(env map[string]any) (any, error) {
			v, err := a.eval(env)
			if err != nil {
				return nil, err
			}
			t, ok := v.(bool)
			if !ok {
				return nil, fmt.Errorf("invalid operation: %s %s", typeName(v), op)
			}
			if t == short {
				return t, nil
			}
			return b.eval(env)
		}}
	}
	f := binaryOps[op]
	if constant && (op == "==" || op == "!=") {
		// As expr's checker: literals of different types do not compare.
		av, _ := a.eval(nil)
		bv, _ := b.eval(nil)
		if !sameKind(av, bv) {
			f = func(x, y any) (any, error) {
				return nil, fmt.Errorf("invalid operation: %s %s %s (mismatched types)", typeName(x), op, typeName(y))
			}
		}
	}
	return node{constant: constant, eval: func(env map[string]any) (any, error) {
		x, err := a.eval(env)
		if err != nil {
			return nil, err
		}
		y, err := b.eval(env)
		if err != nil {
			return nil, err
		}
		return f(x, y)
	}}
}

// isNil is whether n is the literal nil (the user wrote None).
func isNil(n node) bool {
	if !n.constant {
		return false
	}
	v, err := n.eval(nil)
	return v == nil && err == nil
}

func sameKind(a, b any) bool {
	_, an := number(a)
	_, bn := number(b)
	return a == nil || b == nil || an && bn || reflect.TypeOf(a) == reflect.TypeOf(b)
}

func (c *codeParser) unary() (node, error) {
	for _, op := range []string{"!", "-", "+"} {
		if !c.accept(op) {
			continue
		}
		a, err := c.unary()
		if err != nil {
			return node{}, err
		}
		switch op {
		case "+":
			return a, nil
		case "!":
			return fold(node{constant: a.constant, eval: func(env map[string]any) (any, error) {
				v, err := a.eval(env)
				if err != nil {
					return nil, err
				}
				t, ok := v.(bool)
				if !ok {
					return nil, fmt.Errorf("invalid operation: ! %s", typeName(v))
				}
				return !t, nil
			}})
		}
		return fold(node{constant: a.constant, eval: func(env map[string]any) (any, error) {
			v, err := a.eval(env)
			if err != nil {
				return nil, err
			}
			switch v := v.(type) {
			case int:
				return -v, nil
			case float64:
				return -v, nil
			}
			return nil, fmt.Errorf("invalid operation: - %s", typeName(v))
		}})
	}
	return c.primary()
}

func (c *codeParser) primary() (node, error) {
	c.skip()
	if c.pos == len(c.src) {
		return node{}, c.errorf("unexpected end")
	}
	switch ch := c.src[c.pos]; {
	case ch == '(':
		c.pos++
		n, err := c.ternary()
		if err != nil {
			return node{}, err
		}
		return n, c.expect(")")
	case ch == '[':
		c.pos++
		items, err := c.list("]")
		if err != nil {
			return node{}, err
		}
		return fold(node{constant: allConstant(items), eval: func(env map[string]any) (any, error) {
			return evalAll(env, items)
		}})
	case ch == '{':
		c.pos++
		return c.object()
	case ch == '"':
		s, err := c.str()
		return constNode(s), err
	case ch >= '0' && ch <= '9':
		return c.number()
	case ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z':
		return c.name()
	}
	return node{}, c.errorf("unexpected %q", c.src[c.pos:])
}

// list reads comma-separated expressions up to end.
func (c *codeParser) list(end string) ([]node, error) {
	var items []node
	for !c.accept(end) {
		if len(items) > 0 {
			if err := c.expect(","); err != nil {
				return nil, err
			}
		}
		n, err := c.ternary()
		if err != nil {
			return nil, err
		}
		items = append(items, n)
	}
	return items, nil
}

func (c *codeParser) object() (node, error) {
	var keys []string
	var values []node
	for !c.accept("}") {
		if len(keys) > 0 {
			if err := c.expect(","); err != nil {
				return node{}, err
			}
		}
		c.skip()
		k, err := c.str()
		if err != nil {
			return node{}, err
		}
		if err := c.expect(":"); err != nil {
			return node{}, err
		}
		v, err := c.ternary()
		if err != nil {
			return node{}, err
		}
		keys, values = append(keys, k), append(values, v)
	}
	return fold(node{constant: allConstant(values), eval: func(env map[string]any) (any, error) {
		m := make(map[string]any, len(keys))
		for i, v := range values {
			x, err := v.eval(env)
			if err != nil {
				return nil, err
			}
			m[keys[i]] = x
		}
		return m, nil
	}})
}

// str reads a string literal as strconv.Quote writes it.
func (c *codeParser) str() (string, error) {
	if c.pos >= len(c.src) || c.src[c.pos] != '"' {
		return "", c.errorf("expected a string")
	}
	end := c.pos + 1
	for end < len(c.src) && c.src[end] != '"' {
		if c.src[end] == '\\' {
			end++
		}
		end++
	}
	s, err := strconv.Unquote(c.src[c.pos:min(end+1, len(c.src))])
	if err != nil {
		return "", c.errorf("bad string")
	}
	c.pos = end + 1
	return s, nil
}

func (c *codeParser) number() (node, error) {
	start, float := c.pos, false
	for c.pos < len(c.src) {
		ch := c.src[c.pos]
		switch {
		case ch >= '0' && ch <= '9':
		case ch == '.' || ch == 'e' || ch == 'E':
			float = true
		case (ch == '+' || ch == '-') && (c.src[c.pos-1] == 'e' || c.src[c.pos-1] == 'E'):
		default:
			goto done
		}
		c.pos++
	}
done:
	text := c.src[start:c.pos]
	if float {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return node{}, c.errorf("bad number %q", text)
		}
		return constNode(f), nil
	}
	if len(text) > 1 && text[0] == '0' {
		return node{}, c.errorf("integer %q has a leading zero", text)
	}
	i, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return node{}, c.errorf("bad integer %q", text)
	}
	return constNode(int(i)), nil
}

func (c *codeParser) name() (node, error) {
	start := c.pos
	for c.pos < len(c.src) {
		ch := c.src[c.pos]
		if ch != '_' && !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9') {
			break
		}
		c.pos++
	}
	name := c.src[start:c.pos]
	switch name {
	case "true":
		return constNode(true), nil
	case "false":
		return constNode(false), nil
	case "nil":
		return constNode(nil), nil
	}
	if !c.accept("(") {
		return node{eval: func(env map[string]any) (any, error) { return env[name], nil }}, nil
	}
	fn, ok := c.funcs[name]
	if !ok {
		return node{}, c.errorf("unknown function %s", name)
	}
	args, err := c.list(")")
	if err != nil {
		return node{}, err
	}
	return node{eval: func(env map[string]any) (any, error) {
		vs, err := evalAll(env, args)
		if err != nil {
			return nil, err
		}
		return fn(vs...)
	}}, nil
}

func allConstant(ns []node) bool {
	for _, n := range ns {
		if !n.constant {
			return false
		}
	}
	return true
}

func evalAll(env map[string]any, ns []node) ([]any, error) {
	out := make([]any, len(ns))
	for i, n := range ns {
		var err error
		if out[i], err = n.eval(env); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// number is v as a float64 when it is an int or a float64.
func number(v any) (float64, bool) {
	switch v := v.(type) {
	case int:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
}

func typeName(v any) string {
	if v == nil {
		return "nil"
	}
	return fmt.Sprintf("%T", v)
}

// binaryOps hold expr's meaning of the binary operators (but && ||).
var binaryOps = map[string]func(a, b any) (any, error){
	"+": func(a, b any) (any, error) {
		if x, ok := a.(string); ok {
			if y, ok := b.(string); ok {
				return x + y, nil
			}
		}
		return arith("+", a, b, func(x, y int) int { return x + y }, func(x, y float64) float64 { return x + y })
	},
	"-": func(a, b any) (any, error) {
		return arith("-", a, b, func(x, y int) int { return x - y }, func(x, y float64) float64 { return x - y })
	},
	"*": func(a, b any) (any, error) {
		return arith("*", a, b, func(x, y int) int { return x * y }, func(x, y float64) float64 { return x * y })
	},
	"/": func(a, b any) (any, error) {
		x, xok := number(a)
		y, yok := number(b)
		if !xok || !yok {
			return nil, mismatched("/", a, b)
		}
		return x / y, nil
	},
	"==": func(a, b any) (any, error) { return equal(a, b), nil },
	"!=": func(a, b any) (any, error) { return !equal(a, b), nil },
	"<":  ordered("<", func(c int) bool { return c < 0 }),
	"<=": ordered("<=", func(c int) bool { return c <= 0 }),
	">":  ordered(">", func(c int) bool { return c > 0 }),
	">=": ordered(">=", func(c int) bool { return c >= 0 }),
}

func mismatched(op string, a, b any) error {
	return fmt.Errorf("invalid operation: %s %s %s", typeName(a), op, typeName(b))
}

// arith applies an arithmetic operator: ints stay ints, a float64 on
// either side makes both float64.
func arith(op string, a, b any, i func(x, y int) int, f func(x, y float64) float64) (any, error) {
	if x, ok := a.(int); ok {
		if y, ok := b.(int); ok {
			return i(x, y), nil
		}
	}
	x, xok := number(a)
	y, yok := number(b)
	if !xok || !yok {
		return nil, mismatched(op, a, b)
	}
	return f(x, y), nil
}

// ordered is a comparison of numbers with numbers, strings with strings.
func ordered(op string, holds func(c int) bool) func(a, b any) (any, error) {
	return func(a, b any) (any, error) {
		if x, ok := a.(int); ok {
			if y, ok := b.(int); ok {
				return holds(cmpInt(x, y)), nil
			}
		}
		if x, ok := a.(string); ok {
			if y, ok := b.(string); ok {
				return holds(strings.Compare(x, y)), nil
			}
		}
		x, xok := number(a)
		y, yok := number(b)
		if !xok || !yok {
			return nil, mismatched(op, a, b)
		}
		// NaN compares false every way, as in Go and expr.
		switch {
		case x < y:
			return holds(-1), nil
		case x > y:
			return holds(1), nil
		case x == y:
			return holds(0), nil
		}
		return false, nil
	}
}

func cmpInt(x, y int) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// equal is expr's ==: numbers by value whatever their type, lists
// element by element, anything else deeply.
func equal(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	if x, ok := a.([]any); ok {
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}
