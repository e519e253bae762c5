package streams

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
)

// Resume is where a walk stopped: enough to start the next run on the page
// that was not yet written, with the filter the walk began with.
//
// It is checkpointed in the stream's bookmark after each page, with the
// STATE that follows that page's records, and removed when the walk ends.
// A run killed on page 6 resumes on page 6: for a full-table or unsorted
// stream, whose bookmark does not move until the walk ends, this is the
// difference between re-reading one page and re-reading the stream.
type Resume struct {
	// Next is the request of the first page not yet written: its page
	// position (offset, page, key, cursor or URL) and the filter.
	Next Request
	// Filter holds the incremental parameters the walk began with, for
	// the reader: Next carries them too.
	Filter map[string]string
	// High is the largest replication-key value written so far in the
	// walk (nil when none): an unsorted stream's bookmark at the walk's
	// end must count the pages before the resume.
	High any
	// Version is the table version of a full-table stream with
	// full_table_versioning: a resumed walk goes on in the same version.
	Version int64
	// Pages counts the pages written before the resume position, over
	// every run of the walk.
	Pages int64
}

// Tree is r as a JSON object for the bookmark.
func (r Resume) Tree() map[string]any {
	req := map[string]any{"method": r.Next.Method, "url": r.Next.URL}
	if len(r.Next.Query) > 0 {
		req["query"] = valuesTree(r.Next.Query)
	}
	if len(r.Next.Header) > 0 {
		req["header"] = valuesTree(url.Values(r.Next.Header))
	}
	if r.Next.Body != nil {
		req["body"] = string(r.Next.Body)
	}
	out := map[string]any{"request": req, "pages": r.Pages}
	if len(r.Filter) > 0 {
		f := make(map[string]any, len(r.Filter))
		for k, v := range r.Filter {
			f[k] = v
		}
		out["filter"] = f
	}
	if r.High != nil {
		out["high"] = r.High
	}
	if r.Version != 0 {
		out["version"] = r.Version
	}
	return out
}

func valuesTree(v url.Values) map[string]any {
	out := make(map[string]any, len(v))
	for _, k := range slices.Sorted(maps.Keys(v)) {
		list := make([]any, len(v[k]))
		for i, s := range v[k] {
			list[i] = s
		}
		out[k] = list
	}
	return out
}

// ResumeFromTree reads a resume object written by Tree.
func ResumeFromTree(t map[string]any) (Resume, error) {
	var r Resume
	req, ok := t["request"].(map[string]any)
	if !ok {
		return r, errors.New(`request: expected {"method", "url", ...}`)
	}
	r.Next.Method, _ = req["method"].(string)
	r.Next.URL, _ = req["url"].(string)
	if r.Next.Method == "" || r.Next.URL == "" {
		return r, errors.New("request: expected a method and a url")
	}
	var err error
	if r.Next.Query, err = treeValues(req["query"]); err != nil {
		return r, fmt.Errorf("request.query: %w", err)
	}
	h, err := treeValues(req["header"])
	if err != nil {
		return r, fmt.Errorf("request.header: %w", err)
	}
	if h != nil {
		r.Next.Header = http.Header(h)
	}
	if b, ok := req["body"].(string); ok {
		r.Next.Body = []byte(b)
	}
	if f, ok := t["filter"].(map[string]any); ok {
		r.Filter = map[string]string{}
		for k, v := range f {
			r.Filter[k] = fmt.Sprint(v)
		}
	}
	r.High = t["high"]
	r.Version = intOf(t["version"])
	r.Pages = intOf(t["pages"])
	return r, nil
}

func intOf(v any) int64 {
	switch n := v.(type) {
	case json.Number:
		i, _ := n.Int64()
		return i
	case float64:
		return int64(n)
	case int64:
		return n
	}
	return 0
}

func treeValues(v any) (url.Values, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("expected an object of name to a list of strings")
	}
	out := make(url.Values, len(m))
	for k, list := range m {
		l, ok := list.([]any)
		if !ok {
			return nil, fmt.Errorf("%s: expected a list of strings", k)
		}
		for _, s := range l {
			str, ok := s.(string)
			if !ok {
				return nil, fmt.Errorf("%s: expected a list of strings", k)
			}
			out.Add(k, str)
		}
	}
	return out, nil
}

// High is the largest replication-key value observed so far (nil when
// none, and always for a per-partition stream): a resume carries it.
func (p *Plan) High() any { return p.high }

// ResumeHigh restores the largest key a resumed walk had written before
// the resume position, so that the bookmark at the walk's end counts it.
func (p *Plan) ResumeHigh(v any) {
	if p.fullTable || p.perPart || v == nil {
		return
	}
	if h, err := MaxKey(p.high, v); err == nil {
		p.high = h
	}
}

// Filter returns the incremental parameters of a walk's first request.
func (p *Plan) Filter(first Request) map[string]string {
	inc := p.def.Incremental
	if inc == nil || p.fullTable {
		return nil
	}
	out := map[string]string{}
	for _, name := range []string{inc.Param, inc.EndParam} {
		if name != "" && first.Query.Has(name) {
			out[name] = first.Query.Get(name)
		}
	}
	return out
}
