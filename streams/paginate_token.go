package streams

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The token paginators follow something the API hands back in the body:
// an opaque cursor (cursor) or the URL of the next page (next_url).

// CursorOptions are the options of pagination type cursor.
type CursorOptions struct {
	CursorParam    string `json:"cursor_param"`
	NextCursorPath string `json:"next_cursor_path"`
	HasMorePath    string `json:"has_more_path"`
	PageSizeParam  string `json:"page_size_param"`
	PageSize       int    `json:"page_size"`
	// NextCursorHeader reads the cursor from a response header instead
	// of the body.
	NextCursorHeader string `json:"next_cursor_header"`
}

func (*CursorOptions) pageType() string { return PageCursor }

func (o *CursorOptions) check() (string, string) {
	switch {
	case o.CursorParam == "":
		return "cursor_param", requiredFor(PageCursor)
	case o.NextCursorPath == "" && o.NextCursorHeader == "":
		return "next_cursor_path", requiredFor(PageCursor) + " (or next_cursor_header, to read the cursor from a response header)"
	case o.NextCursorPath != "" && o.NextCursorHeader != "":
		return "next_cursor_header", "takes the place of next_cursor_path; set one of them"
	case o.PageSize < 0:
		return "page_size", fmt.Sprintf("must not be negative, got %d", o.PageSize)
	}
	return "", ""
}

func (o *CursorOptions) paginator(d *Definition) Paginator {
	return cursorPaginator{name: d.Name, p: *o}
}

// NextURLOptions are the options of pagination type next_url.
type NextURLOptions struct {
	NextURLPath string `json:"next_url_path"`
}

func (*NextURLOptions) pageType() string { return PageNextURL }

func (o *NextURLOptions) check() (string, string) {
	if o.NextURLPath == "" {
		return "next_url_path", requiredFor(PageNextURL)
	}
	return "", ""
}

func (o *NextURLOptions) paginator(d *Definition) Paginator {
	return nextURLPaginator{name: d.Name, p: *o}
}

// cursorPaginator sends cursor_param = the token found at
// next_cursor_path.
//
// The token is opaque: it is passed back verbatim, never decoded, trimmed
// or parsed. It travels through url.Values, so characters such as '+',
// '/' and '=' are escaped once, correctly, on the wire. A numeric token is
// sent as its exact JSON text.
//
// It stops when the token is absent, null or "", or when has_more_path is
// set, present in the body and false. With next_cursor_header the token is
// that response header's value, and an absent or empty header ends the
// walk.
type cursorPaginator struct {
	name string
	p    CursorOptions
}

func (c cursorPaginator) First(req Request) Request {
	return withParams(req, pageSizeParam(c.p.PageSizeParam, c.p.PageSize)...)
}

func (c cursorPaginator) Next(last Request, resp *Response) (Request, bool, error) {
	if c.p.HasMorePath != "" {
		if v, found := Lookup(resp.Body, c.p.HasMorePath); found && v != nil {
			more, ok := v.(bool)
			if !ok {
				return Request{}, false, streamErr(c.name, "has_more_path %q holds a JSON %s, expected a boolean", c.p.HasMorePath, jsonType(v))
			}
			if !more {
				return Request{}, false, nil
			}
		}
	}
	if h := c.p.NextCursorHeader; h != "" {
		token := strings.TrimSpace(resp.Header.Get(h))
		if token == "" {
			return Request{}, false, nil
		}
		return withParams(last, c.p.CursorParam, token), true, nil
	}
	v, found := Lookup(resp.Body, c.p.NextCursorPath)
	if !found || v == nil {
		return Request{}, false, nil
	}
	var token string
	switch t := v.(type) {
	case string:
		token = t
	case json.Number:
		token = string(t)
	default:
		return Request{}, false, streamErr(c.name, "next_cursor_path %q holds a JSON %s, expected a string", c.p.NextCursorPath, jsonType(v))
	}
	if token == "" {
		return Request{}, false, nil
	}
	return withParams(last, c.p.CursorParam, token), true, nil
}

// nextURLPaginator follows the URL found at next_url_path.
//
// The URL may be absolute or relative; a relative one is resolved against
// the URL of the page it came from (Response.URL). The next Request has
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

func (n nextURLPaginator) Next(last Request, resp *Response) (Request, bool, error) {
	v, found := Lookup(resp.Body, n.p.NextURLPath)
	if !found || v == nil {
		return Request{}, false, nil
	}
	raw, ok := v.(string)
	if !ok {
		return Request{}, false, streamErr(n.name, "next_url_path %q holds a JSON %s, expected a string", n.p.NextURLPath, jsonType(v))
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
