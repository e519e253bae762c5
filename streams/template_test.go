package streams

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tap-dev/tap/streams/keys"
)

// A request template is compiled once and built for each walk: every row
// is a definition (and parts added to its template, as another front end
// would add them), the walk's values, and the request built.
func TestRequestTemplate(t *testing.T) {
	jan := func(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }
	window := &keys.Window{Start: jan(1), End: jan(8)}
	inc := &Incremental{Param: "since", EndParam: "until", Format: "date"}
	gql, err := decodeDef(t, `{"name": "s", "path": "/graphql", "incremental": {"param": "since", "format": "date"},
		"graphql": {"query": "query($since: String){x}", "connection_path": "data.x", "variables": {"first": 50}},
		"pagination": {"type": "graphql"}}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		def     *Definition
		extra   []RequestPart // appended to the compiled template's parts
		walk    WalkValues
		want    Request
		wantErr string
	}{{
		name: "constants and a placeholder escaped",
		def:  &Definition{Name: "s", Path: "/a/{id}/b", Params: map[string]string{"limit": "10", "q": "x y"}},
		walk: WalkValues{Vars: map[string]string{"id": "../7 8"}},
		want: Request{Method: "GET", URL: "/a/..%2F7%208/b", Query: url.Values{"limit": {"10"}, "q": {"x y"}}},
	}, {
		name: "the parent's key in the query (parent.param)",
		def:  &Definition{Name: "s", Path: "/members", Parent: &Parent{Stream: "orgs", Key: "id", As: "org_id", Param: "org"}},
		walk: WalkValues{Vars: map[string]string{"id": "o 1", "org_id": "o 1"}},
		want: Request{Method: "GET", URL: "/members", Query: url.Values{"org": {"o 1"}}},
	}, {
		name: "the stream's own headers",
		def:  &Definition{Name: "s", Path: "/s", Headers: map[string]string{"Accept": "text/csv"}},
		want: Request{Method: "GET", URL: "/s", Header: http.Header{"Accept": {"text/csv"}}},
	}, {
		name: "dots alone cannot climb",
		def:  &Definition{Name: "s", Path: "/a/{id}"},
		walk: WalkValues{Vars: map[string]string{"id": ".."}},
		want: Request{Method: "GET", URL: "/a/%2E%2E"},
	}, {
		name:    "a placeholder without a value",
		def:     &Definition{Name: "s", Path: "/a/{id}"},
		wantErr: `stream "s": path placeholder {id} has no value`,
	}, {
		name: "the filter's start replaces a constant of its name; no window, no end",
		def:  &Definition{Name: "s", Path: "/e", Params: map[string]string{"since": "1970-01-01"}, Incremental: inc},
		walk: WalkValues{Lower: jan(3)},
		want: Request{Method: "GET", URL: "/e", Query: url.Values{"since": {"2026-01-03"}}},
	}, {
		name: "a window: its end, exclusive",
		def:  &Definition{Name: "s", Path: "/e", Incremental: inc},
		walk: WalkValues{Lower: jan(1), Window: window},
		want: Request{Method: "GET", URL: "/e", Query: url.Values{"since": {"2026-01-01"}, "until": {"2026-01-08"}}},
	}, {
		name: "a window: its end, inclusive",
		def: &Definition{Name: "s", Path: "/e",
			Incremental: &Incremental{Param: "since", EndParam: "until", Format: "date", EndInclusive: true}},
		walk: WalkValues{Lower: jan(1), Window: window},
		want: Request{Method: "GET", URL: "/e", Query: url.Values{"since": {"2026-01-01"}, "until": {"2026-01-07"}}},
	}, {
		name: "no filter start: neither bound",
		def:  &Definition{Name: "s", Path: "/e", Incremental: inc},
		walk: WalkValues{Window: window},
		want: Request{Method: "GET", URL: "/e"},
	}, {
		name: "a POST body as it is",
		def:  &Definition{Name: "s", Path: "/search", Method: "post", Body: []byte(` {"q": 1} `)},
		want: Request{Method: "POST", URL: "/search", Body: []byte(`{"q": 1}`)},
	}, {
		name: "GraphQL: the bounds are variables",
		def:  gql,
		walk: WalkValues{Lower: jan(2)},
		want: Request{Method: "POST", URL: "/graphql",
			Body: []byte(`{"query":"query($since: String){x}","variables":{"first":50,"since":"2026-01-02"}}`)},
	}, {
		// What another front end adds: a header computed from the
		// window's end, a part without a name (left out), a constant
		// that a later part of its name replaces.
		name: "parts added to a template",
		def:  &Definition{Name: "s", Path: "/e", Incremental: inc},
		extra: []RequestPart{
			{Name: "X-Until", In: InHeader, Value: WindowEnd{Format: "rfc3339"}},
			{Name: "", In: InQuery, Value: Constant("lost")},
			{Name: "until", In: InQuery, Value: Constant("later")},
		},
		walk: WalkValues{Lower: jan(1), Window: window},
		want: Request{Method: "GET", URL: "/e", Query: url.Values{"since": {"2026-01-01"}, "until": {"later"}},
			Header: http.Header{"X-Until": {"2026-01-08T00:00:00Z"}}},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := compileRequest(tt.def, true)
			if err != nil {
				t.Fatal(err)
			}
			tmpl.parts = append(tmpl.parts, tt.extra...)
			got, err := tmpl.Build(tt.walk)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

// A template is built again and again: no request shares a map or a body
// with another.
func TestRequestTemplateBuildsFreshRequests(t *testing.T) {
	tmpl, err := compileRequest(&Definition{Name: "s", Path: "/s", Method: "POST", Body: []byte(`{"a":1}`),
		Params: map[string]string{"p": "1"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := tmpl.Build(WalkValues{})
	a.Query.Set("p", "changed")
	a.Body[2] = 'X'
	b, _ := tmpl.Build(WalkValues{})
	if b.Query.Get("p") != "1" || string(b.Body) != `{"a":1}` {
		t.Errorf("the second request saw the first's changes: %v %s", b.Query, b.Body)
	}
}
