package streams

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInject(t *testing.T) {
	cursor := func(inject string) *Definition {
		return &Definition{Name: "s", Path: "/search", Method: "POST", Body: []byte(`{"q":"x","page":{"size":5}}`),
			Pagination: Pagination{Type: PageCursor, PageCommon: PageCommon{Inject: inject},
				Options: &CursorOptions{CursorParam: "page.after", NextCursorPath: "next", PageSizeParam: "page.limit", PageSize: 2}}}
	}
	t.Run("body", func(t *testing.T) {
		d := cursor(InjectBody)
		p, err := NewPaginator(d)
		if err != nil {
			t.Fatal(err)
		}
		first, _ := d.FirstRequest(nil)
		first = p.First(first)
		if first.Query != nil || string(first.Body) != `{"page":{"limit":2,"size":5},"q":"x"}` {
			t.Fatalf("first = %v %s", first.Query, first.Body)
		}
		if again := p.First(first); string(again.Body) != string(first.Body) || again.Query != nil {
			t.Fatalf("First is not idempotent: %s", again.Body)
		}
		next, more, err := p.Next(first, &Response{Body: mustJSON(t, `{"next":"c+/="}`)})
		if err != nil || !more {
			t.Fatal(more, err)
		}
		if next.Query != nil || string(next.Body) != `{"page":{"after":"c+/=","limit":2,"size":5},"q":"x"}` {
			t.Fatalf("next = %v %s", next.Query, next.Body)
		}
		// The cursor moves on from the body it was put in.
		next2, more, _ := p.Next(next, &Response{Body: mustJSON(t, `{"next":"d"}`)})
		if !more || string(next2.Body) != `{"page":{"after":"d","limit":2,"size":5},"q":"x"}` {
			t.Fatalf("next2 = %s", next2.Body)
		}
	})
	t.Run("header", func(t *testing.T) {
		d := cursor(InjectHeader)
		d.Pagination.Options.(*CursorOptions).CursorParam = "X-Cursor"
		d.Pagination.Options.(*CursorOptions).PageSizeParam = ""
		p, err := NewPaginator(d)
		if err != nil {
			t.Fatal(err)
		}
		first, _ := d.FirstRequest(nil)
		next, more, err := p.Next(p.First(first), &Response{Body: mustJSON(t, `{"next":"abc"}`)})
		if err != nil || !more {
			t.Fatal(more, err)
		}
		if diff := cmp.Diff(http.Header{"X-Cursor": {"abc"}}, next.Header); diff != "" || next.Query != nil {
			t.Fatalf("header (-want +got): %s; query %v", diff, next.Query)
		}
		if string(next.Body) != string(first.Body) {
			t.Fatalf("body changed: %s", next.Body)
		}
	})
	t.Run("offset in body is a number", func(t *testing.T) {
		d := &Definition{Name: "s", Path: "/x", Method: "POST",
			Pagination: Pagination{Type: PageOffset, PageCommon: PageCommon{Inject: InjectBody}, Options: &OffsetOptions{OffsetParam: "offset", PageSizeParam: "limit", PageSize: 2}}}
		p, _ := NewPaginator(d)
		first, _ := d.FirstRequest(nil)
		first = p.First(first)
		next, more, err := p.Next(first, &Response{Records: []any{1, 2}})
		if err != nil || !more || string(next.Body) != `{"limit":2,"offset":2}` {
			t.Fatalf("next = %s %v %v", next.Body, more, err)
		}
	})
}

func TestNextCursorHeader(t *testing.T) {
	d := &Definition{Name: "s", Path: "/x", Pagination: Pagination{Type: PageCursor, Options: &CursorOptions{CursorParam: "cursor", NextCursorHeader: "X-Next-Cursor"}}}
	p, err := NewPaginator(d)
	if err != nil {
		t.Fatal(err)
	}
	next, more, err := p.Next(Request{URL: "/x"}, &Response{Header: http.Header{"X-Next-Cursor": {"tok"}}})
	if err != nil || !more || next.Query.Get("cursor") != "tok" {
		t.Fatalf("next = %v %v %v", next, more, err)
	}
	if _, more, _ := p.Next(Request{URL: "/x"}, &Response{Header: http.Header{}}); more {
		t.Fatal("no header should end the walk")
	}
}

// TestInjectRepeatGuard: a cursor in a header or body that comes back the
// same is caught by the walk's repeat guard.
func TestInjectRepeatGuard(t *testing.T) {
	for _, inject := range []string{InjectBody, InjectHeader} {
		d := &Definition{Name: "s", Path: "/x", Method: "POST", Pagination: Pagination{Type: PageCursor, PageCommon: PageCommon{Inject: inject},
			Options: &CursorOptions{CursorParam: "c", NextCursorPath: "next"}}}
		p, _ := NewPaginator(d)
		first, _ := d.FirstRequest(nil)
		calls := 0
		fetch := func(_ context.Context, req Request) (*Response, error) {
			calls++
			return &Response{URL: &url.URL{Path: "/x"}, Body: mustJSON(t, `{"next":"same"}`), Records: []any{map[string]any{"id": calls}}}, nil
		}
		err := Walk(t.Context(), d, p, first, fetch, func(*Response) error { return nil })
		if err == nil || !strings.Contains(err.Error(), "repeats the request") || calls > 3 {
			t.Errorf("%s: err = %v after %d calls", inject, err, calls)
		}
	}
}

func TestCheckFormatAndInject(t *testing.T) {
	tests := map[string]struct {
		src     string
		wantErr string
	}{
		"csv ok":              {src: `{"name":"s","path":"/x","format":"csv","csv":{"delimiter":";","header":false}}`},
		"bad format":          {src: `{"name":"s","path":"/x","format":"yaml"}`, wantErr: `format: expected json, jsonl, csv or xml, got "yaml"`},
		"csv options on json": {src: `{"name":"s","path":"/x","csv":{"delimiter":";"}}`, wantErr: `csv: is only for format "csv"`},
		"long delimiter":      {src: `{"name":"s","path":"/x","format":"csv","csv":{"delimiter":";;"}}`, wantErr: `csv.delimiter: must be one character`},
		"xml needs path":      {src: `{"name":"s","path":"/x","format":"xml"}`, wantErr: `records_path: is required for format "xml"`},
		"body path on csv": {src: `{"name":"s","path":"/x","format":"csv","pagination":{"type":"cursor","cursor_param":"c","next_cursor_path":"n"}}`,
			wantErr: `pagination.next_cursor_path: reads a JSON body; a csv body has none`},
		"header cursor on csv": {src: `{"name":"s","path":"/x","format":"csv","pagination":{"type":"cursor","cursor_param":"c","next_cursor_header":"X-Next"}}`},
		"both cursor sources": {src: `{"name":"s","path":"/x","pagination":{"type":"cursor","cursor_param":"c","next_cursor_path":"n","next_cursor_header":"X"}}`,
			wantErr: `pagination.next_cursor_header: takes the place of next_cursor_path`},
		"inject body needs POST": {src: `{"name":"s","path":"/x","pagination":{"type":"cursor","cursor_param":"c","next_cursor_path":"n","inject":"body"}}`,
			wantErr: `pagination.inject: "body" needs method POST`},
		"inject unknown": {src: `{"name":"s","path":"/x","pagination":{"type":"cursor","cursor_param":"c","next_cursor_path":"n","inject":"cookie"}}`,
			wantErr: `pagination.inject: must be query, body or header, got "cookie"`},
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
