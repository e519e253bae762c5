package initconfig

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/tap-dev/tap/streams"
)

// Options choose what FromOpenAPI generates.
type Options struct {
	// BaseURL replaces the document's server URL (needed when it is
	// relative or a template without defaults).
	BaseURL string
	// Paths, when set, keeps the operations whose path matches one of
	// its comma-separated globs ('*' matches any run of characters,
	// '/' included).
	Paths string
}

// An InputError is a document that cannot be made into a config: not
// OpenAPI, a broken $ref, no list operation. Its text is one line.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func inputErr(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return &InputError{Msg: strings.Join(strings.Fields(msg), " ")}
}

// FromOpenAPI generates a config from the OpenAPI document data, read
// from file (which relative $refs and messages name). OpenAPI 3.0 and 3.1
// and Swagger 2.0 are read alike (document.go).
func FromOpenAPI(ctx context.Context, data []byte, file string, opts Options) (*Result, error) {
	res := &Result{}
	doc, err := loadDocument(data, file, res)
	if err != nil {
		return nil, err
	}
	base, err := baseURL(doc, opts.BaseURL, file, res)
	if err != nil {
		return nil, err
	}
	g := &generator{doc: doc, res: res, names: map[string]bool{}, byPath: map[string]*stream{}, schemas: newSchemaWriter()}
	for _, p := range sortedKeys(doc.Paths) {
		item := doc.Paths[p]
		if !matchPaths(opts.Paths, p) {
			continue
		}
		g.operation(g.fixedPath(p, item), item)
	}
	if len(g.list) == 0 {
		what := "no GET operation whose success response is a list (an array, or an object holding an array of objects)"
		if opts.Paths != "" {
			what += " among the paths matching --paths " + opts.Paths
		}
		for _, n := range res.Notes {
			if bad, ok := strings.CutPrefix(n, "WARN "+file+": "); ok {
				what += " (" + bad + ")"
			}
		}
		return nil, inputErr("%s: %s", file, what)
	}
	g.parents()
	res.Config.BaseURL = base
	res.Config.Auth = g.auth()
	for _, s := range g.list {
		if s.skip {
			continue
		}
		res.Config.Streams = append(res.Config.Streams, s.def)
	}
	res.Config.PathParams = g.pathParams
	res.Config.Definitions = g.usedDefinitions()
	if len(res.Config.Streams) == 0 {
		return nil, inputErr("%s: no list operation could be made into a stream (see the notes above)", file)
	}
	return res, nil
}

// loadDocument decodes the document and reads what init needs of it
// (buildDocument), the operations needing a $ref it does not hold taken
// out first (pruneBrokenRefs).
func loadDocument(data []byte, file string, res *Result) (*document, error) {
	decoded, err := decodeTree(data)
	if err != nil {
		return nil, inputErr("%s: not JSON or YAML: %v", file, firstLine(err))
	}
	tree, _ := decoded.(map[string]any)
	openapi, swagger := str(tree["openapi"]), str(tree["swagger"])
	switch {
	case strings.HasPrefix(openapi, "3."), swagger == "2.0":
	case openapi != "":
		return nil, inputErr("%s: openapi %q: expected version 3.0 or 3.1 (or a Swagger 2.0 document)", file, openapi)
	default:
		return nil, inputErr(`%s: not an OpenAPI document: expected a top-level "openapi": "3.x" (or "swagger": "2.0") field`, file)
	}
	for _, n := range pruneBrokenRefs(tree) {
		res.note("WARN %s: %s", file, n)
	}
	if n := itemLists(tree); n > 0 {
		res.note("WARN %s: %d array schemas give their items as a list (a tuple), which OpenAPI does not allow: the first item's schema is read", file, n)
	}
	doc, err := buildDocument(tree, file, swagger == "2.0")
	if err != nil {
		return nil, inputErr("%s: broken $ref: %v", file, firstLine(err))
	}
	if swagger == "2.0" {
		res.note("%s: a Swagger 2.0 document, converted to OpenAPI 3.0", file)
	}
	return doc, nil
}

// pathErr is err without the path a *fs.PathError repeats.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// yamlPlace is a YAML error without the text it quotes: its line, or
// the bound it passed.
func yamlPlace(err error) string {
	msg := err.Error()
	if _, rest, ok := strings.Cut(msg, "line "); ok {
		if n, _, ok := strings.Cut(rest, ":"); ok {
			return "at line " + n
		}
	}
	if strings.Contains(msg, "aliases") {
		return msg
	}
	return "cannot be parsed"
}

func firstLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// baseURL is --base-url, else the first server's URL with its variables'
// defaults filled in.
func baseURL(doc *document, flag, file string, res *Result) (string, error) {
	if flag != "" {
		return strings.TrimSuffix(flag, "/"), nil
	}
	if len(doc.Servers) == 0 || doc.Servers[0] == nil {
		return "", inputErr("%s: the document lists no servers: give --base-url", file)
	}
	srv := doc.Servers[0]
	u := srv.URL
	for _, name := range sortedKeys(srv.Variables) {
		v := srv.Variables[name]
		if v == "" {
			return "", inputErr("%s: servers[0].url %q: variable {%s} has no default: give --base-url", file, srv.URL, name)
		}
		u = strings.ReplaceAll(u, "{"+name+"}", v)
	}
	parsed, err := url.Parse(u)
	if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
		return "", inputErr("%s: servers[0].url %q is not an absolute http(s) URL: give --base-url", file, srv.URL)
	}
	if u != srv.URL {
		res.note("base_url %s: servers[0].url %s with its variables' defaults", u, srv.URL)
	}
	if len(doc.Servers) > 1 {
		res.note("base_url %s: the first of %d servers the document lists", u, len(doc.Servers))
	}
	return strings.TrimSuffix(u, "/"), nil
}

// matchPaths reports whether path matches one of the comma-separated
// globs of patterns (all paths match no patterns).
func matchPaths(patterns, path string) bool {
	if patterns == "" {
		return true
	}
	for _, p := range strings.Split(patterns, ",") {
		if p = strings.TrimSpace(p); p != "" && glob(p, path) {
			return true
		}
	}
	return false
}

// glob matches s against pattern, where '*' is any run of characters and
// '?' any one.
func glob(pattern, s string) bool {
	var b strings.Builder
	b.WriteString("^")
	for _, r := range pattern {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	ok, _ := regexp.MatchString(b.String(), s)
	return ok
}

// A stream is one list operation on its way to a definition.
type stream struct {
	path  string
	def   streams.Definition
	item  *shape // the record's shape
	props map[string]any
	skip  bool
}

type generator struct {
	doc        *document
	res        *Result
	list       []*stream
	byPath     map[string]*stream
	names      map[string]bool
	pathParams map[string]any
	schemas    *schemaWriter
	fixedNoted map[string]bool
}

// operation makes the GET operation of path into a stream, when its
// success response is a list.
func (g *generator) operation(path string, item *pathItem) {
	op := item.Get
	body, headers := successResponse(op)
	if body == nil {
		return
	}
	env := flatten(body.Value)
	recordsPath, rec, ok := findRecords(env)
	if !ok {
		return
	}
	s := &stream{path: path, item: rec}
	d := &s.def
	d.Name = g.name(path, g.parentOf(path))
	d.Path = path
	d.RecordsPath = recordsPath
	params := queryParams(item, op)

	schema := g.schemas.record(rec, body.Value)
	s.props = schema["properties"].(map[string]any)
	if pk := primaryKey(rec); pk != "" {
		d.PrimaryKey = []string{pk}
		if pk != "id" {
			g.res.note("stream %s: primary key %s guessed (a required *_id property; no id)", d.Name, pk)
		}
	} else {
		g.res.note("stream %s: no primary key found (no id, nor one required *_id property): duplicates cannot be told apart", d.Name)
	}
	g.incremental(d, rec, params)
	g.pagination(d, env, recordsPath, params, headers)
	g.requiredParams(s, params)
	raw, err := json.Marshal(schema)
	if err == nil {
		d.Schema = raw
	}
	g.list = append(g.list, s)
	g.byPath[path] = s
}

// fixedPath is path with each {placeholder} whose value the document
// fixes filled in: a path parameter with a default (or one enum value),
// or a server variable of that name with a default. A document whose
// paths start /{apiVersion}/ (default v4) gives streams named and
// requested as /v4/..., not with the placeholder().
func (g *generator) fixedPath(path string, item *pathItem) string {
	return placeholder().ReplaceAllStringFunc(path, func(m string) string {
		name := m[1 : len(m)-1]
		for _, list := range [][]*parameter{item.Get.Parameters, item.Parameters} {
			for _, p := range list {
				if p.In != "path" || p.Name != name || p.Schema == nil {
					continue
				}
				sch := p.Schema.Value
				v := sch.Default
				if v == nil && len(sch.Enum) == 1 {
					v = sch.Enum[0]
				}
				if v != nil {
					g.fixed(name, fmt.Sprint(v), "its parameter's default")
					return fmt.Sprint(v)
				}
			}
		}
		for _, srv := range g.doc.Servers {
			if v := srv.Variables[name]; v != "" {
				g.fixed(name, v, "the server variable's default")
				return v
			}
		}
		return m
	})
}

// fixed notes, once per placeholder, the value fixedPath gave it.
func (g *generator) fixed(name, value, why string) {
	if g.fixedNoted == nil {
		g.fixedNoted = map[string]bool{}
	}
	if !g.fixedNoted[name] {
		g.fixedNoted[name] = true
		g.res.note("paths: {%s} is %s, %s", name, value, why)
	}
}

var placeholder = lazyRegexp(`\{[^{}/]+\}`)

// successResponse is the JSON schema of op's 200 (or first 2XX) response
// and its documented headers.
func successResponse(op *operation) (*schemaRef, []string) {
	for _, code := range sortedKeys(op.Responses) {
		if code != "200" && !(len(code) == 3 && code[0] == '2') && code != "2XX" {
			continue
		}
		r := op.Responses[code]
		for _, mt := range sortedKeys(r.Content) {
			// application/json; charset=utf-8 is JSON too.
			if base, _, _ := strings.Cut(mt, ";"); !jsonMediaType(strings.TrimSpace(base)) {
				continue
			}
			return r.Content[mt], r.Headers
		}
	}
	return nil, nil
}

func jsonMediaType(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "*/*"
}

// recordsNames are the envelope properties that hold the records, in the
// order they are preferred when a body has several arrays of objects.
var recordsNames = []string{"data", "items", "results", "records", "values", "entries", "elements", "list", "rows", "objects"}

// findRecords finds the records in a response body: the body itself when
// it is an array of objects, else the one array of objects among its
// properties (or theirs, one level down).
func findRecords(body *shape) (string, *shape, bool) {
	if it, ok := body.objectItems(); ok {
		return "", it, true
	}
	if !body.is("object") {
		return "", nil, false
	}
	type found struct {
		path string
		item *shape
	}
	var arrays []found
	for _, name := range sortedKeys(body.props) {
		p := body.prop(name)
		if it, ok := p.objectItems(); ok {
			arrays = append(arrays, found{name, it})
		}
	}
	if len(arrays) == 0 {
		for _, name := range sortedKeys(body.props) {
			p := body.prop(name)
			if !p.is("object") {
				continue
			}
			for _, inner := range sortedKeys(p.props) {
				if it, ok := p.prop(inner).objectItems(); ok {
					arrays = append(arrays, found{name + "." + inner, it})
				}
			}
		}
	}
	if len(arrays) == 0 {
		return "", nil, false
	}
	best := arrays[0]
	for _, want := range recordsNames {
		if i := slices.IndexFunc(arrays, func(f found) bool { return lastSegment(f.path) == want }); i >= 0 {
			best = arrays[i]
			break
		}
	}
	return best.path, best.item, true
}

func lastSegment(path string) string { return path[strings.LastIndexByte(path, '.')+1:] }

// parentOf is the stream listing the path before path's last
// placeholder, or nil. Paths are taken in order, so a parent comes first.
func (g *generator) parentOf(path string) *stream {
	segs := strings.Split(path, "/")
	for i := len(segs) - 1; i > 0; i-- {
		if strings.HasPrefix(segs[i], "{") {
			return g.byPath[strings.Join(segs[:i], "/")]
		}
	}
	return nil
}

// name is a stream name for path: its last literal segment (after the
// parent's name in the singular, for a child: order_items), or more of
// them when that is taken.
func (g *generator) name(path string, parent *stream) string {
	var lits []string
	for _, seg := range strings.Split(path, "/") {
		if seg == "" || strings.HasPrefix(seg, "{") || versionSegment().MatchString(seg) {
			continue
		}
		lits = append(lits, snake(seg))
	}
	if len(lits) == 0 {
		lits = []string{"records"}
	}
	if parent != nil && !strings.HasPrefix(lits[len(lits)-1], singular(parent.def.Name)) {
		lits = append(lits[:len(lits)-1], singular(parent.def.Name)+"_"+lits[len(lits)-1])
	}
	for n := 1; n <= len(lits); n++ {
		parts := slices.Clone(lits[len(lits)-n:])
		for i := range len(parts) - 1 {
			parts[i] = singular(parts[i])
		}
		name := strings.Join(parts, "_")
		if !g.names[name] {
			g.names[name] = true
			return name
		}
	}
	for i := 2; ; i++ {
		name := fmt.Sprintf("%s_%d", strings.Join(lits, "_"), i)
		if !g.names[name] {
			g.names[name] = true
			return name
		}
	}
}

var versionSegment = lazyRegexp(`^(v\d+(\.\d+)*|api|rest)$`)

// queryParams are the query parameters of op and its path item (op's
// win), by name.
func queryParams(item *pathItem, op *operation) map[string]*parameter {
	out := map[string]*parameter{}
	for _, list := range [][]*parameter{item.Parameters, op.Parameters} {
		for _, p := range list {
			if p.In != "query" {
				continue
			}
			out[p.Name] = p
			// Stripe's created[gte]: an object parameter sent as deepObject.
			if p.Style == "deepObject" && p.Schema != nil {
				for name, sub := range flatten(p.Schema.Value).props {
					out[p.Name+"["+name+"]"] = &parameter{Name: p.Name + "[" + name + "]", In: p.In, Schema: sub}
				}
			}
		}
	}
	return out
}

// primaryKey is "id", else the one required *_id property.
func primaryKey(rec *shape) string {
	if _, ok := rec.props["id"]; ok {
		return "id"
	}
	var ids []string
	for _, name := range sortedKeys(rec.props) {
		if strings.HasSuffix(name, "_id") && rec.isRequired(name) {
			ids = append(ids, name)
		}
	}
	if len(ids) == 1 {
		return ids[0]
	}
	return ""
}

// requiredParams gives each required query parameter that nothing else
// sets its default (or first enum value); a stream with one that has
// neither is left out, with a note.
func (g *generator) requiredParams(s *stream, params map[string]*parameter) {
	d := &s.def
	for _, name := range sortedKeys(params) {
		p := params[name]
		if !p.Required || d.Params[name] != "" || pageParamOf(d, name) || (d.Incremental != nil && d.Incremental.Param == name) {
			continue
		}
		var v any
		if p.Schema != nil {
			v = p.Schema.Value.Default
			if v == nil && len(p.Schema.Value.Enum) > 0 {
				v = p.Schema.Value.Enum[0]
			}
		}
		if v == nil {
			s.skip = true
			g.res.note("stream %s: left out: required query parameter %s has no default; add the stream with params.%s by hand", d.Name, name, name)
			return
		}
		if d.Params == nil {
			d.Params = map[string]string{}
		}
		d.Params[name] = fmt.Sprint(v)
		g.res.note("stream %s: required query parameter %s set to its documented default %q", d.Name, name, d.Params[name])
	}
}

// pageParamOf reports whether the stream's pagination sets parameter name.
func pageParamOf(d *streams.Definition, name string) bool {
	for _, p := range streams.PageParams(d.Pagination.OptionSet()) {
		if p.Name == name {
			return true
		}
	}
	return false
}

// errNoParent is why a path placeholder is a config value.
var errNoParent = errors.New("no parent")

// parents makes each stream whose path has placeholders a child of the
// stream listing the path before its last placeholder, and the other
// placeholders config values.
func (g *generator) parents() {
	for _, s := range g.list {
		// Every placeholder, also one inside a segment
		// (/thumbnail.{extension}, /compare/{base}...{head}).
		var holes []string
		for _, m := range placeholder().FindAllString(s.path, -1) {
			holes = append(holes, m[1:len(m)-1])
		}
		if len(holes) == 0 {
			continue
		}
		// The last one may be a parent's key when it is a segment of its
		// own after the parent's path.
		segs := strings.Split(s.path, "/")
		last := len(segs) - 1
		for last >= 0 && segs[last] != "{"+holes[len(holes)-1]+"}" {
			last--
		}
		var parent *stream
		if last > 0 {
			parent = g.byPath[strings.Join(segs[:last], "/")]
		}
		if parent == s || (parent != nil && parent.skip) {
			parent = nil
		}
		if parent != nil {
			name := holes[len(holes)-1]
			key, err := g.parentKey(parent, s, name)
			if err == nil {
				s.def.Parent = &streams.Parent{Stream: parent.def.Name, Key: key, As: name}
				s.props[name] = parentKeySchema(parent, key)
				raw, _ := json.Marshal(map[string]any{"type": "object", "properties": s.props})
				s.def.Schema = raw
				holes = holes[:len(holes)-1]
			}
		}
		for _, name := range holes {
			g.pathParam(s, name)
		}
	}
}

// parentKey is the field of parent's records that placeholder name of
// child's path holds.
func (g *generator) parentKey(parent, child *stream, name string) (string, error) {
	if _, ok := parent.item.props[name]; ok {
		return name, nil
	}
	one := singular(parent.def.Name)
	for _, prefix := range []string{one + "_", one} {
		if rest, ok := strings.CutPrefix(name, prefix); ok && rest != "" {
			rest = snake(rest)
			if _, ok := parent.item.props[rest]; ok {
				return rest, nil
			}
		}
	}
	if len(parent.def.PrimaryKey) == 1 && (name == "id" || strings.HasSuffix(name, "_id") || strings.HasSuffix(name, "Id")) {
		pk := parent.def.PrimaryKey[0]
		g.res.note("stream %s: parent %s, its %s guessed to fill {%s}", child.def.Name, parent.def.Name, pk, name)
		return pk, nil
	}
	return "", errNoParent
}

func parentKeySchema(parent *stream, key string) any {
	if p, ok := parent.props[key]; ok {
		return p
	}
	return map[string]any{}
}

// pathParam makes placeholder name a config value read from the
// environment.
func (g *generator) pathParam(s *stream, name string) {
	if g.pathParams == nil {
		g.pathParams = map[string]any{}
	}
	if _, ok := g.pathParams[name]; !ok {
		g.pathParams[name] = envRef(envName(name))
		g.res.note("path parameter {%s} is no parent's key: path_params.%s reads the environment variable %s (first in stream %s)", name, name, envName(name), s.def.Name)
	}
}

// auth is the auth block of the document's security scheme (the one its
// top-level security names first, else the first defined), secrets as
// {"env": NAME}.
func (g *generator) auth() map[string]any {
	schemes := g.doc.Schemes
	if len(schemes) == 0 {
		return nil
	}
	name := ""
	for _, req := range g.doc.Security {
		for _, n := range sortedKeys(req) {
			if schemes[n] != nil {
				name = n
				break
			}
		}
		if name != "" {
			break
		}
	}
	if name == "" {
		name = sortedKeys(schemes)[0]
	}
	s := schemes[name]
	if s == nil {
		return nil
	}
	note := func(what string, env ...string) {
		g.res.note("auth: %s from security scheme %s; set %s", what, name, strings.Join(env, " and "))
	}
	switch {
	case s.Type == "http" && strings.EqualFold(s.Scheme, "bearer"):
		note("bearer token", "TAP_TOKEN")
		return map[string]any{"type": "bearer", "token": envRef("TAP_TOKEN")}
	case s.Type == "http" && strings.EqualFold(s.Scheme, "basic"):
		note("basic", "TAP_USERNAME", "TAP_PASSWORD")
		return map[string]any{"type": "basic", "username": envRef("TAP_USERNAME"), "password": envRef("TAP_PASSWORD")}
	case s.Type == "apiKey" && (s.In == "header" || s.In == "query"):
		note("API key in "+s.In+" "+s.Name, "TAP_API_KEY")
		return map[string]any{"type": "api_key", "name": s.Name, "in": s.In, "value": envRef("TAP_API_KEY")}
	case s.Type == "oauth2" && s.TokenURL != "":
		note("OAuth2 client credentials", "TAP_CLIENT_ID", "TAP_CLIENT_SECRET")
		a := map[string]any{"type": "oauth2", "token_url": s.TokenURL,
			"client_id": envRef("TAP_CLIENT_ID"), "client_secret": envRef("TAP_CLIENT_SECRET")}
		if len(s.Scopes) > 0 {
			a["scopes"] = s.Scopes
		}
		return a
	case s.Type == "oauth2" || s.Type == "openIdConnect":
		note(s.Type+" without a client-credentials flow, sent as a bearer token you obtain", "TAP_TOKEN")
		return map[string]any{"type": "bearer", "token": envRef("TAP_TOKEN")}
	}
	g.res.note("auth: security scheme %s (%s in %s) is not one the tap sends; none written", name, s.Type, s.In)
	return nil
}

// lazyRegexp compiles pattern on first use: init's patterns cost a sync
// run nothing at start.
func lazyRegexp(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}
