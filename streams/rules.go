package streams

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
)

// rules are the stream language's rules between options: each row is
// checked by Check (checkRules) and stated in the spec's JSON Schema
// (RuleSchemas), so the two cannot disagree. What only code can check
// (a time layout, a path placeholder's name, a body's JSON) stays in
// Check, and docs/reference/streams.md lists it.
var rules = []rule{
	{field: "path", msg: `is required (e.g. "/v1/orders")`,
		need: anyOf(set("path"), set("feed"), set("async.create.path"))},
	{field: "async", msg: "a feed stream is not a report job: give feed or async, not both",
		when: []cond{set("feed")}, need: not(set("async"))},
	{field: "parent", msg: "a feed stream cannot be a child stream",
		when: []cond{set("feed")}, need: not(set("parent"))},
	{field: "graphql", msg: "a feed stream does not page a GraphQL connection",
		when: []cond{set("feed")}, need: not(set("graphql"))},
	{field: "pagination.type", msg: "a feed stream reads messages, not pages; remove pagination",
		when: []cond{set("feed")}, need: anyOf(not(set("pagination.type")), is("pagination.type", defaultPageType()))},
	{field: "replication_key", msg: "a feed stream keeps its place by seq (bookmarks.<stream>.seq); remove replication_key and incremental",
		when: []cond{set("feed")}, need: not(anyOf(set("replication_key"), set("incremental")))},
	{field: "format", msg: "a feed stream reads JSON messages",
		when: []cond{set("feed")}, need: anyOf(not(set("format")), is("format", FormatJSON))},
	{field: "path", msg: "has a {placeholder}: it needs a parent stream to fill it",
		when: []cond{matches("path", `\{`)}, need: set("parent")},
	{field: "parent.stream", msg: "is required (or parent.values, the values the stream is walked for)",
		when: []cond{set("parent")}, need: anyOf(set("parent.stream"), given("parent.values"))},
	{field: "parent.values", msg: "takes the place of a parent stream: give parent.stream or parent.values, not both",
		when: []cond{given("parent.values")}, need: not(set("parent.stream"))},
	{field: "incremental", msg: "needs a replication_key on the stream",
		when: []cond{set("incremental")}, need: set("replication_key")},
	{field: "incremental.end_param", msg: "is required when chunk_days > 0",
		when: []cond{positive("incremental.chunk_days")}, need: set("incremental.end_param")},
	{field: "incremental.param", msg: "is required with end_param or chunk_days: a window's start is sent in it",
		when: []cond{set("incremental"), not(set("incremental.param"))}, need: not(anyOf(set("incremental.end_param"), positive("incremental.chunk_days")))},
	{field: "deletes.incremental.param", msg: `is required (e.g. "updated_since"): the deletion events asked for since the last run`,
		when: []cond{set("deletes.incremental")}, need: set("deletes.incremental.param")},
	{field: "feed.path", msg: `is required (or feed.url), e.g. "/v1/stream"`,
		when: []cond{set("feed")}, need: anyOf(set("feed.path"), set("feed.url"))},
	{field: "feed.url", msg: "give feed.path or feed.url, not both",
		when: []cond{set("feed")}, need: atMostOne(set("feed.path"), set("feed.url"))},
	{field: "deletes", msg: "needs a primary_key of exactly one property (the key deletion records carry)",
		when: []cond{set("deletes")}, need: one("primary_key")},
	{field: "deletes", msg: "is for top-level streams; a child stream has no listing of its own",
		when: []cond{set("deletes")}, need: not(set("parent"))},
	{field: "reconcile", msg: "needs a primary_key of exactly one property (the key it lists)",
		when: []cond{set("reconcile")}, need: one("primary_key")},
	{field: "reconcile", msg: "is for top-level streams; a child stream has no listing of its own",
		when: []cond{set("reconcile")}, need: not(set("parent"))},
	{field: "deletes.time_path", msg: "is required with deletes.incremental: the event's time, its bookmark",
		when: []cond{set("deletes.incremental")}, need: set("deletes.time_path")},
	{field: "records_path", msg: `is required for format "xml": it starts at the root element, e.g. "items.item" for <items><item>…</item></items>`,
		when: []cond{is("format", FormatXML), not(set("async"))}, need: set("records_path")},
	{field: "csv", msg: `is only for format "csv"`,
		when: []cond{set("csv"), not(set("async"))}, need: is("format", FormatCSV)},
}

// allRules are rules, then each pagination type's (a unit's rules apply
// when the pagination is of its type).
func allRules() []rule {
	out := slices.Clone(rules)
	for _, pt := range pageTypes {
		r, ok := pt.options().(ruler)
		if !ok {
			continue
		}
		for _, row := range r.rules() {
			row.when = append([]cond{is("pagination.type", pt.name)}, row.when...)
			out = append(out, row)
		}
	}
	return out
}

// ruler: a pagination type with rules between its options (and the
// definition's) besides its options' tags.
type ruler interface{ rules() []rule }

// A rule says: when every cond of when holds, need holds; if not, the
// definition is refused at field with msg.
type rule struct {
	field, msg string
	when       []cond
	need       cond
}

// A cond is a condition on a definition, both as Go (holds) and as JSON
// Schema (schema: the definition's object satisfies it).
type cond struct {
	holds  func(d *Definition) bool
	schema map[string]any
	text   string // what the docs say of it
}

// checkRules reports the first rule d breaks.
func checkRules(d *Definition) error {
	for _, r := range allRules() {
		if r.applies(d) && !r.need.holds(d) {
			return &FieldError{Stream: d.Name, Field: r.field, Msg: r.msg}
		}
	}
	return nil
}

func (r rule) applies(d *Definition) bool {
	for _, c := range r.when {
		if !c.holds(d) {
			return false
		}
	}
	return true
}

// RuleSchemas are the rules as JSON Schema, each to be all of the
// definition's schema: {"if": when, "then": need}.
func RuleSchemas() []any {
	all := allRules()
	out := make([]any, len(all))
	for i, r := range all {
		s := map[string]any{"description": r.field + " " + r.msg}
		if len(r.when) == 0 {
			maps.Copy(s, r.need.schema)
		} else {
			when := make([]any, len(r.when))
			for j, c := range r.when {
				when[j] = c.schema
			}
			s["if"] = map[string]any{"allOf": when}
			s["then"] = r.need.schema
		}
		out[i] = s
	}
	return out
}

// at nests leaf under the dotted path: {"required": [a], "properties":
// {a: {"required": [b], "properties": {b: leaf}}}}.
func at(path string, leaf map[string]any) map[string]any {
	names := strings.Split(path, ".")
	s := leaf
	for i := len(names) - 1; i >= 0; i-- {
		s = map[string]any{"required": []any{names[i]}, "properties": map[string]any{names[i]: s}}
	}
	return s
}

// set: the option at path is set (see unset).
func set(path string) cond {
	return cond{
		holds:  func(d *Definition) bool { v, ok := lookup(d, path); return ok && !unset(v) },
		schema: at(path, setSchema),
		text:   "`" + path + "` is set",
	}
}

// given: the list at path is given, empty or not (parent.values: [] walks
// nothing, as a parent stream with no records does).
func given(path string) cond {
	return cond{
		holds: func(d *Definition) bool {
			v, ok := lookup(d, path)
			return ok && v.Kind() == reflect.Slice && !v.IsNil()
		},
		schema: at(path, map[string]any{"type": "array"}),
		text:   "`" + path + "` is given",
	}
}

// setSchema is a value unset does not call unset: a string with a
// non-space, a block (even empty), a list with an item, a number not 0,
// true.
var setSchema = map[string]any{"anyOf": []any{
	map[string]any{"type": "string", "pattern": `\S`},
	map[string]any{"type": "object"},
	map[string]any{"type": "array", "minItems": 1},
	map[string]any{"type": "number", "not": map[string]any{"const": 0}},
	map[string]any{"const": true},
}}

// is: the string at path is value.
func is(path, value string) cond {
	return cond{
		holds:  func(d *Definition) bool { v, ok := lookup(d, path); return ok && v.String() == value },
		schema: at(path, map[string]any{"const": value}),
		text:   "`" + path + "` is " + value,
	}
}

// positive: the number at path is above 0.
func positive(path string) cond {
	return cond{
		holds:  func(d *Definition) bool { v, ok := lookup(d, path); return ok && v.CanInt() && v.Int() > 0 },
		schema: at(path, map[string]any{"exclusiveMinimum": 0}),
		text:   "`" + path + "` > 0",
	}
}

// matches: the string at path matches the regular expression re.
func matches(path, re string) cond {
	rx := regexp.MustCompile(re)
	return cond{
		holds:  func(d *Definition) bool { v, ok := lookup(d, path); return ok && rx.MatchString(v.String()) },
		schema: at(path, map[string]any{"type": "string", "pattern": re}),
		text:   "`" + path + "` matches `" + re + "`",
	}
}

// one: the list at path holds exactly one item.
func one(path string) cond {
	return cond{
		holds:  func(d *Definition) bool { v, ok := lookup(d, path); return ok && v.Len() == 1 },
		schema: at(path, map[string]any{"type": "array", "minItems": 1, "maxItems": 1}),
		text:   "`" + path + "` holds one item",
	}
}

func not(c cond) cond {
	return cond{
		holds:  func(d *Definition) bool { return !c.holds(d) },
		schema: map[string]any{"not": c.schema},
		text:   "not (" + c.text + ")",
	}
}

func anyOf(cs ...cond) cond {
	s := make([]any, len(cs))
	for i, c := range cs {
		s[i] = c.schema
	}
	return cond{
		holds: func(d *Definition) bool {
			for _, c := range cs {
				if c.holds(d) {
					return true
				}
			}
			return false
		},
		schema: map[string]any{"anyOf": s},
		text:   joinText(cs, " or "),
	}
}

// atMostOne: no two of cs hold.
func atMostOne(cs ...cond) cond {
	var pairs []any
	for i := range cs {
		for j := i + 1; j < len(cs); j++ {
			pairs = append(pairs, map[string]any{"allOf": []any{cs[i].schema, cs[j].schema}})
		}
	}
	return cond{
		holds: func(d *Definition) bool {
			n := 0
			for _, c := range cs {
				if c.holds(d) {
					n++
				}
			}
			return n <= 1
		},
		schema: map[string]any{"not": map[string]any{"anyOf": pairs}},
		text:   "at most one of " + joinText(cs, ", "),
	}
}

func joinText(cs []cond, sep string) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.text
	}
	return strings.Join(parts, sep)
}

// lookup finds the option at the dotted path of JSON names in d: false
// when a block on the way is not given. A pagination's options are its
// type's and the common ones.
func lookup(d *Definition, path string) (reflect.Value, bool) {
	v := reflect.ValueOf(d).Elem()
	for _, name := range strings.Split(path, ".") {
		for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		if v.Type() == paginationType {
			p := v.Addr().Interface().(*Pagination)
			if name == "type" {
				return reflect.ValueOf(p.Type), true
			}
			if opts := p.OptionSet(); opts != nil {
				if f, ok := field(reflect.ValueOf(opts).Elem(), name); ok {
					v = f
					continue
				}
			}
			v = reflect.ValueOf(&p.PageCommon).Elem()
		}
		f, ok := field(v, name)
		if !ok {
			panic(fmt.Sprintf("streams: rule path %q: no option %q", path, name)) // TestRules reads every path
		}
		v = f
	}
	return v, true
}

// field is the option called name of struct v.
func field(v reflect.Value, name string) (reflect.Value, bool) {
	if v.Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	for _, o := range OptionsOf(v.Type()) {
		if o.Name == name {
			return v.FieldByIndex(o.field), true
		}
	}
	return reflect.Value{}, false
}
