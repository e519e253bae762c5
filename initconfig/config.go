// Package initconfig writes a first config for an API: from its OpenAPI
// document (FromOpenAPI) or from one live response (FromProbe). Every
// guess that could be wrong is a Note, which `tap init` prints; the config
// is the tap's own shape, its streams streams.Definition values, so what
// is written is what the tap reads.
package initconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/tap-dev/tap/streams"
)

// Config is a generated config.
type Config struct {
	BaseURL string
	// Auth is the config's auth block, secrets as {"env": NAME}; nil for
	// none.
	Auth map[string]any
	// PathParams are the path placeholders no parent fills, each an
	// {"env": NAME} reference.
	PathParams map[string]any
	// Definitions are the schemas the streams share, by name; the
	// streams' schemas $ref them.
	Definitions map[string]any
	Streams     []streams.Definition
}

// A Result is a generated config and what the generator was unsure of.
type Result struct {
	Config Config
	// Notes are one line each, "stream NAME: what was guessed", in the
	// order the streams were written.
	Notes []string
}

func (r *Result) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// JSON is the config file: indented, keys in the order of the config
// reference, and in a stream only the fields that are set.
func (c *Config) JSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("{\n")
	field := func(name string, v any) error {
		val, err := json.MarshalIndent(v, "  ", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "  %q: %s,\n", name, val)
		return nil
	}
	if err := field("base_url", c.BaseURL); err != nil {
		return nil, err
	}
	if c.Auth != nil {
		if err := field("auth", c.Auth); err != nil {
			return nil, err
		}
	}
	if len(c.PathParams) > 0 {
		if err := field("path_params", c.PathParams); err != nil {
			return nil, err
		}
	}
	if len(c.Definitions) > 0 {
		if err := field("definitions", c.Definitions); err != nil {
			return nil, err
		}
	}
	b.WriteString(`  "streams": [`)
	for i := range c.Streams {
		if i > 0 {
			b.WriteByte(',')
		}
		var one bytes.Buffer
		if err := compact(&one, reflect.ValueOf(c.Streams[i])); err != nil {
			return nil, err
		}
		b.WriteString("\n    ")
		if err := json.Indent(&b, one.Bytes(), "    ", "  "); err != nil {
			return nil, err
		}
	}
	b.WriteString("\n  ]\n}\n")
	return b.Bytes(), nil
}

// compact writes v as JSON, leaving out the fields of a struct that are
// at their zero value (a definition has dozens, a generated one sets a
// few); a value with its own MarshalJSON, a map or a slice is written by
// encoding/json.
func compact(b *bytes.Buffer, v reflect.Value) error {
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct || v.Type().Implements(reflect.TypeFor[json.Marshaler]()) {
		out, err := json.Marshal(v.Interface())
		if err != nil {
			return err
		}
		b.Write(out)
		return nil
	}
	b.WriteByte('{')
	n := 0
	for i := range v.NumField() {
		f := v.Field(i)
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" || f.IsZero() {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		k, _ := json.Marshal(name)
		b.Write(k)
		b.WriteByte(':')
		if err := compact(b, f); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

// sortedKeys lists m's keys in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// envRef is the {"env": NAME} reference to a secret or a setting.
func envRef(name string) map[string]any { return map[string]any{"env": name} }

// envName is the environment variable of a config value: TAP_ and the
// value's name in capitals, other characters as underscores.
func envName(name string) string {
	var b strings.Builder
	b.WriteString("TAP_")
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// snake is name as a stream name: lower case, runs of other characters
// as one underscore, camelCase split.
func snake(name string) string {
	var b strings.Builder
	prevLower := false
	for _, r := range name {
		switch {
		case r >= 'A' && r <= 'Z':
			if prevLower {
				b.WriteByte('_')
			}
			b.WriteRune(r - 'A' + 'a')
			prevLower = false
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			prevLower = true
		default:
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
				b.WriteByte('_')
			}
			prevLower = false
		}
	}
	return strings.Trim(b.String(), "_")
}

// singular is a plural English noun's singular, as API paths name
// collections: customers → customer, categories → category.
func singular(s string) string {
	switch {
	case strings.HasSuffix(s, "ies"):
		return s[:len(s)-3] + "y"
	case strings.HasSuffix(s, "sses"), strings.HasSuffix(s, "xes"):
		return s[:len(s)-2]
	case strings.HasSuffix(s, "s") && !strings.HasSuffix(s, "ss"):
		return s[:len(s)-1]
	}
	return s
}
