package initconfig

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// A shape is an OpenAPI schema with its composition resolved: allOf
// merged (properties and required lists joined), oneOf/anyOf merged into
// one lenient shape (properties joined, none required, types united),
// nullable and 3.1 type arrays folded into types + nullable.
type shape struct {
	types    []string // JSON types, "null" excluded
	nullable bool
	format   string
	props    map[string]*schemaRef
	required []string
	items    *schemaRef
}

// flatten resolves s's composition. Each schema is merged once for each
// way it is reached (through allOf, its required list counted; through
// oneOf/anyOf, not): a document whose allOf forms diamonds — two parts
// that share one part, forty levels deep — costs its size, not 2^40
// walks, and one that includes itself ends.
func flatten(s *schema) *shape {
	f := &shape{props: map[string]*schemaRef{}}
	f.add(s, true, map[merged]bool{})
	if len(f.types) == 0 {
		switch {
		case len(f.props) > 0:
			f.types = []string{"object"}
		case f.items != nil:
			f.types = []string{"array"}
		}
	}
	return f
}

// merged is a schema merged into a shape, and whether its required list
// counted.
type merged struct {
	s            *schema
	withRequired bool
}

// add merges s into f. A schema merged once adds nothing the second time
// (the first property of a name wins, the first format, the first
// items), so seen skips it.
func (f *shape) add(s *schema, withRequired bool, seen map[merged]bool) {
	if s == nil || seen[merged{s, withRequired}] {
		return
	}
	seen[merged{s, withRequired}] = true
	for _, t := range s.Type {
		if t == "null" {
			f.nullable = true
		} else if !slices.Contains(f.types, t) {
			f.types = append(f.types, t)
		}
	}
	if s.Nullable {
		f.nullable = true
	}
	if f.format == "" {
		f.format = s.Format
	}
	for name, p := range s.Properties {
		if _, ok := f.props[name]; !ok && p != nil && p.Value != nil {
			f.props[name] = p
		}
	}
	if withRequired {
		f.required = append(f.required, s.Required...)
	}
	if f.items == nil && s.Items != nil && s.Items.Value != nil {
		f.items = s.Items
	}
	for _, sub := range s.AllOf {
		if sub != nil {
			f.add(sub.Value, withRequired, seen)
		}
	}
	// A record matches one of the variants: every property of any of
	// them may appear, none is sure to.
	for _, sub := range slices.Concat(s.OneOf, s.AnyOf) {
		if sub != nil {
			f.add(sub.Value, false, seen)
		}
	}
}

func (f *shape) is(t string) bool { return slices.Contains(f.types, t) }

// prop is the flattened shape of property name, nil when there is none.
func (f *shape) prop(name string) *shape {
	p := f.props[name]
	if p == nil {
		return nil
	}
	return flatten(p.Value)
}

// isRequired reports whether name is in f's required list.
func (f *shape) isRequired(name string) bool { return slices.Contains(f.required, name) }

// objectItems reports whether f is an array of objects, and its items.
func (f *shape) objectItems() (*shape, bool) {
	if !f.is("array") || f.items == nil {
		return nil, false
	}
	it := flatten(f.items.Value)
	return it, it.is("object")
}

// A schemaWriter writes the JSON Schemas of a document's streams. A
// schema the document names (a component, reached through a $ref) is
// written once, in the config's definitions, and referred to by
// {"$ref": "#/definitions/NAME"} wherever it is used: a document such as
// Stripe's expands objects inside objects many levels deep, and a copy
// per use made a config of 9 MB from a document of 3. The tap expands
// the refs of the streams a run needs (settings.MaxRefDepth bounds them).
type schemaWriter struct {
	names map[*schema]string // a written definition's name
	taken map[string]bool
	defs  map[string]any
}

func newSchemaWriter() *schemaWriter {
	return &schemaWriter{names: map[*schema]string{}, taken: map[string]bool{}, defs: map[string]any{}}
}

// write returns the JSON Schema of f: types (with "null" when nullable),
// the date-time and date formats (which the tap compares bookmarks by),
// properties and items. It keeps no required list, enum or bound: a
// record the API sends slightly off its documentation is still a record.
// stack holds the schemas written inline around f, which a schema that
// holds itself without a $ref would otherwise repeat forever.
func (w *schemaWriter) write(f *shape, stack map[*schema]bool) map[string]any {
	out := map[string]any{}
	if len(f.types) == 0 {
		return out
	}
	types := slices.Clone(f.types)
	if f.nullable {
		types = append(types, "null")
	}
	if len(types) == 1 {
		out["type"] = types[0]
	} else {
		out["type"] = types
	}
	if f.is("string") && (f.format == "date-time" || f.format == "date") {
		out["format"] = f.format
	}
	if f.is("object") && len(f.props) > 0 {
		props := map[string]any{}
		for _, name := range sortedKeys(f.props) {
			props[name] = w.child(f.props[name], stack)
		}
		out["properties"] = props
	}
	if f.is("array") && f.items != nil {
		out["items"] = w.child(f.items, stack)
	}
	return out
}

// child is the schema of a property or of an array's items. An object
// or array the document names is a $ref to its definition; so is one
// that merges named schemas (allOf, anyOf, oneOf), as a definition of
// its own, or, when it is one named object or a scalar (Stripe's
// expandable fields: an id, or the object), as a $ref to that object with
// the union of their types beside it. Each schema of the document is
// thus written once, whatever reaches it. A scalar, and an object that
// names nothing, are written inline.
func (w *schemaWriter) child(ref *schemaRef, stack map[*schema]bool) map[string]any {
	s := ref.Value
	f := flatten(s)
	if len(f.props) == 0 && f.items == nil {
		return w.write(f, stack)
	}
	if ref.Ref != "" {
		return map[string]any{"$ref": "#/definitions/" + w.definition(ref.Ref, s)}
	}
	if parts := namedParts(s, nil); len(parts) > 0 {
		var objects []*schemaRef
		for _, p := range parts {
			if pf := flatten(p.Value); len(pf.props) > 0 || pf.items != nil {
				objects = append(objects, p)
			}
		}
		if len(objects) == 1 && len(s.Properties) == 0 && len(s.AllOf) == 0 {
			o := objects[0]
			out := map[string]any{"$ref": "#/definitions/" + w.definition(o.Ref, o.Value)}
			if of := flatten(o.Value); !slices.Equal(f.types, of.types) || f.nullable != of.nullable {
				out["type"] = w.write(&shape{types: f.types, nullable: f.nullable}, stack)["type"]
			}
			return out
		}
		names := make([]string, 0, len(parts))
		for _, p := range parts {
			names = append(names, refName(p.Ref))
		}
		return map[string]any{"$ref": "#/definitions/" + w.definition(strings.Join(names, "_"), s)}
	}
	if stack[s] {
		return map[string]any{}
	}
	stack[s] = true
	defer delete(stack, s)
	return w.write(f, stack)
}

// namedParts are the schemas with a $ref that s merges: its allOf, anyOf
// and oneOf parts, and theirs when they are inline.
func namedParts(s *schema, seen map[*schema]bool) []*schemaRef {
	if seen == nil {
		seen = map[*schema]bool{}
	}
	if s == nil || seen[s] {
		return nil
	}
	seen[s] = true
	var out []*schemaRef
	for _, p := range slices.Concat(s.AllOf, s.AnyOf, s.OneOf) {
		switch {
		case p == nil || p.Value == nil:
		case p.Ref != "":
			out = append(out, p)
		default:
			out = append(out, namedParts(p.Value, seen)...)
		}
	}
	return out
}

// refName is the last segment of a $ref.
func refName(ref string) string { return ref[strings.LastIndexAny(ref, "/#")+1:] }

// definition is the name of s in the definitions, written on first use.
func (w *schemaWriter) definition(ref string, s *schema) string {
	if name, ok := w.names[s]; ok {
		return name
	}
	base := strings.Map(func(r rune) rune {
		if r == '~' || r == '%' || r < ' ' {
			return '_'
		}
		return r
	}, refName(ref))
	if base == "" {
		base = "schema"
	}
	name := base
	for i := 2; w.taken[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	w.taken[name] = true
	w.names[s] = name
	w.defs[name] = map[string]any{} // taken before it is written: it may hold itself
	w.defs[name] = w.write(flatten(s), map[*schema]bool{s: true})
	return name
}

// record is the JSON Schema of records of shape item.
func (w *schemaWriter) record(item *shape, root *schema) map[string]any {
	out := w.write(item, map[*schema]bool{root: true})
	if _, ok := out["properties"]; !ok {
		out["properties"] = map[string]any{}
	}
	out["type"] = "object"
	return out
}

// usedDefinitions are the definitions the written streams reach, through
// their schemas and the definitions those name.
func (g *generator) usedDefinitions() map[string]any {
	used := map[string]any{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				name := strings.TrimPrefix(ref, "#/definitions/")
				if _, done := used[name]; !done {
					used[name] = g.schemas.defs[name]
					walk(used[name])
				}
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	for _, d := range g.res.Config.Streams {
		var schema any
		if json.Unmarshal(d.Schema, &schema) == nil {
			walk(schema)
		}
	}
	if len(used) == 0 {
		return nil
	}
	return used
}
