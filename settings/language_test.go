package settings

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSpecRefusesWhatTheRunRefuses: each definition, alone in a config,
// is refused by the run (Load) exactly when the spec's stream schema —
// what Airbyte's form checks before it saves a connection — refuses it.
// Each invalid row has one thing wrong.
func TestSpecRefusesWhatTheRunRefuses(t *testing.T) {
	schema := compileJSON(t, "stream.json", StreamSchema())
	for _, tt := range []struct {
		name, def string
		ok        bool
		noSchema  bool // else the row gains an inline schema
	}{
		// valid
		{"a plain stream", `{"name": "a", "path": "/a"}`, true, false},
		{"offset with its options", `{"name": "a", "path": "/a", "pagination": {"type": "offset", "offset_param": "o", "page_size_param": "n", "page_size": 10}}`, true, false},
		{"cursor from a header", `{"name": "a", "path": "/a", "pagination": {"type": "cursor", "cursor_param": "c", "next_cursor_header": "X-Next"}}`, true, false},
		{"incremental in chunks", `{"name": "a", "path": "/a", "replication_key": "u", "incremental": {"param": "since", "chunk_days": 7, "end_param": "until"}}`, true, false},
		{"method in lower case", `{"name": "a", "path": "/a", "method": "post"}`, true, false},
		{"a feed without a path of its stream", `{"name": "a", "primary_key": ["id"], "feed": {"protocol": "sse", "path": "/f", "seq_path": "seq"}}`, true, false},
		{"deletes on one key", `{"name": "a", "path": "/a", "primary_key": ["id"], "deletes": {"path": "/d", "key_path": "id"}}`, true, false},
		{"xml with its records path", `{"name": "a", "path": "/a", "format": "xml", "records_path": "items.item"}`, true, false},
		// invalid: one thing wrong each
		{"no schema", `{"name": "a", "path": "/a"}`, false, true},
		{"no name", `{"path": "/a"}`, false, false},
		{"a blank name", `{"name": " ", "path": "/a"}`, false, false},
		{"no path", `{"name": "a"}`, false, false},
		{"a method of neither", `{"name": "a", "path": "/a", "method": "PUT"}`, false, false},
		{"an unknown field", `{"name": "a", "path": "/a", "pagnation": {}}`, false, false},
		{"page_number without page_param", `{"name": "a", "path": "/a", "pagination": {"type": "page_number"}}`, false, false},
		{"offset without offset_param", `{"name": "a", "path": "/a", "pagination": {"type": "offset", "page_size_param": "n", "page_size": 10}}`, false, false},
		{"offset with page_size -5", `{"name": "a", "path": "/a", "pagination": {"type": "offset", "offset_param": "o", "page_size_param": "n", "page_size": -5}}`, false, false},
		{"keyset without key_field", `{"name": "a", "path": "/a", "pagination": {"type": "keyset", "key_param": "after"}}`, false, false},
		{"cursor with no way to the next", `{"name": "a", "path": "/a", "pagination": {"type": "cursor", "cursor_param": "c"}}`, false, false},
		{"cursor with two ways to the next", `{"name": "a", "path": "/a", "pagination": {"type": "cursor", "cursor_param": "c", "next_cursor_path": "n", "next_cursor_header": "X-Next"}}`, false, false},
		{"next_url without its path", `{"name": "a", "path": "/a", "pagination": {"type": "next_url"}}`, false, false},
		{"graphql pagination without graphql", `{"name": "a", "path": "/a", "pagination": {"type": "graphql"}}`, false, false},
		{"negative max_pages", `{"name": "a", "path": "/a", "pagination": {"type": "none", "max_pages": -1}}`, false, false},
		{"inject into cookies", `{"name": "a", "path": "/a", "pagination": {"type": "none", "inject": "cookie"}}`, false, false},
		{"format parquet", `{"name": "a", "path": "/a", "format": "parquet"}`, false, false},
		{"incremental without replication_key", `{"name": "a", "path": "/a", "incremental": {"param": "since"}}`, false, false},
		{"incremental windows without param", `{"name": "a", "path": "/a", "replication_key": "u", "incremental": {"end_param": "until", "chunk_days": 7}}`, false, false},
		{"incremental of a key format alone", `{"name": "a", "path": "/a", "replication_key": "u", "incremental": {"key_format": "unix"}}`, true, false},
		{"a parent of values", `{"name": "a", "path": "/r/{region}", "parent": {"values": ["eu", "us"], "key": "region"}}`, true, false},
		{"a parent of no values", `{"name": "a", "path": "/r/{region}", "parent": {"values": [], "key": "region"}}`, true, false},
		{"a parent of a stream and values", `{"name": "a", "path": "/r/{region}", "parent": {"stream": "b", "values": ["eu"], "key": "region"}}`, false, false},
		{"a parent of neither", `{"name": "a", "path": "/r/{region}", "parent": {"key": "region"}}`, false, false},
		{"deletes' incremental without param", `{"name": "a", "path": "/a", "primary_key": ["id"], "deletes": {"path": "/d", "key_path": "id", "time_path": "t", "incremental": {}}}`, false, false},
		{"chunks without end_param", `{"name": "a", "path": "/a", "replication_key": "u", "incremental": {"param": "since", "chunk_days": 7}}`, false, false},
		{"negative overlap_s", `{"name": "a", "path": "/a", "replication_key": "u", "incremental": {"param": "since", "overlap_s": -1}}`, false, false},
		{"on_unsorted of neither", `{"name": "a", "path": "/a", "on_unsorted": "skip"}`, false, false},
		{"on_request_failure of neither", `{"name": "a", "path": "/a", "on_request_failure": "retry"}`, false, false},
		{"an ignored status of 700", `{"name": "a", "path": "/a", "ignore_statuses": [404, 700]}`, false, false},
		{"a weight above its bound", `{"name": "a", "path": "/a", "weight": 2000000}`, false, false},
		{"a placeholder without a parent", `{"name": "a", "path": "/a/{id}"}`, false, false},
		{"a parent without key", `{"name": "a", "path": "/a", "parent": {"stream": "b"}}`, false, false},
		{"xml without records_path", `{"name": "a", "path": "/a", "format": "xml"}`, false, false},
		{"csv options on json", `{"name": "a", "path": "/a", "csv": {"delimiter": ";"}}`, false, false},
		{"a feed of an unknown protocol", `{"name": "a", "feed": {"protocol": "mqtt", "path": "/f", "seq_path": "seq"}}`, false, false},
		{"a feed with path and url", `{"name": "a", "feed": {"protocol": "sse", "path": "/f", "url": "https://x/f", "seq_path": "seq"}}`, false, false},
		{"a feed without seq_path", `{"name": "a", "feed": {"protocol": "sse", "path": "/f"}}`, false, false},
		{"a feed that pages", `{"name": "a", "feed": {"protocol": "sse", "path": "/f", "seq_path": "seq"}, "pagination": {"type": "link_header"}}`, false, false},
		{"deletes on a composite key", `{"name": "a", "path": "/a", "primary_key": ["id", "v"], "deletes": {"path": "/d", "key_path": "id"}}`, false, false},
		{"deletes without key_path", `{"name": "a", "path": "/a", "primary_key": ["id"], "deletes": {"path": "/d"}}`, false, false},
		{"reconcile without keys_file", `{"name": "a", "path": "/a", "primary_key": ["id"], "reconcile": {}}`, false, false},
		{"a delete fraction above 1", `{"name": "a", "path": "/a", "primary_key": ["id"], "reconcile": {"keys_file": "k", "max_delete_fraction": 1.5}}`, false, false},
		{"soft_delete without values", `{"name": "a", "path": "/a", "soft_delete": {"field": "deleted"}}`, false, false},
		{"a report job without job_id_path", `{"name": "a", "path": "/a", "async": {"poll": {"path": "/j/{job_id}", "status_path": "s", "done": ["ok"]}, "download": {"urls_path": "u"}}}`, false, false},
	} {
		if !tt.noSchema {
			tt.def = `{"schema": {"type": "object", "properties": {"id": {"type": "integer"}, "u": {"type": "string", "format": "date-time"}, "v": {}}}, ` + tt.def[1:]
		}
		t.Run(tt.name, func(t *testing.T) {
			specErr := schema.Validate(decodeJSON(t, []byte(tt.def)))
			path := filepath.Join(t.TempDir(), "config.json")
			cfg := `{"base_url": "http://127.0.0.1:1", "streams": [` + tt.def + `]}`
			if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			_, runErr := Load(path)
			if (specErr == nil) != tt.ok || (runErr == nil) != tt.ok {
				t.Errorf("want ok=%v; the spec says %v; the run says %v", tt.ok, specErr, runErr)
			}
		})
	}
}
