package streams

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/tap-dev/tap/codec"
)

// Where a paginator's parameters go (pagination.inject).
const (
	InjectQuery  = "query"
	InjectBody   = "body"
	InjectHeader = "header"
)

// PageParam is one parameter a paginator sets.
type PageParam struct {
	Name string
	// Number: sent in a JSON body as a number (offsets, page numbers,
	// sizes; a numeric key), not as a string.
	Number func(text string) bool
}

func isCount(text string) bool   { return codec.IsInteger(text) }
func isNumeric(text string) bool { return codec.IsNumber(text) }
func never(string) bool          { return false }

// PageParams lists the parameters the paginator of opts sets.
func PageParams(opts PageOptions) []PageParam {
	if s, ok := opts.(paramSetter); ok {
		return s.params()
	}
	return nil
}

// checkInject checks pagination.inject against the stream.
func (d *Definition) checkInject() error {
	p := d.Pagination
	bad := func(format string, args ...any) error {
		return &FieldError{Stream: d.Name, Field: "pagination.inject", Msg: fmt.Sprintf(format, args...)}
	}
	switch p.Inject {
	case "", InjectQuery:
		return nil
	case InjectBody, InjectHeader:
	default:
		return bad("must be query, body or header, got %q", p.Inject)
	}
	if len(PageParams(p.OptionSet())) == 0 {
		return bad("pagination type %q sets no parameters to inject", p.Type)
	}
	if p.Inject == InjectBody {
		if d.GraphQL != nil {
			return bad("a GraphQL stream pages with variables; use pagination type graphql")
		}
		if !strings.EqualFold(d.Method, "POST") {
			return bad("\"body\" needs method POST, got %q", d.Method)
		}
		if b := strings.TrimSpace(string(d.Body)); b != "" && b != "null" {
			if v, err := codec.Decode(d.Body); err != nil || jsonType(v) != "object" {
				return &FieldError{Stream: d.Name, Field: "body", Msg: "must be a JSON object when pagination.inject is \"body\""}
			}
		}
	}
	return nil
}

// injectPaginator moves the parameters of the paginator it wraps from the
// query to the JSON body or to headers. The wrapped paginator still works
// on query parameters: before it sees a request, the values are lifted
// back from where they were put.
type injectPaginator struct {
	inner  Paginator
	where  string
	params []PageParam
}

func (p injectPaginator) First(req Request) Request {
	return p.place(p.inner.First(p.lift(req)))
}

func (p injectPaginator) Next(last Request, resp *Page) (Request, bool, error) {
	next, more, err := p.inner.Next(p.lift(last), resp)
	if err != nil || !more {
		return next, more, err
	}
	return p.place(next), true, nil
}

// lift copies the parameters found in req's body or headers into its
// query, for the wrapped paginator to read.
func (p injectPaginator) lift(req Request) Request {
	var body any
	if p.where == InjectBody && len(req.Body) > 0 {
		body, _ = codec.Decode(req.Body)
	}
	for _, pp := range p.params {
		text := ""
		switch p.where {
		case InjectBody:
			switch v, _ := Lookup(body, pp.Name); x := v.(type) {
			case string:
				text = x
			case json.Number:
				text = string(x)
			}
		case InjectHeader:
			text = req.Header.Get(pp.Name)
		}
		if text != "" && req.Query.Get(pp.Name) == "" {
			req = req.WithParams(pp.Name, text)
		}
	}
	return req
}

// place moves the parameters out of req's query into its body or headers.
func (p injectPaginator) place(req Request) Request {
	var obj map[string]any
	if p.where == InjectBody {
		obj = map[string]any{}
		if len(req.Body) > 0 {
			v, err := codec.Decode(req.Body)
			m, ok := v.(map[string]any)
			if err != nil || !ok {
				return req // Check refused such a body; leave the query as is
			}
			obj = m
		}
	}
	q := req.WithParams().Query // a copy
	var h http.Header
	if p.where == InjectHeader {
		h = req.Header.Clone()
		if h == nil {
			h = http.Header{}
		}
	}
	for _, pp := range p.params {
		vs, ok := q[pp.Name]
		if !ok || len(vs) == 0 {
			continue
		}
		text := vs[0]
		delete(q, pp.Name)
		switch p.where {
		case InjectBody:
			var v any = text
			if pp.Number(text) {
				v = json.Number(text)
			}
			setPath(obj, pp.Name, v)
		case InjectHeader:
			h.Set(pp.Name, text)
		}
	}
	if len(q) == 0 {
		q = nil
	}
	req.Query = q
	switch p.where {
	case InjectBody:
		if b, err := codec.Marshal(obj); err == nil {
			req.Body = b
		}
	case InjectHeader:
		req.Header = h
	}
	return req
}

// setPath sets the dotted path in obj to v, making the objects on the way
// (an object in the way that is not one is replaced).
func setPath(obj map[string]any, path string, v any) {
	segs := strings.Split(path, ".")
	for _, seg := range segs[:len(segs)-1] {
		next, ok := obj[seg].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[seg] = next
		}
		obj = next
	}
	obj[segs[len(segs)-1]] = v
}
