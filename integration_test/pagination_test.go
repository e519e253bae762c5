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
