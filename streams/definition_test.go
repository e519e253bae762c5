package streams

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// decodeDef decodes a definition strictly, as the tap decodes the config.
func decodeDef(t *testing.T, src string) (*Definition, error) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(src)))
	dec.DisallowUnknownFields()
	var d Definition
	return &d, dec.Decode(&d)
}

func TestPaginationDecode(t *testing.T) {
	one, zero := 1, 0
	tests := map[string]struct {
		src     string
		want    Pagination
		wantErr string
	}{
		"absent":      {src: `{}`, want: Pagination{}},
		"null":        {src: `{"pagination": null}`, want: Pagination{}},
		"none":        {src: `{"pagination": {"type": "none", "max_pages": 3}}`, want: Pagination{Type: PageNone, PageCommon: PageCommon{MaxPages: 3}}},
		"link_header": {src: `{"pagination": {"type": "link_header"}}`, want: Pagination{Type: PageLinkHeader}},
		"offset": {src: `{"pagination": {"type": "offset", "offset_param": "o", "page_size_param": "l", "page_size": 10, "total_path": "t", "max_pages": 2}}`,
			want: Pagination{Type: PageOffset, PageCommon: PageCommon{MaxPages: 2}, Options: &OffsetOptions{OffsetParam: "o", PageSizeParam: "l", PageSize: 10, TotalPath: "t"}}},
		"page_number": {src: `{"pagination": {"type": "page_number", "page_param": "p", "start_page": 1, "total_pages_path": "n"}}`,
			want: Pagination{Type: PageNumber, Options: &PageNumberOptions{PageParam: "p", StartPage: &one, TotalPagesPath: "n"}}},
		"page_number from 0": {src: `{"pagination": {"type": "page_number", "page_param": "p", "start_page": 0}}`,
			want: Pagination{Type: PageNumber, Options: &PageNumberOptions{PageParam: "p", StartPage: &zero}}},
		"cursor from the last record": {src: `{"pagination": {"type": "cursor", "cursor_param": "starting_after", "cursor_from_last_record": "id", "has_more_path": "has_more"}}`,
			want: Pagination{Type: PageCursor, Options: &CursorOptions{CursorParam: "starting_after", CursorFromLastRecord: "id", HasMorePath: "has_more"}}},
		"keyset": {src: `{"pagination": {"type": "keyset", "key_param": "after", "key_field": "id"}}`,
			want: Pagination{Type: PageKeyset, Options: &KeysetOptions{KeyParam: "after", KeyField: "id"}}},
		"cursor": {src: `{"pagination": {"type": "cursor", "cursor_param": "c", "next_cursor_path": "n", "has_more_path": "m", "page_size": 5, "page_size_param": "l"}}`,
			want: Pagination{Type: PageCursor, Options: &CursorOptions{CursorParam: "c", NextCursorPath: "n", HasMorePath: "m", PageSize: 5, PageSizeParam: "l"}}},
		"next_url": {src: `{"pagination": {"type": "next_url", "next_url_path": "next"}}`,
			want: Pagination{Type: PageNextURL, Options: &NextURLOptions{NextURLPath: "next"}}},
		"graphql": {src: `{"pagination": {"type": "graphql", "page_size": 50}}`,
			want: Pagination{Type: PageGraphQL, Options: &GraphQLOptions{PageSize: 50}}},

		"option of another type": {src: `{"pagination": {"type": "page_number", "page_param": "p", "next_cursor_path": "next"}}`,
			wantErr: `pagination.next_cursor_path: is an option of pagination type "cursor", not of "page_number"; type "page_number" accepts page_param, start_page, page_size_param, page_size, total_pages_path, max_pages`},
		"option of several types": {src: `{"pagination": {"type": "next_url", "next_url_path": "n", "page_size": 10}}`,
			wantErr: `pagination.page_size: is an option of pagination type "offset", "page_number", "keyset", "cursor", "graphql", not of "next_url"; type "next_url" accepts next_url_path, max_pages`},
		"option without a type": {src: `{"pagination": {"cursor_param": "c"}}`,
			wantErr: `pagination.cursor_param: is an option of pagination type "cursor", not of "none"; type "none" accepts max_pages`},
		"link_header takes no options": {src: `{"pagination": {"type": "link_header", "next_url_path": "n"}}`,
			wantErr: `pagination.next_url_path: is an option of pagination type "next_url", not of "link_header"`},
		"unknown option": {src: `{"pagination": {"type": "cursor", "cursor_param": "c", "next_cursor_path": "n", "cursr": 1}}`,
			wantErr: `pagination.cursr: unknown pagination option; type "cursor" accepts cursor_param, next_cursor_path, has_more_path, page_size_param, page_size, next_cursor_header, cursor_from_last_record, max_pages, inject`},
		"unknown type": {src: `{"pagination": {"type": "scroll"}}`,
			wantErr: `pagination.type: unknown type "scroll" (expected one of ` + typeNames() + `)`},
		"type not a string":   {src: `{"pagination": {"type": 3}}`, wantErr: `pagination.type: expected a string`},
		"not an object":       {src: `{"pagination": "cursor"}`, wantErr: `pagination: expected an object, got string`},
		"option of bad type":  {src: `{"pagination": {"type": "offset", "page_size": "10"}}`, wantErr: `pagination.page_size: expected an integer, got string`},
		"common of bad type":  {src: `{"pagination": {"type": "none", "max_pages": true}}`, wantErr: `pagination.max_pages: expected an integer, got bool`},
		"secret not repeated": {src: `{"pagination": {"type": "offset", "offset_param": ["s3cret"]}}`, wantErr: `pagination.offset_param: expected a string, got array`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			d, err := decodeDef(t, tt.src)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("the error repeats the value: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, d.Pagination); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			// What MarshalJSON writes decodes back to the same pagination.
			b, err := json.Marshal(d.Pagination)
			if err != nil {
				t.Fatal(err)
			}
			back, err := decodeDef(t, `{"pagination": `+string(b)+`}`)
			if err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			if d := cmp.Diff(tt.want, back.Pagination); d != "" {
				t.Errorf("%s decodes to (-want +got):\n%s", b, d)
			}
		})
	}
}

// TestEveryTypeAcceptsTheCommonOptions: an option of PageCommon reaches
// every type without touching the types.
func TestEveryTypeAcceptsTheCommonOptions(t *testing.T) {
	common := jsonFieldNames(reflect.TypeFor[PageCommon]())
	if len(common) == 0 {
		t.Fatal("PageCommon has no options")
	}
	for _, pt := range pageTypes {
		names := pt.optionNames()
		for _, c := range common {
			if !strings.Contains(","+strings.Join(names, ",")+",", ","+c+",") {
				t.Errorf("type %q does not accept the common option %q", pt.name, c)
			}
		}
	}
}

func TestCheck(t *testing.T) {
	base := func(f func(d *Definition)) *Definition {
		d := &Definition{Name: "items", Path: "/v1/items"}
		f(d)
		return d
	}
	tests := map[string]struct {
		d       *Definition
		wantErr string
	}{
		"plain": {d: base(func(*Definition) {})},
		"placeholder without parent": {d: base(func(d *Definition) { d.Path = "/v1/orders/{order_id}/items" }),
			wantErr: `stream "items": path: placeholder {order_id} needs a parent stream to fill it`},
		"placeholder of the parent key": {d: base(func(d *Definition) {
			d.Path = "/v1/orders/{id}/items"
			d.Parent = &Parent{Stream: "orders", Key: "id"}
		})},
		"placeholder of parent.as": {d: base(func(d *Definition) {
			d.Path = "/v1/orders/{order_id}/items"
			d.Parent = &Parent{Stream: "orders", Key: "id", As: "order_id"}
		})},
		"placeholder the parent does not fill": {d: base(func(d *Definition) {
			d.Path = "/v1/orders/{oid}/items"
			d.Parent = &Parent{Stream: "orders", Key: "id", As: "order_id"}
		}), wantErr: `stream "items": path: placeholder {oid} is not filled by the parent (parent.key is "id", parent.as is "order_id")`},
		"unclosed placeholder": {d: base(func(d *Definition) { d.Path = "/v1/{id" }), wantErr: `path: has an unclosed placeholder "{id"`},
		"a stream's headers":   {d: base(func(d *Definition) { d.Headers = map[string]string{"Accept": "text/csv"} })},
		"a header name with a space": {d: base(func(d *Definition) { d.Headers = map[string]string{"X Key": "v"} }),
			wantErr: `stream "items": headers: "X Key" is not a valid header name`},
		"a header value with a line break": {d: base(func(d *Definition) { d.Headers = map[string]string{"X-Key": "v\r\nX-Other: w"} }),
			wantErr: `stream "items": headers.X-Key: must not contain line breaks or NUL`},
		"stray brace": {d: base(func(d *Definition) { d.Path = "/v1/}x" }), wantErr: `path: has a '}' without a '{'`},
		"incremental windows without param": {d: base(func(d *Definition) {
			d.ReplicationKey = "updated_at"
			d.Incremental = &Incremental{ChunkDays: 7, EndParam: "until"}
		}), wantErr: `stream "items": incremental.param: is required with end_param or chunk_days`},
		"incremental end_param without param": {d: base(func(d *Definition) {
			d.ReplicationKey = "updated_at"
			d.Incremental = &Incremental{EndParam: "until"}
		}), wantErr: `stream "items": incremental.param: is required with end_param or chunk_days`},
		"deletes' incremental without param": {d: base(func(d *Definition) {
			d.Deletes = &Deletes{Path: "/deleted", KeyPath: "id", TimePath: "at", Incremental: &Incremental{}}
		}), wantErr: `stream "items": deletes.incremental.param: is required`},
		"incremental with param": {d: base(func(d *Definition) {
			d.ReplicationKey = "updated_at"
			d.Incremental = &Incremental{Param: "since"}
		})},
		"options of another type": {d: base(func(d *Definition) {
			d.Pagination = Pagination{Type: PageOffset, Options: &CursorOptions{CursorParam: "c", NextCursorPath: "n"}}
		}), wantErr: `pagination: holds the options of type "cursor" but its type is "offset"`},
		"options unset": {d: base(func(d *Definition) { d.Pagination = Pagination{Type: PageKeyset} }),
			wantErr: `pagination.key_param: is required for pagination type "keyset"`},
		"offset's page size parameter needs a page size": {d: base(func(d *Definition) {
			d.Pagination = Pagination{Type: PageOffset, Options: &OffsetOptions{OffsetParam: "o", PageSizeParam: "l"}}
		}), wantErr: `pagination.page_size: is required with page_size_param`},
		"negative page size": {d: base(func(d *Definition) {
			d.Pagination = Pagination{Type: PageCursor, Options: &CursorOptions{CursorParam: "c", NextCursorPath: "n", PageSize: -1}}
		}), wantErr: `pagination.page_size: must not be negative`},
		"negative max_pages": {d: base(func(d *Definition) { d.Pagination = Pagination{PageCommon: PageCommon{MaxPages: -1}} }),
			wantErr: `pagination.max_pages: must not be negative`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			err := tt.d.Check()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

// typeNames lists the registered pagination types as messages name them.
func typeNames() string {
	var names []string
	for _, pt := range PageTypes() {
		names = append(names, pt.Name)
	}
	return strings.Join(names, ", ")
}

// boundsValue is a front end's request value that reads the window's
// bounds, or not.
type boundsValue bool

func (boundsValue) Eval(WalkValues) (any, bool, error) { return "x", true, nil }
func (b boundsValue) ReadsBounds() bool                { return bool(b) }

// TestAsksChanges: a stream asks the API for changes by its filter
// parameter, or by a front end's part or path of the window's bounds;
// else the run filters what it reads.
func TestAsksChanges(t *testing.T) {
	for _, tt := range []struct {
		name string
		d    Definition
		want bool
	}{
		{"no incremental block", Definition{}, false},
		{"a filter parameter", Definition{Incremental: &Incremental{Param: "since"}}, true},
		{"a key format alone", Definition{Incremental: &Incremental{KeyFormat: "unix"}}, false},
		{"a part of the bounds", Definition{Incremental: &Incremental{}, Parts: []RequestPart{{Name: "q", Value: boundsValue(true)}}}, true},
		{"a part of something else", Definition{Incremental: &Incremental{}, Parts: []RequestPart{{Name: "q", Value: boundsValue(false)}}}, false},
		{"a path of the bounds", Definition{Incremental: &Incremental{}, ComputedPath: boundsValue(true)}, true},
		{"a path of the bounds, no incremental block", Definition{ComputedPath: boundsValue(true)}, false},
	} {
		if got := tt.d.AsksChanges(); got != tt.want {
			t.Errorf("%s: AsksChanges = %v, want %v", tt.name, got, tt.want)
		}
	}
}
