package manifest

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// loadReal loads one of the real manifests of testdata/airbyte.
func loadReal(t *testing.T, name string) *Manifest {
	t.Helper()
	m, err := Load(filepath.Join("testdata", "airbyte", name+".yaml"))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return m
}

// typesIn lists the type of every component of the model under v.
func typesIn(v reflect.Value, seen map[string]int) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return
		}
		if c, ok := v.Interface().(Component); ok && v.Kind() == reflect.Pointer {
			if n := c.node(); n.Type != "" {
				seen[n.Type]++
			}
		}
		typesIn(v.Elem(), seen)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				typesIn(v.Field(i), seen)
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			typesIn(v.Index(i), seen)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			typesIn(v.MapIndex(k), seen)
		}
	}
}

// TestRealManifestsCoverTheContract: the real manifests of testdata load,
// and between them use every component the contract lists.
func TestRealManifestsCoverTheContract(t *testing.T) {
	names := []string{"xkcd", "dockerhub", "airbyte", "trustpilot", "sigma-computing", "hugging-face-datasets",
		"breezy-hr", "yotpo", "plaid", "uppromote", "configcat", "delighted"}
	seen := map[string]int{}
	for _, n := range names {
		m := loadReal(t, n)
		if len(m.Streams) == 0 {
			t.Errorf("%s: no streams", n)
		}
		for i, s := range m.Streams {
			if s.Name == "" || s.Retriever == nil {
				t.Errorf("%s: streams[%d]: name %q, retriever %v", n, i, s.Name, s.Retriever)
			}
		}
		typesIn(reflect.ValueOf(&m.DeclarativeSource), seen)
	}
	want := []string{"DeclarativeStream", "SimpleRetriever", "HttpRequester",
		"ApiKeyAuthenticator", "BearerAuthenticator", "BasicHttpAuthenticator", "OAuthAuthenticator",
		"SessionTokenAuthenticator", "SelectiveAuthenticator", "NoAuth",
		"DefaultPaginator", "CursorPagination", "OffsetIncrement", "PageIncrement", "NoPagination", "RequestPath", "RequestOption",
		"RecordSelector", "DpathExtractor", "RecordFilter", "DatetimeBasedCursor", "MinMaxDatetime",
		"SubstreamPartitionRouter", "ParentStreamConfig", "ListPartitionRouter", "AddFields", "RemoveFields",
		"DefaultErrorHandler", "CompositeErrorHandler", "HttpResponseFilter", "ExponentialBackoffStrategy",
		"ConstantBackoffStrategy", "WaitTimeFromHeader", "WaitUntilTimeFromHeader", "InlineSchemaLoader"}
	for _, w := range want {
		if seen[w] == 0 {
			t.Errorf("no manifest of testdata has a %s", w)
		}
	}
}

// TestRealManifestsDetail: what the model holds for a few real manifests,
// field by field.
func TestRealManifestsDetail(t *testing.T) {
	t.Run("xkcd: the base requester by $ref, RequestPath, composite handler", func(t *testing.T) {
		m := loadReal(t, "xkcd")
		s := m.Streams[0]
		r := s.Retriever.(*SimpleRetriever)
		req := r.Requester.(*HttpRequester)
		if req.URLBase.Src != "https://xkcd.com" || req.Path.Src != `{{ config["comic_number"] or 1 }}/info.0.json` {
			t.Errorf("url_base %q path %q", req.URLBase.Src, req.Path.Src)
		}
		if _, ok := req.Authenticator.(*NoAuth); !ok {
			t.Errorf("authenticator %T", req.Authenticator)
		}
		p := r.Paginator.(*DefaultPaginator)
		if _, ok := p.PageTokenOption.(*RequestPath); !ok {
			t.Errorf("page_token_option %T", p.PageTokenOption)
		}
		cp := p.Strategy.(*CursorPagination)
		if cp.StopCondition.Src != `{{ not response.get("num", {}) }}` {
			t.Errorf("stop_condition %q", cp.StopCondition.Src)
		}
		eh := req.ErrorHandler.(*CompositeErrorHandler)
		f := eh.ErrorHandlers[1].(*DefaultErrorHandler).ResponseFilters[0]
		if f.Action != "IGNORE" || !slices.Equal(f.HTTPCodes, []int{404}) {
			t.Errorf("filter %+v", f)
		}
		if got := eh.ErrorHandlers[1].node().Path; got != "streams[0].retriever.requester.error_handler.error_handlers[1]" {
			t.Errorf("path %q", got)
		}
		if diff := cmp.Diff(PrimaryKey{{"num"}}, s.PrimaryKey); diff != "" {
			t.Errorf("primary key (-want +got):\n%s", diff)
		}
		if _, ok := s.SchemaLoader[0].(*InlineSchemaLoader).Schema["properties"]; !ok {
			t.Error("the inline schema's $ref to #/schemas/xkcd was not resolved")
		}
	})
	t.Run("yotpo: datetime cursor with step and lookback", func(t *testing.T) {
		m := loadReal(t, "yotpo")
		var c *DatetimeBasedCursor
		for _, s := range m.Streams {
			if d, ok := s.IncrementalSync.(*DatetimeBasedCursor); ok {
				c = d
				break
			}
		}
		if c == nil {
			t.Fatal("no DatetimeBasedCursor")
		}
		if c.CursorField.Src != "created_at" || c.Step.Src != "P1M" || c.LookbackWindow.Src != "P31D" || c.DatetimeFormat != "%Y-%m-%dT%H:%M:%S.%f%z" {
			t.Errorf("cursor %+v", c)
		}
		if c.StartDatetime == nil || !c.StartDatetime.Datetime.IsSet() {
			t.Errorf("start_datetime %+v", c.StartDatetime)
		}
	})
	t.Run("dockerhub: session token", func(t *testing.T) {
		m := loadReal(t, "dockerhub")
		var st *SessionTokenAuthenticator
		for _, s := range m.Streams {
			if a, ok := s.Retriever.(*SimpleRetriever).Requester.(*HttpRequester).Authenticator.(*SessionTokenAuthenticator); ok {
				st = a
			}
		}
		if st == nil {
			t.Fatal("no SessionTokenAuthenticator")
		}
		if !slices.Equal(st.SessionTokenPath, []string{"token"}) || st.LoginRequester == nil || st.RequestAuthentication == nil {
			t.Errorf("session token %+v", st)
		}
	})
	t.Run("sigma-computing: refresh token updater", func(t *testing.T) {
		m := loadReal(t, "sigma-computing")
		a := m.Streams[0].Retriever.(*SimpleRetriever).Requester.(*HttpRequester).Authenticator.(*OAuthAuthenticator)
		u := a.RefreshTokenUpdater
		if u == nil || u.RefreshTokenName != "refresh_token" || !slices.Equal(u.AccessTokenConfigPath, []string{"oauth_access_token"}) {
			t.Errorf("refresh_token_updater %+v", u)
		}
	})
	t.Run("trustpilot: selective authenticator", func(t *testing.T) {
		m := loadReal(t, "trustpilot")
		a := m.Streams[0].Retriever.(*SimpleRetriever).Requester.(*HttpRequester).Authenticator.(*SelectiveAuthenticator)
		if !slices.Equal(a.SelectionPath, []string{"credentials", "auth_type"}) || len(a.Authenticators) != 2 {
			t.Errorf("selective %+v", a)
		}
	})
	t.Run("breezy-hr: a response filter's predicate", func(t *testing.T) {
		m := loadReal(t, "breezy-hr")
		var preds []string
		for _, s := range m.Streams {
			ceh, _ := s.Retriever.(*SimpleRetriever).Requester.(*HttpRequester).ErrorHandler.(*CompositeErrorHandler)
			if ceh == nil {
				continue
			}
			for _, eh := range ceh.ErrorHandlers {
				for _, f := range eh.(*DefaultErrorHandler).ResponseFilters {
					if f.Predicate.IsSet() {
						preds = append(preds, f.Predicate.Src)
					}
				}
			}
		}
		if !slices.Contains(preds, "{{ response.status_code == 429 }}") {
			t.Errorf("predicates %q", preds)
		}
	})
}

// load parses a manifest written in a test.
func load(t *testing.T, src string) (*Manifest, error) {
	t.Helper()
	return Parse("test.yaml", []byte(src), ".")
}

func mustLoad(t *testing.T, src string) *Manifest {
	t.Helper()
	m, err := load(t, src)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func requester(t *testing.T, m *Manifest, i int) *HttpRequester {
	t.Helper()
	return m.Streams[i].Retriever.(*SimpleRetriever).Requester.(*HttpRequester)
}

// stream is a minimal stream for a manifest written in a test; fields are
// laid over it.
const streamHead = `
version: 6.0.0
check: {stream_names: [s]}
`

func TestRefs(t *testing.T) {
	tests := []struct {
		name, src string
		check     func(t *testing.T, m *Manifest)
	}{
		{"$ref object with fields laid over", streamHead + `
definitions:
  req: {type: HttpRequester, url_base: "https://a", path: /x, http_method: GET}
streams:
  - name: s
    retriever:
      requester: {$ref: "#/definitions/req", path: /y}
      record_selector: {extractor: {field_path: [data]}}
`, func(t *testing.T, m *Manifest) {
			r := requester(t, m, 0)
			if r.URLBase.Src != "https://a" || r.Path.Src != "/y" || r.Method != "GET" {
				t.Errorf("requester %+v", r)
			}
		}},
		{"a #/definitions string", streamHead + `
definitions:
  sel: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [items]}}
streams:
  - name: s
    retriever:
      requester: {url_base: "https://a"}
      record_selector: "#/definitions/sel"
`, func(t *testing.T, m *Manifest) {
			e := m.Streams[0].Retriever.(*SimpleRetriever).RecordSelector.Extractor.(*DpathExtractor)
			if len(e.FieldPath) != 1 || e.FieldPath[0].Src != "items" {
				t.Errorf("field_path %v", e.FieldPath)
			}
		}},
		{"a ref through a list and a key with a slash", streamHead + `
definitions:
  bases: [{url: "https://zero"}, {url: "https://one"}]
  x/y: "https://slash"
  x: {y: "https://nested"}
  a/b: {url: "https://slash"}
  a: {b: {url: "https://nested"}}
streams:
  - name: s
    retriever:
      # The CDK tries the whole rest of the path as one key, then one
      # segment: x/y is the key "x/y"; a/b/url is a, then b/url, b, url.
      requester: {url_base: "#/definitions/bases/1/url", path: "#/definitions/x/y", url: "#/definitions/a/b/url"}
      record_selector: {extractor: {field_path: []}}
`, func(t *testing.T, m *Manifest) {
			r := requester(t, m, 0)
			if r.URLBase.Src != "https://one" || r.Path.Src != "https://slash" || r.URL.Src != "https://nested" {
				t.Errorf("url_base %q path %q url %q", r.URLBase.Src, r.Path.Src, r.URL.Src)
			}
		}},
		{"refs of refs", streamHead + `
definitions:
  auth: {type: BearerAuthenticator, api_token: "{{ config['token'] }}"}
  req: {url_base: "https://a", authenticator: {$ref: "#/definitions/auth"}}
  ret: {requester: "#/definitions/req", record_selector: {extractor: {field_path: []}}}
streams:
  - {name: s, retriever: {$ref: "#/definitions/ret"}}
  - {name: t, retriever: {$ref: "#/definitions/ret"}}
`, func(t *testing.T, m *Manifest) {
			for i := range 2 {
				if a, ok := requester(t, m, i).Authenticator.(*BearerAuthenticator); !ok || a.APIToken.Src != "{{ config['token'] }}" {
					t.Errorf("streams[%d]: authenticator %#v", i, requester(t, m, i).Authenticator)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.check(t, mustLoad(t, tt.src)) })
	}
}

func TestParameters(t *testing.T) {
	m := mustLoad(t, streamHead+`
definitions:
  base:
    type: DeclarativeStream
    $parameters: {name: "from_base", path: "/base", primary_key: id, data_path: data}
    retriever:
      requester:
        url_base: "https://a"
        path: "/{{ parameters['path'] }}"
      record_selector:
        extractor:
          field_path: ["{{ parameters['data_path'] }}"]
streams:
  # $ref lays the object's fields over the referenced ones, one level
  # deep: these $parameters replace the base's whole.
  - $ref: "#/definitions/base"
    $parameters: {name: "users", path: "/users", primary_key: id}
  - $ref: "#/definitions/base"
    name: "explicit"
    $parameters: {name: "orders"}
    retriever:
      $ref: "#/definitions/base/retriever"
      requester: {url_base: "https://b", path: "", $parameters: {path: "/inner"}}
`)
	s0, s1 := m.Streams[0], m.Streams[1]
	if s0.Name != "users" || s1.Name != "explicit" {
		t.Errorf("names %q %q: a parameter fills a missing field, a field written wins", s0.Name, s1.Name)
	}
	if diff := cmp.Diff(PrimaryKey{{"id"}}, s0.PrimaryKey); diff != "" {
		t.Errorf("primary key from $parameters (-want +got):\n%s", diff)
	}
	r0 := requester(t, m, 0)
	if r0.Path.Src != "/{{ parameters['path'] }}" || r0.Parameters["path"] != "/users" || r0.Parameters["data_path"] != nil {
		t.Errorf("streams[0] requester: path %q parameters %v", r0.Path.Src, r0.Parameters)
	}
	r1 := requester(t, m, 1)
	// path "" is empty: the parameter of its own component fills it, as
	// the CDK's `field or parameter` does.
	if r1.Path.Src != "/inner" || r1.Parameters["name"] != "orders" || r1.Parameters["data_path"] != nil {
		t.Errorf("streams[1] requester: path %q parameters %v", r1.Path.Src, r1.Parameters)
	}
}

func TestTypeInference(t *testing.T) {
	m := mustLoad(t, `
version: 6.0.0
check: {stream_names: [s]}
spec:
  connection_specification: {type: object, required: [token], properties: {token: {type: string}}}
streams:
  - name: s
    retriever:
      requester:
        url_base: "https://a"
        error_handler:
          response_filters: [{action: RETRY, http_codes: [500]}]
      record_selector:
        extractor: {field_path: []}
        record_filter: {condition: "{{ record.ok }}"}
      paginator: {}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - parent_key: id
            partition_field: pid
            request_option: {inject_into: request_parameter, field_name: parent}
            stream:
              name: p
              retriever: {requester: {url_base: "https://a"}, record_selector: {extractor: {field_path: []}}}
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated
      datetime_format: "%Y-%m-%d"
      start_datetime: "{{ config['start'] }}"
      end_datetime: {datetime: "{{ now_utc() }}", datetime_format: "%Y"}
      start_time_option: {inject_into: request_parameter, field_name: since}
`)
	s := m.Streams[0]
	r := s.Retriever.(*SimpleRetriever)
	got := map[string]string{}
	for _, c := range []Component{s.Retriever, r.Requester, r.RecordSelector, r.RecordSelector.Extractor, r.RecordSelector.RecordFilter,
		r.Paginator, r.Requester.(*HttpRequester).ErrorHandler, r.Requester.(*HttpRequester).ErrorHandler.(*DefaultErrorHandler).ResponseFilters[0],
		r.PartitionRouter[0].(*SubstreamPartitionRouter).ParentStreamConfigs[0], r.PartitionRouter[0].(*SubstreamPartitionRouter).ParentStreamConfigs[0].Stream,
		r.PartitionRouter[0].(*SubstreamPartitionRouter).ParentStreamConfigs[0].RequestOption,
		s.IncrementalSync.(*DatetimeBasedCursor).StartDatetime, s.IncrementalSync.(*DatetimeBasedCursor).EndDatetime,
		s.IncrementalSync.(*DatetimeBasedCursor).StartTimeOption, m.Spec, m.Check} {
		n := c.node()
		got[n.Path] = n.Type
	}
	want := map[string]string{
		"streams[0].retriever":                                                          "SimpleRetriever",
		"streams[0].retriever.requester":                                                "HttpRequester",
		"streams[0].retriever.record_selector":                                          "RecordSelector",
		"streams[0].retriever.record_selector.extractor":                                "DpathExtractor",
		"streams[0].retriever.record_selector.record_filter":                            "RecordFilter",
		"streams[0].retriever.paginator":                                                "NoPagination",
		"streams[0].retriever.requester.error_handler":                                  "DefaultErrorHandler",
		"streams[0].retriever.requester.error_handler.response_filters[0]":              "HttpResponseFilter",
		"streams[0].retriever.partition_router.parent_stream_configs[0]":                "ParentStreamConfig",
		"streams[0].retriever.partition_router.parent_stream_configs[0].stream":         "DeclarativeStream",
		"streams[0].retriever.partition_router.parent_stream_configs[0].request_option": "RequestOption",
		"streams[0].incremental_sync.start_datetime":                                    "MinMaxDatetime",
		"streams[0].incremental_sync.end_datetime":                                      "MinMaxDatetime",
		"streams[0].incremental_sync.start_time_option":                                 "RequestOption",
		"spec":  "Spec",
		"check": "CheckStream",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("inferred types (-want +got):\n%s", diff)
	}
	if c := s.IncrementalSync.(*DatetimeBasedCursor); c.StartDatetime.Datetime.Src != "{{ config['start'] }}" || c.EndDatetime.DatetimeFormat != "%Y" {
		t.Errorf("datetimes %+v %+v", c.StartDatetime, c.EndDatetime)
	}
	if m.Spec.ConnectionSpecification["required"] == nil {
		t.Error("the spec's JSON Schema lost its fields: a schema takes no parameters and no types")
	}
}

func TestRequestShapes(t *testing.T) {
	m := mustLoad(t, streamHead+`
metadata:
  autoImportSchema: {s: true}
  testedStreams: {s: {streamHash: abc}}
  assist: {}
streams:
  - name: url
    retriever:
      requester: {url: "https://a/x?y=1", http_method: POST, request_body_json: {q: "{{ config['q'] }}", n: 3, l: [a]}}
      record_selector: {extractor: {field_path: []}}
  - name: base_and_path
    retriever:
      requester: {url_base: "https://a", path: "/x", request_body_data: {k: v}, request_headers: {X-Key: "{{ config['key'] }}"}}
      record_selector: {extractor: {field_path: []}}
  - name: body
    retriever:
      requester: {url_base: "https://a", request_body: {type: RequestBodyJsonObject, value: {a: b}}, request_parameters: "{{ {'a': 1} }}"}
      record_selector: {extractor: {field_path: []}}
  - name: graphql
    retriever:
      requester: {url_base: "https://a", request_body: {type: RequestBodyGraphQL, value: {query: "{ x }"}}}
      record_selector: {extractor: {field_path: []}}
`)
	r0, r1, r2, r3 := requester(t, m, 0), requester(t, m, 1), requester(t, m, 2), requester(t, m, 3)
	if r0.URL.Src != "https://a/x?y=1" || r0.Method != "POST" || r0.URLBase.IsSet() {
		t.Errorf("url %+v", r0)
	}
	body := r0.BodyJSON.V.(map[string]any)
	if body["q"].(Expr).Src != "{{ config['q'] }}" || body["n"] != 3 || body["l"].([]any)[0].(Expr).Src != "a" {
		t.Errorf("request_body_json %#v", body)
	}
	if r1.URLBase.Src != "https://a" || r1.Path.Src != "/x" || r1.BodyData.V.(map[string]any)["k"].(Expr).Src != "v" ||
		r1.Headers.V.(map[string]any)["X-Key"].(Expr).Src != "{{ config['key'] }}" {
		t.Errorf("url_base+path %+v", r1)
	}
	if b, ok := r2.Body.(*RequestBodyJsonObject); !ok || b.Value.V.(map[string]any)["a"].(Expr).Src != "b" || r2.RequestParams.V.(Expr).Src != "{{ {'a': 1} }}" {
		t.Errorf("request_body %#v, request_parameters %#v", r2.Body, r2.RequestParams)
	}
	if b, ok := r3.Body.(*RequestBodyGraphQL); !ok || b.Value.Query.Src != "{ x }" {
		t.Errorf("graphql body %#v", r3.Body)
	}
	if m.Metadata == nil {
		t.Error("the Connector Builder's metadata block was dropped")
	}
}

// loadErr loads src and returns the lines of its error.
func loadErr(t *testing.T, src string) []string {
	t.Helper()
	_, err := load(t, src)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("expected a load error, got %v", err)
	}
	for _, l := range e.Lines() {
		if strings.Contains(l, "\n") {
			t.Errorf("a line of the error holds a newline: %q", l)
		}
	}
	return e.Lines()
}

func TestRefusals(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"a custom component, a class_name and a type not implemented, one line each", streamHead + `
streams:
  - name: s
    retriever:
      requester: {url_base: "https://a", authenticator: {type: CustomAuthenticator, class_name: source_x.components.Auth}}
      record_selector: {extractor: {class_name: source_x.components.Extractor}, record_filter: {class_name: source_x.components.Filter}}
      paginator: {type: DefaultPaginator, pagination_strategy: {type: StopAfterN}}
  - name: t
    retriever: {type: AsyncRetriever}
`, []string{
			"test.yaml: refused: streams[0].retriever.requester.authenticator: CustomAuthenticator (class source_x.components.Auth): Python code (a custom component), which the tap cannot run",
			"test.yaml: refused: streams[0].retriever.record_selector.extractor: CustomRecordExtractor (class source_x.components.Extractor): Python code (a custom component), which the tap cannot run",
			"test.yaml: refused: streams[0].retriever.record_selector.record_filter: class source_x.components.Filter: Python code (a custom component), which the tap cannot run",
			"test.yaml: refused: streams[0].retriever.paginator.pagination_strategy: StopAfterN: not implemented by the tap",
			"test.yaml: refused: streams[1].retriever: AsyncRetriever: not implemented by the tap",
		}},
		{"a component the CDK runs in a field the tap does not read", streamHead + `
streams:
  - name: s
    retriever:
      requester: {url_base: "https://a"}
      record_selector: {extractor: {field_path: []}}
    state_migrations: [{type: LegacyToPerPartitionStateMigration}]
dynamic_streams: [{type: DynamicDeclarativeStream}]
`, []string{
			"test.yaml: refused: streams[0].state_migrations[0]: LegacyToPerPartitionStateMigration: not implemented by the tap",
			"test.yaml: refused: dynamic_streams[0]: DynamicDeclarativeStream: not implemented by the tap",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, loadErr(t, tt.src)); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("a real manifest with components.py", func(t *testing.T) {
		_, err := Load(filepath.Join("testdata", "airbyte", "us-census.yaml"))
		var e *Error
		if !errors.As(err, &e) || len(e.Refusals) == 0 || !e.Refusals[0].Python || len(e.Problems) != 0 {
			t.Fatalf("got %v", err)
		}
		if !strings.Contains(e.Lines()[0], "us-census.yaml: refused: streams[0].retriever") {
			t.Errorf("first line %q", e.Lines()[0])
		}
	})
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"not YAML", "streams: [\n  - {name: s", "test.yaml: not a YAML or JSON manifest: "},
		{"not an object", "- a\n- b\n", "test.yaml: expected a manifest (an object with streams), got a list"},
		{"a $ref to nowhere", streamHead + `
streams:
  - name: s
    retriever: {$ref: "#/definitions/nothing"}
`, `test.yaml: streams[0].retriever.$ref: reference "#/definitions/nothing" points at nothing in the manifest`},
		{"a string ref to nowhere", streamHead + `
streams: ["#/definitions/streams/gone"]
`, `test.yaml: streams[0]: reference "#/definitions/streams/gone" points at nothing in the manifest`},
		{"a reference cycle", streamHead + `
definitions: {a: "#/definitions/b", b: "#/definitions/a"}
streams: ["#/definitions/a"]
`, `test.yaml: definitions.a: reference "#/definitions/b" refers to itself`},
		{"a required field missing", streamHead + `
streams:
  - name: s
    retriever: {requester: {url_base: "https://a"}, record_selector: {extractor: {}}}
`, "test.yaml: streams[0].retriever.record_selector.extractor.field_path: missing, required by DpathExtractor"},
		{"a component of the wrong role", streamHead + `
streams:
  - name: s
    retriever:
      requester: {url_base: "https://a"}
      record_selector: {extractor: {field_path: []}}
      paginator: {type: BearerAuthenticator, api_token: x}
`, "test.yaml: streams[0].retriever.paginator: BearerAuthenticator is an authenticator, not a paginator"},
		{"a wrong kind of value", streamHead + `
streams:
  - name: s
    retriever:
      requester: {url_base: "https://a", use_cache: maybe}
      record_selector: {extractor: {field_path: []}}
`, `test.yaml: streams[0].retriever.requester.use_cache: expected true or false, got "maybe"`},
		{"no streams", "version: 6.0.0\ncheck: {stream_names: []}\n", "test.yaml: streams: no streams"},
		{"a Jinja syntax error", streamHead + `
streams:
  - name: s
    retriever:
      requester: {url_base: "https://a", path: "/x/{{ config['id' }}"}
      record_selector: {extractor: {field_path: []}}
`, `test.yaml: streams[0].retriever.requester.path: in "/x/{{ config['id' }}" at column `},
		{"an unknown macro in a nested body", streamHead + `
streams:
  - name: s
    retriever:
      requester: {url_base: "https://a", request_body_json: {filter: {since: "{{ yesterday_utc() }}"}}}
      record_selector: {extractor: {field_path: []}}
`, `test.yaml: streams[0].retriever.requester.request_body_json.filter.since: in "{{ yesterday_utc() }}" at column `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := loadErr(t, tt.src)
			if len(lines) != 1 || !strings.HasPrefix(lines[0], tt.want) {
				t.Errorf("got %q, want one line starting %q", lines, tt.want)
			}
		})
	}
}

// TestRegistry: every registered kind decodes into a struct whose fields
// the decoder knows, and the docs can list them.
func TestRegistry(t *testing.T) {
	for _, k := range Kinds() {
		if k.Role == "" {
			t.Errorf("%s: no role", k.Type)
		}
		c := k.new()
		d := &decoder{}
		// Every field type must decode: a panic here is a field type the
		// decoder lacks.
		d.fields(reflect.ValueOf(c).Elem(), map[string]any{"type": k.Type}, k.Type)
		if !Implemented(k.Type) {
			t.Errorf("%s not found by its name", k.Type)
		}
	}
	if got := byType["DpathExtractor"].Fields(); !slices.Equal(got, []string{"field_path", "decoder"}) {
		t.Errorf("DpathExtractor fields %q", got)
	}
}

func TestComponentRules(t *testing.T) {
	tests := []struct{ name, requester, want string }{
		{"http_method", `{url_base: "https://a", http_method: DELETE}`,
			`test.yaml: streams[0].retriever.requester.http_method: expected one of GET, POST, got "DELETE"`},
		{"no url", `{path: /x}`,
			"test.yaml: streams[0].retriever.requester.url_base: missing: a requester needs url, or url_base (and path)"},
		{"two bodies", `{url_base: "https://a", request_body_json: {a: 1}, request_body_data: {b: 2}}`,
			"test.yaml: streams[0].retriever.requester.request_body: give one of request_body, request_body_json and request_body_data"},
		{"inject_into", `{url_base: "https://a", authenticator: {type: ApiKeyAuthenticator, api_token: x, inject_into: {type: RequestOption, inject_into: cookie, field_name: k}}}`,
			`test.yaml: streams[0].retriever.requester.authenticator.inject_into.inject_into: expected one of request_parameter, header, body_data, body_json, got "cookie"`},
		{"a request option naming nothing", `{url_base: "https://a", authenticator: {type: ApiKeyAuthenticator, api_token: x, inject_into: {type: RequestOption, inject_into: header}}}`,
			"test.yaml: streams[0].retriever.requester.authenticator.inject_into.field_name: missing: a request option needs field_name or field_path"},
		{"a response filter's action", `{url_base: "https://a", error_handler: {response_filters: [{action: PANIC}]}}`,
			`test.yaml: streams[0].retriever.requester.error_handler.response_filters[0].action: expected one of SUCCESS, FAIL, RETRY, IGNORE, RATE_LIMITED, got "PANIC"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := loadErr(t, streamHead+"streams:\n  - name: s\n    retriever:\n      requester: "+tt.requester+"\n      record_selector: {extractor: {field_path: []}}\n")
			if diff := cmp.Diff([]string{tt.want}, lines); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSupportedTable(t *testing.T) {
	table := SupportedTable()
	lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	if len(lines) != 2+len(Kinds()) {
		t.Fatalf("%d lines for %d kinds:\n%s", len(lines), len(Kinds()), table)
	}
	want := "| `DatetimeBasedCursor` | incremental sync | `cursor_field`, `datetime_format`, `cursor_datetime_formats`, `start_datetime`, `end_datetime`, `start_time_option`, `end_time_option`, `step`, `cursor_granularity`, `lookback_window`, `partition_field_start`, `partition_field_end`, `is_data_feed`, `is_client_side_incremental`, `is_compare_strictly`, `global_substream_cursor` |"
	if !slices.Contains(lines, want) {
		t.Errorf("no row\n%s\nin\n%s", want, table)
	}
}

// TestYAMLScalars: what YAML reads as other than text (a date, a number
// key, a null) is what the manifest means.
func TestYAMLScalars(t *testing.T) {
	m := mustLoad(t, streamHead+`
streams:
  - name: s
    retriever:
      requester: {url_base: "https://a", request_parameters: {since: 2021-01-01, at: 2021-01-01T10:00:00Z}}
      record_selector: {extractor: {field_path: []}}
      paginator:
        type: DefaultPaginator
        pagination_strategy: {type: PageIncrement, page_size: 100}
    schema_loader:
      type: InlineSchemaLoader
      schema: {type: object, description: null, properties: {200: {type: string}}}
`)
	params := requester(t, m, 0).RequestParams.V.(map[string]any)
	if params["since"].(Expr).Src != "2021-01-01" || params["at"].(Expr).Src != "2021-01-01T10:00:00Z" {
		t.Errorf("dates %#v", params)
	}
	if p := m.Streams[0].Retriever.(*SimpleRetriever).Paginator.(*DefaultPaginator).Strategy.(*PageIncrement); p.PageSize.Src != "100" {
		t.Errorf("page_size %q", p.PageSize.Src)
	}
	schema := m.Streams[0].SchemaLoader[0].(*InlineSchemaLoader).Schema
	if _, ok := schema["properties"].(map[string]any)["200"]; !ok || schema["description"] != nil {
		t.Errorf("schema %#v", schema)
	}
}

func TestNewerCDKShapes(t *testing.T) {
	t.Run("an API budget", func(t *testing.T) {
		m := mustLoad(t, streamHead+`
streams:
  - name: s
    retriever: {requester: {url_base: "https://a"}, record_selector: {extractor: {field_path: []}, schema_normalization: Default}}
api_budget:
  type: HTTPAPIBudget
  policies:
    - type: MovingWindowCallRatePolicy
      rates: [{limit: 3, interval: PT1S}, {limit: 60, interval: PT1M}]
      matchers: [{method: GET, url_path_pattern: ".*"}]
    - type: FixedWindowCallRatePolicy
      period: PT1H
      call_limit: 1000
      matchers: []
  status_codes_for_ratelimit_hit: [503]
`)
		b := m.APIBudget
		mw := b.Policies[0].(*MovingWindowCallRatePolicy)
		fw := b.Policies[1].(*FixedWindowCallRatePolicy)
		if mw.Rates[1].Limit.Src != "60" || mw.Rates[1].Interval != "PT1M" || mw.Matchers[0].URLPathPattern != ".*" ||
			fw.CallLimit != 1000 || fw.Period.Src != "PT1H" || !slices.Equal(b.StatusCodesForRatelimitHit, []int{503}) {
			t.Errorf("budget %+v %+v %+v", b, mw, fw)
		}
		if got := m.Streams[0].Retriever.(*SimpleRetriever).RecordSelector.SchemaNormalization; got != "Default" {
			t.Errorf("schema_normalization %q", got)
		}
	})
	t.Run("a key given twice keeps its last value, as the CDK's YAML loader", func(t *testing.T) {
		m := mustLoad(t, streamHead+`
streams:
  - name: first
    name: s
    retriever: {requester: {url_base: "https://a"}, record_selector: {extractor: {field_path: []}}}
`)
		if m.Streams[0].Name != "s" {
			t.Errorf("name %q", m.Streams[0].Name)
		}
	})
	t.Run("a custom schema normalization, a response filter action not implemented", func(t *testing.T) {
		lines := loadErr(t, streamHead+`
streams:
  - name: s
    retriever:
      requester: {url_base: "https://a", error_handler: {response_filters: [{action: RESET_PAGINATION, http_codes: [400]}]}}
      record_selector:
        extractor: {field_path: []}
        schema_normalization: {type: CustomSchemaNormalization, class_name: x.N}
`)
		want := []string{
			"test.yaml: refused: streams[0].retriever.requester.error_handler.response_filters[0].action: HttpResponseFilter action RESET_PAGINATION: not implemented by the tap",
			"test.yaml: refused: streams[0].retriever.record_selector.schema_normalization: CustomSchemaNormalization (class x.N): Python code (a custom component), which the tap cannot run",
		}
		if diff := cmp.Diff(want, lines); diff != "" {
			t.Errorf("lines (-want +got):\n%s", diff)
		}
	})
}

// TestAliasBomb: a manifest of a few KB whose YAML aliases double at each
// level is refused at load, before it is decoded whole.
func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("version: 6.0.0\ntype: DeclarativeSource\nl0: &l0 [x, x]\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [*l%d, *l%d]\n", i, i, i-1, i-1)
	}
	_, err := Parse("bomb.yaml", []byte(b.String()), ".")
	if err == nil || !strings.Contains(err.Error(), "aliases expand it") {
		t.Fatalf("err %v, want the aliases refused", err)
	}
}
