package interp

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// frame is one evaluation: the variables and the template's locals.
type frame struct {
	v      *Vars
	locals []any
}

func (f *frame) variable(v Var) any {
	switch v {
	case Config:
		return orNone(f.v.Config)
	case Parameters:
		return orNone(f.v.Parameters)
	case StreamSlice, StreamInterval, StreamPartition:
		return orNone(f.v.StreamSlice)
	case NextPageToken:
		return orNone(f.v.NextPageToken)
	case Response:
		return norm(f.v.Response)
	case Headers:
		return orNone(f.v.Headers)
	case LastRecord:
		return orNone(f.v.LastRecord)
	case LastPageSize:
		return int64(f.v.LastPageSize)
	case Record:
		return orNone(f.v.Record)
	}
	for _, n := range varNames {
		if n.v == v {
			return norm(f.v.Extra[n.name])
		}
	}
	return nil
}

// orNone: a nil map is None, not an empty dict.
func orNone(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

func (f *frame) exec(b *strings.Builder, body []stmt) error {
	for _, s := range body {
		switch s := s.(type) {
		case *textStmt:
			b.WriteString(s.s)
		case *outputStmt:
			x, err := f.eval(s.x)
			if err != nil {
				return err
			}
			b.WriteString(pyStr(x))
		case *ifStmt:
			done := false
			for i, c := range s.conds {
				x, err := f.eval(c)
				if err != nil {
					return err
				}
				if truthy(x) {
					if err := f.exec(b, s.bodies[i]); err != nil {
						return err
					}
					done = true
					break
				}
			}
			if !done && s.els != nil {
				if err := f.exec(b, s.els); err != nil {
					return err
				}
			}
		case *forStmt:
			if err := f.loop(b, s); err != nil {
				return err
			}
		case *setStmt:
			x, err := f.eval(s.x)
			if err != nil {
				return err
			}
			if err := f.assign(s.slots, x); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *frame) assign(slots []int, x any) error {
	if len(slots) == 1 {
		f.locals[slots[0]] = x
		return nil
	}
	items, err := iterate(x)
	if err != nil {
		return err
	}
	if len(items) != len(slots) {
		return fmt.Errorf("cannot unpack %d values into %d names", len(items), len(slots))
	}
	for i, s := range slots {
		f.locals[s] = norm(items[i])
	}
	return nil
}

// maxLoop bounds a {% for %}: the CDK removes range() for the cost of
// long loops; a manifest's loops walk a record's fields or a page.
const maxLoop = 1 << 20

func (f *frame) loop(b *strings.Builder, s *forStmt) error {
	x, err := f.eval(s.iter)
	if err != nil {
		return err
	}
	items, err := iterate(x)
	if err != nil {
		return err
	}
	if len(items) > maxLoop {
		return fmt.Errorf("a loop of %d items is longer than %d", len(items), maxLoop)
	}
	if s.cond != nil {
		var kept []any
		for _, it := range items {
			if err := f.assign(s.slots, norm(it)); err != nil {
				return err
			}
			c, err := f.eval(s.cond)
			if err != nil {
				return err
			}
			if truthy(c) {
				kept = append(kept, it)
			}
		}
		items = kept
	}
	if len(items) == 0 {
		return f.exec(b, s.els)
	}
	for i, it := range items {
		if err := f.assign(s.slots, norm(it)); err != nil {
			return err
		}
		if s.loop >= 0 {
			f.locals[s.loop] = map[string]any{
				"index": int64(i + 1), "index0": int64(i),
				"revindex": int64(len(items) - i), "revindex0": int64(len(items) - i - 1),
				"first": i == 0, "last": i == len(items)-1, "length": int64(len(items)),
			}
		}
		if err := f.exec(b, s.body); err != nil {
			return err
		}
	}
	return nil
}

// iterate lists what a for loop or a filter walks: a list's items, a
// dict's keys, a string's characters; nothing for undefined.
func iterate(x any) ([]any, error) {
	switch v := x.(type) {
	case []any:
		return v, nil
	case map[string]any:
		return sortedKeys(v), nil
	case string:
		out := make([]any, 0, len(v))
		for _, r := range v {
			out = append(out, string(r))
		}
		return out, nil
	case undefined:
		return nil, nil
	}
	return nil, fmt.Errorf("'%s' object is not iterable", typeName(x))
}

func sortedKeys(m map[string]any) []any {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}

func (f *frame) eval(n node) (any, error) {
	switch n := n.(type) {
	case *literal:
		return n.v, nil
	case *varRef:
		return f.variable(n.v), nil
	case *localRef:
		x := f.locals[n.slot]
		if x == nil {
			// never assigned (a {% set %} in a branch not taken)
			return undefined{name: n.name}, nil
		}
		return x, nil
	case *getAttr:
		x, err := f.eval(n.x)
		if err != nil {
			return nil, err
		}
		return attr(x, n.name)
	case *sliceAttr:
		var m map[string]any
		switch n.name {
		case "partition":
			m = f.v.Partition
		case "cursor_slice":
			m = f.v.CursorSlice
		case "extra_fields":
			m = f.v.ExtraFields
		}
		if m == nil {
			return attr(orNone(f.v.StreamSlice), n.name)
		}
		return m, nil
	case *getItem:
		x, err := f.eval(n.x)
		if err != nil {
			return nil, err
		}
		k, err := f.eval(n.key)
		if err != nil {
			return nil, err
		}
		return item(x, k)
	case *sliceOf:
		return f.slice(n)
	case *unary:
		x, err := f.eval(n.x)
		if err != nil {
			return nil, err
		}
		return unaryOp(n.op, x)
	case *binary:
		l, err := f.eval(n.l)
		if err != nil {
			return nil, err
		}
		r, err := f.eval(n.r)
		if err != nil {
			return nil, err
		}
		return binaryOp(n.op, l, r)
	case *logical:
		l, err := f.eval(n.l)
		if err != nil {
			return nil, err
		}
		if truthy(l) != n.and {
			return l, nil // `a or b` is a when a is true; `a and b` a when false
		}
		return f.eval(n.r)
	case *compare:
		l, err := f.eval(n.first)
		if err != nil {
			return nil, err
		}
		for i, op := range n.ops {
			r, err := f.eval(n.rest[i])
			if err != nil {
				return nil, err
			}
			ok, err := compareOp(op, l, r)
			if err != nil {
				return nil, err
			}
			if !ok {
				return false, nil
			}
			l = r
		}
		return true, nil
	case *condExpr:
		c, err := f.eval(n.cond)
		if err != nil {
			return nil, err
		}
		if truthy(c) {
			return f.eval(n.then)
		}
		if n.els == nil {
			return undefined{}, nil
		}
		return f.eval(n.els)
	case *listLit:
		out := make([]any, len(n.elems))
		for i, e := range n.elems {
			x, err := f.eval(e)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case *dictLit:
		out := make(map[string]any, len(n.keys))
		for i, k := range n.keys {
			kx, err := f.eval(k)
			if err != nil {
				return nil, err
			}
			vx, err := f.eval(n.vals[i])
			if err != nil {
				return nil, err
			}
			ks, ok := kx.(string)
			if !ok {
				if _, isList := kx.([]any); isList {
					return nil, errors.New("unhashable type: 'list'")
				}
				ks = pyStr(kx)
			}
			out[ks] = vx
		}
		return out, nil
	case *macroCall:
		a, err := f.args(n.args, n.kw)
		if err != nil {
			return nil, err
		}
		a.prep = n.prep
		x, err := n.fn(f.v, a)
		if err != nil {
			return nil, fmt.Errorf("%s(): %w", n.name, err)
		}
		return x, nil
	case *methodCall:
		x, err := f.eval(n.x)
		if err != nil {
			return nil, err
		}
		a, err := f.args(n.args, n.kw)
		if err != nil {
			return nil, err
		}
		if l, ok := x.([]any); ok && (n.name == "append" || n.name == "extend") {
			return f.grow(n, l, a)
		}
		if m, ok := x.(map[string]any); ok && n.name == "update" {
			return f.update(n, m, a)
		}
		r, err := callMethod(x, n.name, a)
		if err != nil {
			if errors.Is(err, ErrUndefined) {
				return nil, err
			}
			return nil, fmt.Errorf(".%s(): %w", n.name, err)
		}
		return r, nil
	case *filterCall:
		x, err := f.eval(n.x)
		if err != nil {
			return nil, err
		}
		a, err := f.args(n.args, n.kw)
		if err != nil {
			return nil, err
		}
		a.prep = n.prep
		r, err := n.fn(x, a)
		if err != nil {
			if errors.Is(err, ErrUndefined) {
				return nil, err
			}
			return nil, fmt.Errorf("filter %s: %w", n.name, err)
		}
		return r, nil
	case *testCall:
		x, err := f.eval(n.x)
		if err != nil {
			return nil, err
		}
		a, err := f.args(n.args, nil)
		if err != nil {
			return nil, err
		}
		ok, err := n.fn(x, a.pos)
		if err != nil {
			return nil, fmt.Errorf("test %s: %w", n.name, err)
		}
		return ok != n.negate, nil
	}
	return nil, fmt.Errorf("unknown node %T", n)
}

// grow is list.append and list.extend, on a list the template holds in a
// local ({% set ids = [] %}{% set _ = ids.append(x) %}): a Go slice
// cannot grow where other holders see it, so the local is set anew.
func (f *frame) grow(n *methodCall, l []any, a args) (any, error) {
	if n.slot == 0 {
		return nil, fmt.Errorf(".%s(): only a list held in a {%% set %%} variable can grow", n.name)
	}
	if len(a.pos) != 1 {
		return nil, fmt.Errorf(".%s() takes exactly one argument (%d given)", n.name, len(a.pos))
	}
	l = l[:len(l):len(l)] // a new array: the old one may be the caller's
	if n.name == "append" {
		l = append(l, a.pos[0])
	} else {
		items, err := iterate(a.pos[0])
		if err != nil {
			return nil, err
		}
		l = append(l, items...)
	}
	f.locals[n.slot-1] = l
	return nil, nil
}

// update is dict.update on a dict the template holds in a local; the
// local gets a changed copy, so that a dict the caller passed in (a
// config shared by streams running at once) never changes.
func (f *frame) update(n *methodCall, m map[string]any, a args) (any, error) {
	if n.slot == 0 {
		return nil, errors.New(".update(): only a dict held in a {% set %} variable can change")
	}
	if len(a.pos) > 1 {
		return nil, fmt.Errorf("update expected at most 1 argument, got %d", len(a.pos))
	}
	out := make(map[string]any, len(m)+len(a.kw)+1)
	for k, x := range m {
		out[k] = x
	}
	if len(a.pos) == 1 {
		add, ok := a.pos[0].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("update wants a dict, not %s", typeName(a.pos[0]))
		}
		for k, x := range add {
			out[k] = x
		}
	}
	for k, x := range a.kw {
		out[k] = x
	}
	f.locals[n.slot-1] = out
	return nil, nil
}

// args are a call's evaluated arguments.
type args struct {
	pos  []any
	kw   map[string]any
	prep any // what the macro made of its constant arguments at Compile
}

func (f *frame) args(pos []node, kw []kwArg) (args, error) {
	var a args
	if len(pos) > 0 {
		a.pos = make([]any, len(pos))
		for i, p := range pos {
			x, err := f.eval(p)
			if err != nil {
				return a, err
			}
			a.pos[i] = x
		}
	}
	if len(kw) > 0 {
		a.kw = make(map[string]any, len(kw))
		for _, k := range kw {
			x, err := f.eval(k.x)
			if err != nil {
				return a, err
			}
			a.kw[k.name] = x
		}
	}
	return a, nil
}

// get is the argument at position i or named name, or def.
func (a args) get(i int, name string, def any) any {
	if i < len(a.pos) {
		return a.pos[i]
	}
	if x, ok := a.kw[name]; ok {
		return x
	}
	return def
}

// check refuses more arguments than the function takes, and unknown
// keywords.
func (a args) check(max int, names ...string) error {
	if len(a.pos) > max {
		return fmt.Errorf("takes at most %d arguments, got %d", max, len(a.pos))
	}
	for k := range a.kw {
		found := false
		for _, n := range names {
			found = found || n == k
		}
		if !found {
			return fmt.Errorf("unexpected keyword argument %q", k)
		}
	}
	return nil
}

// dictMethods are the attributes of a Python dict: record.items is the
// method, not the key "items" (Jinja reads Python's attribute first),
// and record['items'] the method when there is no such key.
var dictMethods = map[string]bool{
	"clear": true, "copy": true, "fromkeys": true, "get": true, "items": true, "keys": true,
	"pop": true, "popitem": true, "setdefault": true, "update": true, "values": true,
}

// boundMethod is a dict's method read and not called: true, and
// printed as Python prints it.
type boundMethod struct{ name string }

// attr is Jinja's getattr: x.name, or x['name'] when x has no attribute
// of that name; undefined when neither.
func attr(x any, name string) (any, error) {
	switch v := x.(type) {
	case undefined:
		return nil, undefined{name: v.name + "." + name}.err()
	case map[string]any:
		if dictMethods[name] {
			return boundMethod{name}, nil // Python's attribute first
		}
		if e, ok := v[name]; ok {
			return norm(e), nil
		}
	case datetime:
		t := v.t
		switch name {
		case "year":
			return int64(t.Year()), nil
		case "month":
			return int64(t.Month()), nil
		case "day":
			return int64(t.Day()), nil
		case "hour":
			return int64(t.Hour()), nil
		case "minute":
			return int64(t.Minute()), nil
		case "second":
			return int64(t.Second()), nil
		case "microsecond":
			return int64(t.Nanosecond() / 1000), nil
		}
	case date:
		switch name {
		case "year":
			return int64(v.t.Year()), nil
		case "month":
			return int64(v.t.Month()), nil
		case "day":
			return int64(v.t.Day()), nil
		}
	case timedelta:
		days, secs, us := v.parts()
		switch name {
		case "days":
			return days, nil
		case "seconds":
			return secs, nil
		case "microseconds":
			return us, nil
		}
	}
	return undefined{name: name}, nil
}

// item is Jinja's getitem: x[k], or the attribute k of x; undefined when
// neither.
func item(x any, k any) (any, error) {
	switch v := x.(type) {
	case undefined:
		return nil, undefined{name: v.name + "[" + pyRepr(k) + "]"}.err()
	case map[string]any:
		ks, ok := k.(string)
		if !ok {
			return undefined{name: pyRepr(k)}, nil // JSON's dicts have string keys only
		}
		if e, ok := v[ks]; ok {
			return norm(e), nil
		}
		if dictMethods[ks] {
			return boundMethod{ks}, nil // no key: Jinja tries the attribute
		}
		return undefined{name: ks}, nil
	case []any:
		if i, ok := index(k, len(v)); ok {
			return norm(v[i]), nil
		}
	case string:
		if i, ok := index(k, len(v)); ok && isASCII(v) {
			return v[i : i+1], nil
		}
		if _, isInt := k.(int64); isInt {
			r := []rune(v)
			if i, ok := index(k, len(r)); ok {
				return string(r[i]), nil
			}
		}
	}
	if s, ok := k.(string); ok {
		return attr(x, s)
	}
	return undefined{name: pyRepr(k)}, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// index reads k as an index into n items, counting from the end when
// negative.
func index(k any, n int) (int, bool) {
	var i int64
	switch v := k.(type) {
	case int64:
		i = v
	case bool:
		if v {
			i = 1
		}
	default:
		return 0, false
	}
	if i < 0 {
		i += int64(n)
	}
	if i < 0 || i >= int64(n) {
		return 0, false
	}
	return int(i), true
}

func (f *frame) slice(n *sliceOf) (any, error) {
	x, err := f.eval(n.x)
	if err != nil {
		return nil, err
	}
	var bound [3]*int64
	for i, e := range []node{n.lo, n.hi, n.step} {
		if e == nil {
			continue
		}
		b, err := f.eval(e)
		if err != nil {
			return nil, err
		}
		if b == nil {
			continue
		}
		bi, ok := b.(int64)
		if !ok {
			return nil, fmt.Errorf("slice indices must be integers or None, not %s", typeName(b))
		}
		bound[i] = &bi
	}
	switch v := x.(type) {
	case []any:
		idx, err := sliceIndices(bound, len(v))
		if err != nil {
			return nil, err
		}
		out := make([]any, len(idx))
		for i, j := range idx {
			out[i] = v[j]
		}
		return out, nil
	case string:
		r := []rune(v)
		idx, err := sliceIndices(bound, len(r))
		if err != nil {
			return nil, err
		}
		out := make([]rune, len(idx))
		for i, j := range idx {
			out[i] = r[j]
		}
		return string(out), nil
	case undefined:
		return nil, v.err()
	}
	return nil, fmt.Errorf("'%s' object is not subscriptable", typeName(x))
}

// sliceIndices are the indices Python's x[lo:hi:step] takes of n items.
func sliceIndices(b [3]*int64, n int) ([]int, error) {
	step := int64(1)
	if b[2] != nil {
		step = *b[2]
	}
	if step == 0 {
		return nil, errors.New("slice step cannot be zero")
	}
	clamp := func(p *int64, def int64, lo, hi int64) int64 {
		if p == nil {
			return def
		}
		i := *p
		if i < 0 {
			i += int64(n)
		}
		return max(lo, min(i, hi))
	}
	var idx []int
	if step > 0 {
		lo, hi := clamp(b[0], 0, 0, int64(n)), clamp(b[1], int64(n), 0, int64(n))
		for i := lo; i < hi; i += step {
			idx = append(idx, int(i))
		}
	} else {
		lo, hi := clamp(b[0], int64(n)-1, -1, int64(n)-1), clamp(b[1], -1, -1, int64(n)-1)
		if b[1] != nil && *b[1] < 0 && *b[1]+int64(n) < 0 {
			hi = -1
		}
		for i := lo; i > hi; i += step {
			idx = append(idx, int(i))
		}
	}
	return idx, nil
}

func unaryOp(op string, x any) (any, error) {
	if op == "not" {
		return !truthy(x), nil
	}
	if u, ok := x.(undefined); ok {
		return nil, u.err()
	}
	i, fl, isInt, ok := number(x)
	if td, isTD := x.(timedelta); isTD {
		if op == "-" {
			return timedelta{months: -td.months, d: -td.d}, nil
		}
		return td, nil
	}
	if !ok {
		return nil, fmt.Errorf("bad operand type for unary %s: '%s'", op, typeName(x))
	}
	if op == "-" {
		if isInt {
			return -i, nil
		}
		return -fl, nil
	}
	if isInt {
		return i, nil
	}
	return fl, nil
}

func binaryOp(op string, l, r any) (any, error) {
	if op == "~" { // Jinja's concatenation: str() of both
		return pyStr(l) + pyStr(r), nil
	}
	if u, ok := l.(undefined); ok {
		return nil, u.err()
	}
	if u, ok := r.(undefined); ok {
		return nil, u.err()
	}
	li, lf, lInt, lNum := number(l)
	ri, rf, rInt, rNum := number(r)
	if lNum && rNum {
		return arith(op, li, lf, lInt, ri, rf, rInt)
	}
	switch op {
	case "+":
		switch lv := l.(type) {
		case string:
			if rv, ok := r.(string); ok {
				return lv + rv, nil
			}
		case []any:
			if rv, ok := r.([]any); ok {
				out := make([]any, 0, len(lv)+len(rv))
				return append(append(out, lv...), rv...), nil
			}
		}
	case "*":
		if s, ok := l.(string); ok && rInt {
			return strings.Repeat(s, int(max(0, min(ri, 1<<20)))), nil
		}
		if s, ok := r.(string); ok && lInt {
			return strings.Repeat(s, int(max(0, min(li, 1<<20)))), nil
		}
		if l, ok := l.([]any); ok && rInt {
			var out []any
			for range max(0, min(ri, 1<<20/max(1, int64(len(l))))) {
				out = append(out, l...)
			}
			return out, nil
		}
	case "%":
		if s, ok := l.(string); ok {
			return percentFormat(s, r)
		}
	}
	if x, ok, err := timeArith(op, l, r); ok {
		return x, err
	}
	return nil, fmt.Errorf("unsupported operand type(s) for %s: '%s' and '%s'", op, typeName(l), typeName(r))
}

// errOverflow: Python's ints have no bound, ours 64 bits; a result past
// them is an error rather than a wrong number.
var errOverflow = errors.New("integer result out of the 64-bit range")

func mulInt(a, b int64) (int64, error) {
	if a == 0 || b == 0 {
		return 0, nil
	}
	p := a * b
	if p/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, errOverflow
	}
	return p, nil
}

// powInt is b**e by squaring, e ≥ 0.
func powInt(b, e int64) (int64, error) {
	out := int64(1)
	for e > 0 {
		var err error
		if e&1 == 1 {
			if out, err = mulInt(out, b); err != nil {
				return 0, err
			}
		}
		e >>= 1
		if e > 0 {
			if b, err = mulInt(b, b); err != nil {
				return 0, err
			}
		}
	}
	return out, nil
}

func arith(op string, li int64, lf float64, lInt bool, ri int64, rf float64, rInt bool) (any, error) {
	ints := lInt && rInt
	switch op {
	case "+":
		if ints {
			s := li + ri
			if (s > li) != (ri > 0) {
				return nil, errOverflow
			}
			return s, nil
		}
		return lf + rf, nil
	case "-":
		if ints {
			s := li - ri
			if (s < li) != (ri > 0) {
				return nil, errOverflow
			}
			return s, nil
		}
		return lf - rf, nil
	case "*":
		if ints {
			return mulInt(li, ri)
		}
		return lf * rf, nil
	case "/":
		if rf == 0 {
			return nil, errors.New("division by zero")
		}
		return lf / rf, nil
	case "//":
		if rf == 0 {
			return nil, errors.New("integer division or modulo by zero")
		}
		if ints {
			q := li / ri
			if (li%ri != 0) && ((li < 0) != (ri < 0)) {
				q--
			}
			return q, nil
		}
		return math.Floor(lf / rf), nil
	case "%":
		if rf == 0 {
			return nil, errors.New("integer division or modulo by zero")
		}
		if ints {
			m := li % ri
			if m != 0 && (m < 0) != (ri < 0) {
				m += ri
			}
			return m, nil
		}
		m := math.Mod(lf, rf)
		if m != 0 && (m < 0) != (rf < 0) {
			m += rf
		}
		return m, nil
	case "**":
		if ints && ri >= 0 {
			return powInt(li, ri)
		}
		return math.Pow(lf, rf), nil
	}
	return nil, fmt.Errorf("unknown operator %s", op)
}

func compareOp(op string, l, r any) (bool, error) {
	switch op {
	case "==":
		return equal(l, r), nil
	case "!=":
		return !equal(l, r), nil
	case "in", "not in":
		in, err := contains(r, l)
		return in == (op == "in"), err
	}
	c, err := order(l, r)
	if err != nil {
		return false, err
	}
	switch op {
	case "<":
		return c < 0, nil
	case "<=":
		return c <= 0, nil
	case ">":
		return c > 0, nil
	case ">=":
		return c >= 0, nil
	}
	return false, fmt.Errorf("unknown comparison %s", op)
}

// contains is Python's `x in container`.
func contains(container, x any) (bool, error) {
	switch c := container.(type) {
	case string:
		s, ok := x.(string)
		if !ok {
			return false, fmt.Errorf("'in <string>' requires string as left operand, not %s", typeName(x))
		}
		return strings.Contains(c, s), nil
	case []any:
		for _, e := range c {
			if equal(norm(e), x) {
				return true, nil
			}
		}
		return false, nil
	case map[string]any:
		s, ok := x.(string)
		if !ok {
			return false, nil
		}
		_, in := c[s]
		return in, nil
	case undefined:
		return false, nil
	}
	return false, fmt.Errorf("argument of type '%s' is not iterable", typeName(container))
}

// timeArith is datetime ± timedelta, datetime - datetime, and the like.
// ok is false when neither side is a time.
func timeArith(op string, l, r any) (any, bool, error) {
	switch lv := l.(type) {
	case datetime:
		switch rv := r.(type) {
		case timedelta:
			switch op {
			case "+":
				return datetime{rv.addTo(lv.t)}, true, nil
			case "-":
				return datetime{timedelta{-rv.months, -rv.d}.addTo(lv.t)}, true, nil
			}
		case datetime:
			if op == "-" {
				return timedelta{d: lv.t.Sub(rv.t)}, true, nil
			}
		}
	case date:
		switch rv := r.(type) {
		case timedelta:
			days := rv.d.Truncate(24 * time.Hour)
			if rv.d < 0 && rv.d%(24*time.Hour) != 0 {
				days -= 24 * time.Hour
			}
			switch op {
			case "+":
				return date{timedelta{rv.months, days}.addTo(lv.t)}, true, nil
			case "-":
				return date{timedelta{-rv.months, -days}.addTo(lv.t)}, true, nil
			}
		case date:
			if op == "-" {
				return timedelta{d: lv.t.Sub(rv.t)}, true, nil
			}
		}
	case timedelta:
		switch rv := r.(type) {
		case timedelta:
			switch op {
			case "+":
				return timedelta{lv.months + rv.months, lv.d + rv.d}, true, nil
			case "-":
				return timedelta{lv.months - rv.months, lv.d - rv.d}, true, nil
			}
		case datetime:
			if op == "+" {
				return datetime{lv.addTo(rv.t)}, true, nil
			}
		case date:
			if op == "+" {
				return timeArith(op, r, l)
			}
		case int64:
			if op == "*" && lv.months == 0 {
				return timedelta{d: lv.d * time.Duration(rv)}, true, nil
			}
		}
	case int64:
		if td, ok := r.(timedelta); ok && op == "*" && td.months == 0 {
			return timedelta{d: td.d * time.Duration(lv)}, true, nil
		}
	default:
		return nil, false, nil
	}
	switch r.(type) {
	case datetime, date, timedelta:
	default:
		if _, ok := l.(int64); ok {
			return nil, false, nil
		}
	}
	return nil, true, fmt.Errorf("unsupported operand type(s) for %s: '%s' and '%s'", op, typeName(l), typeName(r))
}
