package streams

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFirstRequest(t *testing.T) {
	tests := map[string]struct {
		d       Definition
		vars    map[string]string
		want    Request
		wantErr string
	}{
		"plain GET": {d: Definition{Path: "/v1/orders", Params: map[string]string{"limit": "100"}},
			want: Request{Method: "GET", URL: "/v1/orders", Query: url.Values{"limit": {"100"}}}},
		"no params": {d: Definition{Path: "/v1/orders", Method: "get"}, want: Request{Method: "GET", URL: "/v1/orders"}},
		"placeholders escaped": {d: Definition{Path: "/v1/orders/{order_id}/items/{x}"}, vars: map[string]string{"order_id": "a/b c", "x": "?&#%"},
			want: Request{Method: "GET", URL: "/v1/orders/a%2Fb%20c/items/%3F&%23%25"}},
		// A dot segment would climb out of the template on a server
		// that normalises the path (/raw/../x is /x).
		"dot segments escaped": {d: Definition{Path: "/raw/{a}/{b}/x/{c}"}, vars: map[string]string{"a": "..", "b": ".", "c": "v1.2"},
			want: Request{Method: "GET", URL: "/raw/%2E%2E/%2E/x/v1.2"}},
		"missing placeholder": {d: Definition{Path: "/v1/orders/{order_id}/items"}, vars: map[string]string{"id": "1"},
			wantErr: `stream "items": path placeholder {order_id} has no value`},
		"unclosed placeholder": {d: Definition{Path: "/v1/orders/{order_id"}, wantErr: "unclosed placeholder"},
		"stray brace":          {d: Definition{Path: "/v1/orders}/{id}"}, vars: map[string]string{"id": "1"}, wantErr: "'}' without a '{'"},
		"POST body": {d: Definition{Path: "/v1/search", Method: "post", Body: json.RawMessage(` {"q": "x"} `)},
			want: Request{Method: "POST", URL: "/v1/search", Body: []byte(`{"q": "x"}`)}},
		"POST null body": {d: Definition{Path: "/v1/search", Method: "POST", Body: json.RawMessage(`null`)},
			want: Request{Method: "POST", URL: "/v1/search"}},
		"GET ignores body": {d: Definition{Path: "/v1/x", Body: json.RawMessage(`{"q":1}`)}, want: Request{Method: "GET", URL: "/v1/x"}},
		"GraphQL": {d: Definition{Path: "/graphql", GraphQL: &GraphQL{Query: "{ a }", ConnectionPath: "data.a", Variables: map[string]any{"n": 1}}},
			want: Request{Method: "POST", URL: "/graphql", Body: []byte(`{"query":"{ a }","variables":{"n":1}}`)}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			tt.d.Name = "items"
			got, err := tt.d.FirstRequest(tt.vars)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestFirstRequestDoesNotShareMaps(t *testing.T) {
	d := Definition{Name: "x", Path: "/x", Params: map[string]string{"a": "1"}}
	r, err := d.FirstRequest(nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Query.Set("a", "2")
	if d.Params["a"] != "1" {
		t.Error("the request shares the definition's params")
	}
}

func TestWithParam(t *testing.T) {
	orig := Request{Method: "GET", URL: "/x", Query: url.Values{"a": {"1"}}}
	got := orig.WithParam("since", "2026-01-01T00:00:00Z").WithParam("a", "2")
	if d := cmp.Diff(url.Values{"a": {"2"}, "since": {"2026-01-01T00:00:00Z"}}, got.Query); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if d := cmp.Diff(url.Values{"a": {"1"}}, orig.Query); d != "" {
		t.Errorf("WithParam modified the original:\n%s", d)
	}
	if got := (Request{}).WithParam("a", "b").Query; got.Get("a") != "b" {
		t.Errorf("nil query: %v", got)
	}
}

func TestWithVariable(t *testing.T) {
	tests := map[string]struct {
		body    string
		want    string
		wantErr string
	}{
		"empty body":         {body: ``, want: `{"variables":{"since":"2026-01-01"}}`},
		"keeps query":        {body: `{"query":"q","operationName":"Op"}`, want: `{"operationName":"Op","query":"q","variables":{"since":"2026-01-01"}}`},
		"merges variables":   {body: `{"query":"q","variables":{"n":12345678901234567890,"since":"old"}}`, want: `{"query":"q","variables":{"n":12345678901234567890,"since":"2026-01-01"}}`},
		"null variables":     {body: `{"query":"q","variables":null}`, want: `{"query":"q","variables":{"since":"2026-01-01"}}`},
		"not an object":      {body: `[1]`, wantErr: "request body is a JSON array"},
		"variables not obj":  {body: `{"variables":[]}`, wantErr: `"variables" is a JSON array`},
		"invalid json":       {body: `{"query":`, wantErr: "request body"},
		"no html escaping":   {body: `{"query":"a<b&c"}`, want: `{"query":"a<b&c","variables":{"since":"2026-01-01"}}`},
		"whitespace is none": {body: "  \n", want: `{"variables":{"since":"2026-01-01"}}`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			orig := Request{Method: "POST", URL: "/graphql", Body: []byte(tt.body)}
			got, err := orig.WithVariable("since", "2026-01-01")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Body) != tt.want {
				t.Errorf("body = %s, want %s", got.Body, tt.want)
			}
			if string(orig.Body) != tt.body {
				t.Errorf("WithVariable modified the original body: %s", orig.Body)
			}
		})
	}
}
