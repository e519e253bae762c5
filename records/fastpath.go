package records

import (
	"encoding/json"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// fastPath is a fast path in front of the JSON Schema library for the
// shape most record schemas have: type, properties, required, items,
// additionalProperties and format. It answers only "certainly valid" or
// "not sure" — never "invalid" — and every record it is not sure about
// goes to the library, which stays the authority on what is valid and
// writes the error messages. A schema using any other keyword gets no fast
// path at all.
type fastPath struct {
	types    []string // empty: any type
	props    map[string]*fastPath
	required []string
	items    *fastPath
	format   func(any) bool // the library's own format check
	noExtra  bool           // additionalProperties: false
}

// annotations never affect validity.
var annotations = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true, "$comment": true,
	"$schema": true, "readOnly": true, "writeOnly": true, "deprecated": true,
}

// buildFastPath compiles the fast path of a decoded schema; ok is false when
// the schema uses a keyword the fast path does not know.
func buildFastPath(v any) (q *fastPath, ok bool) {
	m, isObj := v.(map[string]any)
	if !isObj {
		return nil, false
	}
	q = &fastPath{}
	for k, val := range m {
		switch {
		case annotations[k]:
		case k == "type":
			switch t := val.(type) {
			case string:
				q.types = []string{t}
			case []any:
				for _, e := range t {
					s, isStr := e.(string)
					if !isStr {
						return nil, false
					}
					q.types = append(q.types, s)
				}
			default:
				return nil, false
			}
		case k == "properties":
			props, isObj := val.(map[string]any)
			if !isObj {
				return nil, false
			}
			q.props = make(map[string]*fastPath, len(props))
			for name, p := range props {
				sub, ok := buildFastPath(p)
				if !ok {
					return nil, false
				}
				q.props[name] = sub
			}
		case k == "required":
			list, isArr := val.([]any)
			if !isArr {
				return nil, false
			}
			for _, e := range list {
				s, isStr := e.(string)
				if !isStr {
					return nil, false
				}
				q.required = append(q.required, s)
			}
		case k == "items":
			sub, ok := buildFastPath(val)
			if !ok {
				return nil, false
			}
			q.items = sub
		case k == "additionalProperties":
			b, isBool := val.(bool)
			if !isBool {
				return nil, false
			}
			q.noExtra = !b
		case k == "format":
			name, isStr := val.(string)
			if !isStr {
				return nil, false
			}
			q.format = jsonschema.Formats[name] // unknown formats assert nothing, as in the library
		default:
			return nil, false
		}
	}
	return q, true
}

// valid reports whether v certainly satisfies the schema.
func (q *fastPath) valid(v any) bool {
	if len(q.types) > 0 && !q.typeOK(v) {
		return false
	}
	if q.format != nil && !q.format(v) {
		return false
	}
	switch v := v.(type) {
	case map[string]any:
		for _, r := range q.required {
			if _, ok := v[r]; !ok {
				return false
			}
		}
		if q.props == nil && !q.noExtra {
			return true
		}
		for k, val := range v {
			p, known := q.props[k]
			if !known {
				if q.noExtra {
					return false
				}
				continue
			}
			if !p.valid(val) {
				return false
			}
		}
	case []any:
		if q.items != nil {
			for _, e := range v {
				if !q.items.valid(e) {
					return false
				}
			}
		}
	}
	return true
}

func (q *fastPath) typeOK(v any) bool {
	for _, t := range q.types {
		switch v := v.(type) {
		case nil:
			if t == "null" {
				return true
			}
		case bool:
			if t == "boolean" {
				return true
			}
		case string:
			if t == "string" {
				return true
			}
		case json.Number:
			// An integer needs no fraction or exponent; "1.0" is an integer
			// too, but that is the library's call.
			if t == "number" || (t == "integer" && !strings.ContainsAny(string(v), ".eE")) {
				return true
			}
		case []any:
			if t == "array" {
				return true
			}
		case map[string]any:
			if t == "object" {
				return true
			}
		}
	}
	return false
}
