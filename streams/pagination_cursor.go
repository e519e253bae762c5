package streams

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tap-dev/tap/codec"
)

// PageCursor sends back the token the last page handed out.
const PageCursor = "cursor"

// CursorOptions are the options of pagination type cursor.
type CursorOptions struct {
	CursorParam    string `json:"cursor_param" lang:"required"`
	NextCursorPath string `json:"next_cursor_path"`
	HasMorePath    string `json:"has_more_path"`
	PageSizeParam  string `json:"page_size_param"`
	PageSize       int    `json:"page_size" lang:"min=0"`
	// NextCursorHeader reads the cursor from a response header instead
	// of the body.
	NextCursorHeader string `json:"next_cursor_header" doc:"instead of next_cursor_path"`
	// CursorFromLastRecord takes the cursor from this field of the page's
	// last record (Stripe's starting_after=<last id>): the API lists
	// newest first, so the largest key, as keyset sends, would skip rows.
	CursorFromLastRecord string `json:"cursor_from_last_record" doc:"instead of next_cursor_path: that field of the page's last record"`
	// Computed, set by a front end and never by JSON, computes the
	// cursor in place of the three ways above.
	Computed NextCursor `json:"-"`
}

func (*CursorOptions) pageType() string { return PageCursor }

// rules: exactly one of the three ways to the next cursor.
func (*CursorOptions) rules() []rule {
	ways := []cond{set("pagination.next_cursor_path"), set("pagination.next_cursor_header"), set("pagination.cursor_from_last_record")}
	return []rule{
		{field: "pagination.next_cursor_path", msg: `is required for pagination type "cursor" (or next_cursor_header, to read the cursor from a response header, or cursor_from_last_record, to take it from the page's last record)`,
			need: orComputed(anyOf(ways...))},
		{field: "pagination.next_cursor_header", msg: "takes the place of next_cursor_path and cursor_from_last_record; set one of them",
			need: atMostOne(ways...)},
	}
}

func (o *CursorOptions) params() []PageParam {
	return pageParams(o.CursorParam, never, o.PageSizeParam, isCount)
}

func (o *CursorOptions) bodyFields() []string {
	return setFields("next_cursor_path", o.NextCursorPath, "has_more_path", o.HasMorePath)
}

// orComputed is c, or a next page a front end computes (the Computed of
// a cursor or next_url type): only Go code sets one, so the schema and
// the docs say c alone.
func orComputed(c cond) cond {
	computed := func(d *Definition) bool {
		o, ok := d.Pagination.OptionSet().(interface{ readsTree() bool })
		return ok && o.readsTree()
	}
	return cond{holds: func(d *Definition) bool { return computed(d) || c.holds(d) }, schema: c.schema, text: c.text}
}

// readsTree: a computed cursor reads the whole body.
func (o *CursorOptions) readsTree() bool { return o.Computed != nil }

func (o *CursorOptions) setComputed(c NextCursor) { o.Computed = c }

// readsPage: the token and has_more in the body, or the last record's
// field.
func (o *CursorOptions) readsPage(*Definition) PageReads {
	r := PageReads{Envelope: setFields(o.NextCursorPath, o.NextCursorPath, o.HasMorePath, o.HasMorePath)}
	if o.CursorFromLastRecord != "" {
		r.Fields = []string{o.CursorFromLastRecord}
	}
	return r
}

func (o *CursorOptions) paginator(d *Definition) Paginator {
	return cursorPaginator{name: d.Name, p: *o}
}

func (*CursorOptions) doc() PageDoc {
	return PageDoc{Next: "the token, verbatim (from the body, from the response header `next_cursor_header` names, or the `cursor_from_last_record` field of the page's last record, as Stripe's `starting_after`)", End: "empty or absent token, an empty page (from the last record), or `has_more_path` false"}
}

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
	p    CursorOptions
}

// doubt notes on resp, which has no token at next_cursor_path, that the
// walk may end too early: the page is full (page_size records), or
// has_more_path says there is more. A path the API does not use
// (next_cursor where the API says paging.next_cursor) would end every
// walk after its first page.
func (c cursorPaginator) doubt(resp *Page) {
	why := ""
	if more, found := resp.Value(c.p.HasMorePath); c.p.HasMorePath != "" && found && more == true {
		why = fmt.Sprintf("has_more_path %q says there is more", c.p.HasMorePath)
	} else if c.p.PageSize > 0 && len(resp.Records) >= c.p.PageSize {
		why = fmt.Sprintf("the page is full (%d records, page_size %d)", len(resp.Records), c.p.PageSize)
	}
	if why == "" {
		return
	}
	resp.Doubt = fmt.Sprintf("stream %q: the walk stops: the page has no next_cursor_path %q, but %s: is the path right?%s",
		c.name, c.p.NextCursorPath, why, resp.keysNear(c.p.NextCursorPath))
}

func (c cursorPaginator) First(req Request) Request {
	return req.WithParams(pageSizeParam(c.p.PageSizeParam, c.p.PageSize)...)
}

func (c cursorPaginator) Next(last Request, resp *Page) (Request, bool, error) {
	if c.p.Computed != nil {
		token, more, err := c.p.Computed.Next(resp)
		if err != nil {
			return Request{}, false, streamErr(c.name, "the next page's cursor: %v", err)
		}
		if !more || token == "" {
			return Request{}, false, nil
		}
		return last.WithParams(c.p.CursorParam, token), true, nil
	}
	if c.p.HasMorePath != "" {
		if v, found := resp.Value(c.p.HasMorePath); found && v != nil {
			more, ok := v.(bool)
			if !ok {
				return Request{}, false, streamErr(c.name, "has_more_path %q holds a JSON %s, expected a boolean", c.p.HasMorePath, codec.TypeName(v))
			}
			if !more {
				return Request{}, false, nil
			}
		}
	}
	if f := c.p.CursorFromLastRecord; f != "" {
		n := len(resp.Records)
		if n == 0 {
			return Request{}, false, nil
		}
		v, ok, err := keyOf(resp.Records[n-1], f)
		if err != nil {
			return Request{}, false, streamErr(c.name, "cursor_from_last_record %q: %v", f, err)
		}
		if !ok {
			return Request{}, false, streamErr(c.name, "the page's last record has no cursor_from_last_record field %q to continue from", f)
		}
		return last.WithParams(c.p.CursorParam, v.text), true, nil
	}
	if h := c.p.NextCursorHeader; h != "" {
		token := strings.TrimSpace(resp.Header.Get(h))
		if token == "" {
			return Request{}, false, nil
		}
		return last.WithParams(c.p.CursorParam, token), true, nil
	}
	v, found := resp.Value(c.p.NextCursorPath)
	if !found {
		c.doubt(resp)
	}
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
		return Request{}, false, streamErr(c.name, "next_cursor_path %q holds a JSON %s, expected a string", c.p.NextCursorPath, codec.TypeName(v))
	}
	if token == "" {
		return Request{}, false, nil
	}
	return last.WithParams(c.p.CursorParam, token), true, nil
}
