package pages

import (
	"encoding/json"
	"strings"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams"
)

// The token paginators follow something the API hands back in the body:
// an opaque cursor (cursor) or the URL of the next page (next_url).

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
// walk. With cursor_from_last_record the token is that field of the
// page's last record, and an empty page ends the walk.
type cursorPaginator struct {
	name string
	p    streams.CursorOptions
}

func (c cursorPaginator) First(req streams.Request) streams.Request {
	return req.WithParams(pageSizeParam(c.p.PageSizeParam, c.p.PageSize)...)
}

func (c cursorPaginator) Next(last streams.Request, resp *streams.Response) (streams.Request, bool, error) {
	if c.p.HasMorePath != "" {
		if v, found := streams.Lookup(resp.Body, c.p.HasMorePath); found && v != nil {
			more, ok := v.(bool)
			if !ok {
				return streams.Request{}, false, streamErr(c.name, "has_more_path %q holds a JSON %s, expected a boolean", c.p.HasMorePath, codec.TypeName(v))
			}
			if !more {
				return streams.Request{}, false, nil
			}
		}
	}
	if f := c.p.CursorFromLastRecord; f != "" {
		n := len(resp.Records)
		if n == 0 {
			return streams.Request{}, false, nil
		}
		v, ok, err := keyOf(resp.Records[n-1], f)
		if err != nil {
			return streams.Request{}, false, streamErr(c.name, "cursor_from_last_record %q: %v", f, err)
		}
		if !ok {
			return streams.Request{}, false, streamErr(c.name, "the page's last record has no cursor_from_last_record field %q to continue from", f)
		}
		return last.WithParams(c.p.CursorParam, v.text), true, nil
	}
	if h := c.p.NextCursorHeader; h != "" {
		token := strings.TrimSpace(resp.Header.Get(h))
		if token == "" {
			return streams.Request{}, false, nil
		}
		return last.WithParams(c.p.CursorParam, token), true, nil
	}
	v, found := streams.Lookup(resp.Body, c.p.NextCursorPath)
	if !found || v == nil {
		return streams.Request{}, false, nil
	}
	var token string
	switch t := v.(type) {
	case string:
		token = t
	case json.Number:
		token = string(t)
	default:
		return streams.Request{}, false, streamErr(c.name, "next_cursor_path %q holds a JSON %s, expected a string", c.p.NextCursorPath, codec.TypeName(v))
	}
	if token == "" {
		return streams.Request{}, false, nil
	}
	return last.WithParams(c.p.CursorParam, token), true, nil
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
	p    streams.NextURLOptions
}

func (n nextURLPaginator) First(req streams.Request) streams.Request { return req }

func (n nextURLPaginator) Next(last streams.Request, resp *streams.Response) (streams.Request, bool, error) {
	v, found := streams.Lookup(resp.Body, n.p.NextURLPath)
	if !found || v == nil {
		return streams.Request{}, false, nil
	}
	raw, ok := v.(string)
	if !ok {
		return streams.Request{}, false, streamErr(n.name, "next_url_path %q holds a JSON %s, expected a string", n.p.NextURLPath, codec.TypeName(v))
	}
	if raw == "" {
		return streams.Request{}, false, nil
	}
	next, err := followURL(n.name, last, resp, raw)
	if err != nil {
		return streams.Request{}, false, err
	}
	return next, true, nil
}
