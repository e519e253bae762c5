package streams

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams/keys"
)

// A RequestTemplate is the first request of a stream's walks, compiled
// once: its method, its path with {placeholders}, its body, and its parts
// (query parameters, headers, GraphQL variables), each a constant or a
// RequestValue computed from the walk it starts. Plan.Request fills it in
// for each walk; the paginator then adds its own parameters.
//
// A new kind of request value is a RequestValue type; a part of the
// stream language that sets one is a line of compileRequest.
type RequestTemplate struct {
	stream string
	method string
	path   []string     // literal text at even indexes, placeholder names at odd ones
	own    RequestValue // a path a front end computes (Definition.ComputedPath); nil: path
	body   []byte       // nil: none
	parts  []RequestPart
}

// RequestPart is one named part of a request and where it goes.
type RequestPart struct {
	Name  string
	In    PartIn
	Value RequestValue
}

// PartIn is where a request part goes.
type PartIn int

// Where a request part goes.
const (
	InQuery     PartIn = iota // a query parameter (its value as text)
	InHeader                  // a header (its value as text)
	InVariables               // a variable of the GraphQL body (its value as it is)
)

// A RequestValue is a request part's value for one walk; ok false leaves
// the part out of the request.
type RequestValue interface {
	Eval(w WalkValues) (v any, ok bool, err error)
}

// WalkValues are what the first request of a walk is computed from.
type WalkValues struct {
	// Vars are the partition's path values (a parent record's key, the
	// config's path_params).
	Vars map[string]string
	// Context is the partition's keys as its parent record holds them
	// (Partition.Context; nil: no parent), for a value that reads more
	// than their text.
	Context map[string]any
	// Lower is the incremental filter's start for this walk: the lower
	// bound, a window's start or a partition's bookmark; nil: no filter.
	Lower any
	// Window is the chunk window walked; nil: none.
	Window *keys.Window
}

// PathValue is the walk's value of a path placeholder (WalkValues.Vars):
// a parent record's key, sent in the query as parent.param.
type PathValue struct{ Name string }

func (p PathValue) Eval(w WalkValues) (any, bool, error) {
	v, ok := w.Vars[p.Name]
	return v, ok, nil
}

// Constant is a request value that does not depend on the walk.
type Constant string

func (c Constant) Eval(WalkValues) (any, bool, error) { return string(c), true, nil }

// FilterStart is the incremental filter's start (WalkValues.Lower) in the
// stream's format (incremental.param).
type FilterStart struct{ Format string }

func (f FilterStart) Eval(w WalkValues) (any, bool, error) {
	if w.Lower == nil {
		return nil, false, nil
	}
	return keys.Format(w.Lower, f.Format), true, nil
}

// WindowEnd is the end of the chunk window walked in the stream's format,
// a unit before it when the API's end bound is inclusive
// (incremental.end_param).
type WindowEnd struct {
	Format    string
	Inclusive bool
}

func (f WindowEnd) Eval(w WalkValues) (any, bool, error) {
	if w.Window == nil || w.Lower == nil {
		return nil, false, nil
	}
	end := w.Window.End
	if f.Inclusive {
		end = keys.InclusiveEnd(end, f.Format)
	}
	return keys.Format(end, f.Format), true, nil
}

// compileRequest compiles d's first request: method (GET by default, POST
// for GraphQL), path, params and body, and with bounds the incremental
// filter's parts — query parameters, or the GraphQL body's variables when
// the pagination puts its values there.
func compileRequest(d *Definition, bounds bool) (*RequestTemplate, error) {
	path, err := splitPath(d.Path)
	if err != nil {
		return nil, streamErr(d.Name, "path: %v", err)
	}
	t := &RequestTemplate{stream: d.Name, method: strings.ToUpper(d.Method), path: path, own: d.ComputedPath}
	if t.method == "" {
		t.method = "GET"
	}
	for k, v := range d.Params {
		t.parts = append(t.parts, RequestPart{Name: k, In: InQuery, Value: Constant(v)})
	}
	for k, v := range d.Headers {
		t.parts = append(t.parts, RequestPart{Name: k, In: InHeader, Value: Constant(v)})
	}
	if par := d.Parent; par != nil && par.Param != "" {
		t.parts = append(t.parts, RequestPart{Name: par.Param, In: InQuery, Value: PathValue{Name: par.Key}})
	}
	t.parts = append(t.parts, d.Parts...)
	switch {
	case d.GraphQL != nil:
		t.method = "POST"
		body := map[string]any{"query": d.GraphQL.Query}
		if len(d.GraphQL.Variables) > 0 {
			body["variables"] = d.GraphQL.Variables
		}
		if t.body, err = codec.Marshal(body); err != nil {
			return nil, streamErr(d.Name, "graphql.variables: %v", err)
		}
	case t.method == "POST":
		if b := bytes.TrimSpace(d.Body); len(b) > 0 && string(b) != "null" {
			t.body = b
		}
	}
	if inc := d.Incremental; bounds && inc != nil {
		in := InQuery
		if d.Pagination.boundsInVariables() {
			in = InVariables
		}
		t.parts = append(t.parts,
			RequestPart{Name: inc.Param, In: in, Value: FilterStart{Format: inc.Format}},
			RequestPart{Name: inc.EndParam, In: in, Value: WindowEnd{Format: inc.Format, Inclusive: inc.EndInclusive}})
	}
	return t, nil
}

// Build is the template's request for the walk of w: its path filled in
// (fillParts), then each part whose value w has. A part with no name is
// left out; a later part replaces an earlier one of the same name.
func (t *RequestTemplate) Build(w WalkValues) (Request, error) {
	path, err := fillParts(t.stream, t.path, w.Vars)
	if err != nil {
		return Request{}, err
	}
	if t.own != nil {
		v, ok, err := t.own.Eval(w)
		if err != nil || !ok {
			return Request{}, streamErr(t.stream, "path: %v", cmp.Or(err, errors.New("the computed path is empty")))
		}
		path = fmt.Sprint(v)
	}
	req := Request{Method: t.method, URL: path, Body: bytes.Clone(t.body)}
	for _, p := range t.parts {
		if p.Name == "" {
			continue
		}
		v, ok, err := p.Value.Eval(w)
		if err != nil {
			return Request{}, streamErr(t.stream, "%s: %v", p.Name, err)
		}
		if !ok {
			continue
		}
		switch p.In {
		case InQuery:
			if req.Query == nil {
				req.Query = url.Values{}
			}
			req.Query.Set(p.Name, fmt.Sprint(v))
		case InHeader:
			if req.Header == nil {
				req.Header = http.Header{}
			}
			req.Header.Set(p.Name, fmt.Sprint(v))
		case InVariables:
			if req, err = req.WithVariable(p.Name, v); err != nil {
				return Request{}, err
			}
		}
	}
	return req, nil
}
