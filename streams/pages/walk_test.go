package pages

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/internal/jsontest"
	"github.com/tap-dev/tap/streams"
)

// scripted is a Fetch that answers the i-th request with bodies[i] and
// records what it was asked. Walk calls it from its prefetching goroutine,
// one request at a time, so it answers a request beyond the script with an
// error rather than t.Fatal.
type scripted struct {
	d      *streams.Definition
	bodies []string
	sent   []streams.Request
}

func (s *scripted) fetch(t *testing.T) streams.Fetch {
	return func(ctx context.Context, req streams.Request) (*streams.Page, error) {
		if len(s.sent) >= len(s.bodies) {
			return nil, fmt.Errorf("unexpected request %d: %+v", len(s.sent)+1, req)
		}
		body := jsontest.Decode(t, s.bodies[len(s.sent)])
		s.sent = append(s.sent, req)
		recs, err := s.d.Extract(body)
		if err != nil {
			return nil, err
		}
		return &streams.Page{URL: mustURL(t, "https://api.example.com/v1/x"), Values: streams.Decoded{Body: body}, Records: recs}, nil
	}
}

func cursorDef(maxPages int) *streams.Definition {
	return &streams.Definition{Name: "x", Path: "/v1/x", RecordsPath: "data",
		Pagination: streams.Pagination{Type: streams.PageCursor, Options: &streams.CursorOptions{CursorParam: "cursor", NextCursorPath: "next"}, PageCommon: streams.PageCommon{MaxPages: maxPages}}}
}

func TestWalk(t *testing.T) {
	page := func(n int, next string) string {
		recs := make([]string, n)
		for i := range recs {
			recs[i] = fmt.Sprintf(`{"id":%d}`, i)
		}
		return fmt.Sprintf(`{"data":[%s],"next":%s}`, strings.Join(recs, ","), next)
	}
	tests := map[string]struct {
		maxPages  int
		bodies    []string
		wantPages int
		wantErr   string
	}{
		"follows to the end": {bodies: []string{page(2, `"a"`), page(2, `"b"`), page(1, `null`)}, wantPages: 3},
		// The API ignores the cursor: page 2 is page 1 again, and is not
		// handed over (its rows would be written twice).
		"repeated request": {bodies: []string{page(2, `"abc"`), page(2, `"abc"`)}, wantPages: 1,
			wantErr: `stream "x": next page repeats the request just made (GET /v1/x?cursor=…); stopping instead of looping`},
		// A repeated request whose page holds new rows still hands them over.
		"repeated request, new rows": {bodies: []string{page(2, `"abc"`), `{"data":[{"id":7}],"next":"abc"}`}, wantPages: 2,
			wantErr: `stream "x": next page repeats the request just made`},
		"max_pages reached with more": {maxPages: 2, bodies: []string{page(1, `"a"`), page(1, `"b"`)}, wantPages: 2,
			wantErr: `stream "x": more than max_pages (2) pages`},
		"max_pages exactly enough":    {maxPages: 2, bodies: []string{page(1, `"a"`), page(1, `null`)}, wantPages: 2},
		"three empty pages then data": {bodies: []string{page(1, `"a"`), page(0, `"b"`), page(0, `"c"`), page(0, `"d"`), page(1, `null`)}, wantPages: 5},
		"empty pages that never end": {bodies: []string{page(0, `"a"`), page(0, `"b"`), page(0, `"c"`), page(0, `"d"`)}, wantPages: 4,
			wantErr: `stream "x": 4 empty pages in a row while the API still says there are more`},
		"empty pages counted in a row only": {bodies: []string{page(0, `"a"`), page(0, `"b"`), page(0, `"c"`), page(1, `"d"`), page(0, `"e"`), page(0, `"f"`), page(0, `"g"`), page(0, `null`)}, wantPages: 8},
		"fetch error":                       {bodies: []string{page(1, `"a"`), `{"data":{}}`}, wantPages: 1, wantErr: `records_path "data" holds a JSON object`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			d := cursorDef(tt.maxPages)
			p := mustPaginator(t, d)
			first, err := d.FirstRequest(nil)
			if err != nil {
				t.Fatal(err)
			}
			s := &scripted{d: d, bodies: tt.bodies}
			pages := 0
			err = Walk(context.Background(), d, p, first, s.fetch(t), func(r *streams.Page) error {
				pages++
				return nil
			})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if pages != tt.wantPages {
				t.Errorf("pages = %d, want %d", pages, tt.wantPages)
			}
		})
	}
}

func TestWalkSendsFirstThenNext(t *testing.T) {
	d := cursorDef(0)
	opts := d.Pagination.Options.(*streams.CursorOptions)
	opts.PageSizeParam, opts.PageSize = "limit", 2
	d.Params = map[string]string{"status": "open"}
	p := mustPaginator(t, d)
	first, _ := d.FirstRequest(nil)
	s := &scripted{d: d, bodies: []string{`{"data":[1,2],"next":"t+1/="}`, `{"data":[3],"next":""}`}}
	if err := Walk(context.Background(), d, p, first, s.fetch(t), func(*streams.Page) error { return nil }); err != nil {
		t.Fatal(err)
	}
	want := []streams.Request{
		{Method: "GET", URL: "/v1/x", Query: query("status", "open", "limit", "2")},
		{Method: "GET", URL: "/v1/x", Query: query("status", "open", "limit", "2", "cursor", "t+1/=")},
	}
	if d := cmp.Diff(want, s.sent); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
}

func TestWalkPageError(t *testing.T) {
	d := cursorDef(0)
	p := mustPaginator(t, d)
	// The second page may be prefetched while the first fails; the error
	// of the page handler wins.
	s := &scripted{d: d, bodies: []string{`{"data":[1],"next":"a"}`, `{"data":[],"next":null}`}}
	boom := errors.New("boom")
	err := Walk(context.Background(), d, p, streams.Request{Method: "GET", URL: "/v1/x"}, s.fetch(t), func(*streams.Page) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
}

// TestWalkInOrder: without the look-ahead, a walk whose page handler stops
// on the first page sends one request, not a second one to cancel; one
// that goes on walks every page, in order.
func TestWalkInOrder(t *testing.T) {
	d := cursorDef(0)
	first := streams.Request{Method: "GET", URL: "/v1/x"}
	bodies := []string{`{"data":[1],"next":"a"}`, `{"data":[2],"next":"b"}`, `{"data":[3],"next":null}`}
	stop := errors.New("one record is enough")

	s := &scripted{d: d, bodies: bodies}
	err := WalkInOrder(context.Background(), d, mustPaginator(t, d), first, s.fetch(t), func(*streams.Page) error { return stop })
	if !errors.Is(err, stop) || len(s.sent) != 1 {
		t.Fatalf("stopping walk: err %v after %d requests; want the page's error after 1", err, len(s.sent))
	}

	s = &scripted{d: d, bodies: bodies}
	var got []any
	err = WalkInOrder(context.Background(), d, mustPaginator(t, d), first, s.fetch(t), func(r *streams.Page) error {
		got = append(got, r.Records...)
		return nil
	})
	if err != nil || fmt.Sprint(got) != "[1 2 3]" || len(s.sent) != 3 {
		t.Fatalf("full walk: err %v, records %v, requests %d", err, got, len(s.sent))
	}
}

func TestWalkContextCancel(t *testing.T) {
	d := cursorDef(0)
	p := mustPaginator(t, d)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &scripted{d: d, bodies: []string{`{"data":[1],"next":"a"}`, `{"data":[1],"next":"b"}`}}
	pages := 0
	err := Walk(ctx, d, p, streams.Request{Method: "GET", URL: "/v1/x"}, s.fetch(t), func(*streams.Page) error {
		pages++
		cancel() // cancelled while handling the first page
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// The second page may have been prefetched, but it is never handled.
	if pages != 1 || len(s.sent) > 2 {
		t.Errorf("pages %d, requests %d; want 1 page and at most 2 requests", pages, len(s.sent))
	}
}

func TestDescribeRequestHidesValues(t *testing.T) {
	tests := []struct {
		r    streams.Request
		want string
	}{
		{streams.Request{URL: "/v1/x"}, "GET /v1/x"},
		{streams.Request{Method: "POST", URL: "/v1/x", Query: query("api_key", "s3cret", "b", "1")}, "POST /v1/x?api_key=…&b=…"},
		{streams.Request{Method: "GET", URL: "https://user:pw@api.example.com/v1/x?token=s3cret&page=2"}, "GET /v1/x?page=…&token=…"},
	}
	for _, tt := range tests {
		if got := describeRequest(tt.r); got != tt.want {
			t.Errorf("describeRequest(%+v) = %q, want %q", tt.r, got, tt.want)
		}
	}
}

func TestRequestHash(t *testing.T) {
	g := newGuard(&streams.Definition{Name: "x"})
	a := streams.Request{Method: "GET", URL: "/x", Query: query("a", "1", "b", "2")}
	tests := []struct {
		b    streams.Request
		same bool
	}{
		{streams.Request{Method: "get", URL: "/x", Query: query("b", "2", "a", "1")}, true},
		{streams.Request{Method: "GET", URL: "/x", Query: query("a", "2", "b", "2")}, false},
		{streams.Request{Method: "GET", URL: "/y", Query: query("a", "1", "b", "2")}, false},
		{streams.Request{Method: "POST", URL: "/x", Query: query("a", "1", "b", "2")}, false},
		{streams.Request{Method: "GET", URL: "/x", Query: query("a", "1", "b", "2"), Body: []byte("{}")}, false},
		{streams.Request{Method: "GET", URL: "/x", Query: url.Values{"a": {"1", "b"}, "b": {"2"}}}, false},
		{streams.Request{Method: "GET", URL: "/x", Query: url.Values{"a": {"1b"}, "b": {"2"}}}, false},
	}
	for _, tt := range tests {
		if got := g.requestHash(a) == g.requestHash(tt.b); got != tt.same {
			t.Errorf("same(%+v, %+v) = %v", a, tt.b, got)
		}
	}
	if g.requestHash(streams.Request{URL: "/x"}) != g.requestHash(streams.Request{Method: "GET", URL: "/x", Query: query()}) {
		t.Error("nil and empty query differ")
	}
}

// TestRequestHashCoversEveryField: a field added to Request (a header for
// a position sent in a header, say) must tell requests apart too.
func TestRequestHashCoversEveryField(t *testing.T) {
	g := newGuard(&streams.Definition{Name: "x"})
	base := streams.Request{Method: "GET", URL: "/x", Query: query("a", "1"), Body: []byte("{}")}
	rt := reflect.TypeFor[streams.Request]()
	for i := range rt.NumField() {
		changed := base
		f := reflect.ValueOf(&changed).Elem().Field(i)
		switch f.Interface().(type) {
		case string:
			f.SetString("POST")
		case url.Values:
			f.Set(reflect.ValueOf(query("a", "2")))
		case []byte:
			f.SetBytes([]byte(`{"b":1}`))
		case http.Header:
			f.Set(reflect.ValueOf(http.Header{"Cursor": {"2"}}))
		default:
			t.Fatalf("Request.%s has type %s, which this test (and requestHash) does not know", rt.Field(i).Name, f.Type())
		}
		if g.requestHash(changed) == g.requestHash(base) {
			t.Errorf("requests that differ only in %s hash the same", rt.Field(i).Name)
		}
	}
}

func TestRowHash(t *testing.T) {
	byKey := newGuard(&streams.Definition{Name: "x", PrimaryKey: []string{"id"}})
	byContent := newGuard(&streams.Definition{Name: "x"})
	rec := func(s string) any { return jsontest.Decode(t, s) }
	tests := []struct {
		g    *guard
		a, b any
		same bool
	}{
		{byKey, rec(`{"id":1,"v":"a"}`), rec(`{"id":1,"v":"b"}`), true},
		{byKey, rec(`{"id":1}`), rec(`{"id":"1"}`), false},
		{byKey, rec(`{"id":1,"v":"a"}`), rec(`{"v":"a"}`), false},
		// Without the key field (filled later from a parent): by content.
		{byKey, rec(`{"v":"a"}`), rec(`{"v":"a"}`), true},
		{byKey, rec(`{"v":"a"}`), rec(`{"v":"b"}`), false},
		{byContent, rec(`{"a":1,"b":[1,2]}`), rec(`{"b":[1,2],"a":1}`), true},
		{byContent, rec(`{"a":1,"b":[1,2]}`), rec(`{"a":1,"b":[2,1]}`), false},
		{byContent, rec(`{"a":"1"}`), rec(`{"a":1}`), false},
		{byContent, rec(`{"a":{"b":1},"c":2}`), rec(`{"a":{"c":2},"b":1}`), false},
		{byContent, rec(`{"a":["x","y"]}`), rec(`{"a":["xy"]}`), false},
		{byContent, rec(`{"a":null}`), rec(`{"a":false}`), false},
		{byContent, rec(`{}`), rec(`[]`), false},
	}
	for _, tt := range tests {
		if got := tt.g.rowHash(tt.a) == tt.g.rowHash(tt.b); got != tt.same {
			t.Errorf("same(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.same)
		}
	}
}

// loopAPI is a loopback API with one endpoint per way an API can make a
// walk go on forever, and endpoints whose walks are long but finite. It
// answers at most limit requests per endpoint, then 400, so that a walk
// without guards ends (and its test fails) instead of running forever.
type loopAPI struct {
	base  string
	limit int
	mu    sync.Mutex
	hits  map[string]int
}

func (a *loopAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.hits[r.URL.Path]++
	n := a.hits[r.URL.Path]
	a.mu.Unlock()
	if n > a.limit {
		http.Error(w, "too many requests for this test", http.StatusBadRequest)
		return
	}
	q := r.URL.Query()
	ids := func(lo, hi int) []any {
		var out []any
		for i := lo; i <= hi; i++ {
			out = append(out, map[string]any{"id": i, "name": fmt.Sprint("row ", i)})
		}
		return out
	}
	var body map[string]any
	switch r.URL.Path {
	case "/alternate": // cursor A, B, A, B… with has_more true
		next := map[string]string{"": "A", "A": "B", "B": "A"}[q.Get("cursor")]
		row := map[string]int{"": 1, "A": 2, "B": 3}[q.Get("cursor")]
		body = map[string]any{"items": ids(row, row), "next": next, "has_more": true}
	case "/ring/a", "/ring/b", "/ring/c": // next_url a → b → c → a
		at := strings.TrimPrefix(r.URL.Path, "/ring/")
		next := map[string]string{"a": "b", "b": "c", "c": "a"}[at]
		lo := 2*int(at[0]-'a') + 1
		body = map[string]any{"items": ids(lo, lo+1), "next": a.base + "/ring/" + next}
	case "/ignores-page", "/ignores-offset": // the same full page whatever is asked
		body = map[string]any{"items": ids(1, 3)}
	case "/ignores-page-total": // the same page, but a total that ends the walk
		body = map[string]any{"items": ids(1, 3), "total_pages": 3}
	case "/fresh-cursor": // a new cursor every time, the same rows
		c, _ := strconv.Atoi(q.Get("cursor"))
		body = map[string]any{"items": ids(1, 2), "next": strconv.Itoa(c + 1), "has_more": true}
	case "/long-ring": // a new cursor every time, the rows of six pages over and over
		c, _ := strconv.Atoi(q.Get("cursor"))
		body = map[string]any{"items": ids(2*(c%6)+1, 2*(c%6)+2), "next": strconv.Itoa(c + 1), "has_more": true}
	case "/cursor-end": // five pages of new rows
		c, _ := strconv.Atoi(q.Get("cursor"))
		body = map[string]any{"items": ids(2*c+1, 2*c+2), "next": strconv.Itoa(c + 1), "has_more": c < 4}
	case "/overlap": // each page repeats two rows of the last and adds one
		c, _ := strconv.Atoi(q.Get("cursor"))
		body = map[string]any{"items": ids(c, c+2), "next": strconv.Itoa(c + 1), "has_more": c < 10}
	case "/api-sized": // 10 rows, in pages of the API's own size, 4
		off, _ := strconv.Atoi(q.Get("offset"))
		list := ids(1, 10)
		body = map[string]any{"items": list[min(off, len(list)):min(off+4, len(list))]}
	case "/shifting": // offset over a list that grows at the front while it is read
		off, _ := strconv.Atoi(q.Get("offset"))
		list := ids(100, 129)
		for i := range 2 * n {
			list = append([]any{map[string]any{"id": 200 + i}}, list...)
		}
		body = map[string]any{"items": list[min(off, len(list)):min(off+10, len(list))]}
	case "/stale-then-new": // two pages of old rows, then new ones
		c, _ := strconv.Atoi(q.Get("cursor"))
		rows := ids(1, 2)
		if c == 0 || c >= 3 {
			rows = ids(10*c+1, 10*c+2)
		}
		body = map[string]any{"items": rows, "next": strconv.Itoa(c + 1), "has_more": c < 5}
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(body) //nolint:errcheck
}

// httpFetch sends req to the API at base and decodes the answer, as the
// tap's fetch does over its client.
func httpFetch(base string, d *streams.Definition) streams.Fetch {
	return func(ctx context.Context, req streams.Request) (*streams.Page, error) {
		u, err := url.Parse(req.URL)
		if err != nil {
			return nil, err
		}
		if !u.IsAbs() {
			if u, err = url.Parse(base + req.URL); err != nil {
				return nil, err
			}
		}
		if len(req.Query) > 0 {
			q := u.Query()
			for k, vs := range req.Query {
				q[k] = vs
			}
			u.RawQuery = q.Encode()
		}
		hreq, err := http.NewRequestWithContext(ctx, req.Method, u.String(), bytes.NewReader(req.Body))
		if err != nil {
			return nil, err
		}
		resp, err := http.DefaultClient.Do(hreq)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(b))
		}
		v, err := codec.Decode(b)
		if err != nil {
			return nil, err
		}
		recs, err := d.Extract(v)
		if err != nil {
			return nil, err
		}
		return &streams.Page{URL: u, Header: resp.Header, Values: streams.Decoded{Body: v}, Records: recs}, nil
	}
}

// TestWalkNeverLoops walks every endpoint of loopAPI: the loops end with an
// error naming the stream after a few requests, whatever the API does and
// without max_pages; the long but finite walks end normally.
func TestWalkNeverLoops(t *testing.T) {
	api := &loopAPI{limit: 50, hits: map[string]int{}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	api.base = srv.URL
	cursor := streams.Pagination{Type: streams.PageCursor, Options: &streams.CursorOptions{CursorParam: "cursor", NextCursorPath: "next", HasMorePath: "has_more"}}
	tests := []struct {
		name, path string
		pagination streams.Pagination
		noKey      bool
		wantErr    string
		wantHits   int // requests the walk sends
		wantRows   int // rows handed over: the page that shows the loop, its rows all read before, is not
	}{
		{name: "cursor alternating A, B, A, B", path: "/alternate", pagination: cursor,
			wantErr: `the request for page 4 repeats the request of page 2 (GET /alternate?cursor=…)`, wantHits: 3, wantRows: 3},
		{name: "next_url cycling a, b, c, a", path: "/ring/a",
			pagination: streams.Pagination{Type: streams.PageNextURL, Options: &streams.NextURLOptions{NextURLPath: "next"}},
			// The first request's relative URL differs from the absolute
			// link back to it: the cycle shows one page later, at b.
			wantErr: `the request for page 5 repeats the request of page 2 (GET /ring/b)`, wantHits: 4, wantRows: 6},
		{name: "page_number, the API ignores the page", path: "/ignores-page",
			pagination: streams.Pagination{Type: streams.PageNumber, Options: &streams.PageNumberOptions{PageParam: "page", PageSizeParam: "per_page", PageSize: 3}},
			wantErr:    `3 pages in a row held only rows already read in this walk (told apart by primary key id)`, wantHits: 4, wantRows: 9},
		{name: "page_number without page_size, the API ignores the page", path: "/ignores-page",
			pagination: streams.Pagination{Type: streams.PageNumber, Options: &streams.PageNumberOptions{PageParam: "page"}},
			wantErr:    `3 pages in a row held only rows already read`, wantHits: 4, wantRows: 9},
		{name: "offset, the API ignores the offset", path: "/ignores-offset",
			pagination: streams.Pagination{Type: streams.PageOffset, Options: &streams.OffsetOptions{OffsetParam: "offset", PageSizeParam: "limit", PageSize: 3}},
			wantErr:    `3 pages in a row held only rows already read`, wantHits: 4, wantRows: 9},
		{name: "cursor changes, rows stay", path: "/fresh-cursor", pagination: cursor,
			wantErr: `3 pages in a row held only rows already read in this walk (told apart by primary key id)`, wantHits: 4, wantRows: 6},
		{name: "cursor changes, rows stay, no primary key", path: "/fresh-cursor", pagination: cursor, noKey: true,
			wantErr: `(told apart by their content)`, wantHits: 4, wantRows: 6},

		{name: "cursor changes, the rows of six pages come round again", path: "/long-ring", pagination: cursor,
			wantErr: `3 pages in a row held only rows already read`, wantHits: 9, wantRows: 16},
		{name: "cursor to the end", path: "/cursor-end", pagination: cursor, wantHits: 5, wantRows: 10},
		{name: "pages overlapping the last", path: "/overlap", pagination: cursor, wantHits: 11, wantRows: 33},
		{name: "two stale pages, then new rows", path: "/stale-then-new", pagination: cursor, wantHits: 6, wantRows: 12},
		{name: "page_number, total_pages ends a repeating API", path: "/ignores-page-total",
			pagination: streams.Pagination{Type: streams.PageNumber, Options: &streams.PageNumberOptions{PageParam: "page", TotalPagesPath: "total_pages"}}, wantHits: 3, wantRows: 9},
		{name: "offset without page_size, the API ignores the offset", path: "/ignores-offset",
			pagination: streams.Pagination{Type: streams.PageOffset, Options: &streams.OffsetOptions{OffsetParam: "offset"}},
			wantErr:    `3 pages in a row held only rows already read`, wantHits: 4, wantRows: 9},
		{name: "offset without page_size, pages the API sizes, to an empty one", path: "/api-sized",
			pagination: streams.Pagination{Type: streams.PageOffset, Options: &streams.OffsetOptions{OffsetParam: "offset"}}, wantHits: 4, wantRows: 10},
		{name: "offset over a shifting source", path: "/shifting",
			pagination: streams.Pagination{Type: streams.PageOffset, Options: &streams.OffsetOptions{OffsetParam: "offset", PageSizeParam: "limit", PageSize: 10}}, wantHits: 4, wantRows: 38},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api.mu.Lock()
			clear(api.hits)
			api.mu.Unlock()
			d := &streams.Definition{Name: "loopy", Path: tt.path, RecordsPath: "items", PrimaryKey: []string{"id"}, Pagination: tt.pagination}
			if tt.noKey {
				d.PrimaryKey = nil
			}
			p := mustPaginator(t, d)
			first, err := d.FirstRequest(nil)
			if err != nil {
				t.Fatal(err)
			}
			rows := 0
			err = Walk(context.Background(), d, p, first, httpFetch(srv.URL, d), func(r *streams.Page) error {
				rows += len(r.Records)
				return nil
			})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("err = %v, want none", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), `stream "loopy": `)):
				t.Fatalf("err = %v, want it to name the stream and contain %q", err, tt.wantErr)
			}
			api.mu.Lock()
			hits := 0
			for _, n := range api.hits {
				hits += n
			}
			api.mu.Unlock()
			if hits != tt.wantHits || rows != tt.wantRows {
				t.Errorf("%d requests and %d rows, want %d and %d", hits, rows, tt.wantHits, tt.wantRows)
			}
		})
	}
}

// TestWalkIsFreshEachTime: the walk of each parent record (or window)
// starts with nothing seen, so children with the same rows are not a loop.
func TestWalkIsFreshEachTime(t *testing.T) {
	api := &loopAPI{limit: 50, hits: map[string]int{}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	d := &streams.Definition{Name: "child", Path: "/stale-then-new", RecordsPath: "items", PrimaryKey: []string{"id"},
		Pagination: streams.Pagination{Type: streams.PageCursor, Options: &streams.CursorOptions{CursorParam: "cursor", NextCursorPath: "next", HasMorePath: "has_more"}}}
	p := mustPaginator(t, d)
	for parent := range 4 {
		first, _ := d.FirstRequest(nil)
		if err := Walk(context.Background(), d, p, first, httpFetch(srv.URL, d), func(*streams.Page) error { return nil }); err != nil {
			t.Fatalf("walk %d: %v", parent+1, err)
		}
	}
}

// BenchmarkGuardRows measures what telling stale pages costs a walk, per
// page of 100 records, by primary key and by content: 1,000 pages of
// distinct rows, read again by a fresh walk once all are read.
func BenchmarkGuardRows(b *testing.B) {
	pages := make([][]any, 1000)
	for p := range pages {
		pages[p] = make([]any, 100)
		for i := range pages[p] {
			pages[p][i] = map[string]any{"id": json.Number(strconv.Itoa(p*100 + i)), "status": "open", "total": json.Number("12.50"),
				"updated_at": "2026-01-01T00:00:00Z", "tags": []any{"a", "b"}}
		}
	}
	for _, key := range []struct {
		name string
		pk   []string
	}{{"by_key", []string{"id"}}, {"by_content", nil}} {
		b.Run(key.name, func(b *testing.B) {
			d := &streams.Definition{Name: "x", PrimaryKey: key.pk}
			g := newGuard(d)
			p := 0
			for b.Loop() {
				if p == len(pages) {
					g, p = newGuard(d), 0
				}
				if g.stalePage(pages[p]) {
					b.Fatal("a page of new rows is stale")
				}
				p++
			}
		})
	}
}

// TestStalePage: a page is stale when its rows were all on the last
// recentPages pages, or were exactly the rows of any earlier page.
func TestStalePage(t *testing.T) {
	tests := map[string]struct {
		pages [][]int
		want  []bool
	}{
		"new rows":                     {[][]int{{1, 2}, {3, 4}, {5, 6}}, []bool{false, false, false}},
		"some new rows":                {[][]int{{1, 2, 3}, {3, 4, 5}, {4, 5, 6}}, []bool{false, false, false}},
		"the same page":                {[][]int{{1, 2}, {1, 2}, {2, 1}}, []bool{false, true, true}},
		"rows of the last pages":       {[][]int{{1, 2}, {3, 4}, {2, 3}, {4, 1}}, []bool{false, false, true, true}},
		"an old page again":            {[][]int{{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}, {11, 12}, {2, 1}}, []bool{false, false, false, false, false, false, true}},
		"rows of the fourth page back": {[][]int{{1, 2}, {3, 4}, {5, 6}, {7, 8}, {1, 2, 3}}, []bool{false, false, false, false, true}},
		"old rows mixed beyond reach":  {[][]int{{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}, {1, 3}}, []bool{false, false, false, false, false, false}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			g := newGuard(&streams.Definition{Name: "x", PrimaryKey: []string{"id"}})
			var got []bool
			for _, ids := range tt.pages {
				recs := make([]any, len(ids))
				for i, id := range ids {
					recs[i] = map[string]any{"id": json.Number(strconv.Itoa(id))}
				}
				got = append(got, g.stalePage(recs))
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("stale (-want +got):\n%s", d)
			}
		})
	}
}

// TestInjectRepeatGuard: a cursor in a header or body that comes back the
// same is caught by the walk's repeat guard.
func TestInjectRepeatGuard(t *testing.T) {
	for _, inject := range []string{streams.InjectBody, streams.InjectHeader} {
		d := &streams.Definition{Name: "s", Path: "/x", Method: "POST", Pagination: streams.Pagination{Type: streams.PageCursor, PageCommon: streams.PageCommon{Inject: inject},
			Options: &streams.CursorOptions{CursorParam: "c", NextCursorPath: "next"}}}
		p, _ := New(d)
		first, _ := d.FirstRequest(nil)
		calls := 0
		fetch := func(_ context.Context, req streams.Request) (*streams.Page, error) {
			calls++
			return &streams.Page{URL: &url.URL{Path: "/x"}, Values: streams.Decoded{Body: jsontest.Decode(t, `{"next":"same"}`)}, Records: []any{map[string]any{"id": calls}}}, nil
		}
		err := Walk(t.Context(), d, p, first, fetch, func(*streams.Page) error { return nil })
		if err == nil || !strings.Contains(err.Error(), "repeats the request") || calls > 3 {
			t.Errorf("%s: err = %v after %d calls", inject, err, calls)
		}
	}
}
