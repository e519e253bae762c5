package interp

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestResponseHeaders: the templates Airbyte's manifests write over
// headers, on the headers the CDK's paginator builds (the Link parsing
// checked against requests' parse_header_links).
func TestResponseHeaders(t *testing.T) {
	h := http.Header{}
	h.Add("Link", `<https://api.example.com/items?page=2>; rel="next", <https://api.example.com/items?page=5>; rel="last"`)
	h.Add("x-ratelimit-remaining", "42")
	h.Add("Vary", "Accept")
	h.Add("Vary", "Origin")
	v := &Vars{Headers: ResponseHeaders(h)}
	for _, c := range []evalCase{
		{"{{ headers['link']['next']['url'] }}", "https://api.example.com/items?page=2"},
		{"{{ headers.link.last.rel }}", "last"},
		{"{{ 'next' not in headers['link'] }}", false},
		{`{{ not "next" in headers.get('Link') }}`, false}, // the raw header, as sent
		{"{{ headers['x-ratelimit-remaining'] }}", int64(42)},
		{"{{ headers['X-Ratelimit-Remaining'] }}", int64(42)},
		{"{{ headers.Vary }}", "Accept, Origin"},
		{"{{ 'Retry-After' in headers }}", false},
	} {
		got, err := MustCompile(c.src).Eval(v)
		if err != nil {
			t.Errorf("Eval(%q): %v", c.src, err)
			continue
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("Eval(%q) (-want +got):\n%s", c.src, d)
		}
	}
	if got := ResponseHeaders(http.Header{})["link"]; !cmp.Equal(got, map[string]any{}) {
		t.Errorf("no Link header: link = %v, want {}", got)
	}
	if d := cmp.Diff([]map[string]any{{"url": "https://a/b?c=d", "rel": "next"}, {"url": "https://a/e"}},
		parseLinks(`<https://a/b?c=d>; rel="next"; title=x=y, <https://a/e>`)); d != "" {
		t.Errorf("parseLinks (-want +got):\n%s", d)
	}
}
