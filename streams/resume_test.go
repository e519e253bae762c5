package streams

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A resume object survives the trip through STATE's JSON.
func TestResumeRoundTrip(t *testing.T) {
	r := Resume{
		Next: Request{Method: "POST", URL: "/v1/search", Query: url.Values{"page": {"7"}, "since": {"2026-01-01T00:00:00Z"}},
			Header: http.Header{"X-Cursor": {"abc"}}, Body: []byte(`{"after":"x"}`)},
		Filter: map[string]string{"since": "2026-01-01T00:00:00Z"}, High: "2026-01-09T00:00:00Z", Version: 1768089600000, Pages: 6,
	}
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
	for _, bad := range []string{`{}`, `{"request":{"method":"GET"}}`, `{"request":{"method":"GET","url":"/a","query":{"p":"1"}}}`} {
		var tree map[string]any
		json.Unmarshal([]byte(bad), &tree)
		if _, err := ResumeFromTree(tree); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
