package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// InjectedKey is the config field in which Airbyte's platform passes a
// manifest to its source-declarative-manifest image; InjectedComponentsKey
// is where it passes the manifest's Python components.
const (
	InjectedKey           = "__injected_declarative_manifest"
	InjectedComponentsKey = "__injected_components_py"
)

// TapKey is the config's object of the tap's own settings, unless the
// manifest's spec declares a property of that name.
const TapKey = "tap"

// FromConfig reads the manifest a config carries in InjectedKey (an
// object, or its YAML or JSON text); ok is false when it carries none.
// Files the manifest names are read next to the config.
func FromConfig(file string, config map[string]any) (m *Manifest, ok bool, err error) {
	v, ok := config[InjectedKey]
	if !ok {
		return nil, false, nil
	}
	name := file + ": " + InjectedKey
	if _, py := config[InjectedComponentsKey]; py {
		return nil, true, &Error{File: file, Refusals: []Refusal{{Path: InjectedComponentsKey, Type: "components.py", Python: true}}}
	}
	switch x := v.(type) {
	case map[string]any:
		m, err = FromTree(name, x, filepath.Dir(file))
	case string:
		m, err = Parse(name, []byte(x), filepath.Dir(file))
	default:
		err = &Error{File: file, Problems: []Problem{{Path: InjectedKey, Msg: fmt.Sprintf("expected a manifest (an object), got %s", kindOf(v))}}}
	}
	return m, true, err
}

// Config is a connector's config split in two: the connector's own fields,
// which the manifest's expressions read as `config`, and the tap's
// settings of its "tap" object.
type Config struct {
	Connector map[string]any
	Tap       map[string]any
}

// CheckConfig splits config (read from file) and checks the connector's
// part against the manifest's spec.connection_specification, as the CDK
// checks it (without asserting formats, which the CDK does not either).
// A missing required field or a wrong type is one line naming the field.
func (m *Manifest) CheckConfig(file string, config map[string]any) (*Config, error) {
	c := &Config{Connector: make(map[string]any, len(config))}
	declared := map[string]any{}
	if m.Spec != nil {
		declared, _ = m.Spec.ConnectionSpecification["properties"].(map[string]any)
	}
	for k, v := range config {
		if k == InjectedKey {
			continue
		}
		if _, own := declared[k]; k == TapKey && !own {
			t, ok := v.(map[string]any)
			if !ok {
				return nil, &Error{File: file, Problems: []Problem{{Path: TapKey, Msg: fmt.Sprintf("expected an object of the tap's settings, got %s", kindOf(v))}}}
			}
			c.Tap = t
			continue
		}
		c.Connector[k] = v
	}
	// A manifest describes the streams: the tap's own are another config.
	for _, k := range []string{"streams", "streams_file"} {
		_, inTap := c.Tap[k]
		_, own := declared[k]
		_, top := c.Connector[k]
		if inTap || top && !own {
			where := k
			if inTap {
				where = TapKey + "." + k
			}
			return nil, &Error{File: file, Problems: []Problem{{Path: where, Msg: "a manifest's streams are the manifest's: give either --manifest or a config with streams, not both"}}}
		}
	}
	if m.Spec == nil {
		return c, nil
	}
	schema, err := compileSpec(m.Spec.ConnectionSpecification)
	if err != nil {
		return nil, &Error{File: m.File, Problems: []Problem{{Path: "spec.connection_specification", Msg: err.Error()}}}
	}
	// The validator reads JSON's kinds; a config decoded elsewhere (YAML,
	// Go values) goes through JSON once.
	raw, err := json.Marshal(c.Connector)
	if err != nil {
		return nil, &Error{File: file, Problems: []Problem{{Msg: err.Error()}}}
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, &Error{File: file, Problems: []Problem{{Msg: err.Error()}}}
	}
	if err := schema.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return nil, &Error{File: file, Problems: []Problem{{Msg: err.Error()}}}
		}
		return nil, &Error{File: file, Problems: configProblems(ve)}
	}
	return c, nil
}

// compileSpec compiles a connection_specification, its "format" keywords
// left out: the CDK's validator does not assert them.
func compileSpec(spec map[string]any) (*jsonschema.Schema, error) {
	raw, err := json.Marshal(withoutFormats(spec))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft7 // Airbyte specs are draft-07
	if err := c.AddResource("spec.json", strings.NewReader(string(raw))); err != nil {
		return nil, err
	}
	return c.Compile("spec.json")
}

// withoutFormats copies a schema without its string-valued "format"
// keywords (a property named "format" is an object and stays), and with
// a "required" that names a field twice naming it once: the CDK takes
// such a spec (Hellobaton's), which the meta-schema's uniqueItems would
// refuse.
func withoutFormats(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if _, s := e.(string); k == "format" && s {
				continue
			}
			if list, ok := e.([]any); ok && k == "required" {
				names := make([]any, 0, len(list))
				for _, n := range list {
					if !slices.Contains(names, n) {
						names = append(names, n)
					}
				}
				out[k] = names
				continue
			}
			out[k] = withoutFormats(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutFormats(e)
		}
		return out
	}
	return v
}

// configProblems turns a validation error into one problem per field: a
// required field missing names the field itself; a field that matches
// none of a oneOf's options (an auth choice) is one problem, not one per
// option.
func configProblems(ve *jsonschema.ValidationError) []Problem {
	var out []Problem
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		kw := e.KeywordLocation[strings.LastIndexByte(e.KeywordLocation, '/')+1:]
		switch {
		case kw == "oneOf" || kw == "anyOf":
			out = append(out, Problem{Path: fieldPath(e.InstanceLocation), Msg: "matches none of the options the manifest's spec allows"})
			return
		case len(e.Causes) > 0:
			for _, c := range e.Causes {
				walk(c)
			}
			return
		case kw == "required":
			for _, name := range quoted(e.Message) {
				out = append(out, Problem{Path: joinField(fieldPath(e.InstanceLocation), name), Msg: "missing, required by the manifest's spec"})
			}
			return
		}
		out = append(out, Problem{Path: fieldPath(e.InstanceLocation), Msg: e.Message})
	}
	walk(ve)
	slices.SortStableFunc(out, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	return slices.CompactFunc(out, func(a, b Problem) bool { return a == b })
}

// fieldPath turns a JSON pointer into the config's field path (a.b[0]).
func fieldPath(ptr string) string {
	if ptr == "" || ptr == "/" {
		return ""
	}
	var b strings.Builder
	for _, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		if isIndex(seg) {
			b.WriteString("[" + seg + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func joinField(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// quoted returns the names a validator message quotes ('a', 'b').
func quoted(msg string) []string {
	var out []string
	for {
		i := strings.IndexByte(msg, '\'')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(msg[i+1:], '\'')
		if j < 0 {
			return out
		}
		out = append(out, msg[i+1:i+1+j])
		msg = msg[i+j+2:]
	}
}
