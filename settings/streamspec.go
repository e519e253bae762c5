package settings

import (
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/tap-dev/tap/streams"
)

// StreamSchema is the JSON Schema (draft-07) of one stream definition:
// the spec's "streams" items. It is the stream language (streams.OptionsOf)
// written as a schema: each option's type, title, description, whether it
// is required, its bounds, values and default, and the rules between
// options (streams.RuleSchemas) as its allOf; a field it does not know is
// refused, as the config is.
func StreamSchema() map[string]any {
	s := objectSchema(reflect.TypeFor[streams.Definition](), "")
	s["title"] = "Stream definition"
	s["allOf"] = streams.RuleSchemas()
	return s
}

// objectSchema is the schema of a struct whose fields are at prefix.
func objectSchema(t reflect.Type, prefix string) map[string]any {
	props := map[string]any{}
	var required []string
	for i, o := range streams.OptionsOf(t) {
		f := t.FieldByIndex(o.Index())
		p := optionSchema(o, fieldSchema(f.Type, prefix+o.Name))
		p["order"] = i
		props[o.Name] = p
		if o.Required {
			required = append(required, o.Name)
		}
	}
	s := map[string]any{"type": "object", "additionalProperties": false, "properties": props}
	if required != nil {
		s["required"] = required
	}
	return s
}

// optionSchema adds to s, the schema of o's Go type, what o's tags say.
func optionSchema(o streams.Option, s map[string]any) map[string]any {
	if o.Title != "" {
		s["title"] = o.Title
	}
	if o.Doc != "" {
		s["description"] = o.Doc
	}
	bounds := s
	if items, ok := s["items"].(map[string]any); ok && s["type"] == "array" {
		bounds = items // the bounds of each number of a list
	}
	if o.Min != nil {
		bounds["minimum"] = *o.Min
	}
	if o.Max != nil {
		bounds["maximum"] = *o.Max
	}
	if o.Required {
		switch o.Type {
		case "string":
			s["pattern"] = `\S`
		case "array":
			s["minItems"] = 1
		case "object":
			if s["additionalProperties"] != false {
				s["minProperties"] = 1
			}
		}
	}
	if o.Enum != nil {
		if o.Fold {
			s["pattern"] = foldPattern(o.Enum)
		} else {
			s["enum"] = o.Enum
		}
	}
	if o.Default != "" {
		var v any = o.Default
		if o.Type == "integer" || o.Type == "number" {
			v = json.Number(o.Default)
		}
		s["default"] = v
	}
	return s
}

// foldPattern matches any of values in any case: ^(?:[Gg][Ee][Tt]|…)$,
// which a JSON Schema's ECMA-262 pattern and Go's both read.
func foldPattern(values []string) string {
	alts := make([]string, len(values))
	for i, v := range values {
		var b strings.Builder
		for _, r := range v {
			if up, low := strings.ToUpper(string(r)), strings.ToLower(string(r)); up != low {
				b.WriteString("[" + up + low + "]")
			} else {
				b.WriteString(regexp.QuoteMeta(string(r)))
			}
		}
		alts[i] = b.String()
	}
	return "^(?:" + strings.Join(alts, "|") + ")$"
}

var (
	rawType        = reflect.TypeFor[json.RawMessage]()
	numberType     = reflect.TypeFor[json.Number]()
	paginationType = reflect.TypeFor[streams.Pagination]()
	unmarshaler    = reflect.TypeFor[json.Unmarshaler]()
)

// fieldSchema is the schema of a value of type t at the dotted path name.
func fieldSchema(t reflect.Type, name string) map[string]any {
	nullable := false
	for t.Kind() == reflect.Pointer {
		t, nullable = t.Elem(), true
	}
	var s map[string]any
	switch {
	case t == paginationType:
		s = paginationSchema()
	case t == rawType && strings.HasSuffix(name, "schema"):
		s = map[string]any{"type": []string{"string", "object"}}
	case t == rawType:
		s = map[string]any{} // any JSON value
	case t == numberType:
		s = map[string]any{"type": "number"}
	case reflect.PointerTo(t).Implements(unmarshaler):
		s = map[string]any{} // read by its own decoder, which checks it
	default:
		switch t.Kind() {
		case reflect.String:
			s = map[string]any{"type": "string"}
		case reflect.Bool:
			s = map[string]any{"type": "boolean"}
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			s = map[string]any{"type": "integer"}
		case reflect.Float32, reflect.Float64:
			s = map[string]any{"type": "number"}
		case reflect.Slice:
			s = map[string]any{"type": "array", "items": fieldSchema(t.Elem(), name+"[]")}
		case reflect.Map:
			s = map[string]any{"type": "object", "additionalProperties": true}
			if v := fieldSchema(t.Elem(), name+"{}"); len(v) > 0 {
				s["additionalProperties"] = v
			}
		case reflect.Struct:
			s = objectSchema(t, name+".")
		default:
			s = map[string]any{}
		}
	}
	if nullable {
		if typ, ok := s["type"].(string); ok {
			s["type"] = []string{typ, "null"}
		}
	}
	return s
}

// paginationSchema is a oneOf of one object per pagination type, told
// apart by its "type" const, each with its own options and the common
// ones.
func paginationSchema() map[string]any {
	var branches []any
	common := streams.CommonPageOptions()
	for _, pt := range streams.PageTypes() {
		props := map[string]any{"type": map[string]any{"type": "string", "const": pt.Name, "default": pt.Name, "title": "Type", "order": 0}}
		required := []string{"type"}
		for i, o := range append(slices.Clone(pt.Options), common...) {
			p := optionSchema(o, map[string]any{"type": o.Type})
			p["title"], p["order"] = o.Name, i+1
			if note := o.Note(); note != "" {
				p["description"] = note
			}
			if o.Required {
				required = append(required, o.Name)
			}
			props[o.Name] = p
		}
		branches = append(branches, map[string]any{
			"title": pt.Name, "description": "Next page: " + pt.Next + " End: " + pt.End,
			"type": "object", "additionalProperties": false, "required": required, "properties": props,
		})
	}
	return map[string]any{"type": "object", "oneOf": branches}
}
