package streams

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// scripted is a Fetch that answers the i-th request with bodies[i] and
// records what it was asked. Walk calls it from its prefetching goroutine,
// one request at a time, so it answers a request beyond the script with an
// error rather than t.Fatal.
type scripted struct {
	d      *Definition
	bodies []string
	sent   []Request
}

func (s *scripted) fetch(t *testing.T) Fetch {
	return func(ctx context.Context, req Request) (*Response, error) {
		if len(s.sent) >= len(s.bodies) {
			return nil, fmt.Errorf("unexpected request %d: %+v", len(s.sent)+1, req)
		}
		body := mustJSON(t, s.bodies[len(s.sent)])
		s.sent = append(s.sent, req)
		recs, err := s.d.Extract(body)
		if err != nil {
			return nil, err
		}
		return &Response{URL: mustURL(t, "https://api.example.com/v1/x"), Body: body, Records: recs}, nil
	}
}

func cursorDef(maxPages int) *Definition {
	return &Definition{Name: "x", Path: "/v1/x", RecordsPath: "data",
		Pagination: Pagination{Type: PageCursor, CursorParam: "cursor", NextCursorPath: "next", MaxPages: maxPages}}
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
		"repeated request": {bodies: []string{page(2, `"abc"`), page(2, `"abc"`)}, wantPages: 2,
			wantErr: `stream "x": next page repeats the request just made (GET /v1/x?cursor=…); stopping instead of looping`},
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
			err = Walk(context.Background(), d, p, first, s.fetch(t), func(r *Response) error {
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
	d.Pagination.PageSizeParam, d.Pagination.PageSize = "limit", 2
	d.Params = map[string]string{"status": "open"}
	p := mustPaginator(t, d)
	first, _ := d.FirstRequest(nil)
	s := &scripted{d: d, bodies: []string{`{"data":[1,2],"next":"t+1/="}`, `{"data":[3],"next":""}`}}
	if err := Walk(context.Background(), d, p, first, s.fetch(t), func(*Response) error { return nil }); err != nil {
		t.Fatal(err)
	}
	want := []Request{
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
	err := Walk(context.Background(), d, p, Request{Method: "GET", URL: "/v1/x"}, s.fetch(t), func(*Response) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
}

func TestWalkContextCancel(t *testing.T) {
	d := cursorDef(0)
	p := mustPaginator(t, d)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &scripted{d: d, bodies: []string{`{"data":[1],"next":"a"}`, `{"data":[1],"next":"b"}`}}
	pages := 0
	err := Walk(ctx, d, p, Request{Method: "GET", URL: "/v1/x"}, s.fetch(t), func(*Response) error {
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
		r    Request
		want string
	}{
		{Request{URL: "/v1/x"}, "GET /v1/x"},
		{Request{Method: "POST", URL: "/v1/x", Query: query("api_key", "s3cret", "b", "1")}, "POST /v1/x?api_key=…&b=…"},
		{Request{Method: "GET", URL: "https://user:pw@api.example.com/v1/x?token=s3cret&page=2"}, "GET /v1/x?page=…&token=…"},
	}
	for _, tt := range tests {
		if got := describeRequest(tt.r); got != tt.want {
			t.Errorf("describeRequest(%+v) = %q, want %q", tt.r, got, tt.want)
		}
	}
}

func TestSameRequest(t *testing.T) {
	a := Request{Method: "GET", URL: "/x", Query: query("a", "1")}
	tests := []struct {
		b    Request
		same bool
	}{
		{Request{Method: "get", URL: "/x", Query: query("a", "1")}, true},
		{Request{Method: "GET", URL: "/x", Query: query("a", "2")}, false},
		{Request{Method: "GET", URL: "/y", Query: query("a", "1")}, false},
		{Request{Method: "POST", URL: "/x", Query: query("a", "1")}, false},
		{Request{Method: "GET", URL: "/x", Query: query("a", "1"), Body: []byte("{}")}, false},
	}
	for _, tt := range tests {
		if got := sameRequest(a, tt.b); got != tt.same {
			t.Errorf("sameRequest(%+v, %+v) = %v", a, tt.b, got)
		}
	}
	if !sameRequest(Request{URL: "/x"}, Request{URL: "/x", Query: query()}) {
		t.Error("nil and empty query differ")
	}
}
