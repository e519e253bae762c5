package streammap

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tap-dev/tap/codec"
)

// Flattening as the Meltano SDK does it (singer_sdk/helpers/_flattening):
// an object property with declared properties is replaced, up to
// maxDepth levels down, by its children named parent__child; what is left
// at the depth limit (objects, arrays) becomes a JSON string.

const (
	flattenSeparator = "__"
	maxKeyLength     = 255
)

// flattenKey joins a key to its parents. Keys that would reach 255
// characters are shortened part by part from the outermost, as the SDK
// does, so that SQL targets can use them as column names.
func flattenKey(key string, parents []string) string {
	full := append(slices.Clone(parents), key)
	for i := 0; len(strings.Join(full, flattenSeparator)) >= maxKeyLength && i < len(full); i++ {
		reduced := camelUpper(full[i])
		if len(reduced) > 1 {
			full[i] = strings.ToLower(reduced)
		} else {
			full[i] = strings.ToLower(full[i][:min(3, len(full[i]))])
		}
	}
	return strings.Join(full, flattenSeparator)
}

// camelUpper is what is left of inflection.camelize(s) once lower-case
// ASCII letters are removed: the capitals that start each word.
func camelUpper(s string) string {
	var b strings.Builder
	start := true
	for _, r := range s {
		switch {
		case r == '_':
			start = true
			continue
		case start && r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
		case r >= 'a' && r <= 'z':
		default:
			b.WriteRune(r)
		}
		start = false
	}
	return b.String()
}

func hasType(s map[string]any, t string) bool {
	switch v := s["type"].(type) {
	case string:
		return strings.Contains(v, t)
	case []any:
		for _, e := range v {
			if e == t {
				return true
			}
		}
	}
	return false
}

// flattenSchema returns a copy of an object schema with its properties
// flattened to maxDepth levels.
func flattenSchema(schema map[string]any, maxDepth int) (map[string]any, error) {
	out := maps.Clone(schema)
	props, err := flattenProperties(schema, nil, 0, maxDepth)
	if err != nil {
		return nil, err
	}
	out["properties"] = props
	return out, nil
}

func flattenProperties(node map[string]any, parents []string, level, maxDepth int) (map[string]any, error) {
	props, _ := node["properties"].(map[string]any)
	out := make(map[string]any, len(props))
	add := func(k string, v any) error {
		if _, dup := out[k]; dup {
			return fmt.Errorf("flattening produces the property %q twice", k)
		}
		out[k] = v
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		field, _ := props[name].(map[string]any)
		key := flattenKey(name, parents)
		var err error
		switch {
		case field["type"] != nil:
			_, hasProps := field["properties"].(map[string]any)
			switch {
			case hasType(field, "object") && hasProps && level < maxDepth:
				var sub map[string]any
				if sub, err = flattenProperties(field, append(slices.Clone(parents), name), level+1, maxDepth); err != nil {
					return nil, err
				}
				for _, k := range slices.Sorted(maps.Keys(sub)) {
					if err = add(k, sub[k]); err != nil {
						return nil, err
					}
				}
			case hasType(field, "array") || hasType(field, "object") && maxDepth > 0:
				var t any = "string"
				if hasType(field, "null") {
					t = []any{"string", "null"}
				}
				err = add(key, map[string]any{"type": t})
			default:
				err = add(key, field)
			}
		case len(field) > 0:
			// anyOf / oneOf: the SDK keeps the first alternative, nullable.
			err = add(key, firstAlternative(field))
		default:
			// A property with an empty schema holds anything: a JSON string.
			err = add(key, map[string]any{"type": []any{"null", "string"}})
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func firstAlternative(field map[string]any) any {
	for _, k := range []string{"anyOf", "oneOf"} {
		alts, _ := field[k].([]any)
		if len(alts) == 0 {
			continue
		}
		first, _ := alts[0].(map[string]any)
		if t, ok := first["type"].(string); ok && (t == "string" || t == "array" || t == "object") {
			c := maps.Clone(first)
			c["type"] = []any{"null", t}
			return c
		}
	}
	return field
}

// flattenRecord flattens a record to match a flattened schema: an object
// is walked into while its flattened name is not itself a property and
// the depth allows; objects and arrays left whole become JSON text.
func flattenRecord(rec map[string]any, flatProps map[string]any, maxDepth int) (map[string]any, error) {
	out := make(map[string]any, len(flatProps))
	err := flattenInto(out, rec, nil, 0, flatProps, maxDepth)
	return out, err
}

func flattenInto(out, node map[string]any, parents []string, level int, flatProps map[string]any, maxDepth int) error {
	for k, v := range node {
		key := k
		if len(parents) > 0 || len(k) >= maxKeyLength {
			key = flattenKey(k, parents)
		}
		if v == nil && level < maxDepth && flattened(key, flatProps) {
			// A null object whose properties were spread: its children
			// are absent, and no property of its own name exists.
			continue
		}
		if m, ok := v.(map[string]any); ok && level < maxDepth {
			if _, declared := flatProps[key]; !declared {
				if err := flattenInto(out, m, slices.Concat(parents, []string{k}), level+1, flatProps, maxDepth); err != nil {
					return err
				}
				continue
			}
		}
		switch v.(type) {
		case map[string]any, []any:
			// The SDK writes flattened values compactly; <, > and &
			// stay as they are.
			b, err := codec.Marshal(v)
			if err != nil {
				return fmt.Errorf("property %q: %w", key, err)
			}
			out[key] = string(b)
		default:
			out[key] = v
		}
	}
	return nil
}

// flattened reports whether key is an object spread into key__child
// properties rather than a property itself.
func flattened(key string, flatProps map[string]any) bool {
	if _, declared := flatProps[key]; declared {
		return false
	}
	for k := range flatProps {
		if strings.HasPrefix(k, key+flattenSeparator) {
			return true
		}
	}
	return false
}
