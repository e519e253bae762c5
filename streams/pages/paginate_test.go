package pages

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/internal/jsontest"
	"github.com/tap-dev/tap/streams"
)

// testDef returns a valid definition of stream "bars" with the given
// pagination.
func testDef(p streams.Pagination) *streams.Definition {
	return &streams.Definition{Name: "bars", Path: "/v1/bars", Pagination: p}
}

func mustPaginator(t *testing.T, d *streams.Definition) streams.Paginator {
	t.Helper()
	p, err := New(d)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// records returns n records {"id": i}.
func records(n int) []any {
	recs := make([]any, n)
	for i := range recs {
		recs[i] = map[string]any{"id": json.Number(strconv.Itoa(i))}
	}
	return recs
}

func query(kv ...string) url.Values {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	return q
}

// step is one Next call of a paginator test.
type step struct {
	last    streams.Request
	resp    *streams.Page
	want    streams.Request
	more    bool
	wantErr string
}

func runSteps(t *testing.T, p streams.Paginator, steps map[string]step) {
	t.Helper()
	for name, s := range steps {
		t.Run(name, func(t *testing.T) {
			before := s.last.WithParams().Query
			got, more, err := p.Next(s.last, s.resp)
			if s.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), s.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, s.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Next: %v", err)
			}
			if more != s.more {
				t.Fatalf("more = %v, want %v", more, s.more)
			}
			if more {
				if d := cmp.Diff(s.want, got); d != "" {
					t.Errorf("next request (-want +got):\n%s", d)
				}
			}
			if d := cmp.Diff(before, s.last.Query); d != "" {
				t.Errorf("Next modified the last request's query:\n%s", d)
			}
		})
	}
}

func TestNewRejectsBadDefinitions(t *testing.T) {
	tests := map[string]struct {
		d    *streams.Definition
		want string
	}{
		"nil":                        {nil, "needs a definition"},
		"unknown type":               {testDef(streams.Pagination{Type: "scroll"}), `unknown type "scroll"`},
		"offset size param, no size": {testDef(streams.Pagination{Type: streams.PageOffset, Options: &streams.OffsetOptions{OffsetParam: "offset", PageSizeParam: "limit"}}), "page_size"},
		"cursor no path":             {testDef(streams.Pagination{Type: streams.PageCursor, Options: &streams.CursorOptions{CursorParam: "c"}}), "next_cursor_path"},
		"graphql no gql":             {testDef(streams.Pagination{Type: streams.PageGraphQL}), "graphql"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := New(tt.d)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestNone(t *testing.T) {
	p := mustPaginator(t, testDef(streams.Pagination{}))
	req := streams.Request{Method: "GET", URL: "/v1/bars", Query: query("a", "1")}
	if d := cmp.Diff(req, p.First(req)); d != "" {
		t.Errorf("First changed the request:\n%s", d)
	}
	if _, more, err := p.Next(req, &streams.Page{Records: records(5)}); more || err != nil {
		t.Errorf("Next = more %v, err %v; want one request", more, err)
	}
}

// TestFirstIsIdempotent: Walk applies First to the request it is given,
// which the caller may already have prepared.
func TestFirstIsIdempotent(t *testing.T) {
	start0 := 0
	defs := []*streams.Definition{
		testDef(streams.Pagination{}),
		testDef(streams.Pagination{Type: streams.PageOffset, Options: &streams.OffsetOptions{OffsetParam: "offset", PageSizeParam: "limit", PageSize: 10}}),
		testDef(streams.Pagination{Type: streams.PageNumber, Options: &streams.PageNumberOptions{PageParam: "page", StartPage: &start0, PageSizeParam: "per_page", PageSize: 10}}),
		testDef(streams.Pagination{Type: streams.PageKeyset, Options: &streams.KeysetOptions{KeyParam: "after_id", KeyField: "id", PageSizeParam: "limit", PageSize: 10}}),
		testDef(streams.Pagination{Type: streams.PageCursor, Options: &streams.CursorOptions{CursorParam: "cursor", NextCursorPath: "next", PageSizeParam: "limit", PageSize: 10}}),
		testDef(streams.Pagination{Type: streams.PageNextURL, Options: &streams.NextURLOptions{NextURLPath: "next"}}),
		testDef(streams.Pagination{Type: streams.PageLinkHeader}),
		{Name: "issues", Path: "/graphql", Pagination: streams.Pagination{Type: streams.PageGraphQL}, GraphQL: &streams.GraphQL{Query: "query Q { x }", ConnectionPath: "data.x", Variables: map[string]any{"owner": "me"}}},
	}
	for _, d := range defs {
		t.Run(d.Pagination.Type, func(t *testing.T) {
			p := mustPaginator(t, d)
			req, err := d.FirstRequest(nil)
			if err != nil {
				t.Fatal(err)
			}
			once := p.First(req)
			if d := cmp.Diff(once, p.First(once)); d != "" {
				t.Errorf("First(First(r)) != First(r):\n%s", d)
			}
		})
	}
}

func TestOffset(t *testing.T) {
	d := testDef(streams.Pagination{Type: streams.PageOffset, Options: &streams.OffsetOptions{OffsetParam: "offset", PageSizeParam: "limit", PageSize: 3, TotalPath: "meta.total"}})
	p := mustPaginator(t, d)

	base := streams.Request{Method: "GET", URL: "/v1/bars", Query: query("sort", "id")}
	first := p.First(base)
	if d := cmp.Diff(query("sort", "id", "offset", "0", "limit", "3"), first.Query); d != "" {
		t.Errorf("First query (-want +got):\n%s", d)
	}
	if d := cmp.Diff(query("sort", "id"), base.Query); d != "" {
		t.Errorf("First modified the caller's query:\n%s", d)
	}

	at := func(offset string) streams.Request {
		return streams.Request{Method: "GET", URL: "/v1/bars", Query: query("offset", offset, "limit", "3")}
	}
	body := func(total string) *streams.Page {
		return &streams.Page{Values: streams.Decoded{Body: jsontest.Decode(t, `{"meta":{"total":`+total+`}}`)}, Records: records(3)}
	}
	runSteps(t, p, map[string]step{
		"full page, more": {last: at("0"), resp: body("10"), want: at("3"), more: true},
		"no total in body": {last: at("3"), resp: &streams.Page{Values: streams.Decoded{Body: map[string]any{}}, Records: records(3)},
			want: at("6"), more: true},
		"total reached":     {last: at("6"), resp: body("9"), more: false},
		"total as a string": {last: at("6"), resp: &streams.Page{Values: streams.Decoded{Body: jsontest.Decode(t, `{"meta":{"total":"9"}}`)}, Records: records(3)}, more: false},
		"total as a float":  {last: at("3"), resp: &streams.Page{Values: streams.Decoded{Body: map[string]any{"meta": map[string]any{"total": 10.0}}}, Records: records(3)}, want: at("6"), more: true},
		"total null":        {last: at("6"), resp: &streams.Page{Values: streams.Decoded{Body: jsontest.Decode(t, `{"meta":{"total":null}}`)}, Records: records(3)}, want: at("9"), more: true},
		// 6 rows, pages of 3 and no total: the third page is empty.
		"exact division, then empty page": {last: at("6"), resp: &streams.Page{Values: streams.Decoded{Body: map[string]any{}}, Records: nil}, more: false},
		"short page":                      {last: at("3"), resp: &streams.Page{Values: streams.Decoded{Body: map[string]any{}}, Records: records(2)}, more: false},
		"bad total": {last: at("0"), resp: &streams.Page{Values: streams.Decoded{Body: jsontest.Decode(t, `{"meta":{"total":"many"}}`)}, Records: records(3)},
			wantErr: `total_path "meta.total" holds a JSON string`},
		"bad offset in last request": {last: at("x"), resp: body("10"), wantErr: `offset parameter "offset"`},
	})
}

func TestPageNumber(t *testing.T) {
	zero := 0
	d := testDef(streams.Pagination{Type: streams.PageNumber, Options: &streams.PageNumberOptions{PageParam: "page", PageSizeParam: "per_page", PageSize: 2, TotalPagesPath: "pages"}})
	p := mustPaginator(t, d)
	if d := cmp.Diff(query("page", "1", "per_page", "2"), p.First(streams.Request{}).Query); d != "" {
		t.Errorf("First query (-want +got):\n%s", d)
	}
	at := func(page string) streams.Request {
		return streams.Request{Method: "GET", URL: "/v1/bars", Query: query("page", page, "per_page", "2")}
	}
	pages := func(n string, recs int) *streams.Page {
		return &streams.Page{Values: streams.Decoded{Body: jsontest.Decode(t, `{"pages":`+n+`}`)}, Records: records(recs)}
	}
	runSteps(t, p, map[string]step{
		"more":               {last: at("1"), resp: pages("3", 2), want: at("2"), more: true},
		"last by total":      {last: at("3"), resp: pages("3", 2), more: false},
		"beyond total":       {last: at("4"), resp: pages("3", 2), more: false},
		"short page":         {last: at("1"), resp: pages("3", 1), more: false},
		"empty page":         {last: at("2"), resp: pages("3", 0), more: false},
		"total pages absent": {last: at("7"), resp: &streams.Page{Values: streams.Decoded{Body: map[string]any{}}, Records: records(2)}, want: at("8"), more: true},
		"total not a number": {last: at("1"), resp: pages(`{}`, 2), wantErr: "total_pages_path"},
	})

	t.Run("start_page 0 is kept and counted", func(t *testing.T) {
		d := testDef(streams.Pagination{Type: streams.PageNumber, Options: &streams.PageNumberOptions{PageParam: "p", StartPage: &zero, TotalPagesPath: "pages"}})
		p := mustPaginator(t, d)
		if got := p.First(streams.Request{}).Query.Get("p"); got != "0" {
			t.Fatalf("first page = %q, want 0", got)
		}
		runSteps(t, p, map[string]step{
			"page 1 of 0..2": {last: streams.Request{Query: query("p", "1")}, resp: pages("3", 5), want: streams.Request{Query: query("p", "2")}, more: true},
			"page 2 of 0..2": {last: streams.Request{Query: query("p", "2")}, resp: pages("3", 5), more: false},
			// Without page_size a short page cannot be told apart.
		})
	})

	t.Run("without page size only empty pages end", func(t *testing.T) {
		p := mustPaginator(t, testDef(streams.Pagination{Type: streams.PageNumber, Options: &streams.PageNumberOptions{PageParam: "page"}}))
		if got := p.First(streams.Request{}).Query; !cmp.Equal(got, query("page", "1")) {
			t.Errorf("First query = %v, want only page=1", got)
		}
		runSteps(t, p, map[string]step{
			"one record": {last: streams.Request{Query: query("page", "4")}, resp: &streams.Page{Records: records(1)}, want: streams.Request{Query: query("page", "5")}, more: true},
			"empty":      {last: streams.Request{Query: query("page", "5")}, resp: &streams.Page{}, more: false},
		})
	})
}
