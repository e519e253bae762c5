package pages

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams"
)

// injectPaginator moves the parameters of the paginator it wraps from the
// query to the JSON body or to headers. The wrapped paginator still works
// on query parameters: before it sees a request, the values are lifted
// back from where they were put.
type injectPaginator struct {
	inner  streams.Paginator
	where  string
	params []streams.PageParam
}

func (p injectPaginator) First(req streams.Request) streams.Request {
	return p.place(p.inner.First(p.lift(req)))
}

func (p injectPaginator) Next(last streams.Request, resp *streams.Response) (streams.Request, bool, error) {
	next, more, err := p.inner.Next(p.lift(last), resp)
	if err != nil || !more {
		return next, more, err
	}
	return p.place(next), true, nil
}

// lift copies the parameters found in req's body or headers into its
// query, for the wrapped paginator to read.
func (p injectPaginator) lift(req streams.Request) streams.Request {
	var body any
	if p.where == streams.InjectBody && len(req.Body) > 0 {
		body, _ = codec.Decode(req.Body)
	}
	for _, pp := range p.params {
		text := ""
		switch p.where {
		case streams.InjectBody:
			switch v, _ := streams.Lookup(body, pp.Name); x := v.(type) {
			case string:
				text = x
			case json.Number:
				text = string(x)
			}
		case streams.InjectHeader:
			text = req.Header.Get(pp.Name)
		}
		if text != "" && req.Query.Get(pp.Name) == "" {
			req = req.WithParams(pp.Name, text)
		}
	}
	return req
}

// place moves the parameters out of req's query into its body or headers.
func (p injectPaginator) place(req streams.Request) streams.Request {
	var obj map[string]any
	if p.where == streams.InjectBody {
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
	if p.where == streams.InjectHeader {
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
		case streams.InjectBody:
			var v any = text
			if pp.Number(text) {
				v = json.Number(text)
			}
			setPath(obj, pp.Name, v)
		case streams.InjectHeader:
			h.Set(pp.Name, text)
		}
	}
	if len(q) == 0 {
		q = nil
	}
	req.Query = q
	switch p.where {
	case streams.InjectBody:
		if b, err := codec.Marshal(obj); err == nil {
			req.Body = b
		}
	case streams.InjectHeader:
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
