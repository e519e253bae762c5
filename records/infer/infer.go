// Package infer writes the JSON Schema of sample records: every type seen
// at each place, which properties every object had, and the date-time
// format where every string was one.
package infer

import (
	"encoding/json"
	"math"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Kinds of non-null JSON values, in the order their names are printed
// (after "null").
const (
	kindArray = 1 << iota
	kindBoolean
	kindInteger
	kindNumber
	kindObject
	kindString
	kindAny // a Go value with no JSON type (never from a decoded body)
)

var kindNames = []struct {
	kind int
	name string
}{
	{kindArray, "array"}, {kindBoolean, "boolean"}, {kindInteger, "integer"},
	{kindNumber, "number"}, {kindObject, "object"}, {kindString, "string"},
}

// Shape accumulates what was seen at one place of the records: a
// property, an array's elements, or the record itself.
type Shape struct {
	kinds       int
	null        bool // a null was seen here
	nonNull     int  // non-null values seen here
	notDateTime bool // a string that is not an RFC 3339 date-time was seen
	objects     int  // objects seen here (nonNull counts them too)
	props       map[string]*Shape
	items       *Shape // the elements of every array seen here
}

func (s *Shape) Add(v any) {
	switch v := v.(type) {
	case nil:
		s.null = true
		return
	case bool:
		s.kinds |= kindBoolean
	case json.Number:
		if strings.ContainsAny(string(v), ".eE") {
			s.kinds |= kindNumber
		} else {
			s.kinds |= kindInteger
		}
	case float64:
		if v == math.Trunc(v) && !math.IsInf(v, 0) {
			s.kinds |= kindInteger
		} else {
			s.kinds |= kindNumber
		}
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		s.kinds |= kindInteger
	case string:
		s.kinds |= kindString
		if !s.notDateTime && !isDateTime(v) {
			s.notDateTime = true
		}
	case map[string]any:
		s.kinds |= kindObject
		s.objects++
		if s.props == nil {
			s.props = map[string]*Shape{}
		}
		for k, e := range v {
			p := s.props[k]
			if p == nil {
				p = &Shape{}
				s.props[k] = p
			}
			p.Add(e)
		}
	case []any:
		s.kinds |= kindArray
		if s.items == nil {
			s.items = &Shape{}
		}
		for _, e := range v {
			s.items.Add(e)
		}
	default:
		s.kinds |= kindAny
	}
	s.nonNull++
}

// isDateTime accepts what both Go and the validator read as an RFC 3339
// date-time, so that format "date-time" never rejects a value inferred as
// one.
func isDateTime(s string) bool {
	if _, err := time.Parse(time.RFC3339, s); err != nil {
		return false
	}
	f := jsonschema.Formats["date-time"]
	return f == nil || f(s)
}

// Schema is a JSON Schema as printed: keys in this order, "properties"
// sorted by name.
type Schema struct {
	Type       any                 `json:"type,omitempty"`
	Format     string              `json:"format,omitempty"`
	Properties *map[string]*Schema `json:"properties,omitempty"`
	Required   []string            `json:"required,omitempty"`
	Items      *Schema             `json:"items,omitempty"`
}

// Schema is the schema of the records: an object, even with none.
func (s *Shape) Schema() *Schema {
	out := s.schema(false)
	out.Type = "object"
	if out.Properties == nil {
		out.Properties = &map[string]*Schema{}
	}
	return out
}

// schema renders what was seen; nullable adds "null" to the type (the
// value was missing from some objects).
func (s *Shape) schema(nullable bool) *Schema {
	out := &Schema{}
	if s.kinds&kindAny != 0 {
		return out // no type constraint
	}
	kinds := s.kinds
	if kinds&kindNumber != 0 {
		kinds &^= kindInteger
	}
	var types []string
	if nullable || s.null {
		types = append(types, "null")
	}
	for _, k := range kindNames {
		if kinds&k.kind != 0 {
			types = append(types, k.name)
		}
	}
	switch len(types) {
	case 0:
		return out // never seen (an empty array's items are not printed)
	case 1:
		out.Type = types[0]
	default:
		out.Type = types
	}
	if kinds&kindString != 0 && !s.notDateTime {
		out.Format = "date-time"
	}
	if kinds&kindObject != 0 {
		// Every property may be null and none is required, as tap init
		// writes: a few pages are one sample, and the first record with
		// a null (an unassigned ticket's assignee) would otherwise fail
		// its schema and be set aside.
		props := make(map[string]*Schema, len(s.props))
		for k, p := range s.props {
			props[k] = p.schema(true)
		}
		out.Properties = &props
	}
	if kinds&kindArray != 0 && s.items != nil && (s.items.nonNull > 0 || s.items.null) {
		out.Items = s.items.schema(false)
	}
	return out
}
