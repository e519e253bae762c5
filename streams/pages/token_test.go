package pages

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/internal/jsontest"
	"github.com/tap-dev/tap/streams"
)

func TestCursor(t *testing.T) {
	d := testDef(streams.Pagination{Type: streams.PageCursor, Options: &streams.CursorOptions{CursorParam: "cursor", NextCursorPath: "meta.next", HasMorePath: "meta.has_more", PageSizeParam: "limit", PageSize: 100}})
	p := mustPaginator(t, d)
	if d := cmp.Diff(query("limit", "100"), p.First(streams.Request{}).Query); d != "" {
		t.Errorf("First (-want +got):\n%s", d)
	}
	last := streams.Request{Method: "GET", URL: "/v1/bars", Query: query("limit", "100", "cursor", "old")}
	want := func(c string) streams.Request {
		return streams.Request{Method: "GET", URL: "/v1/bars", Query: query("limit", "100", "cursor", c)}
	}
	body := func(s string) *streams.Page {
		return &streams.Page{Values: streams.Decoded{Body: jsontest.Decode(t, s)}, Records: records(1)}
	}
	runSteps(t, p, map[string]step{
		"token verbatim":         {last: last, resp: body(`{"meta":{"next":"a+b/c==","has_more":true}}`), want: want("a+b/c=="), more: true},
		"already escaped token":  {last: last, resp: body(`{"meta":{"next":"a%2Bb"}}`), want: want("a%2Bb"), more: true},
		"spaces kept":            {last: last, resp: body(`{"meta":{"next":" x "}}`), want: want(" x "), more: true},
		"numeric token":          {last: last, resp: body(`{"meta":{"next":12345678901234567890}}`), want: want("12345678901234567890"), more: true},
		"has_more false":         {last: last, resp: body(`{"meta":{"next":"abc","has_more":false}}`), more: false},
		"has_more absent":        {last: last, resp: body(`{"meta":{"next":"abc"}}`), want: want("abc"), more: true},
		"empty token":            {last: last, resp: body(`{"meta":{"next":"","has_more":true}}`), more: false},
		"null token":             {last: last, resp: body(`{"meta":{"next":null}}`), more: false},
		"absent token":           {last: last, resp: body(`{"meta":{}}`), more: false},
		"empty page with cursor": {last: last, resp: &streams.Page{Values: streams.Decoded{Body: jsontest.Decode(t, `{"meta":{"next":"n2"}}`)}}, want: want("n2"), more: true},
		"object token":           {last: last, resp: body(`{"meta":{"next":{}}}`), wantErr: `next_cursor_path "meta.next" holds a JSON object`},
		"has_more not boolean":   {last: last, resp: body(`{"meta":{"next":"x","has_more":"no"}}`), wantErr: `has_more_path "meta.has_more" holds a JSON string`},
	})

	t.Run("escaped once on the wire", func(t *testing.T) {
		next, _, err := p.Next(last, body(`{"meta":{"next":"a+b/c=="}}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := next.Query.Encode(); !strings.Contains(got, "cursor=a%2Bb%2Fc%3D%3D") {
			t.Errorf("encoded query = %s, want cursor=a%%2Bb%%2Fc%%3D%%3D", got)
		}
	})
}

func TestNextURL(t *testing.T) {
	d := testDef(streams.Pagination{Type: streams.PageNextURL, Options: &streams.NextURLOptions{NextURLPath: "links.next"}})
	p := mustPaginator(t, d)
	from := mustURL(t, "https://api.example.com/v1/bars?page=1&token=s3cret")
	last := streams.Request{Method: "GET", URL: "/v1/bars", Query: query("page", "1")}
	body := func(next string) *streams.Page {
		return &streams.Page{URL: from, Values: streams.Decoded{Body: jsontest.Decode(t, `{"links":{"next":`+next+`}}`)}, Records: records(2)}
	}
	to := func(u string) streams.Request { return streams.Request{Method: "GET", URL: u} }
	runSteps(t, p, map[string]step{
		"absolute":            {last: last, resp: body(`"https://api.example.com/v1/bars?page=2&sig=a%2Bb"`), want: to("https://api.example.com/v1/bars?page=2&sig=a%2Bb"), more: true},
		"relative path":       {last: last, resp: body(`"/v1/bars?page=2"`), want: to("https://api.example.com/v1/bars?page=2"), more: true},
		"relative query only": {last: last, resp: body(`"?page=2"`), want: to("https://api.example.com/v1/bars?page=2"), more: true},
		"relative name":       {last: last, resp: body(`"bars?page=2"`), want: to("https://api.example.com/v1/bars?page=2"), more: true},
		"default port":        {last: last, resp: body(`"https://API.example.com:443/v1/bars?page=2"`), want: to("https://API.example.com:443/v1/bars?page=2"), more: true},
		"null":                {last: last, resp: body(`null`), more: false},
		"empty":               {last: last, resp: body(`""`), more: false},
		"absent":              {last: last, resp: &streams.Page{URL: from, Values: streams.Decoded{Body: jsontest.Decode(t, `{}`)}}, more: false},
		"other host": {last: last, resp: body(`"https://evil.example.com/v1/bars?page=2&token=s3cret"`),
			wantErr: `stream "bars": next page URL points to another host (evil.example.com); refusing to follow it so the credentials are not sent there`},
		"protocol-relative other host": {last: last, resp: body(`"//evil.example.com/x"`), wantErr: "another host (evil.example.com)"},
		"other port":                   {last: last, resp: body(`"https://api.example.com:8443/x"`), wantErr: "another host (api.example.com:8443)"},
		"downgrade to http":            {last: last, resp: body(`"http://api.example.com/v1/bars?page=2"`), wantErr: "switches from https to http"},
		"not a string":                 {last: last, resp: body(`42`), wantErr: `next_url_path "links.next" holds a JSON number`},
	})

	t.Run("errors never print the query", func(t *testing.T) {
		_, _, err := p.Next(last, body(`"https://evil.example.com/?token=s3cret"`))
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Fatalf("err = %v", err)
		}
	})
}

// Stripe lists newest first and continues with starting_after=<the last
// id of the page>: not the largest key, which keyset would send.
func TestCursorFromLastRecord(t *testing.T) {
	d := testDef(streams.Pagination{Type: streams.PageCursor, Options: &streams.CursorOptions{CursorParam: "starting_after", CursorFromLastRecord: "id", HasMorePath: "has_more", PageSizeParam: "limit", PageSize: 2}})
	p := mustPaginator(t, d)
	last := streams.Request{Method: "GET", URL: "/v1/charges", Query: query("limit", "2")}
	want := func(c string) streams.Request {
		return streams.Request{Method: "GET", URL: "/v1/charges", Query: query("limit", "2", "starting_after", c)}
	}
	page := func(body string, recs ...any) *streams.Page {
		return &streams.Page{Values: streams.Decoded{Body: jsontest.Decode(t, body)}, Records: recs}
	}
	rec := func(id any) any { return map[string]any{"id": id} }
	runSteps(t, p, map[string]step{
		"last record, not the largest": {last: last, resp: page(`{"has_more":true}`, rec("ch_9"), rec("ch_3")), want: want("ch_3"), more: true},
		"numeric id exact":             {last: last, resp: page(`{"has_more":true}`, rec(json.Number("9007199254740993"))), want: want("9007199254740993"), more: true},
		"has_more absent":              {last: last, resp: page(`{}`, rec("ch_1")), want: want("ch_1"), more: true},
		"has_more false":               {last: last, resp: page(`{"has_more":false}`, rec("ch_1")), more: false},
		"empty page":                   {last: last, resp: page(`{"has_more":true}`), more: false},
		"last record without the field": {last: last, resp: page(`{"has_more":true}`, rec("ch_1"), map[string]any{"name": "x"}),
			wantErr: `the page's last record has no cursor_from_last_record field "id"`},
		"object id": {last: last, resp: page(`{"has_more":true}`, rec(map[string]any{})), wantErr: `cursor_from_last_record "id"`},
	})
}
