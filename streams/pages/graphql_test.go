package pages

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/internal/jsontest"
	"github.com/tap-dev/tap/streams"
)

const issuesQuery = `query($owner: String!, $first: Int!, $after: String, $since: DateTime) { repository(owner: $owner) { issues(first: $first, after: $after, filterBy: {since: $since}) { pageInfo { hasNextPage endCursor } edges { node { id title } } } } }`

func issuesDef(pageSize int) *streams.Definition {
	return &streams.Definition{
		Name: "issues", Path: "/graphql",
		Pagination: streams.Pagination{Type: streams.PageGraphQL, Options: &streams.GraphQLOptions{PageSize: pageSize}},
		GraphQL: &streams.GraphQL{
			Query:          issuesQuery,
			ConnectionPath: "data.repository.issues",
			Variables:      map[string]any{"owner": "tap-dev", "since": "definition default"},
		},
	}
}

// bodyOf decodes a request body for comparison.
func bodyOf(t *testing.T, r streams.Request) any {
	t.Helper()
	return jsontest.Decode(t, string(r.Body))
}

func TestGraphQLFirst(t *testing.T) {
	tests := map[string]struct {
		pageSize int
		since    any // set with WithVariable before First, if not nil
		want     string
	}{
		"default page size": {0, nil,
			`{"query":` + quoteJSON(issuesQuery) + `,"variables":{"owner":"tap-dev","since":"definition default","first":50}}`},
		"page size and a caller variable kept": {25, "2026-01-01T00:00:00Z",
			`{"query":` + quoteJSON(issuesQuery) + `,"variables":{"owner":"tap-dev","since":"2026-01-01T00:00:00Z","first":25}}`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			d := issuesDef(tt.pageSize)
			p := mustPaginator(t, d)
			req, err := d.FirstRequest(nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.since != nil {
				if req, err = req.WithVariable("since", tt.since); err != nil {
					t.Fatal(err)
				}
			}
			got := p.First(req)
			if got.Method != "POST" {
				t.Errorf("method = %q, want POST", got.Method)
			}
			if d := cmp.Diff(jsontest.Decode(t, tt.want), bodyOf(t, got)); d != "" {
				t.Errorf("body (-want +got):\n%s", d)
			}
		})
	}
}

func quoteJSON(s string) string {
	b, _ := codec.Marshal(s)
	return string(b)
}

func TestGraphQLNext(t *testing.T) {
	d := issuesDef(2)
	p := mustPaginator(t, d)
	req, err := d.FirstRequest(nil)
	if err != nil {
		t.Fatal(err)
	}
	last := p.First(req)
	resp := func(s string) *streams.Page {
		return &streams.Page{Values: streams.Decoded{Body: jsontest.Decode(t, s)}, Records: records(2)}
	}

	t.Run("after = endCursor", func(t *testing.T) {
		next, more, err := p.Next(last, resp(`{"data":{"repository":{"issues":{"pageInfo":{"hasNextPage":true,"endCursor":"Y3Vyc29yOjI="},"edges":[]}}}}`))
		if err != nil || !more {
			t.Fatalf("more %v, err %v", more, err)
		}
		want := jsontest.Decode(t, `{"query":`+quoteJSON(issuesQuery)+`,"variables":{"owner":"tap-dev","since":"definition default","first":2,"after":"Y3Vyc29yOjI="}}`)
		if d := cmp.Diff(want, bodyOf(t, next)); d != "" {
			t.Errorf("body (-want +got):\n%s", d)
		}
		if next.Method != "POST" || next.URL != "/graphql" {
			t.Errorf("next = %s %s", next.Method, next.URL)
		}
		if d := cmp.Diff(bodyOf(t, p.First(req)), bodyOf(t, last)); d != "" {
			t.Errorf("Next modified the last request's body:\n%s", d)
		}
	})

	runSteps(t, p, map[string]step{
		"hasNextPage false":   {last: last, resp: resp(`{"data":{"repository":{"issues":{"pageInfo":{"hasNextPage":false,"endCursor":"x"},"nodes":[]}}}}`), more: false},
		"pageInfo absent":     {last: last, resp: resp(`{"data":{"repository":{"issues":{"nodes":[]}}}}`), more: false},
		"connection null":     {last: last, resp: resp(`{"data":{"repository":null}}`), more: false},
		"connection missing":  {last: last, resp: resp(`{"data":{}}`), wantErr: `connection_path "data.repository.issues" is not in the response`},
		"no endCursor":        {last: last, resp: resp(`{"data":{"repository":{"issues":{"pageInfo":{"hasNextPage":true}}}}}`), wantErr: "pageInfo.endCursor is null"},
		"hasNextPage garbage": {last: last, resp: resp(`{"data":{"repository":{"issues":{"pageInfo":{"hasNextPage":"yes"}}}}}`), wantErr: "expected a boolean"},
	})
}
