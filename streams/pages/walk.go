package pages

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams"
)

// maxEmptyFollows is how many empty pages in a row Walk follows while the
// paginator still says there is more. Some APIs legitimately return an
// empty page with a cursor (a filtered scan over a large table); an API
// that never stops doing so is a loop.
const maxEmptyFollows = 3

// maxStalePages is how many pages in a row, each holding rows but none new
// to the walk, end it with an error. A page with some new rows is normal
// (an offset walk over a source that shifts repeats a few); a run of pages
// with nothing new is an API serving the same rows under ever new page
// positions.
const maxStalePages = 3

// recentPages is how many of the last pages a walk keeps the row
// identities of. A page is stale when its rows were all on these pages, or
// were exactly the rows of any earlier page. Keeping every row of a walk
// instead would make its memory grow with the stream (30 MiB for a million
// rows); this keeps it to a few pages and one hash per page.
const recentPages = maxStalePages + 1

// Walk requests first, then follows p until it says there is no more,
// calling page for each streams.Page in order. It returns the first error.
//
// The first request sent is p.First(first); First is idempotent, so a
// request the caller already prepared with p.First is sent unchanged.
//
// While page handles one response, the next page is already being
// fetched: the next request depends only on the response, and overlapping
// the wait for the network with the work on records is most of a fast
// walk. Pages are still handed to page one at a time, in order.
//
// A body read as it arrives (a jsonl, csv or xml export, a report's
// file) comes as several pages of one response (Page.More): each is
// handed to page in order, and the paginator reads the last. The memory
// such a body takes is that of the pages being read and handled.
//
// Walk guards every pagination type against the ways an API can make a
// walk go on forever, with no setting needed:
//
//   - a next request equal to any request this walk has sent (method, URL,
//     query, body: the cursor, URL, page number, offset or key it carries)
//     is an error, never a cycle;
//   - maxStalePages (3) pages in a row whose rows were all read before in
//     this walk (on the last recentPages (4) pages, or as the very rows of
//     any earlier page) is an error; rows are told apart by primary key
//     when the stream has one, else by their whole content;
//   - an empty page while the paginator says there is more is followed at
//     most maxEmptyFollows (3) times in a row; the next such page is an
//     error;
//   - more than d.Pagination.MaxPages pages (when > 0) is an error;
//   - ctx is checked before every request, and before every page of a
//     body read as it arrives.
//
// The memory this takes is two hashes per page and one per row of the last
// recentPages pages, and it lives as long as the walk: a walk per parent
// record or per window starts afresh.
//
// Errors name the stream and, for a request, only its method, path and
// parameter names: parameter values (tokens, api keys) are never printed.
func Walk(ctx context.Context, d *streams.Definition, p streams.Paginator, first streams.Request, fetch streams.Fetch, page func(*streams.Page) error) error {
	return walk(ctx, d, p, first, fetch, page, true)
}

// WalkInOrder is Walk without the look-ahead: the next page is requested
// only once page has returned. It suits a walk that likely stops within
// its first page (a test run's one record per stream), which would
// otherwise send a request only to cancel it.
func WalkInOrder(ctx context.Context, d *streams.Definition, p streams.Paginator, first streams.Request, fetch streams.Fetch, page func(*streams.Page) error) error {
	return walk(ctx, d, p, first, fetch, page, false)
}

func walk(ctx context.Context, d *streams.Definition, p streams.Paginator, first streams.Request, fetch streams.Fetch, page func(*streams.Page) error, ahead bool) error {
	ctx, cancel := context.WithCancel(ctx)
	req := p.First(first)
	g := newGuard(d)
	g.sent(req)
	f := newFetcher(ctx, d, fetch)
	pending := f.start(req)
	defer func() {
		// Stop a prefetch nobody will read, and wait for it: nothing of
		// this walk runs after Walk returns.
		cancel()
		if pending != nil {
			if r := <-pending; r.resp != nil && r.resp.More != nil {
				r.resp.More.Close() // a body never handed over
			}
		}
		f.stop()
	}()
	for {
		// A page already on its way is not handed over once ctx is done.
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("stream %q: stopped after %d pages: %w", d.Name, g.pages, err)
		}
		r := <-pending
		pending = nil
		if r.err != nil {
			return r.err
		}
		resp, err := parts(ctx, d, g, r.resp, page)
		if err != nil {
			return err
		}
		g.pages++
		next, more, stop := p.Next(req, resp)
		repeated := false
		if stop == nil && more {
			stop, repeated = g.check(req, next, resp)
		}
		if stop == nil && more {
			resp.Next = &next
			if ahead {
				pending = f.start(next)
			}
		}
		if repeated {
			// The page of a loop holds only rows read before (an API
			// ignoring the cursor answers page 1 again): writing it
			// would write them twice.
			return stop
		}
		if err := page(resp); err != nil {
			return err
		}
		if stop != nil || !more {
			return stop
		}
		req = next
		if pending == nil {
			pending = f.start(next)
		}
	}
}

// parts hands page the pages of a body read as it arrives (Page.More)
// but its last, which it returns for the paginator to read: a body of any
// size is walked in the memory of its pages. ctx is checked before every
// page read; a walk that ends inside the body closes it.
func parts(ctx context.Context, d *streams.Definition, g *guard, resp *streams.Page, page func(*streams.Page) error) (*streams.Page, error) {
	for resp.More != nil {
		more := resp.More
		err := page(resp)
		if err == nil && ctx.Err() != nil {
			err = fmt.Errorf("stream %q: stopped inside the body of page %d: %w", d.Name, g.pages+1, ctx.Err())
		}
		if err != nil {
			more.Close()
			return nil, err
		}
		if resp, err = more.Next(); err != nil {
			return nil, err
		}
		if resp == nil {
			return nil, streamErr(d.Name, "the body of page %d ended without its last page", g.pages+1)
		}
	}
	return resp, nil
}

type fetched struct {
	resp *streams.Page
	err  error
}

// A fetcher sends a walk's requests, each while the page before is
// handed over, from one goroutine that lives as long as the walk: a
// goroutine per page grew a fresh stack through the HTTP client on every
// page (runtime.newstack and copystack were 7 µs of a page's cost at
// pages of 100).
type fetcher struct {
	reqs chan streams.Request
	out  chan fetched
	done chan struct{}
}

func newFetcher(ctx context.Context, d *streams.Definition, fetch streams.Fetch) *fetcher {
	f := &fetcher{reqs: make(chan streams.Request), out: make(chan fetched, 1), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		for req := range f.reqs {
			if err := ctx.Err(); err != nil {
				f.out <- fetched{err: fmt.Errorf("stream %q: stopped: %w", d.Name, err)}
				continue
			}
			resp, err := fetch(ctx, req)
			if err == nil && resp == nil {
				err = streamErr(d.Name, "no response to %s", describeRequest(req))
			}
			f.out <- fetched{resp, err}
		}
	}()
	return f
}

// start fetches req and returns where its result will arrive; the result
// of the request before must have been received.
func (f *fetcher) start(req streams.Request) <-chan fetched {
	f.reqs <- req
	return f.out
}

// stop ends the fetcher's goroutine and waits for it.
func (f *fetcher) stop() {
	close(f.reqs)
	<-f.done
}

// guard holds what one walk has seen, to tell a long walk from a loop.
type guard struct {
	d    *streams.Definition
	seed maphash.Seed
	// requests maps the hash of each request sent to its page number.
	requests map[uint64]int
	// pageRows holds a hash of the set of rows of each page read.
	pageRows map[uint64]struct{}
	// recent holds the row identities of the last recentPages pages read,
	// oldest first.
	recent                [][]uint64
	spare                 []uint64
	pages, empties, stale int
}

func newGuard(d *streams.Definition) *guard {
	return &guard{d: d, seed: maphash.MakeSeed(), requests: map[uint64]int{}, pageRows: map[uint64]struct{}{}}
}

// sent records req as the request of the next page.
func (g *guard) sent(req streams.Request) {
	g.requests[g.requestHash(req)] = g.pages + 1
}

// check applies the loop guards to next, the request that would follow
// resp (the answer to last), and records next as sent. repeated is true
// when the walk stops on a repeated request and resp's rows were all read
// before in this walk: the page is not to be handed over.
func (g *guard) check(last, next streams.Request, resp *streams.Page) (stop error, repeated bool) {
	name := g.d.Name
	h := g.requestHash(next)
	if page, ok := g.requests[h]; ok {
		repeated = len(resp.Records) > 0 && g.stalePage(resp.Records)
		if page == g.pages {
			return streamErr(name, "next page repeats the request just made (%s); stopping instead of looping", describeRequest(last)), repeated
		}
		return streamErr(name, "the request for page %d repeats the request of page %d (%s): the API's pages run in a cycle; stopping instead of looping",
			g.pages+1, page, describeRequest(next)), repeated
	}
	if limit := g.d.Pagination.MaxPages; limit > 0 && g.pages >= limit {
		return streamErr(name, "more than max_pages (%d) pages; raise pagination.max_pages if the stream is really this long", limit), false
	}
	if len(resp.Records) == 0 {
		g.empties++
		if g.empties > maxEmptyFollows {
			return streamErr(name, "%d empty pages in a row while the API still says there are more; stopping instead of looping", g.empties), false
		}
	} else {
		g.empties = 0
		if !g.stalePage(resp.Records) {
			g.stale = 0
		} else if g.stale++; g.stale >= maxStalePages {
			return streamErr(name, "%d pages in a row held only rows already read in this walk (told apart by %s) while the API still says there are more; stopping instead of looping",
				g.stale, g.identity()), true
		}
	}
	g.requests[h] = g.pages + 1
	return nil, false
}

// identity says how rows are told apart, for the error message.
func (g *guard) identity() string {
	if len(g.d.PrimaryKey) == 0 {
		return "their content"
	}
	return "primary key " + strings.Join(g.d.PrimaryKey, ", ")
}

// stalePage reports whether every row of recs (at least one) was read
// before in this walk: on one of the last recentPages pages, or as the very
// rows of an earlier page. It then remembers the page.
func (g *guard) stalePage(recs []any) bool {
	ids := g.spare[:0]
	var sum uint64
	for _, rec := range recs {
		id := g.rowHash(rec)
		ids = append(ids, id)
		sum += id
	}
	// The hash of the page's set of rows: the sum of their identities,
	// which no order of rows changes, with their count.
	set := sum ^ uint64(len(ids))*0x9e3779b97f4a7c15
	_, again := g.pageRows[set]
	g.pageRows[set] = struct{}{}
	stale := again || g.allRecent(ids)
	g.spare = nil
	if len(g.recent) == recentPages {
		// The oldest page's slice takes the next page's rows: no
		// allocation per page.
		g.spare = g.recent[0]
		g.recent = append(g.recent[:0], g.recent[1:]...)
	}
	g.recent = append(g.recent, ids)
	return stale
}

// allRecent reports whether every id is on one of the recent pages.
func (g *guard) allRecent(ids []uint64) bool {
	// In a walk that goes well the first row of a page is new, and one
	// scan of the recent pages settles it without building a set.
	found := false
	for _, page := range g.recent {
		if slices.Contains(page, ids[0]) {
			found = true
			break
		}
	}
	if !found {
		return false
	}
	seen := map[uint64]struct{}{}
	for _, page := range g.recent {
		for _, id := range page {
			seen[id] = struct{}{}
		}
	}
	for _, id := range ids[1:] {
		if _, ok := seen[id]; !ok {
			return false
		}
	}
	return true
}

// rowHash is the identity of a record: its primary key when the stream has
// one and the record holds every key field, else its whole content. (A key
// field may be added to the record later, from a parent, so a record
// without it is told apart by content.)
func (g *guard) rowHash(rec any) uint64 {
	var h maphash.Hash
	h.SetSeed(g.seed)
	if f, ok := rec.(codec.Fields); ok && len(g.d.PrimaryKey) > 0 {
		h.WriteByte('k')
		for _, k := range g.d.PrimaryKey {
			text, ok := f.Field(k)
			if !ok {
				text = "null" // not met: a Fields record has its whole key
			}
			writeText(&h, g.seed, text)
		}
		return h.Sum64()
	}
	if m, ok := rec.(map[string]any); ok && len(g.d.PrimaryKey) > 0 {
		byKey := true
		for _, k := range g.d.PrimaryKey {
			if _, ok := m[k]; !ok {
				byKey = false
				break
			}
		}
		if byKey {
			h.WriteByte('k')
			for _, k := range g.d.PrimaryKey {
				writeValue(&h, g.seed, m[k])
			}
			return h.Sum64()
		}
	}
	h.WriteByte('r')
	writeValue(&h, g.seed, rec)
	return h.Sum64()
}

// writeValue writes a decoded JSON value to h so that equal values write
// equal bytes and values of different types or structure differ. Object
// members are hashed one by one and summed, so their order does not
// matter and no keys are sorted.
func writeValue(h *maphash.Hash, seed maphash.Seed, v any) {
	switch x := v.(type) {
	case nil:
		h.WriteByte('n')
	case bool:
		if x {
			h.WriteByte('t')
		} else {
			h.WriteByte('f')
		}
	case string:
		h.WriteByte('s')
		writeLen(h, len(x))
		h.WriteString(x)
	case json.Number:
		h.WriteByte('d')
		writeLen(h, len(x))
		h.WriteString(string(x))
	case []any:
		h.WriteByte('a')
		writeLen(h, len(x))
		for _, e := range x {
			writeValue(h, seed, e)
		}
	case map[string]any:
		var sum uint64
		for k, e := range x {
			var m maphash.Hash
			m.SetSeed(seed)
			writeLen(&m, len(k))
			m.WriteString(k)
			writeValue(&m, seed, e)
			sum += m.Sum64()
		}
		h.WriteByte('o')
		writeLen(h, len(x))
		writeLen(h, int(sum))
	default:
		// Values Extract never produces (float64 from a caller's own
		// decoding): their printed form.
		s := fmt.Sprintf("%T:%v", v, v)
		h.WriteByte('x')
		writeLen(h, len(s))
		h.WriteString(s)
	}
}

func writeLen(h *maphash.Hash, n int) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
}

// writeValues writes a multi-valued map (query or headers) to h with its
// keys in order, so the same values hash alike whatever the map's order.
func writeValues(h *maphash.Hash, m map[string][]string) {
	writeLen(h, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		writeLen(h, len(k))
		h.WriteString(k)
		writeLen(h, len(m[k]))
		for _, v := range m[k] {
			writeLen(h, len(v))
			h.WriteString(v)
		}
	}
}

// requestHash identifies a request by everything that is sent: method
// (case-insensitive), URL, query (nil and empty alike, parameters in any
// order), body and headers. A field added to streams.Request must be added here.
func (g *guard) requestHash(r streams.Request) uint64 {
	var h maphash.Hash
	h.SetSeed(g.seed)
	method := strings.ToUpper(r.Method)
	if method == "" {
		method = "GET"
	}
	writeLen(&h, len(method))
	h.WriteString(method)
	writeLen(&h, len(r.URL))
	h.WriteString(r.URL)
	writeValues(&h, r.Query)
	writeLen(&h, len(r.Body))
	h.Write(r.Body)
	writeValues(&h, r.Header)
	return h.Sum64()
}

// describeRequest prints a request without secrets: method, path (no
// host, no user info) and the names of its query parameters with their
// values elided, e.g. "GET /v1/x?cursor=…".
func describeRequest(r streams.Request) string {
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

func streamErr(name, format string, args ...any) error {
	return fmt.Errorf("stream %q: %s", name, fmt.Sprintf(format, args...))
}
