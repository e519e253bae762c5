package manifest

import (
	"net/http"
	"testing"
)

// TestResponseFilters: the stream's response filters read an answer as
// the CDK's error handlers do, in order, the first to match deciding: by
// status code, by a text the body holds, or by a predicate of the decoded
// body and the headers; none matching leaves it to the status.
func TestResponseFilters(t *testing.T) {
	src := `version: 6.0.0
streams:
  - name: s
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      record_selector: {extractor: {field_path: [data]}}
      requester:
        url_base: "https://a.example"
        error_handler:
          type: CompositeErrorHandler
          error_handlers:
            - type: DefaultErrorHandler
              response_filters:
                - {type: HttpResponseFilter, action: IGNORE, predicate: "{{ response.message == 'No transaction found' }}"}
                - {type: HttpResponseFilter, action: RETRY, predicate: "{{ 'Too much requests' in response.get('error', '') }}"}
            - type: DefaultErrorHandler
              response_filters:
                - {type: HttpResponseFilter, action: FAIL, http_codes: [400], error_message_contains: "Missing required parameter"}
                - {type: HttpResponseFilter, action: IGNORE, http_codes: [404]}
                - {type: HttpResponseFilter, action: RETRY, predicate: "{{ headers['X-Busy'] == config['busy'] }}"}
`
	m, err := Parse("m.yaml", []byte(src), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	low, err := m.Lower(&Config{Connector: map[string]any{"busy": "yes"}})
	if err != nil {
		t.Fatal(err)
	}
	rr := low.ResponseRules["s"]
	if rr == nil {
		t.Fatal("no response rule for stream s")
	}
	if st := low.Tree["streams"].([]any)[0].(map[string]any)["on_status"]; st == nil {
		t.Error("the filters of status codes are not the stream's on_status too")
	}
	for _, tt := range []struct {
		name   string
		status int
		header http.Header
		body   string
		want   string // "" when no filter matches
	}{
		{"a 200 that says there is nothing", 200, nil, `{"message": "No transaction found"}`, "ignore"},
		{"a 200 of data", 200, nil, `{"data": [], "message": "ok"}`, ""},
		{"a throttle in the body", 200, nil, `{"error": "Too much requests, slow down"}`, "retry"},
		{"a status code, whatever the body", 400, nil, `{"error": "bad"}`, "fail"},
		{"a text of the body, whatever the status", 422, nil, `{"error": "Missing required parameter - from"}`, "fail"},
		{"a 404", 404, nil, `not json`, "ignore"},
		{"a header against the config", 503, http.Header{"X-Busy": {"yes"}}, ``, "retry"},
		{"a body that is not JSON matches no predicate", 500, nil, `<html>`, ""},
	} {
		got, ok := rr.Rule(tt.status, tt.header, []byte(tt.body))
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("%s: Rule = %q, %v; want %q", tt.name, got, ok, tt.want)
		}
	}
}
