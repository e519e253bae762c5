package streams

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheckDeletes(t *testing.T) {
	const base = `"name": "customers", "path": "/v1/customers", "primary_key": ["id"]`
	tests := map[string]struct {
		src     string
		wantErr string
	}{
		"soft_delete":          {src: `{` + base + `, "soft_delete": {"field": "deleted", "values": [true]}}`},
		"soft_delete no field": {src: `{` + base + `, "soft_delete": {"values": [true]}}`, wantErr: `stream "customers": soft_delete.field: is required: the record's field (dotted) that says it is deleted, e.g. "deleted"`},
		"soft_delete no value": {src: `{` + base + `, "soft_delete": {"field": "deleted"}}`, wantErr: `stream "customers": soft_delete.values: is required: the values of field that mean deleted, e.g. [true]`},
		"deletes": {src: `{` + base + `, "deletes": {"path": "/v1/deletions", "records_path": "data", "key_path": "object_id", "time_path": "deleted_at",
			"pagination": {"type": "cursor", "cursor_param": "cursor", "next_cursor_path": "next_cursor"}, "incremental": {"param": "since"}}}`},
		"deletes without a key path": {src: `{` + base + `, "deletes": {"path": "/v1/deletions"}}`, wantErr: `stream "customers": deletes.key_path: is required: where an event holds the deleted row's primary key, e.g. "data.object.id"`},
		"deletes incremental without time": {src: `{` + base + `, "deletes": {"path": "/d", "key_path": "id", "incremental": {"param": "since"}}}`,
			wantErr: `stream "customers": deletes.time_path: is required with deletes.incremental: the event's time, its bookmark`},
		"deletes with a bad pagination": {src: `{` + base + `, "deletes": {"path": "/d", "key_path": "id", "pagination": {"type": "cursor"}}}`,
			wantErr: `stream "customers": deletes.pagination.cursor_param: is required for pagination type "cursor"`},
		"deletes on a composite key": {src: `{"name": "c", "path": "/c", "primary_key": ["a", "b"], "deletes": {"path": "/d", "key_path": "id"}}`,
			wantErr: `stream "c": deletes: needs a primary_key of exactly one property (the key deletion records carry)`},
		"reconcile": {src: `{` + base + `, "reconcile": {"every_runs": 7, "params": {"fields": "id"}, "keys_file": "k", "by_id": {"path": "/v1/customers/{id}"}}}`},
		"reconcile without keys_file": {src: `{` + base + `, "reconcile": {"every_runs": 7}}`,
			wantErr: `stream "customers": reconcile.keys_file: is required: the file that keeps the keys the tap has emitted, e.g. "reconcile/orders.keys"`},
		"by_id without a placeholder": {src: `{` + base + `, "reconcile": {"keys_file": "k", "by_id": {"path": "/v1/customers/id"}}}`,
			wantErr: `stream "customers": reconcile.by_id.path: needs exactly one {placeholder} for the key (e.g. "/v1/customers/{id}"), got "/v1/customers/id"`},
		"by_id with two placeholders": {src: `{` + base + `, "reconcile": {"keys_file": "k", "by_id": {"path": "/v1/{a}/{id}"}}}`,
			wantErr: `stream "customers": reconcile.by_id.path: needs exactly one {placeholder} for the key (e.g. "/v1/customers/{id}"), got "/v1/{a}/{id}"`},
		"negative every_runs": {src: `{` + base + `, "reconcile": {"keys_file": "k", "every_runs": -1}}`,
			wantErr: `stream "customers": reconcile.every_runs: must not be negative, got -1`},
		"fraction over 1": {src: `{` + base + `, "reconcile": {"keys_file": "k", "max_delete_fraction": 1.5}}`,
			wantErr: `stream "customers": reconcile.max_delete_fraction: must be from 0 to 1, got 1.5`},
		"reconcile on a child": {src: `{"name": "items", "path": "/o/{id}/items", "primary_key": ["id"], "parent": {"stream": "orders", "key": "id"}, "reconcile": {"keys_file": "k"}}`,
			wantErr: `stream "items": reconcile: is for top-level streams; a child stream has no listing of its own`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			d, err := decodeDef(t, tt.src)
			if err != nil {
				t.Fatal(err)
			}
			err = d.Check()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Errorf("Check() = %q\nwant      %q", got, tt.wantErr)
			}
		})
	}
}

func TestReconcileDefinition(t *testing.T) {
	d, err := decodeDef(t, `{"name": "customers", "path": "/v1/customers", "params": {"limit": "100"}, "primary_key": ["id"],
		"replication_key": "updated_at", "incremental": {"param": "updated_since"},
		"reconcile": {"params": {"fields": "id"}, "keys_file": "k", "by_id": {"path": "/v1/customers/{id}", "params": {"expand": "all"}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	sub := d.ReconcileDefinition()
	if diff := cmp.Diff(map[string]string{"limit": "100", "fields": "id"}, sub.Params); diff != "" {
		t.Errorf("listing params (-want +got):\n%s", diff)
	}
	if sub.Incremental != nil || sub.ReplicationKey != "" || sub.Path != "/v1/customers" {
		t.Errorf("listing = %+v; want the stream's path, no incremental filter", sub)
	}
	if d.Params["fields"] != "" {
		t.Errorf("the stream's own params changed: %v", d.Params)
	}
	req, err := d.ByIDRequest("c/7")
	if err != nil {
		t.Fatal(err)
	}
	if req.URL != "/v1/customers/c%2F7" || req.Query.Get("expand") != "all" {
		t.Errorf("by_id request = %s ?%s; want the key escaped into the path, with by_id.params", req.URL, req.Query.Encode())
	}
}

func TestSoftDeleted(t *testing.T) {
	sd := SoftDelete{Field: "meta.deleted", Values: []any{true, json.Number("1"), "yes"}}
	for _, tt := range []struct {
		rec  string
		want bool
	}{
		{`{"meta": {"deleted": true}}`, true},
		{`{"meta": {"deleted": 1.0}}`, true},
		{`{"meta": {"deleted": "yes"}}`, true},
		{`{"meta": {"deleted": "1"}}`, false},
		{`{"meta": {"deleted": false}}`, false},
		{`{"meta": {}}`, false},
		{`{"deleted": true}`, false},
	} {
		dec := json.NewDecoder(strings.NewReader(tt.rec))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		if got := sd.SoftDeleted(m); got != tt.want {
			t.Errorf("SoftDeleted(%s) = %v, want %v", tt.rec, got, tt.want)
		}
	}
}
