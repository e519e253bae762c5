package streams

import (
	"strings"
	"testing"
)

func TestCheckFormatAndInject(t *testing.T) {
	tests := map[string]struct {
		src     string
		wantErr string
	}{
		"csv ok":              {src: `{"name":"s","path":"/x","format":"csv","csv":{"delimiter":";","header":false}}`},
		"bad format":          {src: `{"name":"s","path":"/x","format":"yaml"}`, wantErr: `format: must be "json", "jsonl", "csv" or "xml", got "yaml"`},
		"csv options on json": {src: `{"name":"s","path":"/x","csv":{"delimiter":";"}}`, wantErr: `csv: is only for format "csv"`},
		"long delimiter":      {src: `{"name":"s","path":"/x","format":"csv","csv":{"delimiter":";;"}}`, wantErr: `csv.delimiter: must be one character`},
		"xml needs path":      {src: `{"name":"s","path":"/x","format":"xml"}`, wantErr: `records_path: is required for format "xml"`},
		"body path on csv": {src: `{"name":"s","path":"/x","format":"csv","pagination":{"type":"cursor","cursor_param":"c","next_cursor_path":"n"}}`,
			wantErr: `pagination.next_cursor_path: reads a JSON body; a csv body has none`},
		"header cursor on csv": {src: `{"name":"s","path":"/x","format":"csv","pagination":{"type":"cursor","cursor_param":"c","next_cursor_header":"X-Next"}}`},
		"both cursor sources": {src: `{"name":"s","path":"/x","pagination":{"type":"cursor","cursor_param":"c","next_cursor_path":"n","next_cursor_header":"X"}}`,
			wantErr: `pagination.next_cursor_header: takes the place of next_cursor_path`},
		"cursor from the last record": {src: `{"name":"s","path":"/x","pagination":{"type":"cursor","cursor_param":"starting_after","cursor_from_last_record":"id","has_more_path":"has_more"}}`},
		"last record and a body cursor": {src: `{"name":"s","path":"/x","pagination":{"type":"cursor","cursor_param":"c","next_cursor_path":"n","cursor_from_last_record":"id"}}`,
			wantErr: `pagination.next_cursor_header: takes the place of next_cursor_path and cursor_from_last_record`},
		"cursor with no source": {src: `{"name":"s","path":"/x","pagination":{"type":"cursor","cursor_param":"c"}}`,
			wantErr: `pagination.next_cursor_path: is required for pagination type "cursor" (or next_cursor_header`},
		"inject body needs POST": {src: `{"name":"s","path":"/x","pagination":{"type":"cursor","cursor_param":"c","next_cursor_path":"n","inject":"body"}}`,
			wantErr: `pagination.inject: "body" needs method POST`},
		"inject unknown": {src: `{"name":"s","path":"/x","pagination":{"type":"cursor","cursor_param":"c","next_cursor_path":"n","inject":"cookie"}}`,
			wantErr: `pagination.inject: must be "query", "body" or "header", got "cookie"`},
		"inject without params": {src: `{"name":"s","path":"/x","pagination":{"type":"link_header","inject":"header"}}`,
			wantErr: `pagination.inject: pagination type "link_header" sets no parameters to inject`},
		"async ok": {src: `{"name":"s","async":{"create":{"path":"/reports"},"job_id_path":"id","poll":{"path":"/reports/{job_id}","status_path":"status","done":["done"]},"download":{"urls_path":"files","format":"jsonl"}}}`},
		"async no poll status": {src: `{"name":"s","path":"/r","async":{"job_id_path":"id","poll":{"path":"/reports/{job_id}","done":["done"]},"download":{"urls_path":"files"}}}`,
			wantErr: `async.poll.status_path: is required`},
		"async paged": {src: `{"name":"s","path":"/r","pagination":{"type":"page_number","page_param":"p"},"async":{"job_id_path":"id","poll":{"path":"/r/{job_id}","status_path":"s","done":["d"]},"download":{"urls_path":"f"}}}`,
			wantErr: `pagination.type: an async stream downloads files and does not page`},
		"async bad placeholder": {src: `{"name":"s","path":"/r","async":{"job_id_path":"id","poll":{"path":"/r/{id}","status_path":"s","done":["d"]},"download":{"urls_path":"f"}}}`,
			wantErr: `async.poll.path: placeholder {id} is not filled here`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			d, err := decodeDef(t, tt.src)
			if err == nil {
				err = d.Check()
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
