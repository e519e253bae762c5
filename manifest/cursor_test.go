package manifest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tap-dev/tap/internal/jsontest"
	"github.com/tap-dev/tap/manifest/interp"
	"github.com/tap-dev/tap/streams"
)

// TestCursorExpr: a computed cursor reads the page as the CDK's
// CursorPaginationStrategy does — the stop condition first, then the
// value, a falsy one ending the walk — from the decoded body, the
// headers (the Link header parsed), the last record and the page size.
func TestCursorExpr(t *testing.T) {
	for _, tt := range []struct {
		name, value, stop string
		under             string
		body              string
		header            http.Header
		config            map[string]any
		want              string // "" for the end
		wantErr           string
	}{
		{name: "the last record's id, by a lookup with a default",
			value: "{{ response.get('data', [])[-1].get('id') if response.get('data') else None }}",
			body:  `{"data": [{"id": "a"}, {"id": "b"}]}`, want: "b"},
		{name: "an empty page: None", value: "{{ response.get('data', [])[-1].get('id') if response.get('data') else None }}",
			body: `{"data": []}`},
		{name: "a stop condition that holds", value: "{{ response.next }}", stop: "{{ not response.get('has_more', False) }}",
			body: `{"next": "n2", "has_more": false}`},
		{name: "a stop condition that does not", value: "{{ response.next }}", stop: "{{ not response.get('has_more', False) }}",
			body: `{"next": "n2", "has_more": true}`, want: "n2"},
		{name: "a number, as the CDK sends it", value: "{{ response.num + 1 }}", body: `{"num": 41}`, want: "42"},
		{name: "zero is falsy", value: "{{ response.num }}", body: `{"num": 0}`},
		{name: "an undefined value ends the walk", value: "{{ response.paging.next.cursor }}", body: `{"paging": {}}`},
		{name: "a regex of the next link", value: "{{ response.next | regex_search('page=(\\d+)') }}", body: `{"next": "https://a.example/x?page=7"}`, want: "7"},
		{name: "the Link header", value: "{{ headers['link']['next']['url'] }}", body: `{}`,
			header: http.Header{"Link": {`<https://a.example/items?after=9>; rel="next"`}}, want: "https://a.example/items?after=9"},
		{name: "the last record", value: "{{ last_record['meta']['after'] if last_record else None }}", body: `{"items": [{"meta": {"after": "c1"}}, {"meta": {"after": "c2"}}]}`, want: "c2"},
		{name: "the page size", value: "{{ last_page_size * 2 }}", body: `{"items": [{}, {}, {}]}`, want: "6"},
		{name: "the config", value: "{{ config['region'] ~ '-' ~ response.n }}", config: map[string]any{"region": "eu"}, body: `{"n": 3}`, want: "eu-3"},
		{name: "a path under url_base", value: "{{ response.num + 1 }}/info.json", under: "/v2/", body: `{"num": 5}`, want: "/v2/6/info.json"},
		{name: "an absolute URL is kept", value: "{{ response.next }}", under: "/v2/", body: `{"next": "https://a.example/p/2"}`, want: "https://a.example/p/2"},
		{name: "a list is no token", value: "{{ response.ids }}", body: `{"ids": [1, 2]}`, wantErr: "cursor_value gave a []interface {}, not a token to send"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			value, err := interp.Compile(tt.value)
			if err != nil {
				t.Fatal(err)
			}
			c := &cursorExpr{value: value, under: tt.under, base: interp.Vars{Config: tt.config}}
			if tt.stop != "" {
				if c.stop, err = interp.CompileCondition(tt.stop); err != nil {
					t.Fatal(err)
				}
			}
			body := jsontest.Decode(t, tt.body)
			page := &streams.Page{Header: tt.header, Values: streams.Decoded{Body: body}}
			if m, ok := body.(map[string]any); ok {
				for _, k := range []string{"data", "items"} {
					if recs, ok := m[k].([]any); ok {
						page.Records = recs
					}
				}
			}
			got, more, err := c.Next(page)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if more != (tt.want != "") || got != tt.want {
				t.Errorf("Next = %q, %v; want %q", got, more, tt.want)
			}
		})
	}
}
