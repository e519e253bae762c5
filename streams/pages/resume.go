package pages

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams"
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
	Next streams.Request
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

	// A parent stream's resume, while its children are walked, points at
	// the page in progress, which the next run fetches again. Done counts
	// the records at the top of that page handled with all their
	// children, and Digest names them by their children's partitions:
	// the next run skips those walks only when the page it gets back
	// starts with the same records, so a page that changed costs walks,
	// never rows.
	Done   int64
	Digest string
	// Child is, in a parent's resume, the walk of a child stream that was
	// under way for parent record Done+1: the children listed before
	// Stream had ended theirs, Partition names the parent record, and
	// Child.Next is the child's next page.
	Child     *Resume
	Stream    string
	Partition string
}

// Digest names a sequence of IDs; the zero Digest names none.
type Digest struct{ h uint64 }

// Add appends id to the sequence.
func (d *Digest) Add(id string) {
	if d.h == 0 {
		d.h = 14695981039346656037 // FNV-1a offset basis
	}
	for i := 0; i < len(id); i++ {
		d.h = (d.h ^ uint64(id[i])) * 1099511628211
	}
	d.h = (d.h ^ 0xff) * 1099511628211 // ends the ID: "a","b" is not "ab"
}

func (d Digest) String() string { return strconv.FormatUint(d.h, 16) }

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
	if r.Done > 0 {
		out["done"], out["digest"] = r.Done, r.Digest
	}
	if r.Child != nil {
		c := r.Child.Tree()
		c["stream"], c["partition"] = r.Child.Stream, r.Child.Partition
		out["child"] = c
	}
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

// AppendJSON appends r's JSON form — Tree's, encoded with sorted keys as
// codec.Append writes it — without building the tree: a walk checkpoints
// its resume after every page, and at pages of 100 the tree and its
// encoding were a sixth of the tap's own cost per page.
func (r *Resume) AppendJSON(b []byte) ([]byte, error) { return r.appendJSON(b, false) }

// MarshalJSON is AppendJSON for encoding/json.
func (r *Resume) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil) }

func (r *Resume) appendJSON(b []byte, child bool) ([]byte, error) {
	var err error
	b = append(b, '{')
	if r.Child != nil {
		b = append(b, `"child":`...)
		if b, err = r.Child.appendJSON(b, true); err != nil {
			return b, err
		}
		b = append(b, ',')
	}
	if r.Done > 0 {
		b = codec.AppendString(append(b, `"digest":`...), r.Digest)
		b = strconv.AppendInt(append(b, `,"done":`...), r.Done, 10)
		b = append(b, ',')
	}
	if len(r.Filter) > 0 {
		b = append(b, `"filter":{`...)
		for i, k := range slices.Sorted(maps.Keys(r.Filter)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = codec.AppendString(append(codec.AppendString(b, k), ':'), r.Filter[k])
		}
		b = append(b, "},"...)
	}
	if r.High != nil {
		if b, err = codec.Append(append(b, `"high":`...), r.High); err != nil {
			return b, err
		}
		b = append(b, ',')
	}
	b = strconv.AppendInt(append(b, `"pages":`...), r.Pages, 10)
	if child {
		b = codec.AppendString(append(b, `,"partition":`...), r.Partition)
	}
	b = append(b, `,"request":{`...)
	if r.Next.Body != nil {
		b = append(codec.AppendString(append(b, `"body":`...), string(r.Next.Body)), ',')
	}
	if len(r.Next.Header) > 0 {
		b = append(appendValues(append(b, `"header":`...), url.Values(r.Next.Header)), ',')
	}
	b = codec.AppendString(append(b, `"method":`...), r.Next.Method)
	if len(r.Next.Query) > 0 {
		b = appendValues(append(b, `,"query":`...), r.Next.Query)
	}
	b = append(codec.AppendString(append(b, `,"url":`...), r.Next.URL), '}')
	if child {
		b = codec.AppendString(append(b, `,"stream":`...), r.Stream)
	}
	if r.Version != 0 {
		b = strconv.AppendInt(append(b, `,"version":`...), r.Version, 10)
	}
	return append(b, '}'), nil
}

// appendValues appends v as valuesTree's object: each key's list of
// strings, keys sorted. A request has a few parameters, sorted in place
// on a stack array.
func appendValues(b []byte, v url.Values) []byte {
	var arr [16]string
	ks := arr[:0]
	for k := range v {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	b = append(b, '{')
	for i, k := range ks {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(codec.AppendString(b, k), ':', '[')
		for j, s := range v[k] {
			if j > 0 {
				b = append(b, ',')
			}
			b = codec.AppendString(b, s)
		}
		b = append(b, ']')
	}
	return append(b, '}')
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
	r.Done = intOf(t["done"])
	r.Digest, _ = t["digest"].(string)
	if r.Done < 0 || (r.Done > 0 && r.Digest == "") {
		return r, errors.New("done: expected a count of records with their digest")
	}
	if c, ok := t["child"].(map[string]any); ok {
		child, err := ResumeFromTree(c)
		if err != nil {
			return r, fmt.Errorf("child.%w", err)
		}
		child.Stream, _ = c["stream"].(string)
		child.Partition, _ = c["partition"].(string)
		if child.Stream == "" || child.Partition == "" {
			return r, errors.New("child: expected a stream and a partition")
		}
		r.Child = &child
	} else if t["child"] != nil {
		return r, errors.New(`child: expected {"stream", "partition", "request", ...}`)
	}
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

// CheckOrigin refuses a resume position whose request, or a child's, is
// an absolute URL off base's origin (scheme, host, port); base nil (an
// API with no fixed address, the demo's) allows relative URLs only. The
// tap writes positions on base relative, so an absolute one came from
// elsewhere: a next URL is checked against the page it came from, and a
// position read back from STATE must be held to the same rule, or a state
// file could send the stream's credentials, and take its records, from
// any host.
func (r Resume) CheckOrigin(base *url.URL) error {
	field := "request.url"
	for c := &r; c != nil; c = c.Child {
		u, err := url.Parse(c.Next.URL)
		if err != nil {
			return fmt.Errorf("%s: expected a URL", field) // not echoed: it may hold a token
		}
		if u.IsAbs() || u.Host != "" {
			if base == nil || !streams.SameOrigin(base, u) {
				return fmt.Errorf("%s: points to another host (%s) than base_url; a resume position is followed on the API's origin only, so the credentials are not sent there", field, u.Host)
			}
		}
		field = "child." + field
	}
	return nil
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
