package initconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/inputfile"
	"github.com/tap-dev/tap/yamlbound"
)

// The parts of an OpenAPI document init reads: its servers, the GET
// operations of its paths with their parameters and success responses,
// the schemas those reach, and its security schemes. OpenAPI 3.0, 3.1
// and Swagger 2.0 are read into the same values.
//
// Why our own loader and not an OpenAPI library: init reads a small
// part of a document and wants it leniently (a document with a field of
// the wrong type elsewhere still gives its streams), while a library
// decodes, validates and resolves all of it, and the one we used
// brought a JSON Schema validator whose package init compiles every
// draft's meta-schemas: every sync paid 8 ms and 1.7 MB at start for
// what only init needs. The document is decoded once into a JSON tree
// (which the broken-$ref pruner reads too), and the values below are
// views of its nodes, each built once.
type document struct {
	Servers  []*server
	Paths    map[string]*pathItem // only paths with a GET operation
	Schemes  map[string]*securityScheme
	Security []map[string]any // the top-level security requirements
}

type server struct {
	URL       string
	Variables map[string]string // name → default
}

type pathItem struct {
	Get        *operation
	Parameters []*parameter
}

type operation struct {
	Parameters []*parameter
	Responses  map[string]*response // by status code ("200", "2XX")
}

type response struct {
	Content map[string]*schemaRef // by media type
	Headers []string              // the documented headers' names
}

type parameter struct {
	Name, In, Description, Style string
	Required                     bool
	Schema                       *schemaRef // nil when the parameter has none
}

// A schemaRef is a schema and the $ref that named it ("" when inline).
type schemaRef struct {
	Ref   string
	Value *schema
}

// A schema is built once per node of the document, so a component that
// many operations $ref is one *schema: the schema writer names it by its
// pointer, and a schema that holds itself ends.
type schema struct {
	Type                []string
	Nullable            bool
	Format, Description string
	Properties          map[string]*schemaRef
	Required            []string
	Items               *schemaRef
	AllOf, OneOf, AnyOf []*schemaRef
	Default             any
	Enum                []any
	Min, Max            *float64
}

type securityScheme struct {
	Type, Scheme, In, Name string
	TokenURL               string   // the client-credentials flow's
	Scopes                 []string // its scopes
}

// maxRefHops bounds a chain of $refs to $refs (one that loops ends).
const maxRefHops = 32

// A docLoader builds a document's values from its JSON tree, following
// $refs within it and to files in its folder.
type docLoader struct {
	root string // the document's file
	dir  string // its folder: $refs are followed inside it only
	v2   bool   // Swagger 2.0
	// produces are Swagger 2's media types of a response whose operation
	// names none: the document's, else JSON.
	produces []string
	files    map[string]any // file → decoded tree; the document's own too
	schemas  map[uintptr]*schema
}

// A node is a value of the tree and the file it is in (which relative
// $refs inside it start from).
type node struct {
	file string
	v    any
}

// buildDocument reads the values init needs from tree, the decoded
// document held in file. An error is a $ref it cannot follow.
func buildDocument(tree map[string]any, file string, v2 bool) (*document, error) {
	abs, _ := filepath.Abs(file)
	l := &docLoader{root: abs, dir: filepath.Dir(abs), v2: v2, files: map[string]any{abs: tree}, schemas: map[uintptr]*schema{}}
	l.produces = mediaTypes(tree["produces"], []string{"application/json"})
	doc := &document{Paths: map[string]*pathItem{}}
	doc.Servers = l.servers(tree)
	paths, _ := tree["paths"].(map[string]any)
	for name, v := range paths {
		item, err := l.deref(node{abs, v})
		if err != nil {
			return nil, err
		}
		m, _ := item.v.(map[string]any)
		if m == nil || m["get"] == nil {
			continue
		}
		pi := &pathItem{}
		if pi.Parameters, err = l.parameters(node{item.file, m["parameters"]}); err != nil {
			return nil, err
		}
		if pi.Get, err = l.operation(node{item.file, m["get"]}); err != nil {
			return nil, err
		}
		doc.Paths[name] = pi
	}
	var err error
	if doc.Schemes, err = l.securitySchemes(tree); err != nil {
		return nil, err
	}
	for _, req := range asList(tree["security"]) {
		if m, ok := req.(map[string]any); ok {
			doc.Security = append(doc.Security, m)
		}
	}
	return doc, nil
}

// servers are OpenAPI 3's servers, or Swagger 2's host, basePath and
// schemes made into them.
func (l *docLoader) servers(tree map[string]any) []*server {
	var out []*server
	if !l.v2 {
		for _, v := range asList(tree["servers"]) {
			m, _ := v.(map[string]any)
			if m == nil {
				continue
			}
			s := &server{URL: str(m["url"]), Variables: map[string]string{}}
			vars, _ := m["variables"].(map[string]any)
			for name, v := range vars {
				vm, _ := v.(map[string]any)
				s.Variables[name] = str(vm["default"])
			}
			out = append(out, s)
		}
		return out
	}
	host, basePath := str(tree["host"]), str(tree["basePath"])
	if host == "" {
		if basePath != "" {
			out = append(out, &server{URL: basePath})
		}
		return out
	}
	if basePath == "" {
		basePath = "/"
	}
	schemes := []string{}
	for _, s := range asList(tree["schemes"]) {
		schemes = append(schemes, str(s))
	}
	if len(schemes) == 0 {
		schemes = []string{"https"}
	}
	for _, scheme := range schemes {
		u := url.URL{Scheme: scheme, Host: host, Path: basePath}
		out = append(out, &server{URL: u.String()})
	}
	return out
}

// operation reads a GET operation: its parameters and responses.
func (l *docLoader) operation(n node) (*operation, error) {
	n, err := l.deref(n)
	if err != nil {
		return nil, err
	}
	m, _ := n.v.(map[string]any)
	op := &operation{Responses: map[string]*response{}}
	if op.Parameters, err = l.parameters(node{n.file, m["parameters"]}); err != nil {
		return nil, err
	}
	responses, _ := m["responses"].(map[string]any)
	for code, v := range responses {
		r, err := l.deref(node{n.file, v})
		if err != nil {
			return nil, err
		}
		rm, _ := r.v.(map[string]any)
		if rm == nil {
			continue
		}
		resp := &response{Content: map[string]*schemaRef{}}
		hs, _ := rm["headers"].(map[string]any)
		for name := range hs {
			resp.Headers = append(resp.Headers, name)
		}
		if l.v2 {
			if rm["schema"] != nil {
				s, err := l.schemaRef(node{r.file, rm["schema"]})
				if err != nil {
					return nil, err
				}
				for _, mt := range mediaTypes(m["produces"], l.produces) {
					resp.Content[mt] = s
				}
			}
		} else {
			content, _ := rm["content"].(map[string]any)
			for mt, v := range content {
				media, _ := v.(map[string]any)
				if media == nil || media["schema"] == nil {
					continue
				}
				if resp.Content[mt], err = l.schemaRef(node{r.file, media["schema"]}); err != nil {
					return nil, err
				}
			}
		}
		op.Responses[code] = resp
	}
	return op, nil
}

// mediaTypes is a Swagger 2 produces list, or def when it names none.
func mediaTypes(list any, def []string) []string {
	var out []string
	for _, mt := range asList(list) {
		out = append(out, str(mt))
	}
	if len(out) == 0 {
		return def
	}
	return out
}

// parameters reads a list of parameters; Swagger 2's body and form
// parameters (no GET's business) are left out.
func (l *docLoader) parameters(list node) ([]*parameter, error) {
	var out []*parameter
	for _, v := range asList(list.v) {
		n, err := l.deref(node{list.file, v})
		if err != nil {
			return nil, err
		}
		m, _ := n.v.(map[string]any)
		if m == nil {
			continue
		}
		p := &parameter{Name: str(m["name"]), In: str(m["in"]), Description: str(m["description"]), Style: str(m["style"])}
		p.Required, _ = m["required"].(bool)
		switch {
		case l.v2 && (p.In == "body" || p.In == "formData"):
			continue
		case l.v2:
			// Swagger 2 writes the schema's keywords on the parameter.
			s, err := l.schema(n)
			if err != nil {
				return nil, err
			}
			cp := *s
			cp.Description = ""
			p.Schema = &schemaRef{Value: &cp}
			if p.In == "path" {
				p.Required = true
			}
		case m["schema"] != nil:
			if p.Schema, err = l.schemaRef(node{n.file, m["schema"]}); err != nil {
				return nil, err
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// schemaRef reads a schema that may be a $ref.
func (l *docLoader) schemaRef(n node) (*schemaRef, error) {
	ref := ""
	if m, ok := n.v.(map[string]any); ok {
		ref, _ = m["$ref"].(string)
	}
	target, err := l.deref(n)
	if err != nil {
		return nil, err
	}
	s, err := l.schema(target)
	if err != nil {
		return nil, err
	}
	return &schemaRef{Ref: ref, Value: s}, nil
}

// schema builds the schema at n, once per node.
func (l *docLoader) schema(n node) (*schema, error) {
	m, ok := n.v.(map[string]any)
	if !ok {
		return &schema{}, nil // true, false (3.1) or junk: any value
	}
	key := reflect.ValueOf(m).Pointer()
	if s, ok := l.schemas[key]; ok {
		return s, nil
	}
	s := &schema{Format: str(m["format"]), Description: str(m["description"]), Default: jsonNumber(m["default"])}
	l.schemas[key] = s // before its parts: it may hold itself
	switch t := m["type"].(type) {
	case string:
		s.Type = []string{t}
	case []any:
		for _, e := range t {
			if e, ok := e.(string); ok {
				s.Type = append(s.Type, e)
			}
		}
	}
	s.Nullable, _ = m["nullable"].(bool)
	if l.v2 {
		s.Nullable, _ = m["x-nullable"].(bool)
		if len(s.Type) == 1 && s.Type[0] == "file" {
			s.Type, s.Format = []string{"string"}, "binary"
		}
	}
	for _, r := range asList(m["required"]) {
		if r, ok := r.(string); ok {
			s.Required = append(s.Required, r)
		}
	}
	for _, e := range asList(m["enum"]) {
		s.Enum = append(s.Enum, jsonNumber(e))
	}
	s.Min, s.Max = number(m["minimum"]), number(m["maximum"])
	var err error
	if props, ok := m["properties"].(map[string]any); ok {
		s.Properties = make(map[string]*schemaRef, len(props))
		for name, v := range props {
			if s.Properties[name], err = l.schemaRef(node{n.file, v}); err != nil {
				return nil, err
			}
		}
	}
	if m["items"] != nil {
		if s.Items, err = l.schemaRef(node{n.file, m["items"]}); err != nil {
			return nil, err
		}
	}
	lists := []struct {
		key string
		to  *[]*schemaRef
	}{{"allOf", &s.AllOf}, {"oneOf", &s.OneOf}, {"anyOf", &s.AnyOf}}
	if l.v2 {
		lists = lists[:1] // Swagger 2 has no oneOf or anyOf
	}
	for _, list := range lists {
		for _, v := range asList(m[list.key]) {
			r, err := l.schemaRef(node{n.file, v})
			if err != nil {
				return nil, err
			}
			*list.to = append(*list.to, r)
		}
	}
	return s, nil
}

// securitySchemes are OpenAPI 3's components.securitySchemes, or Swagger
// 2's securityDefinitions read as them.
func (l *docLoader) securitySchemes(tree map[string]any) (map[string]*securityScheme, error) {
	var defs map[string]any
	if l.v2 {
		defs, _ = tree["securityDefinitions"].(map[string]any)
	} else {
		comps, _ := tree["components"].(map[string]any)
		defs, _ = comps["securitySchemes"].(map[string]any)
	}
	if len(defs) == 0 {
		return nil, nil
	}
	out := map[string]*securityScheme{}
	for name, v := range defs {
		n, err := l.deref(node{l.root, v})
		if err != nil {
			return nil, err
		}
		m, _ := n.v.(map[string]any)
		if m == nil {
			continue
		}
		s := &securityScheme{Type: str(m["type"]), Scheme: str(m["scheme"]), In: str(m["in"]), Name: str(m["name"])}
		flow := map[string]any(nil)
		if l.v2 {
			switch s.Type {
			case "basic":
				s.Type, s.Scheme = "http", "basic"
			case "oauth2":
				if str(m["flow"]) == "application" {
					flow = m
				}
			}
		} else {
			flows, _ := m["flows"].(map[string]any)
			flow, _ = flows["clientCredentials"].(map[string]any)
		}
		if flow != nil {
			s.TokenURL = str(flow["tokenUrl"])
			scopes, _ := flow["scopes"].(map[string]any)
			s.Scopes = sortedKeys(scopes)
		}
		out[name] = s
	}
	return out, nil
}

// deref follows n's $ref, if it has one, to the node it names: in the
// same file ("#/components/schemas/Pet"), or in another file of the
// document's folder ("schemas.yaml#/Pet", "pet.json").
func (l *docLoader) deref(n node) (node, error) {
	for hop := 0; ; hop++ {
		m, ok := n.v.(map[string]any)
		if !ok {
			return n, nil
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return n, nil
		}
		if hop == maxRefHops {
			return n, fmt.Errorf("$ref %q: more than %d $refs in a chain (a loop?)", ref, maxRefHops)
		}
		next, err := l.follow(n.file, ref)
		if err != nil {
			return n, err
		}
		n = next
	}
}

// follow resolves ref, written in file.
func (l *docLoader) follow(file, ref string) (node, error) {
	where, frag, _ := strings.Cut(ref, "#")
	target := file
	if where != "" {
		u, err := url.Parse(where)
		if err != nil {
			return node{}, fmt.Errorf("$ref %q: %v", ref, err)
		}
		if u.Scheme != "" && u.Scheme != "file" {
			return node{}, fmt.Errorf("$ref to %s://%s: only local files are followed", u.Scheme, u.Host)
		}
		target = filepath.FromSlash(u.Path)
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(file), target)
		}
		if _, ok := l.files[target]; !ok {
			tree, err := l.readFile(target)
			if err != nil {
				return node{}, err
			}
			l.files[target] = tree
		}
	}
	v, ok := pointer(l.files[target], frag)
	if !ok {
		return node{}, fmt.Errorf("$ref %q: %s holds no %s", ref, filepath.Base(target), "#"+frag)
	}
	return node{target, v}, nil
}

// readFile reads a file a $ref names, as a document downloaded from
// anywhere may name any: only a regular file inside the document's
// folder (its symlinks resolved; not /dev/zero, a FIFO or /etc/passwd),
// bounded as every input file is, JSON or YAML whose aliases stay
// bounded. An error names the file, never its content.
func (l *docLoader) readFile(p string) (any, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, fmt.Errorf("$ref to %s: %v", p, pathErr(err))
	}
	root, err := filepath.EvalSymlinks(l.dir)
	if err != nil {
		return nil, fmt.Errorf("$ref to %s: %v", p, pathErr(err))
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("$ref to %s: outside the document's folder %s: only files inside it are followed", p, l.dir)
	}
	b, err := inputfile.Read(real, inputfile.MaxConfig)
	if err != nil {
		return nil, fmt.Errorf("$ref to %s: %v", p, err)
	}
	tree, err := decodeTree(b)
	if err != nil {
		return nil, fmt.Errorf("$ref to %s: not JSON or YAML: %s", p, yamlPlace(err))
	}
	return tree, nil
}

// decodeTree decodes a JSON or YAML document into JSON's values. JSON
// goes to encoding/json, several times faster than a YAML parser (10 MB
// documents are JSON); YAML is refused when its aliases expand it past
// yamlbound's bound.
func decodeTree(data []byte) (any, error) {
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		var tree any
		err := json.Unmarshal(data, &tree)
		return tree, err
	}
	return yamlbound.Decode(data, yamlbound.MaxNodes)
}

// pointer follows a $ref's fragment, percent-encoded or not, in tree.
func pointer(tree any, frag string) (any, bool) {
	if unescaped, err := url.PathUnescape(frag); err == nil {
		frag = unescaped
	}
	return codec.Pointer(tree, frag)
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// jsonNumber is v with a number as a float64.
func jsonNumber(v any) any {
	if f := number(v); f != nil {
		return *f
	}
	return v
}

// number is v as a float64, as encoding/json decodes numbers (YAML's
// integers are ints); nil when v is no number.
func number(v any) *float64 {
	switch n := v.(type) {
	case float64:
		return &n
	case int:
		f := float64(n)
		return &f
	case uint64:
		f := float64(n)
		return &f
	}
	return nil
}
