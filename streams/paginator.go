package streams

import (
	"context"
	"net/http"
	"net/url"
)

// Request is one page request. URL is either a path relative to the API's
// base URL ("/v1/orders") or, for next_url and link_header pages, the URL
// the API handed back (absolute, or relative to the page it came from, in
// which case the paginator has already resolved it against Response.URL).
type Request struct {
	Method string
	URL    string
	Query  url.Values
	Body   []byte // JSON body of a POST, nil for GET
	// Header holds the pagination values injected as headers
	// (pagination.inject "header"); nil for most requests.
	Header http.Header
}

// Response is the decoded answer to a Request.
type Response struct {
	// URL is the absolute URL that was requested; relative links resolve
	// against it.
	URL    *url.URL
	Header http.Header
	// Body is the decoded JSON body; numbers are json.Number so that their
	// text is kept exactly.
	Body any
	// Records are the records of the page, as extracted by Extract.
	Records []any
	// Next is, while Walk hands the page over, the request of the page
	// after it; nil when the walk ends with this page.
	Next *Request
}

// A Paginator turns the answer to one page into the request for the next.
// Each pagination type of the stream model is one Paginator.
type Paginator interface {
	// First adds the pagination parameters of the first page to req.
	First(req Request) Request
	// Next returns the request for the page after resp, which answered
	// last, or more == false when resp was the last page.
	Next(last Request, resp *Response) (next Request, more bool, err error)
}

// Fetch sends one page request and returns its decoded Response with
// Records extracted (implemented by the tap over the HTTP client).
type Fetch func(ctx context.Context, req Request) (*Response, error)

// Fields is a record of a page read without its tree (the tap's splice
// path): among Response.Records, beside the decoded objects, a record that
// gives only the JSON text of the top-level properties the walk reads —
// every field of the primary key, and a keyset's key_field — so that a
// page of them allocates nothing per record. The paginators that read
// anything else of a record never see one.
type Fields interface {
	// Field returns the JSON text of the top-level property name; ok is
	// false when the record does not have it.
	Field(name string) (text string, ok bool)
}
