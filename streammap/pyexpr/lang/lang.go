// Package lang compiles the small language stream-map expressions are
// translated into (package pyexpr writes it) into a tree of closures over
// an environment of slots (Env: the record, the config, the stream's
// name, the properties read), each name's slot fixed when the program
// compiles. A program runs once per record, so nothing on its way
// allocates when records hold strings and numbers: values are unboxed
// (Value), names are slots rather than map keys, and call arguments go
// on the Env's stack.
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
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Func is a function programs may call by name. args is the program's
// scratch space, valid only during the call: a function must not keep it.
type Func = func(args []Value) (Value, error)

// Unary is a function of one argument, which takes it as it is rather
// than on the Env's stack (the calls a map makes per record are mostly
// of one argument: str(x), md5(x)), and the Env, for the bytes of a
// string it makes (Env.Bytes).
type Unary = func(e *Env, v Value) (Value, error)

// Library is what programs may call and read.
type Library struct {
	Funcs map[string]Func
	Unary map[string]Unary // preferred to Funcs for a call of one argument
	// Slot is the slot in an Env's Vars of a name programs read.
	Slot func(name string) (int, bool)
}

// Env is what a program reads: the values of its names, by slot, and
// room for the arguments of the calls it makes. One Env serves one
// goroutine, record after record, without allocating.
type Env struct {
	Vars []Value
	args []Value
	// Scratch lets Bytes hand out memory the Env reuses, for a caller
	// that is done with the results of its runs, and anything made of
	// them, when it calls Reset.
	Scratch bool
	buf     []byte
}

// Bytes is n bytes for a function to make a string of (StringBytes):
// with Scratch, the Env's own until Reset, else new memory.
func (e *Env) Bytes(n int) []byte {
	if !e.Scratch {
		return make([]byte, n)
	}
	if cap(e.buf)-len(e.buf) < n {
		// The strings made in the old memory keep it.
		e.buf = make([]byte, 0, max(2*cap(e.buf), n, 256))
	}
	k := len(e.buf)
	e.buf = e.buf[:k+n]
	return e.buf[k : k+n : k+n]
}

// Reset gives Bytes its memory back.
func (e *Env) Reset() { e.buf = e.buf[:0] }

// Program is one compiled expression.
type Program struct {
	eval  evalFunc
	names map[string]int // the slots of the names it reads
}

type evalFunc func(e *Env) (Value, error)

// Eval evaluates the program against e; a slot e lacks is None. A
// function that panics on a value it did not foresee fails the record,
// not the tap.
func (p *Program) Eval(e *Env) (v Value, err error) {
	done := false
	defer func() {
		if done {
			return // recover costs a call, record after record
		}
		if r := recover(); r != nil {
			v, err = Value{}, fmt.Errorf("%v", r)
		}
	}()
	if len(e.args) > 0 {
		e.args = e.args[:0] // a function panicked, leaving its arguments
	}
	v, err = p.eval(e)
	done = true
	return v, err
}

// Run is Eval for values given by name and boxed, for a caller that runs
// a program once.
func (p *Program) Run(vars map[string]any) (any, error) {
	e := &Env{}
	for name, slot := range p.names {
		for len(e.Vars) <= slot {
			e.Vars = append(e.Vars, Value{})
		}
		e.Vars[slot] = Of(vars[name])
	}
	v, err := p.Eval(e)
	return v.Any(), err
}

// Compile compiles code that calls and reads what lib holds. An
// operation on literals alone is computed here, so that one that cannot
// work (1 + "a") fails the configuration at start rather than the first
// record.
func Compile(code string, lib *Library) (*Program, error) {
	c := &codeParser{src: code, lib: lib, names: map[string]int{}}
	n, err := c.ternary()
	if err != nil {
		return nil, err
	}
	if c.skip(); c.pos < len(c.src) {
		return nil, c.errorf("unexpected %q", c.src[c.pos:])
	}
	return &Program{eval: n.eval, names: c.names}, nil
}

// node is a compiled sub-expression; constant when it reads no name and
// calls no function.
type node struct {
	eval     evalFunc
	constant bool
}

func constNode(v Value) node {
	return node{eval: func(*Env) (Value, error) { return v, nil }, constant: true}
}

// fold computes n now when it is constant. Lists and maps are built
// anew each time: a caller may change the one it is given.
func fold(n node) (node, error) {
	if !n.constant {
		return n, nil
	}
	v, err := n.eval(&Env{})
	if v.kind == Other {
		return n, err
	}
	return constNode(v), err
}

type codeParser struct {
	src   string
	pos   int
	lib   *Library
	names map[string]int
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
	n := node{constant: cond.constant && a.constant && b.constant, eval: func(e *Env) (Value, error) {
		v, err := cond.eval(e)
		if err != nil {
			return Value{}, err
		}
		if v.kind != Bool {
			return Value{}, fmt.Errorf("non-bool %s used as condition", typeName(v))
		}
		if v.n != 0 {
			return a.eval(e)
		}
		return b.eval(e)
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
		return node{constant: constant, eval: func(e *Env) (Value, error) {
			v, err := a.eval(e)
			if err != nil {
				return Value{}, err
			}
			if v.kind != Bool {
				return Value{}, fmt.Errorf("invalid operation: %s %s", typeName(v), op)
			}
			if (v.n != 0) == short {
				return v, nil
			}
			return b.eval(e)
		}}
	}
	f := binaryOps[op]
	if constant && (op == "==" || op == "!=") {
		// As expr's checker: literals of different types do not compare.
		av, _ := a.eval(&Env{})
		bv, _ := b.eval(&Env{})
		if !sameKind(av, bv) {
			f = func(x, y Value) (Value, error) {
				return Value{}, fmt.Errorf("invalid operation: %s %s %s (mismatched types)", typeName(x), op, typeName(y))
			}
		}
	}
	return node{constant: constant, eval: func(e *Env) (Value, error) {
		x, err := a.eval(e)
		if err != nil {
			return Value{}, err
		}
		y, err := b.eval(e)
		if err != nil {
			return Value{}, err
		}
		return f(x, y)
	}}
}

// isNil is whether n is the literal nil (the user wrote None).
func isNil(n node) bool {
	if !n.constant {
		return false
	}
	v, err := n.eval(&Env{})
	return v.kind == Nil && err == nil
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
			return fold(node{constant: a.constant, eval: func(e *Env) (Value, error) {
				v, err := a.eval(e)
				if err != nil {
					return Value{}, err
				}
				if v.kind != Bool {
					return Value{}, fmt.Errorf("invalid operation: ! %s", typeName(v))
				}
				return BoolValue(v.n == 0), nil
			}})
		}
		return fold(node{constant: a.constant, eval: func(e *Env) (Value, error) {
			v, err := a.eval(e)
			if err != nil {
				return Value{}, err
			}
			switch {
			case v.kind == Int && v.n != math.MinInt:
				return IntValue(-v.n), nil
			case integer(v):
				return bigNeg(v)
			case v.kind == Float:
				return FloatValue(-v.Float()), nil
			}
			return Value{}, fmt.Errorf("invalid operation: - %s", typeName(v))
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
		return fold(node{constant: allConstant(items), eval: func(e *Env) (Value, error) {
			list := make([]any, len(items))
			for i, n := range items {
				v, err := n.eval(e)
				if err != nil {
					return Value{}, err
				}
				list[i] = v.Any()
			}
			return other(list), nil
		}})
	case ch == '{':
		c.pos++
		return c.object()
	case ch == '"':
		s, err := c.str()
		return constNode(StringValue(s)), err
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
	return fold(node{constant: allConstant(values), eval: func(e *Env) (Value, error) {
		m := make(map[string]any, len(keys))
		for i, n := range values {
			v, err := n.eval(e)
			if err != nil {
				return Value{}, err
			}
			m[keys[i]] = v.Any()
		}
		return other(m), nil
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
		return constNode(FloatValue(f)), nil
	}
	if len(text) > 1 && text[0] == '0' {
		return node{}, c.errorf("integer %q has a leading zero", text)
	}
	i, ok := new(big.Int).SetString(text, 10)
	if !ok {
		return node{}, c.errorf("bad integer %q", text)
	}
	v, err := BigValue(i)
	if err != nil {
		return node{}, c.errorf("integer %q: %v", text, err)
	}
	return constNode(v), nil
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
		return constNode(BoolValue(true)), nil
	case "false":
		return constNode(BoolValue(false)), nil
	case "nil":
		return constNode(Value{}), nil
	}
	if !c.accept("(") {
		slot, ok := c.lib.Slot(name)
		if !ok {
			return node{}, c.errorf("unknown name %s", name)
		}
		c.names[name] = slot
		return node{eval: func(e *Env) (Value, error) {
			if slot < len(e.Vars) {
				return e.Vars[slot], nil
			}
			return Value{}, nil
		}}, nil
	}
	fn, ok := c.lib.Funcs[name]
	unary, isUnary := c.lib.Unary[name]
	if !ok && !isUnary {
		return node{}, c.errorf("unknown function %s", name)
	}
	args, err := c.list(")")
	if err != nil {
		return node{}, err
	}
	if isUnary && len(args) == 1 {
		arg := args[0]
		return node{eval: func(e *Env) (Value, error) {
			v, err := arg.eval(e)
			if err != nil {
				return Value{}, err
			}
			return unary(e, v)
		}}, nil
	}
	if !ok {
		return node{}, c.errorf("%s takes one argument, got %d", name, len(args))
	}
	return node{eval: func(e *Env) (Value, error) {
		// The arguments go on e's stack: a call made while one of them
		// is evaluated pushes above them and pops back.
		sp := len(e.args)
		for _, a := range args {
			v, err := a.eval(e)
			if err != nil {
				e.args = e.args[:sp]
				return Value{}, err
			}
			e.args = append(e.args, v)
		}
		v, err := fn(e.args[sp:len(e.args):len(e.args)])
		e.args = e.args[:sp]
		return v, err
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
