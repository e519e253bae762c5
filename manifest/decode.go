package manifest

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// decoder turns the resolved manifest tree into the typed model, through
// the registry, and gathers every refusal and problem on the way so that
// the error names them all at once.
type decoder struct {
	refusals []Refusal
	problems []Problem
}

var (
	componentType = reflect.TypeFor[Component]()
	exprType      = reflect.TypeFor[Expr]()
	condType      = reflect.TypeFor[Cond]()
	valueType     = reflect.TypeFor[Value]()
)

func (d *decoder) problem(path, format string, args ...any) {
	d.problems = append(d.problems, Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
}

// component decodes the component at path into a value of type want (an
// interface of a role, or a pointer to a registered struct). It returns
// the zero value when the component is refused or bad.
func (d *decoder) component(val any, path string, want reflect.Type) reflect.Value {
	obj, ok := val.(map[string]any)
	if !ok {
		d.problem(path, "expected a component (an object with a type), got %s", kindOf(val))
		return reflect.Value{}
	}
	typ, _ := obj["type"].(string)
	_, hasClass := obj["class_name"]
	switch {
	case IsPython(typ, hasClass):
		class, _ := obj["class_name"].(string)
		d.refusals = append(d.refusals, Refusal{Path: path, Type: typ, Class: class, Python: true})
		return reflect.Value{}
	case typ == "":
		d.problem(path, "a component without a type, and none inferred from its place")
		return reflect.Value{}
	}
	k, ok := byType[typ]
	if !ok {
		d.refusals = append(d.refusals, Refusal{Path: path, Type: typ})
		return reflect.Value{}
	}
	c := k.new()
	v := reflect.ValueOf(c)
	if !v.Type().AssignableTo(want) {
		d.problem(path, "%s is %s, not %s", typ, article(k.Role), roleName(want))
		return reflect.Value{}
	}
	n := c.node()
	n.Type, n.Path = typ, path
	if p, ok := obj["$parameters"].(map[string]any); ok {
		n.Parameters = p
	}
	d.fields(v.Elem(), obj, path)
	if ch, ok := c.(checker); ok {
		for _, p := range ch.check() {
			if p.notImplemented {
				d.refusals = append(d.refusals, Refusal{Path: join(path, p.Path), Type: p.Msg})
				continue
			}
			d.problem(join(path, p.Path), "%s", p.Msg)
		}
	}
	return v
}

// checker is a component with rules its fields' types do not say (an
// enum, one of two fields): its problems' paths are its fields.
type checker interface{ check() []Problem }

// roleName names what a field of type t accepts, for an error.
func roleName(t reflect.Type) string {
	if k, ok := byStruct[t]; ok {
		return article(k.Type)
	}
	name := t.Name()
	var b strings.Builder
	for i, r := range name {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return article(strings.ToLower(b.String()))
}

// article puts "a" or "an" before a name.
func article(name string) string {
	if name != "" && strings.ContainsRune("aeiouAEIOU", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}

// fields fills the tagged fields of the struct sv from obj. A field the
// model does not read is left alone (the CDK too ignores a field its
// schema does not have), unless it holds a component the tap does not
// implement: that may be one the CDK runs (a state migration, a decoder),
// so it is refused.
func (d *decoder) fields(sv reflect.Value, obj map[string]any, path string) {
	read := map[string]bool{"type": true, "$parameters": true}
	t := sv.Type()
	for i := range t.NumField() {
		name, opt, ok := fieldTag(t.Field(i))
		if !ok {
			continue
		}
		read[name] = true
		val, present := obj[name]
		if _, isObj := val.(map[string]any); isObj && opt == "scalar" {
			// A value where the CDK also takes a component (a custom
			// one): refused as a component the tap does not read.
			d.unread(val, join(path, name))
			continue
		}
		required := opt == "required"
		if !present || val == nil {
			if required {
				d.problem(join(path, name), "missing, required by %s", typeName(obj, t))
			}
			continue
		}
		d.value(sv.Field(i), val, join(path, name))
	}
	params, _ := obj["$parameters"].(map[string]any)
	for _, key := range sortedKeys(obj) {
		if read[key] {
			continue
		}
		if _, fromParams := params[key]; fromParams {
			continue // a parameter passed down lands in every field of its name
		}
		d.unread(obj[key], join(path, key))
	}
}

func typeName(obj map[string]any, t reflect.Type) string {
	if s, ok := obj["type"].(string); ok {
		return s
	}
	return t.Name()
}

// unread refuses the components found in a field the model does not read.
func (d *decoder) unread(val any, path string) {
	switch x := val.(type) {
	case map[string]any:
		typ, _ := x["type"].(string)
		_, hasClass := x["class_name"]
		switch {
		case Implemented(typ):
			return // the CDK does not build it either
		case hasClass || isComponentName(typ):
			class, _ := x["class_name"].(string)
			d.refusals = append(d.refusals, Refusal{Path: path, Type: typ, Class: class, Python: IsPython(typ, hasClass)})
			return
		}
		for _, k := range sortedKeys(x) {
			d.unread(x[k], join(path, k))
		}
	case []any:
		for i, e := range x {
			d.unread(e, fmt.Sprintf("%s[%d]", path, i))
		}
	}
}

// isComponentName tells a component's type from a JSON Schema's ("object",
// "string", …): component types are capitalized.
func isComponentName(typ string) bool {
	return typ != "" && typ[0] >= 'A' && typ[0] <= 'Z'
}

// value decodes val into dst, whose type says what the field holds.
func (d *decoder) value(dst reflect.Value, val any, path string) {
	t := dst.Type()
	switch {
	case t == exprType:
		s, ok := scalarText(val)
		if !ok {
			d.problem(path, "expected a string, got %s", kindOf(val))
			return
		}
		e, err := compileExpr(s)
		if err != nil {
			d.problem(path, "%v", err)
			return
		}
		dst.Set(reflect.ValueOf(e))
	case t == condType:
		s, ok := scalarText(val)
		if !ok {
			d.problem(path, "expected a condition (a string), got %s", kindOf(val))
			return
		}
		c, err := compileCond(s)
		if err != nil {
			d.problem(path, "%v", err)
			return
		}
		dst.Set(reflect.ValueOf(c))
	case t == valueType:
		v, ok := d.tree(val, path)
		if ok {
			dst.Set(reflect.ValueOf(Value{V: v}))
		}
	case t.Kind() == reflect.Interface && t.NumMethod() == 0:
		if val != nil {
			dst.Set(reflect.ValueOf(val))
		}
	case t.Kind() == reflect.Interface && t.Implements(componentType), t.Kind() == reflect.Pointer && byStruct[t].Type != "":
		if s, ok := val.(string); ok && t == reflect.TypeFor[*MinMaxDatetime]() {
			val = map[string]any{"type": "MinMaxDatetime", "datetime": s} // a bare datetime
		}
		if c := d.component(val, path, t); c.IsValid() {
			dst.Set(c)
		}
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct:
		obj, ok := val.(map[string]any)
		if !ok {
			d.problem(path, "expected an object, got %s", kindOf(val))
			return
		}
		p := reflect.New(t.Elem())
		d.fields(p.Elem(), obj, path)
		dst.Set(p)
	case t.Kind() == reflect.Slice:
		list, ok := val.([]any)
		if !ok {
			// One where a list may stand: a schema loader, a partition
			// router, a key field.
			list = []any{val}
			d.slice(dst, list, path, false)
			return
		}
		d.slice(dst, list, path, true)
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		obj, ok := val.(map[string]any)
		if !ok {
			d.problem(path, "expected an object, got %s", kindOf(val))
			return
		}
		m := reflect.MakeMapWithSize(t, len(obj))
		for _, k := range sortedKeys(obj) {
			ev := reflect.New(t.Elem()).Elem()
			d.value(ev, obj[k], join(path, k))
			if ev.IsValid() && !ev.IsZero() || t.Elem().Kind() == reflect.Interface && t.Elem().NumMethod() == 0 {
				m.SetMapIndex(reflect.ValueOf(k), ev)
			}
		}
		dst.Set(m)
	case t.Kind() == reflect.String:
		s, ok := scalarText(val)
		if !ok {
			d.problem(path, "expected a string, got %s", kindOf(val))
			return
		}
		dst.SetString(s)
	case t.Kind() == reflect.Bool:
		switch x := val.(type) {
		case bool:
			dst.SetBool(x)
		case string:
			b, err := strconv.ParseBool(x)
			if err != nil {
				d.problem(path, "expected true or false, got %q", x)
				return
			}
			dst.SetBool(b)
		default:
			d.problem(path, "expected true or false, got %s", kindOf(val))
		}
	case t.Kind() == reflect.Int:
		n, ok := intOf(val)
		if !ok {
			d.problem(path, "expected an integer, got %s", kindOf(val))
			return
		}
		dst.SetInt(int64(n))
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Int:
		// An integer whose absence differs from 0 (a default of 1).
		p := reflect.New(t.Elem())
		d.value(p.Elem(), val, path)
		dst.Set(p)
	default:
		panic(fmt.Sprintf("manifest: no decoding for field type %s", t))
	}
}

// slice decodes the items of list into the slice dst; indexed says
// whether the manifest wrote a list (paths then name the item).
func (d *decoder) slice(dst reflect.Value, list []any, path string, indexed bool) {
	t := dst.Type()
	s := reflect.MakeSlice(t, 0, len(list))
	for i, item := range list {
		ev := reflect.New(t.Elem()).Elem()
		p := path
		if indexed {
			p = fmt.Sprintf("%s[%d]", path, i)
		}
		if t.Elem().Kind() == reflect.Slice && t.Elem().Elem().Kind() == reflect.String {
			// A path of a key: a field name alone is a path of one.
			if _, ok := item.([]any); !ok {
				item = []any{item}
			}
		}
		d.value(ev, item, p)
		s = reflect.Append(s, ev)
	}
	dst.Set(s)
}

// tree copies a Value's tree, each string compiled as an expression.
func (d *decoder) tree(val any, path string) (any, bool) {
	switch x := val.(type) {
	case string:
		e, err := compileExpr(x)
		if err != nil {
			d.problem(path, "%v", err)
			return nil, false
		}
		return e, true
	case map[string]any:
		out := make(map[string]any, len(x))
		ok := true
		for _, k := range sortedKeys(x) {
			v, good := d.tree(x[k], join(path, k))
			out[k], ok = v, ok && good
		}
		return out, ok
	case []any:
		out := make([]any, len(x))
		ok := true
		for i, e := range x {
			v, good := d.tree(e, fmt.Sprintf("%s[%d]", path, i))
			out[i], ok = v, ok && good
		}
		return out, ok
	}
	return val, true
}

func intOf(val any) (int, bool) {
	switch x := val.(type) {
	case int:
		return x, true
	case int64:
		return int(x), true
	case uint64:
		if x <= math.MaxInt {
			return int(x), true
		}
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int(x), true
		}
	case string:
		n, err := strconv.Atoi(x)
		return n, err == nil
	}
	return 0, false
}

// join appends a field to a path of the manifest.
func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
