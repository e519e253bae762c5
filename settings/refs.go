package settings

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
)

// MaxRefDepth bounds the expansion of shared definitions: a "$ref" met
// inside the expansions of this many enclosing ones is left {} (any
// value). A definition that holds itself (a comment's replies) ends
// there, and so does an API whose objects expand into one another (a
// charge's customer's default source's owner...), whose schemas would
// otherwise be as large as the document for each stream: from Stripe's
// document, 2 gives a catalog of 6 MB and 3 of 33 MB (tap init wrote 9
// MB of inline schemas before, cut at 4 levels of properties).
const MaxRefDepth = 2

// refs expands the "$ref": "#/definitions/NAME" of stream schemas from
// one definitions block. An expansion is made once for each definition
// and depth and shared by every schema that reaches it, so that a hundred
// streams of one document cost what their definitions cost, not a copy
// each.
type refs struct {
	defs map[string]any
	memo map[refKey]any
}

type refKey struct {
	name  string
	depth int
}

const refPrefix = "#/definitions/"

func newRefs(defs map[string]any) *refs {
	return &refs{defs: defs, memo: map[refKey]any{}}
}

// schema expands the refs of a stream's schema. A schema with its own
// "definitions" or "$defs" is left as it is: its refs point into itself.
// The top level and its properties are the stream's own copy, which the
// loader may complete (_sdc_deleted_at).
func (r *refs) schema(s map[string]any) (map[string]any, error) {
	if r == nil || len(r.defs) == 0 {
		return s, nil
	}
	if _, own := s["definitions"]; own {
		return s, nil
	}
	if _, own := s["$defs"]; own {
		return s, nil
	}
	v, err := r.expand(s, 0, "")
	if err != nil {
		return nil, err
	}
	top, _ := v.(map[string]any)
	top = maps.Clone(top)
	if p, ok := top["properties"].(map[string]any); ok {
		top["properties"] = maps.Clone(p)
	}
	return top, nil
}

// expand returns v with its refs expanded at depth (the refs enclosing
// it); v itself when it holds none, so that what holds no ref is shared.
// at is v's JSON pointer, for errors.
func (r *refs) expand(v any, depth int, at string) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok {
			return r.ref(v, ref, depth, at)
		}
		var out map[string]any
		for k, e := range v {
			x, err := r.expand(e, depth, at+"/"+k)
			if err != nil {
				return nil, err
			}
			if !same(x, e) {
				if out == nil {
					out = maps.Clone(v)
				}
				out[k] = x
			}
		}
		if out == nil {
			return v, nil
		}
		return out, nil
	case []any:
		var out []any
		for i, e := range v {
			x, err := r.expand(e, depth, fmt.Sprintf("%s/%d", at, i))
			if err != nil {
				return nil, err
			}
			if !same(x, e) {
				if out == nil {
					out = append([]any(nil), v...)
				}
				out[i] = x
			}
		}
		if out == nil {
			return v, nil
		}
		return out, nil
	}
	return v, nil
}

// ref expands {"$ref": ref, ...siblings}. A ref that is not to the
// definitions block is left to the validator.
func (r *refs) ref(v map[string]any, ref string, depth int, at string) (any, error) {
	name, ok := strings.CutPrefix(ref, refPrefix)
	if !ok {
		return v, nil
	}
	def, ok := r.defs[name]
	if !ok {
		return nil, fmt.Errorf("%s: $ref %q: no definition %q in definitions", pointer(at), ref, name)
	}
	var x any = map[string]any{}
	if depth < MaxRefDepth {
		key := refKey{name, depth}
		if m, done := r.memo[key]; done {
			x = m
		} else {
			var err error
			if x, err = r.expand(def, depth+1, "/definitions/"+name); err != nil {
				return nil, err
			}
			r.memo[key] = x
		}
	}
	if len(v) == 1 {
		return x, nil
	}
	// Keywords beside the ref (a description, "null" allowed) apply with
	// it: the expansion's own win, as the ref's target is the schema.
	m, ok := x.(map[string]any)
	if !ok {
		return x, nil
	}
	out := maps.Clone(m)
	for k, e := range v {
		if _, has := out[k]; !has && k != "$ref" {
			out[k] = e
		}
	}
	return out, nil
}

func pointer(at string) string {
	if at == "" {
		return "schema"
	}
	return "schema " + at
}

// same reports whether a and b are one value: the same map or slice, or
// equal scalars.
func same(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		return ok && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	case []any:
		b, ok := b.([]any)
		return ok && len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
	}
	return true // a scalar is never replaced
}
