// Package manifest loads Airbyte's declarative manifests (the language of
// the CDK's declarative_component_schema.yaml) into a typed model: the
// references resolved, the $parameters passed down and the types the CDK
// infers filled in, as the CDK's own loader does; then every component
// decoded through one registry of the types the tap implements. What the
// tap cannot run (Python code, a type it does not implement) is refused at
// load, one line per component with its place in the manifest.
package manifest

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/tap-dev/tap/inputfile"
	"github.com/tap-dev/tap/yamlbound"
)

// Manifest is a loaded manifest.
type Manifest struct {
	File string // the file it was read from, for errors
	Dir  string // where files it names (JsonFileSchemaLoader) are read
	DeclarativeSource
	// Tree is the manifest after references, parameters and types: what
	// the typed model was decoded from.
	Tree map[string]any
}

// Refusal is a component the tap does not run.
type Refusal struct {
	Path   string // where in the manifest: streams[3].retriever.paginator
	Type   string
	Class  string // its class_name, if any
	Python bool   // a Custom* component or a class_name: Python code
	// Why, for a component the tap implements, is the form of it that
	// the run cannot take (Lower).
	Why string
}

func (r Refusal) String() string {
	what := r.Type
	switch {
	case what == "":
		what = "class " + r.Class
	case r.Class != "":
		what += " (class " + r.Class + ")"
	}
	if r.Python {
		return fmt.Sprintf("%s: %s: Python code (a custom component), which the tap cannot run", r.Path, what)
	}
	if r.Why != "" {
		return fmt.Sprintf("%s: %s: not implemented by the tap: %s", r.Path, what, r.Why)
	}
	return fmt.Sprintf("%s: %s: not implemented by the tap", r.Path, what)
}

// Problem is bad input at a place of the manifest.
type Problem struct {
	Path string
	Msg  string
	// notImplemented: a value of the CDK's the tap does not implement (a
	// response filter's RESET_PAGINATION); Msg names it, for a Refusal.
	notImplemented bool
}

func (p *Problem) Error() string {
	if p.Path == "" {
		return p.Msg
	}
	return p.Path + ": " + p.Msg
}

// Error is why a manifest did not load: bad input, refusals, or both. Its
// text is one line per problem or refused component, each naming the file.
type Error struct {
	File     string
	Problems []Problem
	Refusals []Refusal
}

func (e *Error) Error() string { return strings.Join(e.Lines(), "\n") }

// Lines is the error's text, one line each.
func (e *Error) Lines() []string {
	var lines []string
	for _, p := range e.Problems {
		lines = append(lines, e.File+": "+p.Error())
	}
	for _, r := range e.Refusals {
		lines = append(lines, e.File+": refused: "+r.String())
	}
	return lines
}

// Load reads the manifest at path (YAML or JSON).
func Load(path string) (*Manifest, error) {
	data, err := inputfile.Read(path, inputfile.MaxConfig)
	if err != nil {
		return nil, &Error{File: path, Problems: []Problem{{Msg: fmt.Sprintf("cannot read the manifest: %v", err)}}}
	}
	return Parse(path, data, filepath.Dir(path))
}

// Parse reads a manifest from data; file names it in errors and dir is
// where the files it names are read.
func Parse(file string, data []byte, dir string) (*Manifest, error) {
	root, err := parseYAML(file, data)
	if err != nil {
		return nil, err
	}
	return FromTree(file, root, dir)
}

// parseYAML reads a manifest's text. A key given twice keeps its last
// value, as the CDK's YAML loader does (some of Airbyte's manifests have
// one).
func parseYAML(file string, data []byte) (map[string]any, error) {
	tree, err := yamlbound.Decode(data, yamlbound.MaxNodes)
	if err != nil {
		return nil, &Error{File: file, Problems: []Problem{{Msg: "not a YAML or JSON manifest: " + oneLine(err.Error())}}}
	}
	root, ok := tree.(map[string]any)
	if !ok {
		return nil, &Error{File: file, Problems: []Problem{{Msg: fmt.Sprintf("expected a manifest (an object with streams), got %s", kindOf(tree))}}}
	}
	return root, nil
}

// FromTree reads a manifest given as a decoded tree (a config's
// __injected_declarative_manifest).
func FromTree(file string, root map[string]any, dir string) (*Manifest, error) {
	m, _, err := fromTree(file, root, dir)
	return m, err
}

// fromTree is FromTree that also returns the tree the model is decoded
// from (references resolved, parameters and types passed down), when the
// manifest got that far.
func fromTree(file string, root map[string]any, dir string) (*Manifest, map[string]any, error) {
	root = normalize(root).(map[string]any)
	if _, ok := root["type"]; !ok {
		root["type"] = "DeclarativeSource"
	}
	resolved, err := resolveRefs(root)
	if err != nil {
		var p *Problem
		if errors.As(err, &p) {
			return nil, nil, &Error{File: file, Problems: []Problem{*p}}
		}
		return nil, nil, err
	}
	tree := propagate("", resolved, nil)
	m := &Manifest{File: file, Dir: dir, Tree: tree}
	d := &decoder{}
	if typ, _ := tree["type"].(string); typ != "DeclarativeSource" {
		d.problem("type", "expected DeclarativeSource, got %q", typ)
	} else {
		d.fields(reflect.ValueOf(&m.DeclarativeSource).Elem(), tree, "")
		m.DeclarativeSource.Type = typ
	}
	if len(m.Streams) == 0 && len(d.problems) == 0 && len(d.refusals) == 0 {
		if _, dynamic := tree["dynamic_streams"]; !dynamic {
			d.problem("streams", "no streams")
		}
	}
	if len(d.problems) > 0 || len(d.refusals) > 0 {
		return nil, tree, &Error{File: file, Problems: d.problems, Refusals: d.refusals}
	}
	return m, tree, nil
}

// normalize copies a decoded tree (yamlbound.Decode's, or JSON's), so
// that FromTree never changes its caller's tree.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	}
	return v
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
