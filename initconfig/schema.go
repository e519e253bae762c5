package initconfig

import (
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
)

// A shape is an OpenAPI schema with its composition resolved: allOf
// merged (properties and required lists joined), oneOf/anyOf merged into
// one lenient shape (properties joined, none required, types united),
// nullable and 3.1 type arrays folded into types + nullable.
type shape struct {
	types    []string // JSON types, "null" excluded
	nullable bool
	format   string
	props    map[string]*openapi3.SchemaRef
	required []string
	items    *openapi3.SchemaRef
}

// flatten resolves s's composition. Each schema is merged once for each
// way it is reached (through allOf, its required list counted; through
// oneOf/anyOf, not): a document whose allOf forms diamonds — two parts
// that share one part, forty levels deep — costs its size, not 2^40
// walks, and one that includes itself ends.
func flatten(s *openapi3.Schema) *shape {
	f := &shape{props: map[string]*openapi3.SchemaRef{}}
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
	s            *openapi3.Schema
	withRequired bool
}

// add merges s into f. A schema merged once adds nothing the second time
// (the first property of a name wins, the first format, the first
// items), so seen skips it.
func (f *shape) add(s *openapi3.Schema, withRequired bool, seen map[merged]bool) {
	if s == nil || seen[merged{s, withRequired}] {
		return
	}
	seen[merged{s, withRequired}] = true
	for _, t := range s.Type.Slice() {
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

// Limits of a written schema: below maxDepth, or past maxNodes schemas
// written for one stream, a value is left untyped ({}), which any record
// passes. Specs such as Stripe's expand objects inside objects many levels
// deep; written whole, one stream's schema would be megabytes.
const (
	maxDepth = 4
	maxNodes = 2000
)

// schemaWriter writes the JSON Schema of one stream's records.
type schemaWriter struct {
	nodes int
	cut   bool // a part was left untyped by the limits
}

// write returns the JSON Schema of f: types (with "null" when nullable),
// the date-time and date formats (which the tap compares bookmarks by),
// properties and items. It keeps no required list, enum or bound: a
// record the API sends slightly off its documentation is still a record.
func (w *schemaWriter) write(f *shape, depth int, stack map[*openapi3.Schema]bool) map[string]any {
	out := map[string]any{}
	w.nodes++
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
			props[name] = w.child(f.props[name], depth, stack)
		}
		out["properties"] = props
	}
	if f.is("array") && f.items != nil {
		out["items"] = w.child(f.items, depth, stack)
	}
	return out
}

func (w *schemaWriter) child(ref *openapi3.SchemaRef, depth int, stack map[*openapi3.Schema]bool) map[string]any {
	s := ref.Value
	if depth+1 >= maxDepth || w.nodes >= maxNodes || stack[s] {
		if !stack[s] {
			w.cut = true
		}
		return map[string]any{} // a recursive schema (a comment's replies) or too deep
	}
	stack[s] = true
	defer delete(stack, s)
	return w.write(flatten(s), depth+1, stack)
}

// recordSchema is the JSON Schema of records of shape item.
func recordSchema(item *shape, root *openapi3.Schema) (map[string]any, bool) {
	w := &schemaWriter{}
	out := w.write(item, 0, map[*openapi3.Schema]bool{root: true})
	if _, ok := out["properties"]; !ok {
		out["properties"] = map[string]any{}
	}
	out["type"] = "object"
	return out, w.cut
}
