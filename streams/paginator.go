package streams

import (
	"context"
	"net/http"
	"net/url"
)

// Request is one page request. URL is either a path relative to the API's
// base URL ("/v1/orders") or, for next_url and link_header pages, the URL
// the API handed back (absolute, or relative to the page it came from, in
// which case the paginator has already resolved it against Page.URL).
type Request struct {
	Method string
	URL    string
	Query  url.Values
	Body   []byte // JSON body of a POST, nil for GET
	// Header holds the pagination values injected as headers
	// (pagination.inject "header"); nil for most requests.
	Header http.Header
}

// A Page is the answer to one Request, as the walk hands it over: its
// records in one of two explicit forms, and the values of its body the
// paginator reads.
type Page struct {
	// URL is the absolute URL that was requested; relative links resolve
	// against it.
	URL    *url.URL
	Header http.Header
	// Records are the page's records as the walk, its guard and the
	// paginator read them: each a decoded tree (numbers as json.Number,
	// so their text is kept exactly) or, on a spliced page, a Fields view
	// of the record's captured keys.
	Records []any
	// Spliced, when not nil, holds the records' bytes as the API sent
	// them (the tap's splice path); nil on a page of trees.
	Spliced Spliced
	// Values are the values of the body outside its records that the
	// paginator reads (Definition.PageReads); nil when the body was
	// not JSON.
	Values Envelope
	// Next is, while Walk hands the page over, the request of the page
	// after it; nil when the walk ends with this page.
	Next *Request
	// Doubt, set by the paginator, says why the walk ended on a page
	// that looks as if more followed (a full page with no next token at
	// the configured path): likely a wrong path, which would otherwise
	// truncate the stream in silence. "" when the end is not in doubt.
	Doubt string
	// More, when not nil, says the page is one part of a body read as it
	// arrives (a jsonl, csv or xml export, a report's file), its records
	// handed over in pages of bounded size: More reads the page after
	// this one from the same response. It is nil on the body's last
	// page, which alone the paginator reads.
	More Parts
}

// Parts are the pages of one response read as it arrives, after the
// first.
type Parts interface {
	// Next reads the next page of the body; an error ends the body.
	Next() (*Page, error)
	// Close stops reading the body before its last page, and waits
	// until the body is let go.
	Close()
}

// Value is LookupNullable of the page's body at path, one of the paths
// its pagination reads: not found on a page without a JSON body.
func (p *Page) Value(path string) (any, bool) {
	if p.Values == nil {
		return nil, false
	}
	return p.Values.Lookup(path)
}

// An Envelope holds the values of a page's body outside its records that
// the paginator reads: the cursor, the next URL, has_more, a total, a
// GraphQL connection's pageInfo.
type Envelope interface {
	// Lookup is LookupNullable of the body at path, for a path of
	// Definition.PageReads. A path the records lie under is found,
	// as an object that is not to be read into (Enclosing).
	Lookup(path string) (any, bool)
}

// keyLister is an Envelope that can name the keys a body has near a
// path, for a message that helps the user find the right one.
type keyLister interface {
	KeysNear(path string) string
}

// keysNear is KeysNear of the page's body at path, "" when its Values
// cannot tell.
func (p *Page) keysNear(path string) string {
	if l, ok := p.Values.(keyLister); ok {
		return l.KeysNear(path)
	}
	return ""
}

// NextCursor computes the token (or URL) of the page after a page, for a
// front end whose cursor is an expression over the page rather than a
// path of it (an Airbyte manifest's cursor_value and stop_condition, run
// by the manifest's own interpreter): Pagination.Compute. The page it is
// given is a tree page: its Body is the whole decoded body, its Records
// trees.
type NextCursor interface {
	// Next returns the next page's token; more is false at the end.
	Next(resp *Page) (token string, more bool, err error)
}

// Compute makes c the source of the next page's token (type cursor) or
// URL (type next_url), in place of the paths the options name; it
// reports false for a type that takes no computed cursor.
func (p *Pagination) Compute(c NextCursor) bool {
	s, ok := p.OptionSet().(interface{ setComputed(NextCursor) })
	if ok {
		s.setComputed(c)
	}
	return ok
}

// Body is the page's whole decoded body, on a tree page of a JSON body;
// ok is false on a spliced page, which keeps only what PageReads names.
func (p *Page) Body() (body any, ok bool) {
	d, ok := p.Values.(Decoded)
	return d.Body, ok
}

// Decoded is the Envelope of a body decoded whole.
type Decoded struct{ Body any }

// Lookup is LookupNullable(Body, path).
func (d Decoded) Lookup(path string) (any, bool) { return LookupNullable(d.Body, path) }

// KeysNear is KeysNear(Body, path).
func (d Decoded) KeysNear(path string) string { return KeysNear(d.Body, path) }

// Enclosing is what a spliced page's Envelope gives for a path that
// encloses the records (a GraphQL connection): an object, found, whose
// members are not kept.
type Enclosing struct{}

// Spliced is a page's records as bytes (the tap's splice path).
type Spliced interface {
	// Raw returns record i's bytes when they are written as they came;
	// when ok is false, Page.Records[i] is the record's tree, for the
	// tree path.
	Raw(i int) (raw []byte, ok bool, err error)
	// Value is the captured property name of record i, as codec.Decode
	// would give it; nil when the record has none.
	Value(i int, name string) (any, error)
	// Mapped is, on a stream with maps, what they made of the last
	// record Raw returned; nil without maps.
	Mapped() Mapped
	// Inject gives a child stream's page the key of the parent record
	// its walk is for (Partition.Key), which Raw writes into each record
	// under parent.as; until then such a page's records take the tree
	// path.
	Inject(key any)
	// Release hands the page's buffers back once its records are
	// written.
	Release()
}

// Mapped is what a stream's maps made of a spliced record.
type Mapped interface {
	// Err is the error of the expressions, nil when they ran.
	Err() error
	// Record is the record of the i-th selected output, and whether
	// the output keeps it (__filter__).
	Record(i int) (rec []byte, keep bool)
}

// A Paginator turns the answer to one page into the request for the next.
// Each pagination type of the stream model is one Paginator.
type Paginator interface {
	// First adds the pagination parameters of the first page to req.
	First(req Request) Request
	// Next returns the request for the page after page, which answered
	// last, or more == false when it was the last page.
	Next(last Request, page *Page) (next Request, more bool, err error)
}

// Fetch sends one page request and returns its Page (implemented by the
// tap over the HTTP client).
type Fetch func(ctx context.Context, req Request) (*Page, error)
