package pages

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams"
)

// AppendJSON writes what codec.Append writes of the resume's tree: the
// same keys, sorted, the same escapes, numbers and nulls.
func TestResumeAppendJSONIsTheTreesText(t *testing.T) {
	var d Digest
	d.Add("a\"b")
	for _, r := range []Resume{
		{Next: streams.Request{Method: "GET", URL: "/v1/events"}},
		{Next: streams.Request{Method: "GET", URL: "/v1/e?x=<1>&y=\u2028", Query: url.Values{"z": {"1", "2"}, "a": {"é\x00\n"}, "m": {}}},
			Filter: map[string]string{"until": "2026-02-01", "since": "2026-01-01"}, High: json.Number("1.50"), Pages: 12, Version: -3},
		{Next: streams.Request{Method: "POST", URL: "https://api.test/search", Body: []byte(`{"after":"x"}`),
			Header: http.Header{"X-Cursor": {"abc"}, "X-A": {"\xff"}}}, High: map[string]any{"k": []any{true, nil}}},
		{Next: streams.Request{Method: "POST", URL: "/s", Body: []byte{}}, High: 7.25},
		{Next: streams.Request{Method: "GET", URL: "/v1/orders"}, Pages: 2, Done: 2, Digest: d.String(),
			Child: &Resume{Stream: "items\t", Partition: "order_id=9", Next: streams.Request{Method: "GET", URL: "/v1/orders/9/items",
				Query: url.Values{"offset": {"2"}}}, Filter: map[string]string{"f": "1"}, Pages: 1, Done: 1, Digest: "ab", Version: 9,
				Child: &Resume{Stream: "deep", Next: streams.Request{URL: "/d"}}}},
	} {
		want, err := codec.Append(nil, r.Tree())
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.AppendJSON([]byte("prefix"))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "prefix"+string(want) {
			t.Errorf("AppendJSON\n%s\nthe tree's text\n%s", got[len("prefix"):], want)
		}
		if m, err := json.Marshal(&r); err != nil || !json.Valid(m) {
			t.Errorf("MarshalJSON: %s, %v", m, err)
		}
	}
}

// A resume object survives the trip through STATE's JSON.
func TestResumeRoundTrip(t *testing.T) {
	var d Digest
	d.Add("7")
	d.Add("8")
	for _, r := range []Resume{{
		Next: streams.Request{Method: "POST", URL: "/v1/search", Query: url.Values{"page": {"7"}, "since": {"2026-01-01T00:00:00Z"}},
			Header: http.Header{"X-Cursor": {"abc"}}, Body: []byte(`{"after":"x"}`)},
		Filter: map[string]string{"since": "2026-01-01T00:00:00Z"}, High: "2026-01-09T00:00:00Z", Version: 1768089600000, Pages: 6,
	}, {
		// A parent two records into its page, in the walk of a child.
		Next: streams.Request{Method: "GET", URL: "/v1/orders", Query: url.Values{"cursor": {"c3"}}}, Pages: 2, Done: 2, Digest: d.String(),
		Child: &Resume{Stream: "order_items", Partition: "order_id=9", Next: streams.Request{Method: "GET", URL: "/v1/orders/9/items",
			Query: url.Values{"offset": {"2"}}}, Pages: 1, High: "2026-01-03T00:00:00Z"},
	}} {
		b, err := json.Marshal(r.Tree())
		if err != nil {
			t.Fatal(err)
		}
		var tree map[string]any
		if err := json.Unmarshal(b, &tree); err != nil {
			t.Fatal(err)
		}
		got, err := ResumeFromTree(tree)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(r, got); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
	var d2 Digest
	d2.Add("78")
	if d2.String() == d.String() {
		t.Errorf("the digest of [78] is the digest of [7 8]")
	}
	for _, bad := range []string{`{}`, `{"request":{"method":"GET"}}`, `{"request":{"method":"GET","url":"/a","query":{"p":"1"}}}`,
		`{"request":{"method":"GET","url":"/a"},"done":2}`,
		`{"request":{"method":"GET","url":"/a"},"child":{"stream":"c","request":{"method":"GET","url":"/c"}}}`,
		`{"request":{"method":"GET","url":"/a"},"child":{"stream":"c","partition":"id=1"}}`,
		`{"request":{"method":"GET","url":"/a"},"child":"x"}`} {
		var tree map[string]any
		json.Unmarshal([]byte(bad), &tree)
		if _, err := ResumeFromTree(tree); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// A resume position from STATE is followed on base_url's origin only.
func TestResumeCheckOrigin(t *testing.T) {
	base, _ := url.Parse("https://api.example.com/v1")
	tests := []struct {
		name, url, child string
		base             *url.URL
		wantErr          string
	}{
		{name: "relative", url: "/v1/items?page=2", base: base},
		{name: "absolute on the origin", url: "https://API.example.com:443/v1/items?page=2", base: base},
		{name: "another host", url: "https://evil.example.com/v1/items", base: base,
			wantErr: "request.url: points to another host (evil.example.com) than base_url"},
		{name: "another scheme", url: "http://api.example.com/v1/items", base: base,
			wantErr: "request.url: points to another host (api.example.com) than base_url"},
		{name: "another port", url: "https://api.example.com:8443/v1/items", base: base,
			wantErr: "request.url: points to another host (api.example.com:8443) than base_url"},
		{name: "scheme-relative", url: "//evil.example.com/v1/items", base: base,
			wantErr: "request.url: points to another host (evil.example.com) than base_url"},
		{name: "a child's", url: "/v1/orders", child: "https://127.0.0.2:9/items", base: base,
			wantErr: "child.request.url: points to another host (127.0.0.2:9) than base_url"},
		{name: "no fixed base, relative", url: "/v1/items", base: nil},
		{name: "no fixed base, absolute", url: "http://127.0.0.1:4000/v1/items", base: nil,
			wantErr: "request.url: points to another host (127.0.0.1:4000)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Resume{Next: streams.Request{Method: "GET", URL: tt.url}}
			if tt.child != "" {
				r.Child = &Resume{Stream: "c", Partition: "p", Next: streams.Request{Method: "GET", URL: tt.child}}
			}
			err := r.CheckOrigin(tt.base)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("err = %v, want none", err)
			case tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantErr)):
				t.Fatalf("err = %v, want %q...", err, tt.wantErr)
			}
		})
	}
}
