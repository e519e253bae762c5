package decoder

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"

	"github.com/tap-dev/tap/codec"
)

// shape is what a stream's JSON Schema says of a value read as text (a
// CSV field, an XML element): the types it may take and, for objects and
// arrays, the shapes of their parts. A nil *shape is untyped: text stays
// text.
type shape struct {
	types []string // the non-null types, in the schema's order
	props map[string]*shape
	items *shape
}

// shapeOf reads the parts of a JSON Schema that type text: "type" (a
// string or a list), "properties" and "items".
func shapeOf(schema map[string]any) *shape {
	if schema == nil {
		return nil
	}
	s := &shape{}
	switch t := schema["type"].(type) {
	case string:
		if t != "null" {
			s.types = []string{t}
		}
	case []any:
		for _, e := range t {
			if name, ok := e.(string); ok && name != "null" {
				s.types = append(s.types, name)
			}
		}
	}
	if props, ok := schema["properties"].(map[string]any); ok {
		s.props = make(map[string]*shape, len(props))
		for k, v := range props {
			if m, ok := v.(map[string]any); ok {
				s.props[k] = shapeOf(m)
			}
		}
	}
	if items, ok := schema["items"].(map[string]any); ok {
		s.items = shapeOf(items)
	}
	return s
}

// property is the shape of property k of an object of shape s; the shape
// of one item when s is an array (an XML element repeated is an array of
// its items).
func (s *shape) property(k string) *shape {
	if s == nil {
		return nil
	}
	if s.props == nil && s.items != nil {
		return s.items.property(k)
	}
	return s.props[k]
}

func (s *shape) isArray() bool {
	return s != nil && len(s.types) > 0 && s.types[0] == "array"
}

// coerceText converts the text v as the schema types it: integer and
// number to an exact json.Number, boolean to true or false, empty text to
// null when the schema does not allow a string. Text that does not
// convert stays text: the stream's validator then reports it as a schema
// violation (dead-lettered, emitted or fatal as on_schema_violation says),
// never the decoder.
func (s *shape) coerceText(v string) any {
	if s == nil || len(s.types) == 0 {
		return v
	}
	if s.types[0] == "array" && s.items != nil {
		// One element where the schema wants a list.
		return []any{s.items.coerceText(v)}
	}
	for _, t := range s.types {
		switch t {
		case "string":
			return v
		case "integer":
			if n := strings.TrimPrefix(strings.TrimSpace(v), "+"); codec.IsInteger(n) {
				if i, ok := new(big.Int).SetString(n, 10); ok {
					return json.Number(i.String()) // "007" is no JSON number; 7 is
				}
			}
		case "number":
			if n := strings.TrimSpace(v); codec.IsNumber(n) {
				return json.Number(n)
			}
		case "boolean":
			if b, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil {
				return b
			}
		}
	}
	if strings.TrimSpace(v) == "" {
		return nil
	}
	return v
}

// appendText appends the JSON text of coerceText(v), as codec.Append
// writes it, without the tree: an integer's text is its big.Int's
// (no leading zeros, no sign for zero), as coerceText's json.Number is.
func (s *shape) appendText(b []byte, v string) []byte {
	if s == nil || len(s.types) == 0 {
		return codec.AppendString(b, v)
	}
	if s.types[0] == "array" && s.items != nil {
		return append(s.items.appendText(append(b, '['), v), ']')
	}
	for _, t := range s.types {
		switch t {
		case "string":
			return codec.AppendString(b, v)
		case "integer":
			if n := strings.TrimPrefix(strings.TrimSpace(v), "+"); codec.IsInteger(n) {
				return appendInteger(b, n)
			}
		case "number":
			if n := strings.TrimSpace(v); codec.IsNumber(n) {
				return append(b, n...)
			}
		case "boolean":
			if v, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil {
				return strconv.AppendBool(b, v)
			}
		}
	}
	if strings.TrimSpace(v) == "" {
		return append(b, "null"...)
	}
	return codec.AppendString(b, v)
}

// appendInteger appends n, an optional '-' and digits (codec.IsInteger),
// as big.Int's String writes it.
func appendInteger(b []byte, n string) []byte {
	neg := n[0] == '-'
	digits := strings.TrimLeft(strings.TrimPrefix(n, "-"), "0")
	if digits == "" {
		return append(b, '0')
	}
	if neg {
		b = append(b, '-')
	}
	return append(b, digits...)
}
