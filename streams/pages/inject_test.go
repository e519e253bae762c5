package pages

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/internal/jsontest"
	"github.com/tap-dev/tap/streams"
)

func TestInject(t *testing.T) {
	cursor := func(inject string) *streams.Definition {
		return &streams.Definition{Name: "s", Path: "/search", Method: "POST", Body: []byte(`{"q":"x","page":{"size":5}}`),
			Pagination: streams.Pagination{Type: streams.PageCursor, PageCommon: streams.PageCommon{Inject: inject},
				Options: &streams.CursorOptions{CursorParam: "page.after", NextCursorPath: "next", PageSizeParam: "page.limit", PageSize: 2}}}
	}
	t.Run("body", func(t *testing.T) {
		d := cursor(streams.InjectBody)
		p, err := New(d)
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
		next, more, err := p.Next(first, &streams.Page{Values: streams.Decoded{Body: jsontest.Decode(t, `{"next":"c+/="}`)}})
		if err != nil || !more {
			t.Fatal(more, err)
		}
		if next.Query != nil || string(next.Body) != `{"page":{"after":"c+/=","limit":2,"size":5},"q":"x"}` {
			t.Fatalf("next = %v %s", next.Query, next.Body)
		}
		// The cursor moves on from the body it was put in.
		next2, more, _ := p.Next(next, &streams.Page{Values: streams.Decoded{Body: jsontest.Decode(t, `{"next":"d"}`)}})
		if !more || string(next2.Body) != `{"page":{"after":"d","limit":2,"size":5},"q":"x"}` {
			t.Fatalf("next2 = %s", next2.Body)
		}
	})
	t.Run("header", func(t *testing.T) {
		d := cursor(streams.InjectHeader)
		d.Pagination.Options.(*streams.CursorOptions).CursorParam = "X-Cursor"
		d.Pagination.Options.(*streams.CursorOptions).PageSizeParam = ""
		p, err := New(d)
		if err != nil {
			t.Fatal(err)
		}
		first, _ := d.FirstRequest(nil)
		next, more, err := p.Next(p.First(first), &streams.Page{Values: streams.Decoded{Body: jsontest.Decode(t, `{"next":"abc"}`)}})
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
		d := &streams.Definition{Name: "s", Path: "/x", Method: "POST",
			Pagination: streams.Pagination{Type: streams.PageOffset, PageCommon: streams.PageCommon{Inject: streams.InjectBody}, Options: &streams.OffsetOptions{OffsetParam: "offset", PageSizeParam: "limit", PageSize: 2}}}
		p, _ := New(d)
		first, _ := d.FirstRequest(nil)
		first = p.First(first)
		next, more, err := p.Next(first, &streams.Page{Records: []any{1, 2}})
		if err != nil || !more || string(next.Body) != `{"limit":2,"offset":2}` {
			t.Fatalf("next = %s %v %v", next.Body, more, err)
		}
	})
}

func TestNextCursorHeader(t *testing.T) {
	d := &streams.Definition{Name: "s", Path: "/x", Pagination: streams.Pagination{Type: streams.PageCursor, Options: &streams.CursorOptions{CursorParam: "cursor", NextCursorHeader: "X-Next-Cursor"}}}
	p, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	next, more, err := p.Next(streams.Request{URL: "/x"}, &streams.Page{Header: http.Header{"X-Next-Cursor": {"tok"}}})
	if err != nil || !more || next.Query.Get("cursor") != "tok" {
		t.Fatalf("next = %v %v %v", next, more, err)
	}
	if _, more, _ := p.Next(streams.Request{URL: "/x"}, &streams.Page{Header: http.Header{}}); more {
		t.Fatal("no header should end the walk")
	}
}
