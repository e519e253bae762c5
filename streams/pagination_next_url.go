package streams

import (
	"github.com/tap-dev/tap/codec"
)

// PageNextURL follows the URL of the next page found in the body.
const PageNextURL = "next_url"

// NextURLOptions are the options of pagination type next_url.
type NextURLOptions struct {
	NextURLPath string `json:"next_url_path"`
	// Computed, set by a front end and never by JSON, computes the next
	// URL in place of next_url_path (Pagination.Compute).
	Computed NextCursor `json:"-"`
}

func (*NextURLOptions) pageType() string { return PageNextURL }

// rules: the next URL's path, unless a front end computes the URL.
func (*NextURLOptions) rules() []rule {
	return []rule{{field: "pagination.next_url_path", msg: `is required for pagination type "next_url"`,
		need: orComputed(set("pagination.next_url_path"))}}
}

// readsTree: a computed next URL reads the whole body.
func (o *NextURLOptions) readsTree() bool { return o.Computed != nil }

func (o *NextURLOptions) setComputed(c NextCursor) { o.Computed = c }

// bodyFields: the next URL is always read from the body.
func (*NextURLOptions) bodyFields() []string { return []string{"next_url_path"} }

// readsPage: the next URL in the body.
func (o *NextURLOptions) readsPage(*Definition) PageReads {
	return PageReads{Envelope: []string{o.NextURLPath}}
}

func (o *NextURLOptions) paginator(d *Definition) Paginator {
	return nextURLPaginator{name: d.Name, p: *o}
}

func (*NextURLOptions) doc() PageDoc {
	return PageDoc{Next: "the URL in the body (absolute or relative)", End: "null or absent"}
}

// nextURLPaginator follows the URL found at next_url_path.
//
// The URL may be absolute or relative; a relative one is resolved against
// the URL of the page it came from (Page.URL). The next Request has
// that absolute URL and a nil Query: the URL carries its own query, which
// is sent exactly as the API wrote it. A URL on another scheme or host is
// an error, never followed: the stream's credentials must not leave the
// API.
//
// It stops when the value is absent, null or "".
type nextURLPaginator struct {
	name string
	p    NextURLOptions
}

func (n nextURLPaginator) First(req Request) Request { return req }

func (n nextURLPaginator) Next(last Request, resp *Page) (Request, bool, error) {
	if n.p.Computed != nil {
		raw, more, err := n.p.Computed.Next(resp)
		if err != nil {
			return Request{}, false, streamErr(n.name, "the next page's URL: %v", err)
		}
		if !more || raw == "" {
			return Request{}, false, nil
		}
		next, err := followURL(n.name, last, resp, raw)
		return next, err == nil, err
	}
	v, found := resp.Value(n.p.NextURLPath)
	if !found || v == nil {
		return Request{}, false, nil
	}
	raw, ok := v.(string)
	if !ok {
		return Request{}, false, streamErr(n.name, "next_url_path %q holds a JSON %s, expected a string", n.p.NextURLPath, codec.TypeName(v))
	}
	if raw == "" {
		return Request{}, false, nil
	}
	next, err := followURL(n.name, last, resp, raw)
	if err != nil {
		return Request{}, false, err
	}
	return next, true, nil
}
