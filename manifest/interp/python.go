package interp

import (
	"encoding/json"
	"strings"
)

// Python writes a template that reads a record as a Python expression of
// the Meltano SDK's stream maps (the tap's streammap), so that a
// manifest's AddFields, RemoveFields and RecordFilter run as the tap's
// maps run, on the splice path too. Parts that read only the config and
// $parameters are evaluated here, with v, and written as literals; the
// record is `record`. A lookup is written with .get, as Jinja gives
// undefined (falsy, printing "") where Python would raise a KeyError.
//
// ok is false for a form the translation does not take — a macro, a
// filter other than int, float, string, length and an unsalted md5 or
// sha256 hash, a method other than get and a separator's join, a
// datetime, a statement — and for a template that is not one
// {{ expression }}. reads lists the record's top-level keys read, for a
// caller that must know whether an expression sees a field an earlier
// transformation added.
func (t *Template) Python(v *Vars) (src string, reads []string, ok bool) {
	if t.single == nil {
		return "", nil, false
	}
	p := &pyWriter{v: v}
	if !p.write(t.single) {
		return "", nil, false
	}
	return p.b.String(), p.reads, true
}

// Python is the condition as a Python expression (Template.Python).
func (c *Condition) Python(v *Vars) (string, []string, bool) { return c.t.Python(v) }

type pyWriter struct {
	v     *Vars
	b     strings.Builder
	reads []string
}

// atLoad: a subtree that reads only the config and $parameters.
func atLoad(n node) bool {
	ok := true
	walkNodes(n, func(n node) {
		switch x := n.(type) {
		case *varRef:
			if x.v != Config && x.v != Parameters {
				ok = false
			}
		case *localRef, *sliceAttr, *macroCall:
			ok = false
		}
	})
	return ok
}

func (p *pyWriter) write(n node) bool {
	if _, isLit := n.(*literal); !isLit && atLoad(n) {
		x, err := (&frame{v: p.v}).eval(n)
		if err != nil {
			return false
		}
		return p.literal(typed(x))
	}
	switch x := n.(type) {
	case *literal:
		return p.literal(x.v)
	case *varRef:
		if x.v != Record {
			return false
		}
		p.b.WriteString("record")
		return true
	case *getAttr:
		return p.lookup(x.x, &literal{x.name}, nil)
	case *getItem:
		return p.lookup(x.x, x.key, nil)
	case *methodCall:
		if lit, ok := x.x.(*literal); ok && x.name == "join" && len(x.args) == 1 && len(x.kw) == 0 {
			// "::".join([record.a, record.b]): the separator's join
			if _, isText := lit.v.(string); !isText || !p.literal(lit.v) {
				return false
			}
			p.b.WriteString(".join(")
			if !p.write(x.args[0]) {
				return false
			}
			p.b.WriteByte(')')
			return true
		}
		if x.name != "get" || len(x.kw) > 0 || len(x.args) < 1 || len(x.args) > 2 {
			return false
		}
		var def node
		if len(x.args) == 2 {
			def = x.args[1]
		}
		return p.lookup(x.x, x.args[0], def)
	case *compare:
		p.b.WriteByte('(')
		if !p.write(x.first) {
			return false
		}
		for i, op := range x.ops {
			switch op {
			case "==", "!=", "<", "<=", ">", ">=", "in", "not in":
			default:
				return false
			}
			p.b.WriteString(" " + op + " ")
			if !p.write(x.rest[i]) {
				return false
			}
		}
		p.b.WriteByte(')')
		return true
	case *logical:
		op := " or "
		if x.and {
			op = " and "
		}
		p.b.WriteByte('(')
		if !p.write(x.l) {
			return false
		}
		p.b.WriteString(op)
		if !p.write(x.r) {
			return false
		}
		p.b.WriteByte(')')
		return true
	case *unary:
		switch x.op {
		case "not":
			p.b.WriteString("(not ")
		case "-":
			p.b.WriteString("(-")
		default:
			return false
		}
		if !p.write(x.x) {
			return false
		}
		p.b.WriteByte(')')
		return true
	case *condExpr:
		p.b.WriteByte('(')
		if !p.write(x.then) {
			return false
		}
		p.b.WriteString(" if ")
		if !p.write(x.cond) {
			return false
		}
		p.b.WriteString(" else ")
		if x.els == nil {
			p.b.WriteString("None")
		} else if !p.write(x.els) {
			return false
		}
		p.b.WriteByte(')')
		return true
	case *testCall:
		if x.name != "none" || len(x.args) > 0 {
			return false
		}
		p.b.WriteByte('(')
		if !p.write(x.x) {
			return false
		}
		if x.negate {
			p.b.WriteString(" is not None)")
		} else {
			p.b.WriteString(" is None)")
		}
		return true
	case *filterCall:
		fn, ok := map[string]string{"int": "int", "float": "float", "string": "str", "length": "len"}[x.name]
		if ok && (len(x.args) > 0 || len(x.kw) > 0) {
			return false
		}
		if x.name == "hash" {
			fn, ok = hashFunc(x)
		}
		if !ok {
			return false
		}
		p.b.WriteString(fn + "(")
		if !p.write(x.x) {
			return false
		}
		p.b.WriteByte(')')
		return true
	case *listLit:
		p.b.WriteByte('[')
		for i, e := range x.elems {
			if i > 0 {
				p.b.WriteString(", ")
			}
			if !p.write(e) {
				return false
			}
		}
		p.b.WriteByte(']')
		return true
	}
	return false
}

// hashFunc is the maps' function of a hash filter: hash("md5") or
// hash("sha256"), no salt, as md5() and sha256() of the value's text, hex
// as the CDK's hexdigest.
func hashFunc(x *filterCall) (string, bool) {
	if len(x.kw) > 0 || len(x.args) > 1 {
		return "", false
	}
	algo := "md5"
	if len(x.args) == 1 {
		lit, isLit := x.args[0].(*literal)
		if !isLit {
			return "", false
		}
		s, isText := lit.v.(string)
		if !isText {
			return "", false
		}
		algo = s
	}
	fn, ok := map[string]string{"md5": "md5", "sha256": "sha256"}[algo]
	return fn, ok
}

// lookup writes x.get(key) or x.get(key, def): a key of a record or of a
// value in it.
func (p *pyWriter) lookup(x, key, def node) bool {
	k, ok := key.(*literal)
	if !ok {
		return false
	}
	name, isName := k.v.(string)
	if r, isRecord := x.(*varRef); isRecord && r.v == Record && isName {
		p.reads = append(p.reads, name)
	}
	if !p.write(x) {
		return false
	}
	if !isName { // an index: a list's item
		if _, isInt := k.v.(int64); !isInt {
			return false
		}
		p.b.WriteByte('[')
		p.literal(k.v)
		p.b.WriteByte(']')
		return true
	}
	p.b.WriteString(".get(")
	p.literal(name)
	if def != nil {
		p.b.WriteString(", ")
		if !p.write(def) {
			return false
		}
	}
	p.b.WriteByte(')')
	return true
}

// literal writes a value as a Python literal: JSON's kinds only.
func (p *pyWriter) literal(v any) bool {
	switch x := v.(type) {
	case nil, bool, int64, float64, string:
		p.b.WriteString(pyRepr(x))
		return true
	case int:
		p.b.WriteString(pyRepr(int64(x)))
		return true
	case json.Number:
		p.b.WriteString(x.String())
		return true
	case []any:
		p.b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				p.b.WriteString(", ")
			}
			if !p.literal(e) {
				return false
			}
		}
		p.b.WriteByte(']')
		return true
	case map[string]any:
		if len(x) == 0 {
			p.b.WriteString("{}")
			return true
		}
	}
	return false
}

// walkNodes calls fn on n and every node below it.
func walkNodes(n node, fn func(node)) {
	fn(n)
	switch x := n.(type) {
	case *getAttr:
		walkNodes(x.x, fn)
	case *getItem:
		walkNodes(x.x, fn)
		walkNodes(x.key, fn)
	case *sliceOf:
		for _, e := range []node{x.x, x.lo, x.hi, x.step} {
			if e != nil {
				walkNodes(e, fn)
			}
		}
	case *unary:
		walkNodes(x.x, fn)
	case *binary:
		walkNodes(x.l, fn)
		walkNodes(x.r, fn)
	case *logical:
		walkNodes(x.l, fn)
		walkNodes(x.r, fn)
	case *compare:
		walkNodes(x.first, fn)
		for _, e := range x.rest {
			walkNodes(e, fn)
		}
	case *condExpr:
		for _, e := range []node{x.cond, x.then, x.els} {
			if e != nil {
				walkNodes(e, fn)
			}
		}
	case *listLit:
		for _, e := range x.elems {
			walkNodes(e, fn)
		}
	case *dictLit:
		for i := range x.keys {
			walkNodes(x.keys[i], fn)
			walkNodes(x.vals[i], fn)
		}
	case *macroCall:
		for _, e := range x.args {
			walkNodes(e, fn)
		}
		for _, k := range x.kw {
			walkNodes(k.x, fn)
		}
	case *methodCall:
		walkNodes(x.x, fn)
		for _, e := range x.args {
			walkNodes(e, fn)
		}
		for _, k := range x.kw {
			walkNodes(k.x, fn)
		}
	case *filterCall:
		walkNodes(x.x, fn)
		for _, e := range x.args {
			walkNodes(e, fn)
		}
		for _, k := range x.kw {
			walkNodes(k.x, fn)
		}
	case *testCall:
		walkNodes(x.x, fn)
		for _, e := range x.args {
			walkNodes(e, fn)
		}
	}
}
