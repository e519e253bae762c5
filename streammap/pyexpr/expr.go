// Package pyexpr translates the Python expression subset of Meltano SDK
// stream maps into sandboxed programs, and holds the functions those
// programs call.
package pyexpr

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tap-dev/tap/streammap/pyexpr/lang"
)

// The Meltano SDK evaluates stream map expressions as Python (simpleeval).
// Go has no Python, so the documented subset is parsed here and rewritten
// into a small target language (package lang), which is compiled once per
// stream into a sandboxed program: no eval of code, no access to anything
// but the values and functions handed to it. Whatever the subset does not
// cover is a configuration error at start, never a surprise at record
// 10,000.
//
// The subset: literals (strings, numbers, True, False, None, lists,
// dicts), property names, record / _ / self / config / __stream_name__,
// subscripts and slices, + - * / // % **, comparisons, in, not in, is
// (not) None, and, or, not, x if c else y, str() int() float() bool()
// md5() sha256(), json.dumps() json.loads(), datetime.datetime and
// datetime.date .fromisoformat() with .year .month .day .hour .minute
// .second .date() .timestamp() .isoformat() .strftime(), and the string
// methods lower upper strip lstrip rstrip split startswith endswith
// replace title join, and dict get.

// valueKind is what the translator knows about an expression's value
// before it runs; it types new properties in the output schema and lets
// and/or/not use plain boolean operators.
type valueKind int

const (
	kindAny valueKind = iota
	kindString
	kindInteger
	kindNumber
	kindBoolean
	kindNull
	kindList
	kindObject
	kindDateTime
	kindDate
)

// jsonType is the JSON Schema type of a value of this kind ("" if unknown).
func (k valueKind) jsonType() (typ, format string) {
	switch k {
	case kindString:
		return "string", ""
	case kindInteger:
		return "integer", ""
	case kindNumber:
		return "number", ""
	case kindBoolean:
		return "boolean", ""
	case kindList:
		return "array", ""
	case kindObject:
		return "object", ""
	case kindDateTime:
		return "string", "date-time"
	case kindDate:
		return "string", "date"
	}
	return "", ""
}

// Scope is what names mean while one expression is translated.
type Scope struct {
	Props  map[string]map[string]any // the source stream's property schemas
	Config map[string]any            // stream_map_config
	// Vars collects the record properties the expression reads by name,
	// each with its slot in the program's environment (see Slot*).
	Vars map[string]int
	// Self is the property the expression assigns ("" for filters).
	Self string
}

// The slots of a program's environment (lang.Env's Vars): the record,
// stream_map_config, the stream's name, then the properties the
// expressions read by name, as Scope.Vars numbers them.
const (
	SlotRecord = iota
	SlotConfig
	SlotStream
	slotProps
)

// propVar is the name in the translated code of the property the
// expressions read by name.
func (s *Scope) propVar(name string) string {
	slot, ok := s.Vars[name]
	if !ok {
		slot = slotProps + len(s.Vars)
		s.Vars[name] = slot
	}
	return "p" + strconv.Itoa(slot-slotProps)
}

// slot is the slot of a name of the translated code.
func slot(name string) (int, bool) {
	switch name {
	case "rec":
		return SlotRecord, true
	case "cfg":
		return SlotConfig, true
	case "stream":
		return SlotStream, true
	}
	if n, ok := strings.CutPrefix(name, "p"); ok {
		if i, err := strconv.Atoi(n); err == nil && i >= 0 {
			return slotProps + i, true
		}
	}
	return 0, false
}

// Compiled is one translated and compiled expression.
type Compiled struct {
	Src     string // as the user wrote it, for errors
	Program *lang.Program
	Ref     string // the property it copies, when it is a plain reference
	Whole   bool   // the expression is the whole record
	// Record: the expression reads the record as a whole (record or _
	// other than subscripted by a literal name), not only the
	// properties it names.
	Record bool
	kind   valueKind
	code   string // the translation
}

// JSONType is the JSON Schema type of the expression's value ("" if unknown).
func (c *Compiled) JSONType() (typ, format string) { return c.kind.jsonType() }

// Compile translates a Python-style expression and compiles it. A
// filter (asBool) is compiled to a boolean with Python truthiness.
func Compile(src string, sc *Scope, asBool bool) (*Compiled, error) {
	p := &parser{src: src, sc: sc}
	if err := p.lex(); err != nil {
		return nil, err
	}
	for _, t := range p.toks {
		if t.kind == tokName && (t.text == "for" || t.text == "lambda") {
			return nil, fmt.Errorf("%s is not supported (comprehensions and lambdas are outside the translated subset)", t.text)
		}
	}
	v, err := p.test()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tokEOF {
		return nil, p.errorf("unexpected %s", p.peek())
	}
	if v.module != "" {
		return nil, fmt.Errorf("%s is a module or function, not a value", v.module)
	}
	code := v.code
	if asBool {
		code = truthy(v)
	}
	program, err := lang.Compile(code, library)
	if err != nil {
		// The generated code is ours: a failure here is a translation
		// gap, reported against the user's expression.
		return nil, fmt.Errorf("cannot compile: %v", firstLine(err.Error()))
	}
	return &Compiled{Src: src, Program: program, Ref: v.ref, Whole: v.whole, Record: p.records > 0, kind: v.kind, code: code}, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// val is a translated sub-expression.
type val struct {
	code   string // target-language source, always safe to embed (parenthesised)
	kind   valueKind
	ref    string // set when the value is exactly a record property
	whole  bool   // the value is the whole record
	module string // set for datetime, json, function names: not values
	record bool   // the record object itself (record, _)
	config bool   // the config object (config)
	cval   any    // the constant value when code is a literal of config
}

// --- lexer ---

type tokKind int

const (
	tokEOF tokKind = iota
	tokName
	tokInt
	tokFloat
	tokString
	tokOp
)

type token struct {
	kind tokKind
	text string // operator or name, or the decoded string
	pos  int
}

func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "end of expression"
	case tokString:
		return strconv.Quote(t.text)
	}
	return strconv.Quote(t.text)
}

type parser struct {
	src  string
	sc   *Scope
	toks []token
	i    int
	// records counts the uses of the record object not resolved to a
	// named property (record['x'] is the property x).
	records int
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf(format, args...)
}

var operators = []string{"**", "//", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "<", ">", "(", ")", "[", "]", "{", "}", ",", ":", ".", "="}

func (p *parser) lex() error {
	s := p.src
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '_' || c < utf8.RuneSelf && unicode.IsLetter(rune(c)):
			j := i
			for j < len(s) && (s[j] == '_' || s[j] < utf8.RuneSelf && (unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j])))) {
				j++
			}
			p.toks = append(p.toks, token{tokName, s[i:j], i})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j, float := i, false
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == '_' || s[j] == 'e' || s[j] == 'E' ||
				(s[j] == '+' || s[j] == '-') && (s[j-1] == 'e' || s[j-1] == 'E')) {
				if s[j] == '.' || s[j] == 'e' || s[j] == 'E' {
					float = true
				}
				j++
			}
			text := strings.ReplaceAll(s[i:j], "_", "")
			if float {
				if _, err := strconv.ParseFloat(text, 64); err != nil {
					return p.errorf("bad number %q", s[i:j])
				}
				p.toks = append(p.toks, token{tokFloat, text, i})
			} else {
				if _, err := strconv.ParseInt(text, 10, 64); err != nil {
					if _, ok := bigInteger(text); !ok {
						return p.errorf("bad or too large integer %q", s[i:j])
					}
				}
				p.toks = append(p.toks, token{tokInt, text, i})
			}
			i = j
		case c == '\'' || c == '"':
			str, n, err := unquotePython(s[i:])
			if err != nil {
				return err
			}
			// Adjacent literals concatenate, as in Python.
			if k := len(p.toks) - 1; k >= 0 && p.toks[k].kind == tokString {
				p.toks[k].text += str
			} else {
				p.toks = append(p.toks, token{tokString, str, i})
			}
			i += n
		default:
			op := ""
			for _, o := range operators {
				if strings.HasPrefix(s[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return p.errorf("unexpected character %q", string(rune(c)))
			}
			p.toks = append(p.toks, token{tokOp, op, i})
			i += len(op)
		}
	}
	p.toks = append(p.toks, token{tokEOF, "", len(s)})
	return nil
}

// unquotePython decodes a Python string literal at the start of s and
// returns it with the number of bytes it took.
func unquotePython(s string) (string, int, error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			return b.String(), i + 1, nil
		case c == '\\' && i+1 < len(s):
			i++
			switch e := s[i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '\\', '\'', '"':
				b.WriteByte(e)
			case '0':
				b.WriteByte(0)
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		case c == '\n':
			return "", 0, errors.New("unterminated string")
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, errors.New("unterminated string")
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token { t := p.toks[p.i]; p.i++; return t }

func (p *parser) isOp(op string) bool {
	t := p.peek()
	return t.kind == tokOp && t.text == op
}

func (p *parser) isKeyword(kw string) bool {
	t := p.peek()
	return t.kind == tokName && t.text == kw
}

func (p *parser) expectOp(op string) error {
	if !p.isOp(op) {
		return p.errorf("expected %q, found %s", op, p.peek())
	}
	p.i++
	return nil
}

// --- grammar (Python precedence) ---

// test: or_test ['if' or_test 'else' test]
func (p *parser) test() (val, error) {
	a, err := p.orTest()
	if err != nil {
		return val{}, err
	}
	if !p.isKeyword("if") {
		return a, nil
	}
	p.i++
	cond, err := p.orTest()
	if err != nil {
		return val{}, err
	}
	if !p.isKeyword("else") {
		return val{}, p.errorf("expected else, found %s", p.peek())
	}
	p.i++
	b, err := p.test()
	if err != nil {
		return val{}, err
	}
	if err := values(a, cond, b); err != nil {
		return val{}, err
	}
	k := kindAny
	if a.kind == b.kind || b.kind == kindNull {
		k = a.kind
	} else if a.kind == kindNull {
		k = b.kind
	}
	return val{code: "(" + truthy(cond) + " ? " + a.code + " : " + b.code + ")", kind: k}, nil
}

func (p *parser) orTest() (val, error) {
	return p.logical("or", p.andTest)
}

func (p *parser) andTest() (val, error) {
	return p.logical("and", p.notTest)
}

// logical keeps Python's meaning of and/or, which return an operand, not
// a boolean ("x or 'n/a'"); the right side is evaluated only when needed.
func (p *parser) logical(kw string, sub func() (val, error)) (val, error) {
	a, err := sub()
	if err != nil {
		return val{}, err
	}
	for p.isKeyword(kw) {
		p.i++
		b, err := sub()
		if err != nil {
			return val{}, err
		}
		if err := values(a, b); err != nil {
			return val{}, err
		}
		switch {
		case a.kind == kindBoolean && b.kind == kindBoolean && kw == "or":
			a = val{code: "(" + a.code + " || " + b.code + ")", kind: kindBoolean}
		case a.kind == kindBoolean && b.kind == kindBoolean:
			a = val{code: "(" + a.code + " && " + b.code + ")", kind: kindBoolean}
		case kw == "or":
			a = val{code: "(" + truthy(a) + " ? " + a.code + " : " + b.code + ")", kind: sameKind(a, b)}
		default:
			a = val{code: "(" + truthy(a) + " ? " + b.code + " : " + a.code + ")", kind: sameKind(a, b)}
		}
	}
	return a, nil
}

func sameKind(a, b val) valueKind {
	if a.kind == b.kind {
		return a.kind
	}
	return kindAny
}

func (p *parser) notTest() (val, error) {
	if p.isKeyword("not") {
		p.i++
		v, err := p.notTest()
		if err != nil {
			return val{}, err
		}
		if err := values(v); err != nil {
			return val{}, err
		}
		return val{code: "(!" + truthy(v) + ")", kind: kindBoolean}, nil
	}
	return p.comparison()
}

// truthy is the code of v's Python truth value.
func truthy(v val) string {
	if v.kind == kindBoolean {
		return v.code
	}
	return "py_truthy(" + v.code + ")"
}

func (p *parser) compOp() (string, bool) {
	t := p.peek()
	switch {
	case t.kind == tokOp && (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == "<=" || t.text == ">" || t.text == ">="):
		p.i++
		return t.text, true
	case t.kind == tokName && t.text == "in":
		p.i++
		return "in", true
	case t.kind == tokName && t.text == "not" && p.toks[p.i+1].kind == tokName && p.toks[p.i+1].text == "in":
		p.i += 2
		return "not in", true
	case t.kind == tokName && t.text == "is":
		p.i++
		if p.isKeyword("not") {
			p.i++
			return "is not", true
		}
		return "is", true
	}
	return "", false
}

// comparison: a < b < c means a < b and b < c, as in Python.
func (p *parser) comparison() (val, error) {
	a, err := p.arith()
	if err != nil {
		return val{}, err
	}
	var parts []string
	for {
		op, ok := p.compOp()
		if !ok {
			break
		}
		b, err := p.arith()
		if err != nil {
			return val{}, err
		}
		if err := values(a, b); err != nil {
			return val{}, err
		}
		var c string
		switch op {
		case "in":
			c = "py_in(" + a.code + ", " + b.code + ")"
		case "not in":
			c = "(!py_in(" + a.code + ", " + b.code + "))"
		case "is", "is not":
			if b.kind != kindNull && a.kind != kindNull {
				return val{}, p.errorf("%q is only supported with None", op)
			}
			c = "(" + a.code + " == " + b.code + ")"
			if op == "is not" {
				c = "(" + a.code + " != " + b.code + ")"
			}
		default:
			c = "(" + a.code + " " + op + " " + b.code + ")"
		}
		parts = append(parts, c)
		a = b
	}
	if parts == nil {
		return a, nil
	}
	return val{code: "(" + strings.Join(parts, " && ") + ")", kind: kindBoolean}, nil
}

func (p *parser) arith() (val, error) { return p.leftAssoc(p.term, "+", "-") }

func (p *parser) term() (val, error) { return p.leftAssoc(p.factor, "*", "/", "//", "%") }

// leftAssoc parses operands joined by any of ops, left to right.
func (p *parser) leftAssoc(operand func() (val, error), ops ...string) (val, error) {
	a, err := operand()
	if err != nil {
		return val{}, err
	}
	for slices.ContainsFunc(ops, p.isOp) {
		op := p.next().text
		b, err := operand()
		if err != nil {
			return val{}, err
		}
		if a, err = binary(op, a, b); err != nil {
			return val{}, err
		}
	}
	return a, nil
}

func binary(op string, a, b val) (val, error) {
	if err := values(a, b); err != nil {
		return val{}, err
	}
	numeric := func(k valueKind) bool { return k == kindInteger || k == kindNumber }
	k := kindAny
	switch {
	case op == "+" && a.kind == kindString && b.kind == kindString:
		k = kindString
	case op == "/" && numeric(a.kind) && numeric(b.kind):
		k = kindNumber
	case a.kind == kindInteger && b.kind == kindInteger:
		k = kindInteger
	case numeric(a.kind) && numeric(b.kind):
		k = kindNumber
	}
	switch op {
	case "//":
		return val{code: "py_floordiv(" + a.code + ", " + b.code + ")", kind: k}, nil
	case "%":
		return val{code: "py_mod(" + a.code + ", " + b.code + ")", kind: k}, nil
	case "**":
		if k == kindInteger {
			k = kindAny // a negative exponent makes a float
		}
		return val{code: "py_pow(" + a.code + ", " + b.code + ")", kind: k}, nil
	}
	return val{code: "(" + a.code + " " + op + " " + b.code + ")", kind: k}, nil
}

func (p *parser) factor() (val, error) {
	if p.isOp("-") || p.isOp("+") {
		op := p.next().text
		v, err := p.factor()
		if err != nil {
			return val{}, err
		}
		if err := values(v); err != nil {
			return val{}, err
		}
		k := v.kind
		if k != kindInteger && k != kindNumber {
			k = kindAny
		}
		return val{code: "(" + op + v.code + ")", kind: k}, nil
	}
	a, err := p.atomExpr()
	if err != nil {
		return val{}, err
	}
	if p.isOp("**") {
		p.i++
		b, err := p.factor()
		if err != nil {
			return val{}, err
		}
		return binary("**", a, b)
	}
	return a, nil
}

// values rejects modules and functions used as values.
func values(vs ...val) error {
	for _, v := range vs {
		if v.module != "" {
			return fmt.Errorf("%s is a module or function, not a value", v.module)
		}
	}
	return nil
}

func (p *parser) atomExpr() (val, error) {
	v, err := p.atom()
	if err != nil {
		return val{}, err
	}
	for {
		switch {
		case p.isOp("."):
			p.i++
			t := p.next()
			if t.kind != tokName {
				return val{}, p.errorf("expected a name after '.', found %s", t)
			}
			if v.module != "" {
				v = val{module: v.module + "." + t.text}
				continue
			}
			if p.isOp("(") {
				args, err := p.args(false)
				if err != nil {
					return val{}, err
				}
				if v, err = method(v, t.text, args); err != nil {
					return val{}, err
				}
				continue
			}
			if !dateAttrs[t.text] {
				return val{}, p.errorf("attribute .%s is not supported", t.text)
			}
			v = val{code: "py_attr(" + v.code + ", " + strconv.Quote(t.text) + ")", kind: kindInteger}
		case p.isOp("("):
			if v.module == "" {
				return val{}, p.errorf("only functions can be called")
			}
			args, err := p.args(v.module == "json.dumps")
			if err != nil {
				return val{}, err
			}
			if v, err = call(v.module, args); err != nil {
				return val{}, err
			}
		case p.isOp("["):
			p.i++
			if v, err = p.subscript(v); err != nil {
				return val{}, err
			}
		default:
			return v, nil
		}
	}
}

var dateAttrs = map[string]bool{"year": true, "month": true, "day": true, "hour": true, "minute": true, "second": true, "microsecond": true}

// args parses a call's arguments; keyword arguments are accepted (and
// ignored) only where they change nothing here (json.dumps(x, default=str)).
func (p *parser) args(keywords bool) ([]val, error) {
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	var out []val
	err := p.commaList(")", func() error {
		if p.peek().kind == tokName && p.toks[p.i+1].kind == tokOp && p.toks[p.i+1].text == "=" {
			if !keywords {
				return p.errorf("keyword argument %s= is not supported", p.peek().text)
			}
			p.i += 2
			if _, err := p.test(); err != nil {
				// default=str names a function: skip whatever it is.
				if !strings.Contains(err.Error(), "module or function") {
					return err
				}
			}
			return nil
		}
		a, err := p.value()
		out = append(out, a)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (p *parser) subscript(v val) (val, error) {
	if err := values(v); err != nil {
		return val{}, err
	}
	var lo, hi *val
	if !p.isOp(":") {
		k, err := p.test()
		if err != nil {
			return val{}, err
		}
		lo = &k
	}
	if p.isOp(":") {
		p.i++
		if !p.isOp("]") {
			k, err := p.test()
			if err != nil {
				return val{}, err
			}
			hi = &k
		}
		if err := p.expectOp("]"); err != nil {
			return val{}, err
		}
		bound := func(b *val) string {
			if b == nil {
				return "nil"
			}
			return b.code
		}
		return val{code: "py_slice(" + v.code + ", " + bound(lo) + ", " + bound(hi) + ")", kind: kindAny}, nil
	}
	if err := p.expectOp("]"); err != nil {
		return val{}, err
	}
	key := *lo
	if err := values(key); err != nil {
		return val{}, err
	}
	if name, ok := literalString(key); ok {
		switch {
		case v.record:
			p.records--
			return p.sc.property(name), nil
		case v.config:
			c, ok := p.sc.Config[name]
			if !ok {
				return val{}, p.errorf("config[%q]: stream_map_config has no such key", name)
			}
			return constant(c)
		}
	}
	return val{code: "py_idx(" + v.code + ", " + key.code + ")", kind: kindAny}, nil
}

// literalString returns the string a literal denotes.
func literalString(v val) (string, bool) {
	s, ok := v.cval.(string)
	return s, ok
}

// property is a record property read by name.
func (sc *Scope) property(name string) val {
	return val{code: sc.propVar(name), kind: schemaKind(sc.Props[name]), ref: name}
}

// schemaKind is the kind of values a property schema allows, if it allows
// one kind (besides null).
func schemaKind(s map[string]any) valueKind {
	var types []string
	switch t := s["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, e := range t {
			if e, ok := e.(string); ok && e != "null" {
				types = append(types, e)
			}
		}
	}
	if len(types) != 1 {
		return kindAny
	}
	switch types[0] {
	case "string":
		if s["format"] == nil {
			return kindString
		}
	case "integer":
		return kindInteger
	case "number":
		return kindNumber
	case "boolean":
		return kindBoolean
	}
	return kindAny
}

// constant is the literal of a config value, known when the map compiles.
func constant(c any) (val, error) {
	switch c := c.(type) {
	case string:
		return val{code: strconv.Quote(c), kind: kindString, cval: c}, nil
	case bool:
		return val{code: strconv.FormatBool(c), kind: kindBoolean, cval: c}, nil
	case nil:
		return val{code: "nil", kind: kindNull}, nil
	}
	n := Normalize(c)
	// A config read without json.Number holds 3 as 3.0; Python's json
	// reads it as an int.
	if f, ok := n.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		n = int(f)
	}
	switch n := n.(type) {
	case int:
		return val{code: "(" + strconv.Itoa(n) + ")", kind: kindInteger, cval: n}, nil
	case float64:
		return val{code: "(" + strconv.FormatFloat(n, 'g', -1, 64) + ")", kind: kindNumber, cval: n}, nil
	}
	return val{}, fmt.Errorf("config values used in expressions must be strings, numbers, booleans or null, got %T", c)
}

func (p *parser) atom() (val, error) {
	t := p.next()
	switch t.kind {
	case tokString:
		return val{code: strconv.Quote(t.text), kind: kindString, cval: t.text}, nil
	case tokInt:
		return val{code: t.text, kind: kindInteger}, nil
	case tokFloat:
		f, _ := strconv.ParseFloat(t.text, 64)
		return val{code: "(" + strconv.FormatFloat(f, 'g', -1, 64) + ")", kind: kindNumber}, nil
	case tokOp:
		switch t.text {
		case "(":
			v, err := p.test()
			if err != nil {
				return val{}, err
			}
			if p.isOp(",") {
				return val{}, p.errorf("tuples are not supported")
			}
			if err := p.expectOp(")"); err != nil {
				return val{}, err
			}
			return v, nil
		case "[":
			return p.list()
		case "{":
			return p.dict()
		}
	case tokName:
		return p.name(t.text)
	}
	return val{}, p.errorf("unexpected %s", t)
}

func (p *parser) list() (val, error) {
	var items []string
	err := p.commaList("]", func() error {
		v, err := p.value()
		items = append(items, v.code)
		return err
	})
	if err != nil {
		return val{}, err
	}
	return val{code: "[" + strings.Join(items, ", ") + "]", kind: kindList}, nil
}

func (p *parser) dict() (val, error) {
	var items []string
	err := p.commaList("}", func() error {
		k, err := p.test()
		if err != nil {
			return err
		}
		key, ok := literalString(k)
		if !ok {
			return p.errorf("dict keys must be string literals")
		}
		if err := p.expectOp(":"); err != nil {
			return err
		}
		v, err := p.value()
		items = append(items, strconv.Quote(key)+": "+v.code)
		return err
	})
	if err != nil {
		return val{}, err
	}
	return val{code: "{" + strings.Join(items, ", ") + "}", kind: kindObject}, nil
}

// commaList parses items separated by commas (a trailing one allowed) up
// to closer, and consumes closer.
func (p *parser) commaList(closer string, item func() error) error {
	for !p.isOp(closer) {
		if err := item(); err != nil {
			return err
		}
		if !p.isOp(",") {
			break
		}
		p.i++
	}
	return p.expectOp(closer)
}

// value parses an expression that must be a value (not a module or a
// function).
func (p *parser) value() (val, error) {
	v, err := p.test()
	if err != nil {
		return val{}, err
	}
	return v, values(v)
}

// functions the SDK's expressions may call by name.
var callable = map[string]bool{"str": true, "int": true, "float": true, "bool": true, "md5": true, "sha256": true}

func (p *parser) name(n string) (val, error) {
	switch n {
	case "True":
		return val{code: "true", kind: kindBoolean}, nil
	case "False":
		return val{code: "false", kind: kindBoolean}, nil
	case "None":
		return val{code: "nil", kind: kindNull}, nil
	case "record", "_":
		p.records++
		return val{code: "rec", kind: kindObject, record: true, whole: true}, nil
	case "config":
		return val{code: "cfg", kind: kindObject, config: true}, nil
	case "__stream_name__":
		return val{code: "stream", kind: kindString}, nil
	case "self":
		if p.sc.Self == "" {
			return val{}, p.errorf("self is only defined in a property's expression")
		}
		v := p.sc.property(p.sc.Self)
		return v, nil
	case "datetime", "json":
		return val{module: n}, nil
	case "and", "or", "not", "in", "is", "if", "else", "for", "lambda":
		return val{}, p.errorf("unexpected %q", n)
	}
	if callable[n] && p.isOp("(") {
		return val{module: n}, nil
	}
	if _, ok := p.sc.Props[n]; ok {
		return p.sc.property(n), nil
	}
	if callable[n] {
		return val{module: n}, nil
	}
	return val{}, p.errorf("unknown name %q: not a property of the stream's schema, nor one of record, _, self, config, __stream_name__, datetime, json, str, int, float, bool, md5, sha256", n)
}

// call translates a call of a function or module function.
func call(fn string, args []val) (val, error) {
	want := func(n int) error {
		if len(args) != n {
			return fmt.Errorf("%s() takes %d argument(s), got %d", fn, n, len(args))
		}
		return nil
	}
	one := func(goFn string, k valueKind) (val, error) {
		if err := want(1); err != nil {
			return val{}, err
		}
		return val{code: goFn + "(" + args[0].code + ")", kind: k}, nil
	}
	switch fn {
	case "str":
		return one("py_str", kindString)
	case "int":
		return one("py_int", kindInteger)
	case "float":
		return one("py_float", kindNumber)
	case "bool":
		if err := want(1); err != nil {
			return val{}, err
		}
		return val{code: truthy(args[0]), kind: kindBoolean}, nil
	case "md5":
		return one("py_md5", kindString)
	case "sha256":
		return one("py_sha256", kindString)
	case "json.dumps":
		return one("py_json_dumps", kindString)
	case "json.loads":
		return one("py_json_loads", kindAny)
	case "datetime.datetime.fromisoformat":
		return one("py_datetime", kindDateTime)
	case "datetime.date.fromisoformat":
		return one("py_date", kindDate)
	}
	return val{}, fmt.Errorf("%s() is not supported", fn)
}

// methods: name → (argument counts allowed, result kind).
var methods = map[string]struct {
	min, max int
	kind     valueKind
}{
	"lower": {0, 0, kindString}, "upper": {0, 0, kindString}, "title": {0, 0, kindString},
	"strip": {0, 1, kindString}, "lstrip": {0, 1, kindString}, "rstrip": {0, 1, kindString},
	"split": {0, 2, kindList}, "startswith": {1, 1, kindBoolean}, "endswith": {1, 1, kindBoolean},
	"replace": {2, 2, kindString}, "join": {1, 1, kindString}, "get": {1, 2, kindAny},
	"date": {0, 0, kindDate}, "timestamp": {0, 0, kindNumber}, "isoformat": {0, 0, kindString},
	"strftime": {1, 1, kindString},
}

func method(recv val, name string, args []val) (val, error) {
	m, ok := methods[name]
	if !ok {
		return val{}, fmt.Errorf("method .%s() is not supported", name)
	}
	if len(args) < m.min || len(args) > m.max {
		return val{}, fmt.Errorf(".%s() takes %d to %d argument(s), got %d", name, m.min, m.max, len(args))
	}
	codes := []string{recv.code, strconv.Quote(name)}
	for _, a := range args {
		codes = append(codes, a.code)
	}
	return val{code: "py_method(" + strings.Join(codes, ", ") + ")", kind: m.kind}, nil
}
