package streams

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/internal/jsontest"
)

func TestLookup(t *testing.T) {
	doc := jsontest.Decode(t, `{"a":{"b":[{"c":1},{"c":null}],"0":"zero"},"n":null}`)
	tests := []struct {
		path  string
		want  any
		found bool
	}{
		{"", doc, true},
		{"a.b.0.c", json.Number("1"), true},
		{"a.b.1.c", nil, true},
		{"a.b.2.c", nil, false},
		{"a.b.-1", nil, false},
		{"a.b.01", nil, false},
		{"a.0", "zero", true},
		{"a.x", nil, false},
		{"n", nil, true},
		{"n.x", nil, false},
		{"a.b.0.c.d", nil, false},
	}
	for _, tt := range tests {
		got, found := Lookup(doc, tt.path)
		if found != tt.found || !cmp.Equal(got, tt.want) {
			t.Errorf("Lookup(%q) = %v, %v; want %v, %v", tt.path, got, found, tt.want, tt.found)
		}
	}
}

func TestExtract(t *testing.T) {
	tests := map[string]struct {
		d       Definition
		body    string
		want    []any
		wantErr string
		apiErr  bool
	}{
		"records_path": {d: Definition{RecordsPath: "data.items"}, body: `{"data":{"items":[{"id":1},{"id":2}]}}`,
			want: []any{map[string]any{"id": json.Number("1")}, map[string]any{"id": json.Number("2")}}},
		"top-level array":             {d: Definition{}, body: `[{"id":1}]`, want: []any{map[string]any{"id": json.Number("1")}}},
		"null array":                  {d: Definition{RecordsPath: "data"}, body: `{"data":null}`, want: nil},
		"null parent":                 {d: Definition{RecordsPath: "data.items"}, body: `{"data":null}`, want: nil},
		"empty array":                 {d: Definition{RecordsPath: "data"}, body: `{"data":[]}`, want: []any{}},
		"missing path":                {d: Definition{RecordsPath: "data.items"}, body: `{"data":{"rows":[]}}`, wantErr: `stream "orders": records_path "data.items" is not in the response`},
		"wrong type":                  {d: Definition{RecordsPath: "data"}, body: `{"data":{"id":1}}`, wantErr: `records_path "data" holds a JSON object, expected an array`},
		"top-level object":            {d: Definition{}, body: `{"data":[]}`, wantErr: `the response body is a JSON object, expected an array`},
		"object_is_record: an object": {d: Definition{RecordsPath: "data", ObjectIsRecord: true}, body: `{"data":{"id":1}}`, want: []any{map[string]any{"id": json.Number("1")}}},
		"object_is_record: the body":  {d: Definition{ObjectIsRecord: true}, body: `{"id":1}`, want: []any{map[string]any{"id": json.Number("1")}}},
		"object_is_record: an array":  {d: Definition{RecordsPath: "data", ObjectIsRecord: true}, body: `{"data":[{"id":1}]}`, want: []any{map[string]any{"id": json.Number("1")}}},
		"object_is_record: {}":        {d: Definition{ObjectIsRecord: true}, body: `{}`, want: nil},
		"object_is_record: a string":  {d: Definition{RecordsPath: "data", ObjectIsRecord: true}, body: `{"data":"x"}`, wantErr: `records_path "data" holds a JSON string, expected an array`},
		"error_path string":           {d: Definition{RecordsPath: "data", ErrorPath: "error"}, body: `{"error":"quota exceeded","data":[]}`, wantErr: "quota exceeded", apiErr: true},
		"error_path message":          {d: Definition{RecordsPath: "data", ErrorPath: "error"}, body: `{"error":{"code":7,"message":"backend busy"}}`, wantErr: "backend busy", apiErr: true},
		"error_path other object":     {d: Definition{RecordsPath: "data", ErrorPath: "error"}, body: `{"error":{"code":7}}`, wantErr: `{"code":7}`, apiErr: true},
		"error_path true":             {d: Definition{RecordsPath: "data", ErrorPath: "failed"}, body: `{"failed":true}`, wantErr: "true", apiErr: true},
		"error_path array":            {d: Definition{RecordsPath: "data", ErrorPath: "errors"}, body: `{"errors":[{"message":"first"},{"message":"second"}]}`, wantErr: "first", apiErr: true},
		"error_path null":             {d: Definition{RecordsPath: "data", ErrorPath: "error"}, body: `{"error":null,"data":[1]}`, want: []any{json.Number("1")}},
		"error_path false":            {d: Definition{RecordsPath: "data", ErrorPath: "error"}, body: `{"error":false,"data":[1]}`, want: []any{json.Number("1")}},
		"error_path empty":            {d: Definition{RecordsPath: "data", ErrorPath: "error"}, body: `{"error":"","data":[1]}`, want: []any{json.Number("1")}},
		"error_path empty list":       {d: Definition{RecordsPath: "data", ErrorPath: "errors"}, body: `{"errors":[],"data":[1]}`, want: []any{json.Number("1")}},
		"error_path absent":           {d: Definition{RecordsPath: "data", ErrorPath: "error"}, body: `{"data":[1]}`, want: []any{json.Number("1")}},
		"error_path checked first":    {d: Definition{RecordsPath: "data", ErrorPath: "error"}, body: `{"error":"down"}`, wantErr: "down", apiErr: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			tt.d.Name = "orders"
			got, err := tt.d.Extract(jsontest.Decode(t, tt.body))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				var ae *APIError
				if errors.As(err, &ae) != tt.apiErr {
					t.Errorf("err is an *APIError: %v, want %v", !tt.apiErr, tt.apiErr)
				}
				if ae != nil && ae.Stream != "orders" {
					t.Errorf("APIError.Stream = %q", ae.Stream)
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

func TestExtractGraphQL(t *testing.T) {
	d := &Definition{Name: "issues", Path: "/graphql", Pagination: Pagination{Type: PageGraphQL, Options: &GraphQLOptions{PageSize: 2}},
		GraphQL: &GraphQL{ConnectionPath: "data.repository.issues"}}
	tests := map[string]struct {
		body    string
		want    []any
		wantErr string
	}{
		"edges": {body: `{"data":{"repository":{"issues":{"edges":[{"node":{"id":"a"}},{"node":{"id":"b"}}],"pageInfo":{"hasNextPage":true,"endCursor":"c"}}}}}`,
			want: []any{map[string]any{"id": "a"}, map[string]any{"id": "b"}}},
		"nodes":             {body: `{"data":{"repository":{"issues":{"nodes":[{"id":"a"}]}}}}`, want: []any{map[string]any{"id": "a"}}},
		"no issues":         {body: `{"data":{"repository":{"issues":{"nodes":[]}}}}`, want: []any{}},
		"null connection":   {body: `{"data":{"repository":null}}`, want: nil},
		"errors array":      {body: `{"data":null,"errors":[{"message":"Could not resolve to a Repository with the name 'x'."},{"message":"second"}]}`, wantErr: `stream "issues": GraphQL error: Could not resolve to a Repository with the name 'x'.`},
		"empty errors":      {body: `{"errors":[],"data":{"repository":{"issues":{"nodes":[{"id":"a"}]}}}}`, want: []any{map[string]any{"id": "a"}}},
		"missing":           {body: `{"data":{"viewer":{}}}`, wantErr: `connection_path "data.repository.issues" is not in the response`},
		"neither":           {body: `{"data":{"repository":{"issues":{"totalCount":3}}}}`, wantErr: "neither edges nor nodes"},
		"edge without node": {body: `{"data":{"repository":{"issues":{"edges":[{"cursor":"x"}]}}}}`, wantErr: "edges.0 has no node"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := d.Extract(jsontest.Decode(t, tt.body))
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

func TestKeysNear(t *testing.T) {
	body := map[string]any{"data": map[string]any{"items": []any{}, "paging": map[string]any{"next": "x"}}, "meta": 1}
	for _, c := range []struct{ path, want string }{
		{"results", "; its keys: data, meta"},
		{"data.records", "; the keys of data: items, paging"},
		{"data.paging.cursor", "; the keys of data.paging: next"},
		{"meta.x", "; its keys: data, meta"},
	} {
		if got := KeysNear(body, c.path); got != c.want {
			t.Errorf("KeysNear(%q) = %q, want %q", c.path, got, c.want)
		}
	}
	if got := KeysNear([]any{1}, "data"); got != "" {
		t.Errorf("KeysNear of an array = %q, want none", got)
	}
}
