package pages

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/internal/jsontest"
	"github.com/tap-dev/tap/streams"
)

func TestKeyset(t *testing.T) {
	d := testDef(streams.Pagination{Type: streams.PageKeyset, Options: &streams.KeysetOptions{KeyParam: "after", KeyField: "k", PageSizeParam: "limit", PageSize: 3}})
	p := mustPaginator(t, d)

	t.Run("First keeps a key_param the caller set", func(t *testing.T) {
		got := p.First(streams.Request{Query: query("after", "2024-01-01")}).Query
		if d := cmp.Diff(query("after", "2024-01-01", "limit", "3"), got); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
		if got := p.First(streams.Request{}).Query; got.Has("after") {
			t.Errorf("First invented a key: %v", got)
		}
	})

	page := func(recs string) *streams.Page {
		v := jsontest.Decode(t, recs).([]any)
		return &streams.Page{Values: streams.Decoded{Body: v}, Records: v}
	}
	// Spliced records (Fields) page as their trees do.
	fields := func(recs string) *streams.Page {
		return &streams.Page{Records: fieldsRecords(t, recs)}
	}
	last := streams.Request{Method: "GET", URL: "/v1/bars", Query: query("after", "0", "limit", "3")}
	want := func(key string) streams.Request {
		return streams.Request{Method: "GET", URL: "/v1/bars", Query: query("after", key, "limit", "3")}
	}
	for form, page := range map[string]func(string) *streams.Page{"trees": page, "fields": fields} {
		t.Run(form, func(t *testing.T) {
			runSteps(t, p, map[string]step{
				"int keys, largest not last": {last: last, resp: page(`[{"k":7},{"k":12},{"k":9}]`), want: want("12"), more: true},
				"big int keys beyond float64": {last: last,
					resp: page(`[{"k":9007199254740992},{"k":9007199254740993},{"k":9007199254740992}]`),
					want: want("9007199254740993"), more: true},
				"big int keys, smaller last": {last: last,
					resp: page(`[{"k":9007199254740993},{"k":9007199254740992},{"k":1}]`),
					want: want("9007199254740993"), more: true},
				"numeric not lexical":  {last: last, resp: page(`[{"k":100},{"k":99},{"k":20}]`), want: want("100"), more: true},
				"string keys lexical":  {last: last, resp: page(`[{"k":"b"},{"k":"c2"},{"k":"c10"}]`), want: want("c2"), more: true},
				"ascending page":       {last: last, resp: page(`[{"k":1},{"k":2},{"k":3}]`), want: want("3"), more: true},
				"short page ends":      {last: last, resp: page(`[{"k":1},{"k":2}]`), more: false},
				"empty page ends":      {last: last, resp: page(`[]`), more: false},
				"mixed types":          {last: last, resp: page(`[{"k":1},{"k":"2"},{"k":3}]`), wantErr: `cannot order a JSON string key against a JSON number key`},
				"missing key":          {last: last, resp: page(`[{"k":1},{"id":2},{"k":3}]`), wantErr: `record 1 of the page has no key_field "k"`},
				"object key":           {last: last, resp: page(`[{"k":{}},{"k":2},{"k":3}]`), wantErr: `a key must be a string or a number`},
				"escaped string keys":  {last: last, resp: page(`[{"k":"b"},{"k":"\u0063"},{"k":"a"}]`), want: want("c"), more: true},
				"fractions, negatives": {last: last, resp: page(`[{"k":-5},{"k":2.5},{"k":-1e3}]`), want: want("2.5"), more: true},
				"null key":             {last: last, resp: page(`[{"k":1},{"k":null},{"k":3}]`), wantErr: `record 1 of the page has no key_field "k"`},
				"boolean key later":    {last: last, resp: page(`[{"k":1},{"k":true},{"k":3}]`), wantErr: `a key must be a string or a number, got a JSON boolean`},
			})
		})
	}

	t.Run("nested key field, no page size", func(t *testing.T) {
		p := mustPaginator(t, testDef(streams.Pagination{Type: streams.PageKeyset, Options: &streams.KeysetOptions{KeyParam: "after", KeyField: "meta.seq"}}))
		runSteps(t, p, map[string]step{
			"one record is not short": {last: streams.Request{}, resp: page(`[{"meta":{"seq":5}}]`), want: streams.Request{Query: query("after", "5")}, more: true},
		})
	})
}
