package pages

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tap-dev/tap/streams"
)

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
