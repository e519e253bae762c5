package integration_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestPaginationDemo walks every demo stream, each with its own
// pagination type, and checks that the set of primary keys emitted (and the
// records themselves) equals the source.
func TestPaginationDemo(t *testing.T) {
	t.Parallel()
	const growth = 7
	dc := demoBase()
	dc.EventsGrowth = growth
	srv, base := startDemo(t, dc)
	names := []string{"customers", "orders", "order_items", "events", "invoices", "tickets", "bars", "issues"}
	d := newTapDir(t, tapConfig(base, demoStreams(t, nil, names...)))
	l := newLoader(t)
	r := d.sync(l, time.Minute)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			want := source(t, srv, name)
			if name == "events" {
				// Growth lands after every page served, the last one
				// included: the rows added after the last page were never
				// offered to the tap.
				want = want[:len(want)-growth]
			}
			if len(want) == 0 {
				t.Fatal("the source is empty")
			}
			emitted := map[string]bool{}
			for k := range l.rows(name) {
				emitted[k] = true
			}
			wantKeys := keysOf(t, want, demoKeys[name])
			var missing, extra []string
			for k := range wantKeys {
				if !emitted[k] {
					missing = append(missing, k)
				}
			}
			for k := range emitted {
				if _, ok := wantKeys[k]; !ok {
					extra = append(extra, k)
				}
			}
			if len(missing)+len(extra) > 0 {
				sort.Strings(missing)
				sort.Strings(extra)
				t.Errorf("emitted keys differ from the source: missing %d %.10v, extra %d %.10v", len(missing), missing, len(extra), extra)
			}
			if n := l.dupes[name]; n > 0 && name != "invoices" {
				t.Errorf("%d records sent twice in one run", n)
			}
			assertTable(t, l, name, demoKeys[name], want)
		})
	}
	if got := srv.Stats().ByPath["events"]; got < 300/50 {
		t.Errorf("events took %d pages, expected the growth to be read", got)
	}
}

// edgeServer is an independent API with one endpoint per pagination edge
// case. Every endpoint serves the records id 1..n of its own data set.
type edgeServer struct {
	t       *testing.T
	mu      sync.Mutex
	errs    []string
	cursors []string // cursors received by /cursor, in order
	base    string
	front   int // rows inserted at the front of /shifting so far
}

func (e *edgeServer) fail(format string, args ...any) {
	e.mu.Lock()
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
	e.mu.Unlock()
}

func rowsJSON(ids []string) []map[string]any {
	out := make([]map[string]any, len(ids))
	for i, id := range ids {
		var v any = id
		if n, err := strconv.Atoi(id); err == nil {
			v = json.Number(strconv.Itoa(n))
		}
		out[i] = map[string]any{"id": v, "name": "row " + id}
	}
	return out
}

func numIDs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(i + 1)
	}
	return out
}

func writeJSONBody(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v) //nolint:errcheck
}

// Tokens of /cursor: each holds '+', '/' and '=', which a client that does
// not escape its query corrupts ('+' becomes a space).
var edgeCursors = []string{"", "a+b/c==", "+/+/=", "zz9+/Q=="}

func (e *edgeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if got := r.Header.Get("Authorization"); got != "Bearer "+sentinel {
		e.fail("%s: Authorization %q, want the bearer token", r.URL.Path, got)
	}
	q := r.URL.Query()
	switch r.URL.Path {
	case "/link": // 25 rows, 10 per page, three relations with quoted parameters
		page, _ := strconv.Atoi(q.Get("page"))
		if page == 0 {
			page = 1
		}
		ids := numIDs(25)
		lo, hi := (page-1)*10, min(page*10, 25)
		link := func(p int, rel, extra string) string {
			return fmt.Sprintf(`<%s/link?page=%d>; rel="%s"%s`, e.base, p, rel, extra)
		}
		parts := []string{link(1, "first", `; title="first, page; one"`)}
		if page < 3 {
			// rel "next" is not first, and a quoted title holds a comma
			// and a semicolon that must not split the header.
			parts = append(parts, link(page+1, "next", `; title="next, please; thanks"; type="application/json"`))
		}
		parts = append(parts, link(3, "last", `; title="the \"last\" one"`))
		if page == 2 {
			// The same relations, one Link header field each.
			for _, p := range parts {
				w.Header().Add("Link", p)
			}
		} else {
			w.Header().Set("Link", strings.Join(parts, ", "))
		}
		writeJSONBody(w, map[string]any{"items": rowsJSON(ids[lo:hi])})
	case "/v2/relative": // next_url relative to the page's URL, 23 rows of 5
		page, _ := strconv.Atoi(q.Get("page"))
		ids := numIDs(23)
		lo, hi := page*5, min(page*5+5, 23)
		var next any
		if hi < 23 {
			next = fmt.Sprintf("relative?page=%d", page+1) // relative to /v2/
		}
		writeJSONBody(w, map[string]any{"items": rowsJSON(ids[lo:hi]), "next": next})
	case "/empty-last": // page_number; 20 rows of 10, then an empty page
		page, _ := strconv.Atoi(q.Get("page"))
		ids := numIDs(20)
		lo, hi := min((page-1)*10, 20), min(page*10, 20)
		if page > 3 {
			e.fail("/empty-last: page %d requested after the empty page 3", page)
		}
		writeJSONBody(w, map[string]any{"items": rowsJSON(ids[lo:hi])})
	case "/exact": // offset without a total; 30 rows, page size 10
		off, _ := strconv.Atoi(q.Get("offset"))
		lim, _ := strconv.Atoi(q.Get("limit"))
		if lim != 10 {
			e.fail("/exact: limit %q", q.Get("limit"))
		}
		ids := numIDs(30)
		lo, hi := min(off, 30), min(off+10, 30)
		if off > 30 {
			e.fail("/exact: offset %d beyond the end", off)
		}
		writeJSONBody(w, map[string]any{"items": rowsJSON(ids[lo:hi])})
	case "/keyset": // string ids, lexical order, 3 per page
		ids := []string{"a-01", "a-02", "b-10", "b-9", "c", "c-1", "d~", "e/f", "z"}
		after := q.Get("after")
		var page []string
		for _, id := range ids {
			if id > after && len(page) < 3 {
				page = append(page, id)
			}
		}
		writeJSONBody(w, map[string]any{"items": rowsJSON(page)})
	case "/cursor": // opaque cursors with + / =
		c := q.Get("cursor")
		e.mu.Lock()
		e.cursors = append(e.cursors, c)
		e.mu.Unlock()
		i := slices.Index(edgeCursors, c)
		if i < 0 {
			e.fail("/cursor: received cursor %q, which was never issued (raw query %q)", c, r.URL.RawQuery)
			http.Error(w, `{"error":"bad cursor"}`, http.StatusBadRequest)
			return
		}
		ids := numIDs(4 * 6)
		body := map[string]any{"items": rowsJSON(ids[i*6 : i*6+6])}
		if i+1 < len(edgeCursors) {
			body["next_cursor"] = edgeCursors[i+1]
		} else {
			body["next_cursor"] = nil
		}
		writeJSONBody(w, body)
	case "/shifting": // offset over a newest-first list that grows at the front while it is read
		off, _ := strconv.Atoi(q.Get("offset"))
		e.mu.Lock()
		var ids []string
		for i := e.front - 1; i >= 0; i-- {
			ids = append(ids, strconv.Itoa(200+i))
		}
		for i := 129; i >= 100; i-- {
			ids = append(ids, strconv.Itoa(i))
		}
		e.front += 2
		e.mu.Unlock()
		lo, hi := min(off, len(ids)), min(off+10, len(ids))
		writeJSONBody(w, map[string]any{"items": rowsJSON(ids[lo:hi])})
	default:
		http.NotFound(w, r)
	}
}

func idRange(lo, hi int) []string {
	var out []string
	for i := lo; i <= hi; i++ {
		out = append(out, strconv.Itoa(i))
	}
	return out
}

func edgeStream(name, path string, pagination map[string]any, extra map[string]any) map[string]any {
	d := map[string]any{
		"name": name, "path": path, "records_path": "items", "primary_key": []string{"id"},
		"pagination": pagination,
		"schema": map[string]any{"type": "object", "properties": map[string]any{
			"id": map[string]any{"type": []string{"integer", "string"}}, "name": map[string]any{"type": "string"},
		}},
	}
	for k, v := range extra {
		d[k] = v
	}
	return d
}

// TestPaginationEdges runs the tap against an API with the pagination edge
// cases real APIs have.
func TestPaginationEdges(t *testing.T) {
	t.Parallel()
	es := &edgeServer{t: t}
	es.base = serve(t, es)
	cases := []struct {
		stream map[string]any
		want   []string
	}{
		{edgeStream("link", "/link", map[string]any{"type": "link_header"}, nil), numIDs(25)},
		{edgeStream("relative", "/v2/relative", map[string]any{"type": "next_url", "next_url_path": "next"},
			map[string]any{"params": map[string]any{"page": "0"}}), numIDs(23)},
		{edgeStream("empty_last", "/empty-last", map[string]any{"type": "page_number", "page_param": "page"}, nil), numIDs(20)},
		{edgeStream("exact", "/exact", map[string]any{"type": "offset", "offset_param": "offset", "page_size_param": "limit", "page_size": 10}, nil), numIDs(30)},
		{edgeStream("keyset", "/keyset", map[string]any{"type": "keyset", "key_param": "after", "key_field": "id", "page_size": 3, "page_size_param": "n"}, nil),
			[]string{"a-01", "a-02", "b-10", "b-9", "c", "c-1", "d~", "e/f", "z"}},
		{edgeStream("shifting", "/shifting", map[string]any{"type": "offset", "offset_param": "offset", "page_size_param": "limit", "page_size": 10}, nil), idRange(100, 129)},
		{edgeStream("cursor", "/cursor", map[string]any{"type": "cursor", "cursor_param": "cursor", "next_cursor_path": "next_cursor"}, nil), numIDs(24)},
	}
	for _, c := range cases {
		name := c.stream["name"].(string)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := newTapDir(t, tapConfig(es.base, []any{c.stream}))
			l := newLoader(t)
			r := d.sync(l, time.Minute)
			if r.code != 0 {
				t.Fatalf("exit %d, want 0; stderr:\n%s", r.code, r.stderr)
			}
			assertTable(t, l, name, []string{"id"}, rowsJSON(c.want))
			if n := l.dupes[name]; n > 0 {
				t.Errorf("%d records sent twice", n)
			}
			if name == "cursor" {
				es.mu.Lock()
				defer es.mu.Unlock()
				if !slices.Equal(es.cursors, edgeCursors) {
					t.Errorf("cursors received %q, want exactly the tokens issued %q", es.cursors, edgeCursors)
				}
			}
		})
	}
	t.Cleanup(func() {
		es.mu.Lock()
		defer es.mu.Unlock()
		for _, e := range es.errs {
			t.Error(e)
		}
	})
}

// TestPaginationOtherHost: a next link to another host stops the run with
// an error naming the stream, and the other host never sees the token.
func TestPaginationOtherHost(t *testing.T) {
	t.Parallel()
	var otherHits, otherAuth atomic.Int32
	other := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		if strings.Contains(r.Header.Get("Authorization"), sentinel) || strings.Contains(r.URL.RawQuery, sentinel) {
			otherAuth.Add(1)
		}
		writeJSONBody(w, map[string]any{"items": rowsJSON([]string{"99"})})
	}))
	// "localhost" vs "127.0.0.1" is another host too, on the same port.
	t.Run("redirect", func(t *testing.T) {
		// A 302 to another host: followed or refused, the credentials
		// must not go along.
		t.Parallel()
		base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other+"/steal?api_key=x", http.StatusFound)
		}))
		d := newTapDir(t, tapConfig(base, []any{edgeStream("redirected", "/items", map[string]any{"type": "none"}, nil)}))
		r := d.sync(newLoader(t), time.Minute)
		t.Logf("exit %d: %s", r.code, lastLine(r.stderr))
	})
	for _, tc := range []struct{ name, kind string }{{"next_url", "next_url"}, {"link_header", "link_header"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.kind == "link_header" {
					w.Header().Set("Link", "<"+other+"/steal?page=2>; rel=\"next\"")
					writeJSONBody(w, map[string]any{"items": rowsJSON([]string{"1", "2"})})
					return
				}
				writeJSONBody(w, map[string]any{"items": rowsJSON([]string{"1", "2"}), "next": other + "/steal?page=2"})
			}))
			pag := map[string]any{"type": "next_url", "next_url_path": "next"}
			if tc.kind == "link_header" {
				pag = map[string]any{"type": "link_header"}
			}
			stream := "offhost_" + tc.name
			d := newTapDir(t, tapConfig(base, []any{edgeStream(stream, "/items", pag, nil)}))
			l := newLoader(t)
			r := d.sync(l, time.Minute)
			if r.code == 0 {
				t.Errorf("exit 0, want non-zero")
			}
			if msg := lastLine(r.stderr); !strings.Contains(msg, `"`+stream+`"`) {
				t.Errorf("the error does not name the stream %q: %s", stream, msg)
			}
		})
	}
	t.Cleanup(func() {
		if n := otherAuth.Load(); n > 0 {
			t.Errorf("the other host received the credentials %d times", n)
		}
		if n := otherHits.Load(); n > 0 {
			t.Logf("the other host received %d requests (without credentials)", n)
		}
	})
}

// TestPaginationLoops: an API whose pages never end is an error naming the
// stream, never an endless walk.
func TestPaginationLoops(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	var self string
	self = serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) > 1000 {
			http.Error(w, `{"error":"too many requests from the test"}`, http.StatusBadRequest)
			return
		}
		q := r.URL.Query()
		switch r.URL.Path {
		case "/same-cursor": // the same cursor forever
			writeJSONBody(w, map[string]any{"items": rowsJSON([]string{"1"}), "next_cursor": "again"})
		case "/self-link": // rel="next" is the page itself
			w.Header().Set("Link", "<"+self+"/self-link>; rel=\"next\"")
			writeJSONBody(w, map[string]any{"items": rowsJSON([]string{"1"})})
		case "/empty-more": // empty pages with a fresh cursor and has_more forever
			n, _ := strconv.Atoi(q.Get("cursor"))
			writeJSONBody(w, map[string]any{"items": []any{}, "has_more": true, "next_cursor": strconv.Itoa(n + 1)})
		default:
			http.NotFound(w, r)
		}
	}))
	cursor := map[string]any{"type": "cursor", "cursor_param": "cursor", "next_cursor_path": "next_cursor", "has_more_path": "has_more"}
	for _, c := range []struct {
		stream map[string]any
		msg    string
	}{
		{edgeStream("same_cursor", "/same-cursor", cursor, nil), "repeats the request"},
		{edgeStream("self_link", "/self-link", map[string]any{"type": "link_header"}, nil), "repeats the request"},
		{edgeStream("empty_more", "/empty-more", cursor, nil), "empty pages"},
	} {
		name := c.stream["name"].(string)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := newTapDir(t, tapConfig(self, []any{c.stream}))
			r := d.sync(newLoader(t), time.Minute)
			msg := lastLine(r.stderr)
			if r.code != 1 || !strings.Contains(msg, `"`+name+`"`) || !strings.Contains(msg, c.msg) {
				t.Errorf("exit %d, error %q; want exit 1 and an error naming %q that says %q", r.code, msg, name, c.msg)
			}
		})
	}
}

// cycleAPI has one endpoint per way an API was seen to make a walk endless,
// and endpoints whose walks are long but finite. It answers at most 50
// requests per path, then 400, so that a tap without loop guards fails
// its test instead of running forever.
type cycleAPI struct {
	base string
	mu   sync.Mutex
	hits map[string]int
}

func (a *cycleAPI) count(prefix string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for p, h := range a.hits {
		if strings.HasPrefix(p, prefix) {
			n += h
		}
	}
	return n
}

func (a *cycleAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.hits[r.URL.Path]++
	n := a.hits[r.URL.Path]
	a.mu.Unlock()
	if n > 50 {
		http.Error(w, `{"error":"too many requests for this test"}`, http.StatusBadRequest)
		return
	}
	q := r.URL.Query()
	c, _ := strconv.Atoi(q.Get("cursor"))
	var body map[string]any
	switch p := r.URL.Path; {
	case strings.HasSuffix(p, "/alternate"): // cursor A, B, A, B… with has_more true
		next := map[string]string{"": "A", "A": "B", "B": "A"}[q.Get("cursor")]
		row := map[string]string{"": "1", "A": "2", "B": "3"}[q.Get("cursor")]
		body = map[string]any{"items": rowsJSON([]string{row}), "next": next, "has_more": true}
	case strings.Contains(p, "/ring/"): // next_url a → b → c → a
		dir, at := p[:len(p)-1], p[len(p)-1:]
		next := map[string]string{"a": "b", "b": "c", "c": "a"}[at]
		lo := 2*int(at[0]-'a') + 1
		body = map[string]any{"items": rowsJSON(idRange(lo, lo+1)), "next": a.base + dir + next}
	case strings.HasSuffix(p, "/ignores-position"): // the same full page whatever is asked
		body = map[string]any{"items": rowsJSON(idRange(1, 3))}
	case strings.HasSuffix(p, "/ignores-page-total"): // the same page, and a total that ends the walk
		body = map[string]any{"items": rowsJSON(idRange(1, 3)), "total_pages": 3}
	case strings.HasSuffix(p, "/fresh-cursor"): // a new cursor every time, the same rows
		body = map[string]any{"items": rowsJSON(idRange(1, 2)), "next": strconv.Itoa(c + 1), "has_more": true}
	case strings.HasSuffix(p, "/long-ring"): // a new cursor every time, the rows of six pages over and over
		body = map[string]any{"items": rowsJSON(idRange(2*(c%6)+1, 2*(c%6)+2)), "next": strconv.Itoa(c + 1), "has_more": true}
	case strings.HasSuffix(p, "/overlap"): // each page repeats two rows of the last and adds one
		body = map[string]any{"items": rowsJSON(idRange(c+1, c+3)), "next": strconv.Itoa(c + 1), "has_more": c < 10}
	case strings.HasSuffix(p, "/stale-then-new"): // two pages of old rows, then new ones
		ids := idRange(1, 2)
		if c == 0 || c >= 3 {
			ids = idRange(10*c+1, 10*c+2)
		}
		body = map[string]any{"items": rowsJSON(ids), "next": strconv.Itoa(c + 1), "has_more": c < 5}
	case p == "/parents":
		body = map[string]any{"items": rowsJSON(idRange(1, 3))}
	case strings.HasSuffix(p, "/windowed"): // ignores the window: the same two pages in each
		rows := rowsJSON(idRange(2*c+1, 2*c+2))
		for _, row := range rows {
			row["updated_at"] = q.Get("updated_since")
		}
		body = map[string]any{"items": rows, "next": strconv.Itoa(c + 1), "has_more": c < 1}
	default:
		http.NotFound(w, r)
		return
	}
	writeJSONBody(w, body)
}

// TestPaginationCycles runs the pagination cycles seen in the wild: each
// ends with an error naming the stream after a few requests, with no
// max_pages set; the long but finite walks still end normally.
func TestPaginationCycles(t *testing.T) {
	t.Parallel()
	api := &cycleAPI{hits: map[string]int{}}
	api.base = serve(t, api)
	cursor := map[string]any{"type": "cursor", "cursor_param": "cursor", "next_cursor_path": "next", "has_more_path": "has_more"}
	noKey := map[string]any{"primary_key": []string{}}
	cases := []struct {
		name, path string
		pagination map[string]any
		extra      map[string]any
		wantErr    string
		wantHits   int
		wantIDs    []string // of a walk that ends normally
	}{
		{name: "alternating", path: "/alternate", pagination: cursor,
			wantErr: "the request for page 4 repeats the request of page 2", wantHits: 3},
		{name: "ring", path: "/ring/a", pagination: map[string]any{"type": "next_url", "next_url_path": "next"},
			wantErr: "repeats the request of page 2", wantHits: 4},
		{name: "page_ignored", path: "/ignores-position", pagination: map[string]any{"type": "page_number", "page_param": "page", "page_size_param": "per_page", "page_size": 3},
			wantErr: "3 pages in a row held only rows already read", wantHits: 4},
		{name: "offset_ignored", path: "/ignores-position", pagination: map[string]any{"type": "offset", "offset_param": "offset", "page_size_param": "limit", "page_size": 3},
			wantErr: "3 pages in a row held only rows already read", wantHits: 4},
		{name: "fresh_cursor", path: "/fresh-cursor", pagination: cursor,
			wantErr: "3 pages in a row held only rows already read in this walk (told apart by primary key id)", wantHits: 4},
		{name: "fresh_cursor_no_key", path: "/fresh-cursor", pagination: cursor, extra: noKey,
			wantErr: "(told apart by their content)", wantHits: 4},
		{name: "long_ring", path: "/long-ring", pagination: cursor,
			wantErr: "3 pages in a row held only rows already read", wantHits: 9},

		{name: "overlap", path: "/overlap", pagination: cursor, wantHits: 11, wantIDs: idRange(1, 13)},
		{name: "stale_then_new", path: "/stale-then-new", pagination: cursor, wantHits: 6,
			wantIDs: []string{"1", "2", "31", "32", "41", "42", "51", "52"}},
		{name: "page_total", path: "/ignores-page-total", pagination: map[string]any{"type": "page_number", "page_param": "page", "total_pages_path": "total_pages"},
			wantHits: 3, wantIDs: idRange(1, 3)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			prefix := "/" + c.name
			stream := edgeStream(c.name, prefix+c.path, c.pagination, c.extra)
			d := newTapDir(t, tapConfig(api.base, []any{stream}))
			l := newLoader(t)
			r := d.sync(l, time.Minute)
			msg := lastLine(r.stderr)
			if c.wantErr != "" {
				if r.code != 1 || !strings.Contains(msg, `stream "`+c.name+`": `) || !strings.Contains(msg, c.wantErr) {
					t.Errorf("exit %d, error %q; want exit 1 and an error naming %q that says %q", r.code, msg, c.name, c.wantErr)
				}
			} else {
				if r.code != 0 {
					t.Fatalf("exit %d, want 0; stderr:\n%s", r.code, r.stderr)
				}
				assertTable(t, l, c.name, []string{"id"}, rowsJSON(c.wantIDs))
			}
			if got := api.count(prefix + "/"); got != c.wantHits {
				t.Errorf("%d requests, want %d", got, c.wantHits)
			}
		})
	}
	// A child walks afresh for each parent, and a chunked stream for each
	// window: rows seen under another parent or window are not a loop.
	t.Run("child_per_parent", func(t *testing.T) {
		t.Parallel()
		parent := edgeStream("parents", "/parents", map[string]any{"type": "none"}, nil)
		child := edgeStream("children", "/parents/{id}/stale-then-new", cursor, map[string]any{
			"parent":      map[string]any{"stream": "parents", "key": "id", "as": "parent_id"},
			"primary_key": []string{"parent_id", "id"},
		})
		child["schema"].(map[string]any)["properties"].(map[string]any)["parent_id"] = map[string]any{"type": "integer"}
		d := newTapDir(t, tapConfig(api.base, []any{parent, child}))
		l := newLoader(t)
		if r := d.sync(l, time.Minute); r.code != 0 {
			t.Fatalf("exit %d, want 0; stderr:\n%s", r.code, r.stderr)
		}
		if got := len(l.rows("children")); got != 3*8 {
			t.Errorf("%d child rows, want 24 (8 for each of 3 parents)", got)
		}
	})
	t.Run("chunk_per_window", func(t *testing.T) {
		t.Parallel()
		stream := edgeStream("windows", "/windows/windowed", cursor, map[string]any{
			"replication_key": "updated_at",
			"incremental":     map[string]any{"param": "updated_since", "end_param": "updated_before", "chunk_days": 1},
		})
		stream["schema"].(map[string]any)["properties"].(map[string]any)["updated_at"] = map[string]any{"type": "string", "format": "date-time"}
		cfg := tapConfig(api.base, []any{stream})
		cfg["start_date"] = today.AddDate(0, 0, -3).Format(time.RFC3339)
		d := newTapDir(t, cfg)
		l := newLoader(t)
		if r := d.sync(l, time.Minute); r.code != 0 {
			t.Fatalf("exit %d, want 0; stderr:\n%s", r.code, r.stderr)
		}
		if got := api.count("/windows/"); got < 6 || got%2 != 0 {
			t.Errorf("%d requests, want two for each of at least 3 windows", got)
		}
	})
}

// TestStreamDefinitionChecks: a definition that cannot work is exit 2 with
// one line naming the file, the stream and the field, before any request.
func TestStreamDefinitionChecks(t *testing.T) {
	t.Parallel()
	api := &cycleAPI{hits: map[string]int{}}
	base := serve(t, api)
	cases := []struct {
		name       string
		stream     map[string]any
		wantStderr string
	}{
		{"option_of_another_type", edgeStream("s", "/x", map[string]any{"type": "page_number", "page_param": "page", "next_cursor_path": "next"}, nil),
			`tap: config.json: stream "s": pagination.next_cursor_path: is an option of pagination type "cursor", not of "page_number"; type "page_number" accepts page_param, start_page, page_size_param, page_size, total_pages_path, max_pages`},
		{"page_size_for_next_url", edgeStream("s", "/x", map[string]any{"type": "next_url", "next_url_path": "next", "page_size": 10}, nil),
			`tap: config.json: stream "s": pagination.page_size: is an option of pagination type "offset", "page_number", "keyset", "cursor", "graphql", not of "next_url"; type "next_url" accepts next_url_path, max_pages`},
		{"unknown_option", edgeStream("s", "/x", map[string]any{"type": "cursor", "cursor_param": "c", "next_cursor_path": "n", "cursor_path": "n"}, nil),
			`tap: config.json: stream "s": pagination.cursor_path: unknown pagination option; type "cursor" accepts cursor_param, next_cursor_path, has_more_path, page_size_param, page_size, next_cursor_header, cursor_from_last_record, max_pages, inject`},
		{"placeholder_without_parent", edgeStream("s", "/v1/orders/{id}/items", map[string]any{"type": "none"}, nil),
			`tap: config.json: stream "s": path: placeholder {id} needs a parent stream to fill it ("parent": {"stream": ..., "key": "id"})`},
		{"incremental_windows_without_param", edgeStream("s", "/x", map[string]any{"type": "none"}, map[string]any{
			"replication_key": "id", "incremental": map[string]any{"end_param": "until", "chunk_days": 7},
		}), `tap: config.json: stream "s": incremental.param: is required with end_param or chunk_days`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := newTapDir(t, tapConfig(base, []any{c.stream}))
			r := d.sync(newLoader(t), time.Minute)
			lines := strings.Split(strings.TrimSpace(string(r.stderr)), "\n")
			if r.code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], c.wantStderr) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and one line starting %q", r.code, r.stderr, c.wantStderr)
			}
			if len(r.stdout) > 0 {
				t.Errorf("stdout: %s", r.stdout)
			}
		})
	}
	t.Cleanup(func() {
		if n := api.count("/"); n > 0 {
			t.Errorf("%d requests sent for configs that cannot work", n)
		}
	})
}
