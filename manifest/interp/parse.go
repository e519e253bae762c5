package interp

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The tree a template compiles into. Expressions are evaluated by one
// type switch (frame.eval) rather than by methods of an interface, so
// that the frame stays on the caller's stack.

type node any

type (
	literal struct{ v any }
	varRef  struct {
		v    Var
		name string
	}
	localRef struct {
		slot int
		name string
	}
	getAttr struct {
		x    node
		name string
	}
	getItem   struct{ x, key node }
	sliceAttr struct{ name string } // stream_slice.partition, .cursor_slice, .extra_fields
	sliceOf   struct{ x, lo, hi, step node }
	unary     struct {
		op string // "-", "+", "not"
		x  node
	}
	binary struct {
		op   string // + - * / // % ** ~
		l, r node
	}
	logical struct {
		and  bool
		l, r node
	}
	compare struct {
		first node
		ops   []string // == != < <= > >= in "not in"
		rest  []node
	}
	condExpr  struct{ cond, then, els node } // els nil: undefined
	listLit   struct{ elems []node }
	dictLit   struct{ keys, vals []node }
	macroCall struct {
		name string
		prep any // see prepareMacro
		fn   macroFunc
		args []node
		kw   []kwArg
	}
	methodCall struct {
		x    node
		slot int // 1 + the local x is, whose list append changes
		name string
		args []node
		kw   []kwArg
	}
	filterCall struct {
		x    node
		name string
		prep any // a constant regular expression, compiled
		fn   filterFunc
		args []node
		kw   []kwArg
	}
	testCall struct {
		x      node
		name   string
		fn     testFunc
		args   []node
		negate bool
	}
)

type kwArg struct {
	name string
	x    node
}

type stmt any

type (
	textStmt   struct{ s string }
	outputStmt struct{ x node }
	ifStmt     struct {
		conds  []node
		bodies [][]stmt
		els    []stmt
	}
	forStmt struct {
		slots []int // one name, or a tuple unpacked
		loop  int   // the slot of `loop`, -1 if the body does not read it
		iter  node
		cond  node // for x in y if cond
		body  []stmt
		els   []stmt
	}
	setStmt struct {
		slots []int
		x     node
	}
)

// A SyntaxError is a template that does not compile: where, and what
// was expected there.
type SyntaxError struct {
	Src string
	Pos int // byte offset in Src
	Msg string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("in %q at column %d: %s", e.Src, utf8.RuneCountInString(e.Src[:e.Pos])+1, e.Msg)
}

type tokKind int

const (
	tEOF tokKind = iota
	tEnd         // }} or %} closing the tag
	tName
	tInt
	tFloat
	tString
	tOp
	tBad // what the lexer could not read, and why
)

type token struct {
	kind tokKind
	s    string // the name, the operator, the string's value
	n    int64
	f    float64
	pos  int
	trim bool // tEnd: written -}} or -%}
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "the end of the template"
	case tEnd:
		return "the end of the tag"
	case tBad:
		return t.s
	}
	return strconv.Quote(t.s)
}

type parser struct {
	src      string
	pos      int
	tok      token
	endTag   string // "}}" or "%}"
	depth    int    // open ( [ {
	reads    VarSet
	slots    map[string]int
	nslots   int
	trimNext bool // the last tag ended with -
}

func (p *parser) errAt(pos int, format string, args ...any) error {
	return &SyntaxError{Src: p.src, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) expected(what string) error {
	return p.errAt(p.tok.pos, "expected %s, found %s", what, p.tok)
}

// template parses the whole source into statements.
func (p *parser) template() ([]stmt, error) {
	body, end, err := p.block(nil)
	if err != nil {
		return nil, err
	}
	if end != "" {
		return nil, p.errAt(p.tok.pos, "unexpected {%% %s %%}", end)
	}
	return body, nil
}

// block parses statements until the end of the source or a {% tag %}
// whose name is in ends, which it returns (the tag's name read, the rest
// of the tag not).
func (p *parser) block(ends []string) ([]stmt, string, error) {
	var body []stmt
	for {
		i := nextTag(p.src, p.pos)
		text := p.src[p.pos:i]
		if p.trimNext {
			text = strings.TrimLeft(text, " \t\r\n")
			p.trimNext = false
		}
		if i < len(p.src) && i+2 < len(p.src) && p.src[i+2] == '-' {
			text = strings.TrimRight(text, " \t\r\n")
		}
		if text != "" {
			body = append(body, &textStmt{text})
		}
		if i >= len(p.src) {
			if ends != nil {
				return nil, "", p.errAt(len(p.src), "expected {%% %s %%}, found the end of the template", ends[len(ends)-1])
			}
			return body, "", nil
		}
		p.pos = i + 2
		if p.pos < len(p.src) && (p.src[p.pos] == '-' || p.src[p.pos] == '+') {
			p.pos++
		}
		switch p.src[i+1] {
		case '#':
			j := strings.Index(p.src[p.pos:], "#}")
			if j < 0 {
				return nil, "", p.errAt(i, "comment {# is not closed by #}")
			}
			p.trimNext = j > 0 && p.src[p.pos+j-1] == '-'
			p.pos += j + 2
		case '{':
			p.endTag = "}}"
			p.next()
			x, err := p.tuple()
			if err != nil {
				return nil, "", err
			}
			if err := p.end(); err != nil {
				return nil, "", err
			}
			body = append(body, &outputStmt{x})
		case '%':
			p.endTag = "%}"
			p.next()
			if p.tok.kind != tName {
				return nil, "", p.expected("a statement name (if, for, set)")
			}
			name := p.tok.s
			if name == "raw" {
				raw, err := p.raw()
				if err != nil {
					return nil, "", err
				}
				if raw != "" {
					body = append(body, &textStmt{raw})
				}
				continue
			}
			for _, e := range ends {
				if name == e {
					p.next()
					return body, name, nil
				}
			}
			s, err := p.statement()
			if err != nil {
				return nil, "", err
			}
			body = append(body, s)
		}
	}
}

var endraw = regexp.MustCompile(`\{%[-+]?\s*endraw\s*[-+]?%\}`)

// raw reads {% raw %}...{% endraw %}: its text as it is.
func (p *parser) raw() (string, error) {
	start := p.tok.pos
	p.next()
	if err := p.end(); err != nil {
		return "", err
	}
	m := endraw.FindStringIndex(p.src[p.pos:])
	if m == nil {
		return "", p.errAt(start, "expected {%% endraw %%}, found the end of the template")
	}
	text := p.src[p.pos : p.pos+m[0]]
	if p.trimNext {
		text = strings.TrimLeft(text, " \t\r\n")
		p.trimNext = false
	}
	tag := p.src[p.pos+m[0] : p.pos+m[1]]
	if tag[2] == '-' {
		text = strings.TrimRight(text, " \t\r\n")
	}
	p.trimNext = tag[len(tag)-3] == '-'
	p.pos += m[1]
	return text, nil
}

// nextTag is the index of the next {{, {% or {# at or after i, or
// len(s).
func nextTag(s string, i int) int {
	for {
		j := strings.IndexByte(s[i:], '{')
		if j < 0 || i+j+1 >= len(s) {
			return len(s)
		}
		i += j
		switch s[i+1] {
		case '{', '%', '#':
			return i
		}
		i++
	}
}

// end reads the tag's end.
func (p *parser) end() error {
	if p.tok.kind != tEnd {
		return p.expected(p.endTag)
	}
	p.trimNext = p.tok.trim
	return nil
}

func (p *parser) statement() (stmt, error) {
	switch p.tok.s {
	case "if":
		return p.ifStatement()
	case "for":
		return p.forStatement()
	case "set":
		p.next()
		slots, err := p.targets()
		if err != nil {
			return nil, err
		}
		if !p.isOp("=") {
			return nil, p.expected("=")
		}
		p.next()
		x, err := p.tuple()
		if err != nil {
			return nil, err
		}
		if err := p.end(); err != nil {
			return nil, err
		}
		return &setStmt{slots: slots, x: x}, nil
	}
	switch p.tok.s {
	case "endif", "endfor", "else", "elif":
		return nil, p.errAt(p.tok.pos, "unexpected {%% %s %%}", p.tok.s)
	}
	return nil, p.errAt(p.tok.pos, "unknown statement %q: expected if, for, set or raw", p.tok.s)
}

func (p *parser) ifStatement() (stmt, error) {
	s := &ifStmt{}
	p.next() // if; block has read elif
	for {
		cond, err := p.expr()
		if err != nil {
			return nil, err
		}
		if err := p.end(); err != nil {
			return nil, err
		}
		body, end, err := p.block([]string{"elif", "else", "endif"})
		if err != nil {
			return nil, err
		}
		s.conds = append(s.conds, cond)
		s.bodies = append(s.bodies, body)
		switch end {
		case "elif":
			continue
		case "else":
			if err := p.end(); err != nil {
				return nil, err
			}
			els, _, err := p.block([]string{"endif"})
			if err != nil {
				return nil, err
			}
			s.els = els
		}
		return s, p.end()
	}
}

func (p *parser) forStatement() (stmt, error) {
	p.next()
	slots, err := p.targets()
	if err != nil {
		return nil, err
	}
	if !p.isName("in") {
		return nil, p.expected("in")
	}
	p.next()
	iter, err := p.condition(false)
	if err != nil {
		return nil, err
	}
	s := &forStmt{slots: slots, iter: iter, loop: -1}
	if p.isName("if") {
		p.next()
		if s.cond, err = p.condition(true); err != nil {
			return nil, err
		}
	}
	if err := p.end(); err != nil {
		return nil, err
	}
	_, hadLoop := p.slots["loop"]
	loop := p.slot("loop")
	body, end, err := p.block([]string{"else", "endfor"})
	if err != nil {
		return nil, err
	}
	s.body = body
	if end == "else" {
		if err := p.end(); err != nil {
			return nil, err
		}
		if s.els, _, err = p.block([]string{"endfor"}); err != nil {
			return nil, err
		}
	}
	s.loop = loop
	if !hadLoop {
		// loop is the body's: a later `loop` outside it is unknown.
		delete(p.slots, "loop")
	}
	return s, p.end()
}

// targets reads the names a for or set assigns: `x` or `k, v`.
func (p *parser) targets() ([]int, error) {
	var slots []int
	for {
		if p.tok.kind != tName || keyword(p.tok.s) {
			return nil, p.expected("a name")
		}
		slots = append(slots, p.slot(p.tok.s))
		p.next()
		if !p.isOp(",") {
			return slots, nil
		}
		p.next()
	}
}

func (p *parser) slot(name string) int {
	if p.slots == nil {
		p.slots = map[string]int{}
	}
	if s, ok := p.slots[name]; ok {
		return s
	}
	s := p.nslots
	p.nslots++
	p.slots[name] = s
	return s
}

// testStops: a name after a test's name that is not its argument.
func testStops(s string) bool {
	switch s {
	case "and", "or", "else", "if", "is", "not", "in":
		return true
	}
	return false
}

func keyword(s string) bool {
	switch s {
	case "and", "or", "not", "in", "is", "if", "else", "true", "false", "none", "True", "False", "None":
		return true
	}
	return false
}

func (p *parser) isOp(s string) bool   { return p.tok.kind == tOp && p.tok.s == s }
func (p *parser) isName(s string) bool { return p.tok.kind == tName && p.tok.s == s }

// expr is Jinja's parse_expression: a conditional expression.
func (p *parser) expr() (node, error) { return p.condition(true) }

// tuple is an expression, or a tuple of them written without parentheses
// (as {% set a, b = 1, 2 %} writes one).
func (p *parser) tuple() (node, error) {
	x, err := p.expr()
	if err != nil || !p.isOp(",") {
		return x, err
	}
	l := &listLit{elems: []node{x}}
	for p.isOp(",") {
		p.next()
		if p.tok.kind == tEnd {
			break
		}
		y, err := p.expr()
		if err != nil {
			return nil, err
		}
		l.elems = append(l.elems, y)
	}
	return l, nil
}

func (p *parser) condition(withCond bool) (node, error) {
	x, err := p.or()
	if err != nil {
		return nil, err
	}
	for withCond && p.isName("if") {
		p.next()
		cond, err := p.or()
		if err != nil {
			return nil, err
		}
		c := &condExpr{cond: cond, then: x}
		if p.isName("else") {
			p.next()
			if c.els, err = p.condition(true); err != nil {
				return nil, err
			}
		}
		x = c
	}
	return x, nil
}

func (p *parser) or() (node, error) {
	x, err := p.and()
	for err == nil && p.isName("or") {
		p.next()
		var y node
		y, err = p.and()
		x = &logical{l: x, r: y}
	}
	return x, err
}

func (p *parser) and() (node, error) {
	x, err := p.not()
	for err == nil && p.isName("and") {
		p.next()
		var y node
		y, err = p.not()
		x = &logical{and: true, l: x, r: y}
	}
	return x, err
}

func (p *parser) not() (node, error) {
	if p.isName("not") {
		p.next()
		x, err := p.not()
		return &unary{op: "not", x: x}, err
	}
	return p.compare()
}

func (p *parser) compare() (node, error) {
	x, err := p.math1()
	if err != nil {
		return nil, err
	}
	var c *compare
	for {
		var op string
		switch {
		case p.tok.kind == tOp && (p.tok.s == "==" || p.tok.s == "!=" || p.tok.s == "<" || p.tok.s == "<=" || p.tok.s == ">" || p.tok.s == ">="):
			op = p.tok.s
			p.next()
		case p.isName("in"):
			op = "in"
			p.next()
		case p.isName("not"):
			save := *p
			p.next()
			if !p.isName("in") {
				*p = save
				return p.done(x, c)
			}
			op = "not in"
			p.next()
		default:
			return p.done(x, c)
		}
		y, err := p.math1()
		if err != nil {
			return nil, err
		}
		if c == nil {
			c = &compare{first: x}
		}
		c.ops = append(c.ops, op)
		c.rest = append(c.rest, y)
	}
}

func (p *parser) done(x node, c *compare) (node, error) {
	if c == nil {
		return x, nil
	}
	return c, nil
}

func (p *parser) math1() (node, error) {
	x, err := p.concat()
	for err == nil && p.tok.kind == tOp && (p.tok.s == "+" || p.tok.s == "-") {
		op := p.tok.s
		p.next()
		var y node
		y, err = p.concat()
		x = &binary{op: op, l: x, r: y}
	}
	return x, err
}

func (p *parser) concat() (node, error) {
	x, err := p.math2()
	for err == nil && p.isOp("~") {
		p.next()
		var y node
		y, err = p.math2()
		x = &binary{op: "~", l: x, r: y}
	}
	return x, err
}

func (p *parser) math2() (node, error) {
	x, err := p.pow()
	for err == nil && p.tok.kind == tOp && (p.tok.s == "*" || p.tok.s == "/" || p.tok.s == "//" || p.tok.s == "%") {
		op := p.tok.s
		p.next()
		var y node
		y, err = p.pow()
		x = &binary{op: op, l: x, r: y}
	}
	return x, err
}

func (p *parser) pow() (node, error) {
	x, err := p.unary(true)
	for err == nil && p.isOp("**") {
		p.next()
		var y node
		y, err = p.unary(true)
		x = &binary{op: "**", l: x, r: y}
	}
	return x, err
}

func (p *parser) unary(withFilter bool) (node, error) {
	var x node
	var err error
	if p.tok.kind == tOp && (p.tok.s == "-" || p.tok.s == "+") {
		op := p.tok.s
		p.next()
		y, err := p.unary(false)
		if err != nil {
			return nil, err
		}
		x = &unary{op: op, x: y}
	} else {
		if x, err = p.primary(); err != nil {
			return nil, err
		}
	}
	if x, err = p.postfix(x); err != nil {
		return nil, err
	}
	if withFilter {
		return p.filters(x)
	}
	return x, nil
}

func (p *parser) primary() (node, error) {
	t := p.tok
	switch t.kind {
	case tName:
		p.next()
		switch t.s {
		case "true", "True":
			return &literal{true}, nil
		case "false", "False":
			return &literal{false}, nil
		case "none", "None":
			return &literal{nil}, nil
		}
		if keyword(t.s) {
			return nil, p.errAt(t.pos, "expected an expression, found %q", t.s)
		}
		if p.isOp("(") {
			fn, ok := macros[t.s]
			if !ok {
				return nil, p.errAt(t.pos, "unknown macro %q: expected one of %s", t.s, names(macros))
			}
			args, kw, err := p.callArgs()
			if err != nil {
				return nil, err
			}
			if clockMacros[t.s] {
				p.reads |= VarSet(Clock)
			}
			m := &macroCall{name: t.s, fn: fn, args: args, kw: kw}
			if err := prepareMacro(m); err != nil {
				return nil, p.errAt(t.pos, "%s: %v", t.s, err)
			}
			return m, nil
		}
		if s, ok := p.slots[t.s]; ok {
			return &localRef{slot: s, name: t.s}, nil
		}
		if t.s == "self" {
			// Jinja's reference to the template's blocks, of which an
			// interpolation has none: its attributes are undefined.
			return &literal{map[string]any{}}, nil
		}
		for _, n := range varNames {
			if n.name == t.s {
				p.reads |= VarSet(n.v)
				return &varRef{v: n.v, name: t.s}, nil
			}
		}
		if t.s == "stream_state" {
			return nil, p.errAt(t.pos, "stream_state is no longer supported by the CDK: expected stream_interval")
		}
		if _, ok := macros[t.s]; ok {
			return nil, p.errAt(t.pos, "macro %q is not called: expected %s(...)", t.s, t.s)
		}
		return nil, p.errAt(t.pos, "unknown variable %q: expected one of %s", t.s, VarSet(1<<len(varNames)-1))
	case tInt:
		p.next()
		return &literal{t.n}, nil
	case tFloat:
		p.next()
		return &literal{t.f}, nil
	case tString:
		p.next()
		s := t.s
		for p.tok.kind == tString { // 'a' 'b' is 'ab'
			s += p.tok.s
			p.next()
		}
		return &literal{s}, nil
	case tOp:
		switch t.s {
		case "(":
			p.next()
			if p.isOp(")") {
				p.next()
				return &listLit{}, nil
			}
			x, err := p.expr()
			if err != nil {
				return nil, err
			}
			if p.isOp(",") { // a tuple
				l := &listLit{elems: []node{x}}
				for p.isOp(",") {
					p.next()
					if p.isOp(")") {
						break
					}
					y, err := p.expr()
					if err != nil {
						return nil, err
					}
					l.elems = append(l.elems, y)
				}
				x = l
			}
			if !p.isOp(")") {
				return nil, p.expected(")")
			}
			p.next()
			return x, nil
		case "[":
			p.next()
			l := &listLit{}
			for !p.isOp("]") {
				x, err := p.expr()
				if err != nil {
					return nil, err
				}
				l.elems = append(l.elems, x)
				if !p.isOp(",") {
					break
				}
				p.next()
			}
			if !p.isOp("]") {
				return nil, p.expected("] or ,")
			}
			p.next()
			return l, nil
		case "{":
			p.next()
			d := &dictLit{}
			for !p.isOp("}") {
				k, err := p.expr()
				if err != nil {
					return nil, err
				}
				if !p.isOp(":") {
					return nil, p.expected(":")
				}
				p.next()
				v, err := p.expr()
				if err != nil {
					return nil, err
				}
				d.keys = append(d.keys, k)
				d.vals = append(d.vals, v)
				if !p.isOp(",") {
					break
				}
				p.next()
			}
			if !p.isOp("}") {
				return nil, p.expected("} or ,")
			}
			p.next()
			return d, nil
		}
	}
	return nil, p.expected("an expression")
}

func (p *parser) postfix(x node) (node, error) {
	for {
		switch {
		case p.isOp("."):
			p.next()
			t := p.tok
			switch t.kind {
			case tName:
				p.next()
				if p.isOp("(") {
					if !knownMethod(t.s) {
						return nil, p.errAt(t.pos, "unknown method %q: expected one of %s", t.s, strings.Join(methodNames, ", "))
					}
					args, kw, err := p.callArgs()
					if err != nil {
						return nil, err
					}
					m := &methodCall{x: x, name: t.s, args: args, kw: kw}
					if l, ok := x.(*localRef); ok {
						m.slot = l.slot + 1
					}
					x = m
					continue
				}
				if r, ok := x.(*varRef); ok && r.v&(StreamSlice|StreamInterval|StreamPartition) != 0 &&
					(t.s == "partition" || t.s == "cursor_slice" || t.s == "extra_fields") {
					// the CDK's StreamSlice has these as attributes
					x = &sliceAttr{name: t.s}
					continue
				}
				x = &getAttr{x: x, name: t.s}
			case tInt:
				p.next()
				x = &getItem{x: x, key: &literal{t.n}}
			default:
				return nil, p.expected("a name after .")
			}
		case p.isOp("["):
			p.next()
			var parts [3]node
			n, colons := 0, 0
			for {
				if p.isOp(":") {
					colons++
					if colons > 2 {
						return nil, p.expected("]")
					}
					n++
					p.next()
					continue
				}
				if p.isOp("]") {
					break
				}
				if parts[n] != nil {
					return nil, p.expected("] or :")
				}
				e, err := p.expr()
				if err != nil {
					return nil, err
				}
				parts[n] = e
			}
			p.next()
			if colons == 0 {
				if parts[0] == nil {
					return nil, p.errAt(p.tok.pos, "expected an expression in []")
				}
				x = &getItem{x: x, key: parts[0]}
			} else {
				x = &sliceOf{x: x, lo: parts[0], hi: parts[1], step: parts[2]}
			}
		case p.isOp("("):
			return nil, p.errAt(p.tok.pos, "only macros and methods may be called")
		default:
			return x, nil
		}
	}
}

func (p *parser) filters(x node) (node, error) {
	for {
		switch {
		case p.isOp("|"):
			p.next()
			t := p.tok
			if t.kind != tName {
				return nil, p.expected("a filter name after |")
			}
			p.next()
			fn, ok := filters[t.s]
			if !ok {
				return nil, p.errAt(t.pos, "unknown filter %q: expected one of %s", t.s, names(filters))
			}
			f := &filterCall{x: x, name: t.s, fn: fn}
			if p.isOp("(") {
				var err error
				if f.args, f.kw, err = p.callArgs(); err != nil {
					return nil, err
				}
				if (f.name == "regex_search" || f.name == "regex_replace") && len(f.args) > 0 {
					if l, ok := f.args[0].(*literal); ok {
						if s, ok := l.v.(string); ok {
							if f.prep, err = pyRegexp(s); err != nil {
								return nil, p.errAt(t.pos, "%v", err)
							}
						}
					}
				}
			}
			x = f
		case p.isName("is"):
			p.next()
			negate := false
			if p.isName("not") {
				negate = true
				p.next()
			}
			t := p.tok
			if t.kind != tName {
				return nil, p.expected("a test name after is")
			}
			p.next()
			name := t.s
			fn, ok := tests[name]
			if !ok {
				return nil, p.errAt(t.pos, "unknown test %q: expected one of %s", name, names(tests))
			}
			tc := &testCall{x: x, name: name, fn: fn, negate: negate}
			switch {
			case p.isOp("("):
				args, kw, err := p.callArgs()
				if err != nil {
					return nil, err
				}
				if len(kw) > 0 {
					return nil, p.errAt(t.pos, "test %q takes no keyword arguments", name)
				}
				tc.args = args
			case p.tok.kind == tString || p.tok.kind == tInt || p.tok.kind == tFloat || p.isOp("[") || p.isOp("{") ||
				p.tok.kind == tName && !testStops(p.tok.s):
				// `x is divisibleby 3`, `x is sameas none`: one argument
				// without parentheses.
				arg, err := p.primary()
				if err != nil {
					return nil, err
				}
				if arg, err = p.postfix(arg); err != nil {
					return nil, err
				}
				tc.args = []node{arg}
			}
			x = tc
		default:
			return x, nil
		}
	}
}

func (p *parser) callArgs() ([]node, []kwArg, error) {
	p.next() // (
	var args []node
	var kw []kwArg
	for !p.isOp(")") {
		if p.tok.kind == tName && !keyword(p.tok.s) {
			save := *p
			name := p.tok.s
			p.next()
			if p.isOp("=") {
				p.next()
				x, err := p.expr()
				if err != nil {
					return nil, nil, err
				}
				kw = append(kw, kwArg{name: name, x: x})
				goto comma
			}
			*p = save
		}
		if len(kw) > 0 {
			return nil, nil, p.errAt(p.tok.pos, "a positional argument follows a keyword argument")
		}
		{
			x, err := p.expr()
			if err != nil {
				return nil, nil, err
			}
			args = append(args, x)
		}
	comma:
		if !p.isOp(",") {
			break
		}
		p.next()
	}
	if !p.isOp(")") {
		return nil, nil, p.expected(") or ,")
	}
	p.next()
	return args, kw, nil
}

// next reads the next token of the tag into p.tok.
func (p *parser) next() {
	s := p.src
	for p.pos < len(s) && (s[p.pos] == ' ' || s[p.pos] == '\t' || s[p.pos] == '\n' || s[p.pos] == '\r') {
		p.pos++
	}
	start := p.pos
	p.tok = token{pos: start}
	if p.pos >= len(s) {
		p.tok.kind = tEOF
		return
	}
	if p.depth == 0 {
		rest := s[p.pos:]
		if strings.HasPrefix(rest, p.endTag) {
			p.pos += 2
			p.tok.kind = tEnd
			return
		}
		if strings.HasPrefix(rest, "-"+p.endTag) || strings.HasPrefix(rest, "+"+p.endTag) {
			p.pos += 3
			p.tok.kind, p.tok.trim = tEnd, rest[0] == '-'
			return
		}
	}
	c := s[p.pos]
	switch {
	case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		for p.pos < len(s) && (s[p.pos] == '_' || s[p.pos] >= 'a' && s[p.pos] <= 'z' || s[p.pos] >= 'A' && s[p.pos] <= 'Z' || s[p.pos] >= '0' && s[p.pos] <= '9') {
			p.pos++
		}
		p.tok.kind, p.tok.s = tName, s[start:p.pos]
	case c >= '0' && c <= '9' || c == '.' && p.pos+1 < len(s) && s[p.pos+1] >= '0' && s[p.pos+1] <= '9' && p.prevAllowsNumber():
		p.number()
	case c == '\'' || c == '"':
		p.str(c)
	default:
		for _, op := range []string{"//", "**", "==", "!=", "<=", ">="} {
			if strings.HasPrefix(s[p.pos:], op) {
				p.pos += 2
				p.tok.kind, p.tok.s = tOp, op
				return
			}
		}
		if strings.IndexByte("+-*/%~<>=()[]{}.,:|", c) < 0 {
			r, _ := utf8.DecodeRuneInString(s[p.pos:])
			p.tok.kind, p.tok.s = tOp, string(r)
			p.pos += utf8.RuneLen(r)
			return
		}
		switch c {
		case '(', '[', '{':
			p.depth++
		case ')', ']', '}':
			if p.depth > 0 {
				p.depth--
			}
		}
		p.pos++
		p.tok.kind, p.tok.s = tOp, string(c)
	}
}

// prevAllowsNumber: `.5` is a number, but `x.0` is item 0 of x.
func (p *parser) prevAllowsNumber() bool {
	return p.tok.kind != tName && !(p.tok.kind == tOp && (p.tok.s == ")" || p.tok.s == "]"))
}

func (p *parser) number() {
	s := p.src
	start := p.pos
	isFloat := false
	digits := func() {
		for p.pos < len(s) && (s[p.pos] >= '0' && s[p.pos] <= '9' || s[p.pos] == '_') {
			p.pos++
		}
	}
	digits()
	if p.pos+1 < len(s) && s[p.pos] == '.' && s[p.pos+1] >= '0' && s[p.pos+1] <= '9' {
		isFloat = true
		p.pos++
		digits()
	}
	if p.pos < len(s) && (s[p.pos] == 'e' || s[p.pos] == 'E') {
		j := p.pos + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			isFloat = true
			p.pos = j
			digits()
		}
	}
	text := strings.ReplaceAll(s[start:p.pos], "_", "")
	p.tok.s = s[start:p.pos]
	if isFloat {
		f, _ := strconv.ParseFloat(text, 64)
		p.tok.kind, p.tok.f = tFloat, f
		return
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		f, _ := strconv.ParseFloat(text, 64)
		p.tok.kind, p.tok.f = tFloat, f
		return
	}
	p.tok.kind, p.tok.n = tInt, n
}

// str reads a string literal with Python's escapes.
func (p *parser) str(q byte) {
	s := p.src
	start := p.pos
	p.pos++
	var b strings.Builder
	for p.pos < len(s) && s[p.pos] != q {
		c := s[p.pos]
		if c == '\\' && p.pos+1 < len(s) {
			r, n, ok := unescape(s[p.pos:])
			if ok {
				b.WriteString(r)
				p.pos += n
				continue
			}
		}
		b.WriteByte(c)
		p.pos++
	}
	if p.pos >= len(s) {
		p.tok = token{kind: tBad, s: "a string that is not closed", pos: start}
		return
	}
	p.pos++
	p.tok.kind, p.tok.s = tString, b.String()
}

// unescape reads one backslash escape at the start of s: what it stands
// for, and its length.
func unescape(s string) (string, int, bool) {
	switch s[1] {
	case 'n':
		return "\n", 2, true
	case 't':
		return "\t", 2, true
	case 'r':
		return "\r", 2, true
	case '\\':
		return "\\", 2, true
	case '\'':
		return "'", 2, true
	case '"':
		return "\"", 2, true
	case '0':
		return "\x00", 2, true
	case 'a':
		return "\a", 2, true
	case 'b':
		return "\b", 2, true
	case 'f':
		return "\f", 2, true
	case 'v':
		return "\v", 2, true
	case '\n':
		return "", 2, true
	case 'x', 'u', 'U':
		n := 8
		switch s[1] {
		case 'x':
			n = 2
		case 'u':
			n = 4
		}
		if len(s) < 2+n {
			return "", 0, false
		}
		v, err := strconv.ParseUint(s[2:2+n], 16, 32)
		if err != nil || v > utf8.MaxRune {
			return "", 0, false
		}
		return string(rune(v)), 2 + n, true
	}
	return "", 0, false
}

func names[V any](m map[string]V) string { return strings.Join(sortedNames(m), ", ") }

func sortedNames[V any](m map[string]V) []string {
	ns := make([]string, 0, len(m))
	for n := range m {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}
