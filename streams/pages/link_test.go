package pages

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/streams"
)

func TestParseLinkHeader(t *testing.T) {
	tests := map[string]struct {
		in   []string
		want []streams.Link
	}{
		"none": {nil, nil},
		"github style, three relations": {
			[]string{`<https://api.github.com/repositories/1/issues?page=2>; rel="next", <https://api.github.com/repositories/1/issues?page=5>; rel="last", <https://api.github.com/repositories/1/issues?page=1>; rel="first"`},
			[]streams.Link{
				{URL: "https://api.github.com/repositories/1/issues?page=2", Rel: []string{"next"}},
				{URL: "https://api.github.com/repositories/1/issues?page=5", Rel: []string{"last"}},
				{URL: "https://api.github.com/repositories/1/issues?page=1", Rel: []string{"first"}},
			},
		},
		"several header lines": {
			[]string{`</a?page=1>; rel=prev`, `</a?page=3>; rel=next`},
			[]streams.Link{{URL: "/a?page=1", Rel: []string{"prev"}}, {URL: "/a?page=3", Rel: []string{"next"}}},
		},
		"quoted params with commas and semicolons": {
			[]string{`<https://x.test/p?a=1,2>; title="a, b; c"; rel="next"; type=text/html, </l>; rel=last`},
			[]streams.Link{
				{URL: "https://x.test/p?a=1,2", Rel: []string{"next"}, Params: map[string]string{"title": "a, b; c", "type": "text/html"}},
				{URL: "/l", Rel: []string{"last"}},
			},
		},
		"several rel values, case and whitespace": {
			[]string{"  < /p3 >\t;REL = \"Next  LAST\" ;  Title=\"x\\\"y\"  ,<p1>;rel=prev"},
			[]streams.Link{
				{URL: "/p3", Rel: []string{"next", "last"}, Params: map[string]string{"title": `x"y`}},
				{URL: "p1", Rel: []string{"prev"}},
			},
		},
		"first rel wins, first param wins": {
			[]string{`</x>; rel=next; rel=prev; a=1; A=2`},
			[]streams.Link{{URL: "/x", Rel: []string{"next"}, Params: map[string]string{"a": "1"}}},
		},
		"parameter without value": {
			[]string{`</x>; crossorigin; rel=next`},
			[]streams.Link{{URL: "/x", Rel: []string{"next"}, Params: map[string]string{"crossorigin": ""}}},
		},
		"malformed link skipped": {
			[]string{`garbage "with, comma"; rel=next, </ok>; rel=next`},
			[]streams.Link{{URL: "/ok", Rel: []string{"next"}}},
		},
		"unterminated url": {[]string{`</ok>; rel=next, <https://x.test/no-end; rel=last`}, []streams.Link{{URL: "/ok", Rel: []string{"next"}}}},
		"empty values":     {[]string{"", " , ,"}, nil},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, streams.ParseLinkHeader(tt.in)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func FuzzParseLinkHeader(f *testing.F) {
	f.Add(`<https://x.test/a?page=2>; rel="next", <https://x.test/a?page=9>; rel="last"`)
	f.Add(`<a>; title="a, b; c\"; rel=next`)
	f.Add(`<<>>;;;=,=,"\`)
	f.Fuzz(func(t *testing.T, s string) {
		for _, l := range streams.ParseLinkHeader([]string{s, s}) {
			_ = l.HasRel("next")
		}
	})
}

func TestLinkHeaderPaginator(t *testing.T) {
	p := mustPaginator(t, testDef(streams.Pagination{Type: streams.PageLinkHeader}))
	from := mustURL(t, "https://api.example.com/v1/bars?per_page=2")
	last := streams.Request{Method: "GET", URL: "/v1/bars", Query: query("per_page", "2")}
	resp := func(links ...string) *streams.Page {
		h := http.Header{}
		for _, l := range links {
			h.Add("Link", l)
		}
		return &streams.Page{URL: from, Header: h, Records: records(2)}
	}
	to := func(u string) streams.Request { return streams.Request{Method: "GET", URL: u} }
	runSteps(t, p, map[string]step{
		"three relations": {last: last,
			resp: resp(`<https://api.example.com/v1/bars?page=1>; rel="prev", <https://api.example.com/v1/bars?page=3&per_page=2>; rel="next", <https://api.example.com/v1/bars?page=9>; rel="last"`),
			want: to("https://api.example.com/v1/bars?page=3&per_page=2"), more: true},
		"next on another header line": {last: last,
			resp: resp(`</v1/bars?page=1>; rel="first"`, `</v1/bars?page=2>; title="p, 2"; rel="next last"`),
			want: to("https://api.example.com/v1/bars?page=2"), more: true},
		"relative":      {last: last, resp: resp(`<?page=4>; rel=NEXT`), want: to("https://api.example.com/v1/bars?page=4"), more: true},
		"no next":       {last: last, resp: resp(`</v1/bars?page=1>; rel="prev"`), more: false},
		"no header":     {last: last, resp: &streams.Page{URL: from}, more: false},
		"another host":  {last: last, resp: resp(`<https://evil.example.com/steal?page=2>; rel="next"`), wantErr: "points to another host (evil.example.com)"},
		"next not last": {last: last, resp: resp(`</v1/bars?page=9>; rel="last"`), more: false},
	})
}
