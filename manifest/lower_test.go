package manifest

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/tap-dev/tap/streams"
)

// lowerStream lowers a manifest of one stream whose retriever's paginator,
// requester fields and incremental sync are the given YAML, with config.
func lowerStream(t *testing.T, requester, paginator, incremental string, config map[string]any) (map[string]any, map[string]any, error) {
	t.Helper()
	src := `version: 6.0.0
streams:
  - name: s
    primary_key: id
    schema_loader: {type: InlineSchemaLoader, schema: {type: object, properties: {id: {type: integer}}}}
    $parameters: {kind: ad}
` + incremental + `
    retriever:
      requester:
        url_base: "https://api.example.com/v1"
        path: /items
` + requester + `
      record_selector: {extractor: {field_path: [data, items]}}
` + paginator
	m, err := Parse("m.yaml", []byte(src), t.TempDir())
	if err != nil {
		t.Fatalf("load: %v\n%s", err, src)
	}
	low, err := m.Lower(&Config{Connector: config})
	if err != nil {
		return nil, nil, err
	}
	return low.Tree, low.Tree["streams"].([]any)[0].(map[string]any), nil
}

func TestLower(t *testing.T) {
	const pagerIndent = "      "
	pager := func(s string) string { return pagerIndent + "paginator: " + s }
	for _, tt := range []struct {
		name                          string
		requester, pager, incr, trans string
		config                        map[string]any
		want                          map[string]any // fields of the stream
		wantTop                       map[string]any // fields of the config
		refused                       string         // a part of the error
	}{
		{name: "no paginator: one page, records at a path",
			want:    map[string]any{"path": "/v1/items", "records_path": "data.items", "pagination": map[string]any{"type": "none"}, "primary_key": []any{"id"}},
			wantTop: map[string]any{"base_url": "https://api.example.com"}},
		{name: "constant parameters and headers from the config",
			requester: "        request_parameters: {region: \"{{ config['region'] }}\", empty: \"\"}\n        request_headers: {Accept: application/json}",
			config:    map[string]any{"region": "eu"},
			want:      map[string]any{"params": map[string]any{"region": "eu"}, "headers": map[string]any{"Accept": "application/json"}}},
		{name: "bearer auth",
			requester: "        authenticator: {type: BearerAuthenticator, api_token: \"{{ config['token'] }}\"}",
			config:    map[string]any{"token": "t0ken-value"},
			wantTop:   map[string]any{"auth": map[string]any{"type": "bearer", "token": "t0ken-value"}}},
		{name: "OAuth refresh, its request body's fields the token request's",
			requester: "        authenticator: {type: OAuthAuthenticator, token_refresh_endpoint: \"https://a.example/token\", client_id: \"{{ config['id'] }}\", client_secret: sec-ret-value, refresh_request_body: {refresh_token: \"{{ config['rt'] }}\", redirect_uri: \"https://b.example/cb\"}}",
			config:    map[string]any{"id": "client-1", "rt": "refresh-token-1"},
			wantTop: map[string]any{"auth": map[string]any{"type": "oauth2", "grant_type": "refresh_token", "token_url": "https://a.example/token",
				"client_id": "client-1", "client_secret": "sec-ret-value", "refresh_token": "refresh-token-1", "token_params": map[string]any{"redirect_uri": "https://b.example/cb"}}}},
		{name: "OAuth client credentials with scopes: a list the config loader reads",
			requester: "        authenticator: {type: OAuthAuthenticator, grant_type: client_credentials, token_refresh_endpoint: \"https://a.example/token\", client_id: client-1, client_secret: sec-ret-value, scopes: [read, write]}",
			wantTop: map[string]any{"auth": map[string]any{"type": "oauth2", "grant_type": "client_credentials", "token_url": "https://a.example/token",
				"client_id": "client-1", "client_secret": "sec-ret-value", "scopes": []any{"read", "write"}}}},
		{name: "a session token from a login with a JSON body, as a header",
			requester: "        authenticator: {type: SessionTokenAuthenticator, login_requester: {type: HttpRequester, url_base: \"https://api.example.com/v1\", path: auth/login, http_method: POST, request_body_json: {user: \"{{ config['user'] }}\", password: \"{{ config['pw'] }}\"}}, session_token_path: [data, token], expiration_duration: PT1H, request_authentication: {type: ApiKey, inject_into: {type: RequestOption, inject_into: header, field_name: X-Session}}}",
			config:    map[string]any{"user": "me", "pw": "pass-word-1"},
			wantTop: map[string]any{"auth": map[string]any{"type": "session", "login_url": "https://api.example.com/v1/auth/login", "login_method": "POST",
				"login_body": map[string]any{"user": "me", "password": "pass-word-1"}, "token_path": "data.token", "expires_s": 3600.0, "in": "header", "name": "X-Session"}}},
		{name: "a session token from a GET login with Basic, as a bearer",
			requester: "        authenticator: {type: SessionTokenAuthenticator, login_requester: {type: HttpRequester, url: \"https://auth.example.com/token?service=x\", authenticator: {type: BasicHttpAuthenticator, username: u, password: \"{{ config['pw'] }}\"}, request_parameters: {scope: read}}, session_token_path: [token], request_authentication: {type: Bearer}}",
			config:    map[string]any{"pw": "pass-word-1"},
			wantTop: map[string]any{"auth": map[string]any{"type": "session", "login_url": "https://auth.example.com/token?service=x", "login_method": "GET",
				"username": "u", "password": "pass-word-1", "login_params": map[string]any{"scope": "read"}, "token_path": "token"}}},
		{name: "a session login authenticated by an API key",
			requester: "        authenticator: {type: SessionTokenAuthenticator, login_requester: {type: HttpRequester, url_base: \"https://api.example.com\", authenticator: {type: BearerAuthenticator, api_token: t}}, session_token_path: [token], request_authentication: {type: Bearer}}",
			refused:   "login_requester.authenticator: BearerAuthenticator: not implemented by the tap: a login authenticated other than by HTTP Basic"},
		{name: "a selective authenticator: the one the config names",
			requester: "        authenticator: {type: SelectiveAuthenticator, authenticator_selection_path: [credentials, auth_type], authenticators: {token: {type: BearerAuthenticator, api_token: \"{{ config['credentials']['token'] }}\"}, none: {type: NoAuth}}}",
			config:    map[string]any{"credentials": map[string]any{"auth_type": "token", "token": "t0ken-value"}},
			wantTop:   map[string]any{"auth": map[string]any{"type": "bearer", "token": "t0ken-value"}}},
		{name: "a selective authenticator: a choice it does not have",
			requester: "        authenticator: {type: SelectiveAuthenticator, authenticator_selection_path: [auth_type], authenticators: {none: {type: NoAuth}}}",
			config:    map[string]any{"auth_type": "oauth"},
			refused:   "authenticator.authenticator_selection_path: the config's auth_type is \"oauth\", which names none of the authenticators"},
		{name: "OAuth refresh from a token that is not a config field",
			requester: "        authenticator: {type: OAuthAuthenticator, token_refresh_endpoint: \"https://a.example/token\", client_id: c, client_secret: sec-ret-value, refresh_token: \"{{ config['rt'] | trim }}\"}",
			config:    map[string]any{"rt": "refresh-token-1"},
			refused:   "authenticator.refresh_token: OAuthAuthenticator: not implemented by the tap: \"{{ config['rt'] | trim }}\": the tap keeps a rotated refresh token in the config field the expression reads"},
		{name: "api key in the query",
			requester: "        authenticator: {type: ApiKeyAuthenticator, api_token: k, inject_into: {type: RequestOption, inject_into: request_parameter, field_name: key}}",
			wantTop:   map[string]any{"auth": map[string]any{"type": "api_key", "name": "key", "value": "k", "in": "query"}}},
		{name: "a cursor in the body",
			pager: pager(`{type: DefaultPaginator, page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: after}, pagination_strategy: {type: CursorPagination, cursor_value: "{{ response['meta']['next'] }}", stop_condition: "{{ not response.meta.has_more }}"}}`),
			want:  map[string]any{"pagination": map[string]any{"type": "cursor", "cursor_param": "after", "next_cursor_path": "meta.next", "has_more_path": "meta.has_more"}}},
		{name: "the next page's URL",
			pager: pager(`{type: DefaultPaginator, page_token_option: {type: RequestPath}, pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ response.next is none }}"}}`),
			want:  map[string]any{"pagination": map[string]any{"type": "next_url", "next_url_path": "next"}}},
		{name: "the link header",
			pager: pager(`{type: DefaultPaginator, page_token_option: {type: RequestPath}, pagination_strategy: {type: CursorPagination, cursor_value: "{{ headers['link']['next']['url'] }}"}}`),
			want:  map[string]any{"pagination": map[string]any{"type": "link_header"}}},
		{name: "the last record's field",
			pager: pager(`{type: DefaultPaginator, page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: since_id}, pagination_strategy: {type: CursorPagination, cursor_value: "{{ last_record['id'] }}"}}`),
			want:  map[string]any{"pagination": map[string]any{"type": "cursor", "cursor_param": "since_id", "cursor_from_last_record": "id"}}},
		{name: "page numbers from 0",
			pager: pager(`{type: DefaultPaginator, page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: size}, page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: p}, pagination_strategy: {type: PageIncrement, page_size: 50, start_from_page: 0}}`),
			want:  map[string]any{"pagination": map[string]any{"type": "page_number", "page_param": "p", "page_size_param": "size", "page_size": 50, "start_page": 0}}},
		{name: "a datetime cursor with a lookback and day windows",
			incr:   `    incremental_sync: {type: DatetimeBasedCursor, cursor_field: updated, datetime_format: "%Y-%m-%d", start_datetime: "{{ config['start'] }}", lookback_window: P2D, step: P7D, cursor_granularity: P1D, start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: from}, end_time_option: {type: RequestOption, inject_into: request_parameter, field_name: to}}`,
			config: map[string]any{"start": "2024-02-01"},
			want: map[string]any{"replication_key": "updated",
				"incremental": map[string]any{"param": "from", "end_param": "to", "format": "date", "overlap_s": 172800, "chunk_days": 7, "end_inclusive": true}},
			wantTop: map[string]any{"start_date": "2024-02-01T00:00:00Z"}},
		{name: "a time sent in a Go layout",
			incr: `    incremental_sync: {type: DatetimeBasedCursor, cursor_field: updated, datetime_format: "%Y-%m-%dT%H:%M:%S.%fZ", start_datetime: "2024-02-01T00:00:00.000000Z", start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: from}}`,
			want: map[string]any{"incremental": map[string]any{"param": "from", "format": "2006-01-02T15:04:05.000000Z", "overlap_s": 0}}},

		{name: "a record filter: the stream map's __filter__", pager: "      record_selector: {extractor: {field_path: []}, record_filter: {condition: \"{{ record.x == config['x'] }}\"}}",
			config:  map[string]any{"x": "on"},
			wantTop: map[string]any{"stream_maps": map[string]any{"s": map[string]any{"__filter__": "(record.get('x') == 'on')"}}}},
		{name: "a record filter on the window", pager: "      record_selector: {extractor: {field_path: []}, record_filter: {condition: \"{{ record.t >= stream_interval.start_time }}\"}}",
			refused: "record_selector.record_filter.condition: RecordFilter: not implemented by the tap: "},
		{name: "fields added and removed: a stream map; the partition's value is parent.as",
			trans: `    transformations:
      - {type: AddFields, fields: [{path: [spend], value: "{{ record.get('stats', {}).get('spend') }}"}, {path: [kind], value: "{{ parameters.kind }}", value_type: string}]}
      - {type: RemoveFields, field_pointers: [[stats]]}`,
			wantTop: map[string]any{"stream_maps": map[string]any{"s": map[string]any{"spend": "record.get('stats', {}).get('spend')", "kind": "str('ad')", "stats": nil}}}},
		{name: "a field added from one added before: the interpreter's, no map",
			trans: `    transformations:
      - {type: AddFields, fields: [{path: [a], value: "{{ record.x }}"}]}
      - {type: AddFields, fields: [{path: [b], value: "{{ record.a }}"}]}`,
			wantTop: map[string]any{"stream_maps": nil}},
		{name: "the cursor removed",
			trans:   `    transformations: [{type: RemoveFields, field_pointers: [[id]]}]`,
			refused: "transformations[0].field_pointers[0]: RemoveFields: not implemented by the tap: a field removed at id"},
		{name: "a cursor computed, not looked up, and no page_token_option",
			pager:   pager(`{type: DefaultPaginator, pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next | regex_search('p=(\\d+)') }}"}}`),
			refused: "pagination_strategy.cursor_value: CursorPagination: not implemented by the tap: "},
		{name: "a stop condition other than the next URL's absence: computed",
			pager: pager(`{type: DefaultPaginator, page_token_option: {type: RequestPath}, pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ response.count < 10 }}"}}`),
			want:  map[string]any{"pagination": map[string]any{"type": "next_url"}}},
		{name: "a cursor value that is no path: computed",
			pager: pager(`{type: DefaultPaginator, page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: after}, pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.data[-1].id if response.data else None }}"}}`),
			want:  map[string]any{"pagination": map[string]any{"type": "cursor", "cursor_param": "after"}}},
		{name: "a computed cursor that reads the partition",
			pager:   pager(`{type: DefaultPaginator, page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: after}, pagination_strategy: {type: CursorPagination, cursor_value: "{{ stream_slice.id ~ response.next }}"}}`),
			refused: "cursor_value: CursorPagination: not implemented by the tap: \"{{ stream_slice.id ~ response.next }}\" reads stream_slice: a cursor is computed from the page, the config and $parameters"},
		{name: "a page token and size in a JSON body, at a nested field",
			pager: pager(`{type: DefaultPaginator, page_size_option: {type: RequestOption, inject_into: body_json, field_path: [page, size]}, page_token_option: {type: RequestOption, inject_into: body_json, field_name: after}, pagination_strategy: {type: CursorPagination, page_size: 50, cursor_value: "{{ response.next }}"}}`),
			want:  map[string]any{"pagination": map[string]any{"type": "cursor", "inject": "body", "cursor_param": "after", "next_cursor_path": "next", "page_size_param": "page.size", "page_size": 50}}},
		{name: "offsets of the API's own page size",
			pager: pager(`{type: DefaultPaginator, page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: skip}, pagination_strategy: {type: OffsetIncrement}}`),
			want:  map[string]any{"pagination": map[string]any{"type": "offset", "offset_param": "skip"}}},
		{name: "offsets, a page size sent",
			pager: pager(`{type: DefaultPaginator, page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}, page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: skip}, pagination_strategy: {type: OffsetIncrement, page_size: 25}}`),
			want:  map[string]any{"pagination": map[string]any{"type": "offset", "offset_param": "skip", "page_size_param": "limit", "page_size": 25}}},
		{name: "offsets, a page size option with no size",
			pager:   pager(`{type: DefaultPaginator, page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}, page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: skip}, pagination_strategy: {type: OffsetIncrement}}`),
			refused: "pagination_strategy: OffsetIncrement: not implemented by the tap: a page_size_option without a page_size to send"},
		{name: "a page size in a header",
			pager: pager(`{type: DefaultPaginator, page_size_option: {type: RequestOption, inject_into: header, field_name: X-Per-Page}, page_token_option: {type: RequestOption, inject_into: header, field_name: X-Page}, pagination_strategy: {type: PageIncrement, page_size: 20}}`),
			want:  map[string]any{"pagination": map[string]any{"type": "page_number", "inject": "header", "page_param": "X-Page", "start_page": 1, "page_size_param": "X-Per-Page", "page_size": 20}}},
		{name: "a page token in the body and its size in the query",
			pager:   pager(`{type: DefaultPaginator, page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: size}, page_token_option: {type: RequestOption, inject_into: body_json, field_name: after}, pagination_strategy: {type: CursorPagination, page_size: 50, cursor_value: "{{ response.next }}"}}`),
			refused: "page_token_option.inject_into: RequestOption: not implemented by the tap: the page token sent in the body_json, and the paginator's other option elsewhere"},
		{name: "a page size in a form body",
			pager:   pager(`{type: DefaultPaginator, page_size_option: {type: RequestOption, inject_into: body_data, field_name: size}, pagination_strategy: {type: PageIncrement, page_size: 20}}`),
			refused: "page_size_option.inject_into: RequestOption: not implemented by the tap: the page size sent in the body_data"},
		{name: "a parameter computed per request",
			requester: "        request_parameters: {t: \"{{ next_page_token.x }}\"}",
			refused:   "request_parameters.t: HttpRequester: not implemented by the tap: \"{{ next_page_token.x }}\" reads next_page_token"},
		{name: "records' epoch cursor sent as a date: the key read as a time",
			incr: `    incremental_sync: {type: DatetimeBasedCursor, cursor_field: ts, cursor_datetime_formats: ["%s"], datetime_format: "%Y-%m-%d", start_datetime: "2024-01-01", start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: from}}`,
			want: map[string]any{"incremental": map[string]any{"param": "from", "format": "date", "key_format": "unix", "overlap_s": 0}}},
		{name: "records' cursor with an offset: the key read in a layout",
			incr: `    incremental_sync: {type: DatetimeBasedCursor, cursor_field: ts, cursor_datetime_formats: ["%Y-%m-%dT%H:%M:%S.%f%z"], datetime_format: "%Y-%m-%dT%H:%M:%SZ", start_datetime: "2024-01-01T00:00:00Z", start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: from}}`,
			want: map[string]any{"incremental": map[string]any{"param": "from", "format": "2006-01-02T15:04:05Z", "key_format": "2006-01-02T15:04:05.999999Z0700", "overlap_s": 0}}},
		{name: "a window of hours",
			incr:    `    incremental_sync: {type: DatetimeBasedCursor, cursor_field: u, datetime_format: "%Y-%m-%d", start_datetime: "2024-01-01", step: PT1H, start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: from}, end_time_option: {type: RequestOption, inject_into: request_parameter, field_name: to}}`,
			refused: "incremental_sync.step: DatetimeBasedCursor: not implemented by the tap: \"PT1H\": the tap's windows are whole days"},
		{name: "epoch cursor values and no start_time_option: the key's format alone",
			incr: `    incremental_sync: {type: DatetimeBasedCursor, cursor_field: ts, cursor_datetime_formats: ["%s"], datetime_format: "%Y-%m-%d", start_datetime: "2024-01-01"}`,
			want: map[string]any{"replication_key": "ts", "incremental": map[string]any{"key_format": "unix"}}},
		{name: "a window's end without its start",
			incr:    `    incremental_sync: {type: DatetimeBasedCursor, cursor_field: ts, datetime_format: "%Y-%m-%d", start_datetime: "2024-01-01", end_time_option: {type: RequestOption, inject_into: request_parameter, field_name: to}}`,
			refused: "incremental_sync.end_time_option: DatetimeBasedCursor: not implemented by the tap: a window's end sent without its start"},
		{name: "a list of partitions, each sent as a parameter",
			pager: pagerIndent + `partition_router: {type: ListPartitionRouter, cursor_field: region, values: [eu, us], request_option: {type: RequestOption, inject_into: request_parameter, field_name: r}}`,
			want:  map[string]any{"parent": map[string]any{"values": []any{"eu", "us"}, "key": "region", "param": "r"}}},
		{name: "a list of partitions from the config",
			requester: "        request_parameters: {}",
			pager:     pagerIndent + `partition_router: {type: ListPartitionRouter, cursor_field: acct, values: "{{ config['accounts'] }}"}`,
			config:    map[string]any{"accounts": []any{"a1", 7}},
			want:      map[string]any{"parent": map[string]any{"values": []any{"a1", "7"}, "key": "acct"}}},
		{name: "a list of partitions computed per run",
			pager:   pagerIndent + `partition_router: {type: ListPartitionRouter, cursor_field: d, values: "{{ [now_utc().year] }}"}`,
			refused: "partition_router.values: ListPartitionRouter: not implemented by the tap: \"{{ [now_utc().year] }}\" reads (clock): the values are known at load"},
		{name: "a client-side incremental cursor: the run filters",
			incr: `    incremental_sync: {type: DatetimeBasedCursor, cursor_field: updated, is_client_side_incremental: true, is_data_feed: true, datetime_format: "%Y-%m-%dT%H:%M:%SZ", start_datetime: "2024-01-01T00:00:00Z"}`,
			want: map[string]any{"replication_key": "updated", "incremental": nil}},
		{name: "records' cursor in two formats: tried in turn",
			incr: `    incremental_sync: {type: DatetimeBasedCursor, cursor_field: ts, cursor_datetime_formats: ["%Y%m%d", "%Y%m%d%H"], datetime_format: "%Y%m%d", start_datetime: "20240101", start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: from}}`,
			want: map[string]any{"incremental": map[string]any{"param": "from", "format": "20060102", "overlap_s": 0, "key_format": "20060102|2006010215"}}},
		{name: "the cursor field listed in a schema that leaves it out",
			incr: `    incremental_sync: {type: DatetimeBasedCursor, cursor_field: changed, datetime_format: "%Y-%m-%dT%H:%M:%SZ", start_datetime: "2024-01-01T00:00:00Z", start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: from}}`,
			want: map[string]any{"replication_key": "changed", "schema": map[string]any{"type": "object",
				"properties": map[string]any{"id": map[string]any{"type": "integer"}, "changed": map[string]any{}}}}},
		{name: "a response filter whose predicate reads the partition",
			requester: "        error_handler: {type: DefaultErrorHandler, response_filters: [{type: HttpResponseFilter, action: IGNORE, predicate: \"{{ stream_slice.id in response }}\"}]}",
			refused:   "response_filters[0].predicate: HttpResponseFilter: not implemented by the tap: \"{{ stream_slice.id in response }}\" reads stream_slice: a predicate reads the answer, the config and $parameters"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pg, sel := tt.pager, ""
			if strings.Contains(pg, "record_selector") {
				pg, sel = "", tt.pager
			}
			top, d, err := lowerStream(t, tt.requester, pg, tt.incr+tt.trans, tt.config)
			if sel != "" {
				src := strings.Replace(`version: 6.0.0
streams:
  - name: s
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      requester: {url_base: "https://a.example"}
SEL`, "SEL", sel, 1)
				m, lerr := Parse("m.yaml", []byte(src), t.TempDir())
				if lerr != nil {
					t.Fatal(lerr)
				}
				var low *Lowered
				if low, err = m.Lower(&Config{Connector: tt.config}); err == nil {
					top = low.Tree
				}
			}
			if tt.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tt.refused) {
					t.Fatalf("error %v, want a part %q", err, tt.refused)
				}
				if !strings.HasPrefix(err.Error(), "m.yaml: refused: streams[0].") && !strings.HasPrefix(err.Error(), "m.yaml: streams[0].") {
					t.Errorf("error %q does not name the file and the place", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.want {
				if diff := cmp.Diff(v, d[k]); diff != "" {
					t.Errorf("stream's %s (-want +got):\n%s", k, diff)
				}
			}
			for k, v := range tt.wantTop {
				if diff := cmp.Diff(v, top[k]); diff != "" {
					t.Errorf("config's %s (-want +got):\n%s", k, diff)
				}
			}
		})
	}
}

// TestLowerSecrets: the spec's airbyte_secret fields, at any depth, are the
// secrets the run masks.
func TestLowerSecrets(t *testing.T) {
	m, err := Parse("m.yaml", []byte(`version: 6.0.0
streams:
  - name: s
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      requester: {url_base: "https://a.example"}
      record_selector: {extractor: {field_path: []}}
spec:
  connection_specification:
    type: object
    properties:
      region: {type: string}
      credentials:
        oneOf:
          - {type: object, properties: {client_secret: {type: string, airbyte_secret: true}}}
`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	low, err := m.Lower(&Config{Connector: map[string]any{"region": "eu", "credentials": map[string]any{"client_secret": "s3cret-value"}}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"s3cret-value"}, low.Secrets); diff != "" {
		t.Errorf("secrets (-want +got):\n%s", diff)
	}
}

// TestGuideListsComponents: the guide's table of components is the
// registry's.
func TestGuideListsComponents(t *testing.T) {
	b, err := os.ReadFile("../docs/guides/airbyte-manifests.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), SupportedTable()) {
		t.Errorf("docs/guides/airbyte-manifests.md does not end with SupportedTable(); paste:\n%s", SupportedTable())
	}
}

// TestLowerParentParam: a substream's partition value sent in the query,
// by a request option or a request parameter, is the parent's param; its
// value added to the records is the parent's "as".
func TestLowerParentParam(t *testing.T) {
	for _, tt := range []struct {
		name, child string
		want        map[string]any
		parts       map[string]string // the computed parameters, for the parent key o-1 from 2024-03-05
		path        string            // the computed path, for the same walk ("": none)
		refused     string
	}{
		{name: "a request option",
			child: `requester: {url_base: "https://a.example/v1", path: /members}
      partition_router: {type: SubstreamPartitionRouter, parent_stream_configs: [{type: ParentStreamConfig, parent_key: id, partition_field: org, request_option: {type: RequestOption, inject_into: request_parameter, field_name: org_id}, stream: {$ref: "#/streams/0"}}]}`,
			want: map[string]any{"stream": "orgs", "key": "id", "as": "org", "param": "org_id"}},
		{name: "a request parameter, and the value added as a field",
			child: `requester: {url_base: "https://a.example/v1", path: /members, request_parameters: {organization: "{{ stream_partition.org }}"}}
      partition_router: {type: SubstreamPartitionRouter, parent_stream_configs: [{type: ParentStreamConfig, parent_key: id, partition_field: org, stream: {$ref: "#/streams/0"}}]}
    transformations: [{type: AddFields, fields: [{path: [organization_id], value: "{{ stream_partition.org }}"}]}]`,
			want: map[string]any{"stream": "orgs", "key": "id", "as": "organization_id", "param": "organization"}},
		{name: "a value built around the key: computed for each walk",
			child: `requester: {url_base: "https://a.example/v1", path: /members, request_parameters: {q: "org:{{ stream_partition.org }}"}}
      partition_router: {type: SubstreamPartitionRouter, parent_stream_configs: [{type: ParentStreamConfig, parent_key: id, partition_field: org, stream: {$ref: "#/streams/0"}}]}`,
			want: map[string]any{"stream": "orgs", "key": "id", "as": "org"}, parts: map[string]string{"q": "org:o-1"}},
		{name: "a path built from a part of the key: computed for each walk",
			child: `requester: {url_base: "https://a.example/v1", path: "/members/{{ stream_partition.org.split('-')[1] }}"}
      partition_router: {type: SubstreamPartitionRouter, parent_stream_configs: [{type: ParentStreamConfig, parent_key: id, partition_field: org, stream: {$ref: "#/streams/0"}}]}`,
			want: map[string]any{"stream": "orgs", "key": "id", "as": "org"}, path: "/v1/members/1"},
		{name: "a value of the window's bounds and the clock",
			child: `requester: {url_base: "https://a.example/v1", path: /members, request_parameters: {filter: "updated >= {{ stream_interval.start_time }} and year = {{ now_utc().year > 2000 }}"}}
      partition_router: {type: SubstreamPartitionRouter, parent_stream_configs: [{type: ParentStreamConfig, parent_key: id, partition_field: org, stream: {$ref: "#/streams/0"}}]}
    incremental_sync: {type: DatetimeBasedCursor, cursor_field: u, datetime_format: "%Y-%m-%d", start_datetime: "2024-01-01"}`,
			want: map[string]any{"stream": "orgs", "key": "id", "as": "org"}, parts: map[string]string{"filter": "updated >= 2024-03-05 and year = True"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := `version: 6.0.0
streams:
  - name: orgs
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      requester: {url_base: "https://a.example/v1", path: /orgs}
      record_selector: {extractor: {field_path: []}}
  - name: members
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      record_selector: {extractor: {field_path: []}}
      ` + tt.child + "\n"
			m, err := Parse("m.yaml", []byte(src), t.TempDir())
			if err != nil {
				t.Fatalf("%v\n%s", err, src)
			}
			low, err := m.Lower(&Config{})
			if tt.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tt.refused) {
					t.Fatalf("error %v, want a part %q", err, tt.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d := low.Tree["streams"].([]any)[1].(map[string]any)
			if diff := cmp.Diff(tt.want, d["parent"]); diff != "" {
				t.Errorf("parent (-want +got):\n%s", diff)
			}
			if _, ok := d["params"]; ok {
				t.Errorf("params %v: the parent's key went in as a constant too", d["params"])
			}
			walk := streams.WalkValues{Vars: map[string]string{"org": "o-1"}, Context: map[string]any{"org": "o-1"}, Lower: "2024-03-05T00:00:00Z"}
			if p := low.Paths["members"]; p != nil || tt.path != "" {
				v, ok, err := p.Eval(walk)
				if err != nil || !ok || v != tt.path {
					t.Errorf("computed path %v, %v, %v; want %q", v, ok, err, tt.path)
				}
			}
			got := map[string]string{}
			for _, p := range low.RequestParts["members"] {
				v, ok, err := p.Value.Eval(walk)
				if err != nil || !ok {
					t.Fatalf("%s: %v, %v", p.Name, ok, err)
				}
				got[p.Name] = v.(string)
			}
			if diff := cmp.Diff(tt.parts, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("computed parameters (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLowerRefreshTokenField: a rotated refresh token goes back to the
// connector config's field the manifest reads it from.
func TestLowerRefreshTokenField(t *testing.T) {
	m, err := Parse("m.yaml", []byte(`version: 6.0.0
streams:
  - name: s
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      requester:
        url_base: "https://a.example"
        authenticator: {type: OAuthAuthenticator, token_refresh_endpoint: "https://a.example/token", client_id: c, client_secret: sec-ret-value, refresh_token: "{{ config['credentials']['refresh_token'] }}"}
      record_selector: {extractor: {field_path: []}}
`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	low, err := m.Lower(&Config{Connector: map[string]any{"credentials": map[string]any{"refresh_token": "refresh-token-1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if low.RefreshTokenField != "credentials.refresh_token" {
		t.Errorf("RefreshTokenField = %q, want credentials.refresh_token", low.RefreshTokenField)
	}
}

// TestJoinURL: url_base and path join as the CDK joins them.
func TestJoinURL(t *testing.T) {
	for _, tt := range []struct{ base, path, want string }{
		{"https://a.example/v1", "items", "https://a.example/v1/items"},
		{"https://a.example/v1/", "/items", "https://a.example/v1/items"},
		{"https://a.example/v1", "", "https://a.example/v1"},
		{"https://a.example/v1", "https://a.example/v1/jobs", "https://a.example/v1/jobs"}, // Airbyte's own manifest
	} {
		if got := joinURL(tt.base, tt.path); got != tt.want {
			t.Errorf("joinURL(%q, %q) = %q, want %q", tt.base, tt.path, got, tt.want)
		}
	}
}

// TestLowerFieldPathWildcard: a * of a DpathExtractor's field_path is a *
// of the tap's records_path; a segment holding a dot is refused, as the
// tap's path would read it as two.
func TestLowerFieldPathWildcard(t *testing.T) {
	for _, tt := range []struct{ path, want, refused string }{
		{`[entries, "*", item]`, "entries.*.item", ""},
		{`["*"]`, "*", ""},
		{`[data, invoices.json]`, "", `field_path[1]: DpathExtractor: not implemented by the tap: a field_path with "invoices.json" in it`},
	} {
		src := `version: 6.0.0
streams:
  - name: s
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      requester: {url_base: "https://a.example"}
      record_selector: {extractor: {field_path: ` + tt.path + `}}
`
		m, err := Parse("m.yaml", []byte(src), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		low, err := m.Lower(&Config{})
		if tt.refused != "" {
			if err == nil || !strings.Contains(err.Error(), tt.refused) {
				t.Errorf("%s: error %v, want %q", tt.path, err, tt.refused)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := low.Tree["streams"].([]any)[0].(map[string]any)["records_path"]; got != tt.want {
			t.Errorf("%s: records_path %q, want %q", tt.path, got, tt.want)
		}
	}
}

// TestLowerParentRecordFilter: a parent stream's record filter runs
// before its records are written or their children walked (the CDK walks
// no child of a dropped record); another stream's is its stream map's
// __filter__, which runs on the splice path too.
func TestLowerParentRecordFilter(t *testing.T) {
	src := `version: 6.0.0
streams:
  - name: items
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      requester: {url_base: "https://a.example", path: /items}
      record_selector: {extractor: {field_path: [entries]}, record_filter: {condition: "{{ record['type'] == 'file' }}"}}
  - name: comments
    schema_loader: {type: InlineSchemaLoader, schema: {type: object}}
    retriever:
      requester: {url_base: "https://a.example", path: "/files/{{ stream_partition.file_id }}/comments"}
      record_selector: {extractor: {field_path: [entries]}, record_filter: {condition: "{{ record['ok'] }}"}}
      partition_router: {type: SubstreamPartitionRouter, parent_stream_configs: [{type: ParentStreamConfig, parent_key: id, partition_field: file_id, stream: {$ref: "#/streams/0"}}]}
`
	m, err := Parse("m.yaml", []byte(src), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	low, err := m.Lower(&Config{})
	if err != nil {
		t.Fatal(err)
	}
	f := low.RecordSteps["items"]
	if f == nil {
		t.Fatal("the parent stream has no record filter")
	}
	for rec, want := range map[string]bool{"file": true, "folder": false} {
		if _, keep, err := f.Step(map[string]any{"type": rec}, nil); err != nil || keep != want {
			t.Errorf("Step(type %s) = %v, %v; want %v", rec, keep, err, want)
		}
	}
	if _, ok := low.RecordSteps["comments"]; ok {
		t.Error("a stream that is no parent has a record filter of its own")
	}
	maps, _ := low.Tree["stream_maps"].(map[string]any)
	if c, _ := maps["comments"].(map[string]any); c["__filter__"] == nil {
		t.Errorf("the child's filter is not its stream map's __filter__: %v", maps)
	}
	if i, _ := maps["items"].(map[string]any); i["__filter__"] != nil {
		t.Errorf("the parent's filter is a stream map too: %v", maps)
	}
}
