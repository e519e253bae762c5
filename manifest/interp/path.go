package interp

import "slices"

// What a front end can learn of a template without evaluating it: whether
// it is no more than a lookup of a variable's value at a fixed path, so
// that a compiler can hand the lookup to a faster, typed component (a
// cursor read from a path of the response) instead of evaluating the
// template on every page.

// Path tells whether the template is one {{ expression }} that looks up a
// variable at a fixed path — attributes, items with constant keys, and
// .get(key) or .get(key, default) — and if so which variable and which
// keys: "{{ response.get('links', {}).get('next') }}" is Response,
// [links next]. A default other than none, false, "" or an empty object
// or list changes what a missing key gives, so it is not a plain lookup.
func (t *Template) Path() (Var, []string, bool) {
	if t.single == nil {
		return 0, nil, false
	}
	return pathOf(t.single)
}

// NotPath tells whether the condition holds exactly when a variable's
// value at a fixed path is missing, null or empty: "{{ not response.next
// }}", "{{ response.next is none }}", "{{ response.next == None }}",
// "{{ response.next is not defined }}" (for a value that is never false
// or empty but when absent), "{{ 'next' not in response }}", and two of
// these of one path joined by or.
func (c *Condition) NotPath() (Var, []string, bool) { return notPath(c.t.single) }

func notPath(n node) (Var, []string, bool) {
	switch x := n.(type) {
	case *unary:
		if x.op == "not" {
			if cmp, ok := x.x.(*compare); ok && len(cmp.ops) == 1 && cmp.ops[0] == "in" {
				return keyIn(cmp) // not 'next' in response
			}
			return pathOf(x.x)
		}
	case *testCall:
		if len(x.args) == 0 && (x.name == "none" && !x.negate || x.name == "defined" && x.negate) {
			return pathOf(x.x)
		}
	case *compare:
		if len(x.ops) == 1 && x.ops[0] == "not in" {
			return keyIn(x) // 'next' not in response.links: response.links.next is missing
		}
		if len(x.ops) == 1 && x.ops[0] == "==" && (isLiteral(x.rest[0], nil) || isLiteral(x.rest[0], "")) {
			return pathOf(x.first)
		}
	case *logical:
		if x.and {
			break
		}
		v1, p1, ok1 := notPath(x.l)
		v2, p2, ok2 := notPath(x.r)
		if ok1 && ok2 && v1 == v2 && slices.Equal(p1, p2) {
			return v1, p1, true
		}
	}
	return 0, nil, false
}

// FalsePath tells whether the condition holds exactly when a variable's
// value at a fixed path is false: "{{ response.has_more is false }}",
// "{{ response.hasNext == False }}".
func (c *Condition) FalsePath() (Var, []string, bool) {
	switch x := c.t.single.(type) {
	case *testCall:
		if x.name == "false" && !x.negate && len(x.args) == 0 {
			return pathOf(x.x)
		}
	case *compare:
		if len(x.ops) == 1 && x.ops[0] == "==" && isLiteral(x.rest[0], false) {
			return pathOf(x.first)
		}
	}
	return 0, nil, false
}

func keyIn(x *compare) (Var, []string, bool) {
	key, ok := constString(x.first)
	if !ok {
		return 0, nil, false
	}
	v, p, ok := pathOf(x.rest[0])
	return v, append(p, key), ok
}

func isLiteral(n node, want any) bool {
	l, ok := n.(*literal)
	return ok && l.v == want
}

// IsPath tells whether the condition is the truth of a variable's value
// at a fixed path: "{{ response.has_more }}".
func (c *Condition) IsPath() (Var, []string, bool) { return c.t.Path() }

func pathOf(n node) (Var, []string, bool) {
	switch x := n.(type) {
	case *varRef:
		return x.v, nil, true
	case *getAttr:
		v, p, ok := pathOf(x.x)
		return v, append(p, x.name), ok
	case *getItem:
		key, ok := constString(x.key)
		if !ok {
			return 0, nil, false
		}
		v, p, ok := pathOf(x.x)
		return v, append(p, key), ok
	case *methodCall:
		if x.name != "get" || len(x.kw) > 0 || len(x.args) < 1 || len(x.args) > 2 {
			return 0, nil, false
		}
		key, ok := constString(x.args[0])
		if !ok || len(x.args) == 2 && !emptyDefault(x.args[1]) {
			return 0, nil, false
		}
		v, p, ok := pathOf(x.x)
		return v, append(p, key), ok
	}
	return 0, nil, false
}

func constString(n node) (string, bool) {
	l, ok := n.(*literal)
	if !ok {
		return "", false
	}
	s, ok := l.v.(string)
	return s, ok
}

// emptyDefault: a .get default that reads as "nothing there" to a
// paginator: none, "", {} or [].
func emptyDefault(n node) bool {
	switch x := n.(type) {
	case *literal:
		switch v := x.v.(type) {
		case nil:
			return true
		case string:
			return v == ""
		case bool:
			return !v
		case map[string]any:
			return len(v) == 0
		}
	case *dictLit:
		return len(x.keys) == 0
	case *listLit:
		return len(x.elems) == 0
	}
	return false
}
