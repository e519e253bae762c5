package streams

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// Fetch sends one page request and returns its decoded Response with
// Records extracted (implemented by the tap over the HTTP client).
type Fetch func(ctx context.Context, req Request) (*Response, error)

// maxEmptyFollows is how many empty pages in a row Walk follows while the
// paginator still says there is more. Some APIs legitimately return an
// empty page with a cursor (a filtered scan over a large table); an API
// that never stops doing so is a loop.
const maxEmptyFollows = 3

// Walk requests first, then follows p until it says there is no more,
// calling page for each Response in order. It returns the first error.
//
// The first request sent is p.First(first); First is idempotent, so a
// request the caller already prepared with p.First is sent unchanged.
//
// While page handles one response, the next page is already being
// fetched: the next request depends only on the response, and overlapping
// the wait for the network with the work on records is most of a fast
// walk. Pages are still handed to page one at a time, in order.
//
// Walk guards every pagination type against the ways an API can make a
// walk go on forever:
//
//   - a next request equal to the one just made (method, URL, query, body)
//     is an error, never a loop;
//   - more than d.Pagination.MaxPages pages (when > 0) is an error;
//   - an empty page while the paginator says there is more is followed at
//     most maxEmptyFollows (3) times in a row; the next such page is an
//     error;
//   - ctx is checked before every request.
//
// Errors name the stream and, for a request, only its method, path and
// parameter names: parameter values (tokens, api keys) are never printed.
func Walk(ctx context.Context, d *Definition, p Paginator, first Request, fetch Fetch, page func(*Response) error) error {
	ctx, cancel := context.WithCancel(ctx)
	req := p.First(first)
	pending := prefetch(ctx, d, fetch, req)
	defer func() {
		// Stop a prefetch nobody will read, and wait for it: nothing of
		// this walk runs after Walk returns.
		cancel()
		if pending != nil {
			<-pending
		}
	}()
	pages, empties := 0, 0
	for {
		// A page already on its way is not handed over once ctx is done.
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("stream %q: stopped after %d pages: %w", d.Name, pages, err)
		}
		r := <-pending
		pending = nil
		if r.err != nil {
			return r.err
		}
		resp := r.resp
		pages++
		next, more, stop := p.Next(req, resp)
		if stop == nil && more {
			stop = checkNext(d, req, next, resp, pages, &empties)
		}
		if stop == nil && more {
			pending = prefetch(ctx, d, fetch, next)
		}
		if err := page(resp); err != nil {
			return err
		}
		if stop != nil || !more {
			return stop
		}
		req = next
	}
}

type fetched struct {
	resp *Response
	err  error
}

// prefetch starts fetching req and returns where its result will arrive.
func prefetch(ctx context.Context, d *Definition, fetch Fetch, req Request) <-chan fetched {
	out := make(chan fetched, 1)
	go func() {
		if err := ctx.Err(); err != nil {
			out <- fetched{err: fmt.Errorf("stream %q: stopped: %w", d.Name, err)}
			return
		}
		resp, err := fetch(ctx, req)
		if err == nil && resp == nil {
			err = streamErr(d.Name, "no response to %s", describeRequest(req))
		}
		out <- fetched{resp, err}
	}()
	return out
}

// checkNext applies the loop guards to the request that would follow resp.
func checkNext(d *Definition, req, next Request, resp *Response, pages int, empties *int) error {
	if sameRequest(req, next) {
		return streamErr(d.Name, "next page repeats the request just made (%s); stopping instead of looping", describeRequest(req))
	}
	if limit := d.Pagination.MaxPages; limit > 0 && pages >= limit {
		return streamErr(d.Name, "more than max_pages (%d) pages; raise pagination.max_pages if the stream is really this long", limit)
	}
	if len(resp.Records) == 0 {
		*empties++
		if *empties > maxEmptyFollows {
			return streamErr(d.Name, "%d empty pages in a row while the API still says there are more; stopping instead of looping", *empties)
		}
	} else {
		*empties = 0
	}
	return nil
}

// sameRequest reports whether a and b would send the same request. A nil
// and an empty query or body are the same.
func sameRequest(a, b Request) bool {
	return strings.EqualFold(a.Method, b.Method) &&
		a.URL == b.URL &&
		bytes.Equal(a.Body, b.Body) &&
		maps.EqualFunc(a.Query, b.Query, slices.Equal[[]string])
}

// describeRequest prints a request without secrets: method, path (no
// host, no user info) and the names of its query parameters with their
// values elided, e.g. "GET /v1/x?cursor=…".
func describeRequest(r Request) string {
	method := r.Method
	if method == "" {
		method = "GET"
	}
	path := r.URL
	names := map[string]bool{}
	if u, err := url.Parse(r.URL); err == nil {
		path = u.EscapedPath()
		for n := range u.Query() {
			names[n] = true
		}
	} else if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	for n := range r.Query {
		names[n] = true
	}
	if len(names) == 0 {
		return fmt.Sprintf("%s %s", method, path)
	}
	sorted := slices.Sorted(maps.Keys(names))
	for i, n := range sorted {
		sorted[i] = url.QueryEscape(n) + "=…"
	}
	return fmt.Sprintf("%s %s?%s", method, path, strings.Join(sorted, "&"))
}
