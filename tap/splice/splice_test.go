package splice

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streammap"
	"github.com/tap-dev/tap/streams"
)

// eventsSchema is the demo's events schema, cut to what the tests read.
var eventsSchema = map[string]any{
	"type":     "object",
	"required": []any{"id"},
	"properties": map[string]any{
		"id":          map[string]any{"type": "integer"},
		"type":        map[string]any{"type": []any{"null", "string"}},
		"name":        map[string]any{"type": []any{"null", "string"}},
		"occurred_at": map[string]any{"type": []any{"null", "string"}, "format": "date-time"},
		"payload":     map[string]any{"type": []any{"null", "object"}},
	},
}

// events is a keyset stream of events by id, replicated by occurred_at.
func events() *streams.Definition {
	return &streams.Definition{Name: "events", RecordsPath: "events", PrimaryKey: []string{"id"}, ReplicationKey: "occurred_at",
		Pagination: streams.Pagination{Type: streams.PageKeyset, Options: &streams.KeysetOptions{KeyField: "id", KeyParam: "since_id"}}}
}

// transformer compiles a stream map of events.
func transformer(t *testing.T, def map[string]any) *streammap.Transformer {
	t.Helper()
	m, err := streammap.NewMapper(streammap.MapConfig{StreamMaps: map[string]any{"events": def}},
		map[string]streammap.StreamSchema{"events": {Schema: eventsSchema, KeyProperties: []string{"id"}}})
	if err != nil {
		t.Fatal(err)
	}
	return m.Outputs("events")[0].Transformer()
}

func TestNew(t *testing.T) {
	tests := []struct {
		name   string
		change func(d *streams.Definition, s *Stream)
		splice bool
	}{
		{"keyset by id", func(*streams.Definition, *Stream) {}, true},
		{"no pagination", func(d *streams.Definition, _ *Stream) { d.Pagination = streams.Pagination{Type: streams.PageNone} }, true},
		{"link header", func(d *streams.Definition, _ *Stream) {
			d.Pagination = streams.Pagination{Type: streams.PageLinkHeader}
		}, true},
		{"no replication key", func(d *streams.Definition, _ *Stream) { d.ReplicationKey = "" }, true},
		{"a stream not written", func(_ *streams.Definition, s *Stream) { s.Written = false }, false},
		{"children walked from its keys", func(_ *streams.Definition, s *Stream) { s.Children = []string{"id", "name"} }, true},
		{"read only for its children", func(_ *streams.Definition, s *Stream) { s.Written, s.Children = false, []string{"id"} }, true},
		{"children reading a dotted key", func(_ *streams.Definition, s *Stream) { s.Children = []string{"payload.id"} }, false},
		{"more keys to capture than the walker keeps", func(_ *streams.Definition, s *Stream) {
			s.Children = []string{"type", "name", "payload"}
		}, false},
		{"properties to drop", func(_ *streams.Definition, s *Stream) { s.Drops = true }, false},
		{"properties to drop by the maps", func(_ *streams.Definition, s *Stream) {
			s.Drops, s.Maps = true, []*streammap.Transformer{transformer(t, map[string]any{"type": nil})}
		}, true},
		{"no primary key", func(d *streams.Definition, _ *Stream) { d.PrimaryKey = nil }, false},
		{"a child", func(d *streams.Definition, _ *Stream) { d.Parent = &streams.Parent{Stream: "users", Key: "id"} }, true},
		{"a parent key to inject", func(d *streams.Definition, _ *Stream) {
			d.Parent = &streams.Parent{Stream: "users", Key: "id", As: "name"}
		}, true},
		{"a parent key to inject in the primary key", func(d *streams.Definition, _ *Stream) {
			d.Parent, d.PrimaryKey = &streams.Parent{Stream: "users", Key: "id", As: "name"}, []string{"name", "id"}
		}, true},
		{"a parent key to inject, read by the paginator", func(d *streams.Definition, _ *Stream) {
			d.Parent = &streams.Parent{Stream: "users", Key: "uid", As: "id"}
		}, false},
		{"a parent key to inject as the replication key", func(d *streams.Definition, _ *Stream) {
			d.Parent = &streams.Parent{Stream: "users", Key: "id", As: "occurred_at"}
		}, false},
		{"a parent key to inject the schema does not declare", func(d *streams.Definition, _ *Stream) {
			d.Parent = &streams.Parent{Stream: "users", Key: "id", As: "user_id"}
		}, false},
		{"a parent key to inject, with maps", func(d *streams.Definition, s *Stream) {
			d.Parent = &streams.Parent{Stream: "users", Key: "id", As: "name"}
			s.Maps = []*streammap.Transformer{transformer(t, map[string]any{"type": nil})}
		}, false},
		{"a GraphQL connection", func(d *streams.Definition, _ *Stream) {
			d.GraphQL = &streams.GraphQL{ConnectionPath: "data.events"}
			d.Pagination = streams.Pagination{Type: streams.PageGraphQL}
		}, true},
		{"a GraphQL connection and an error_path", func(d *streams.Definition, _ *Stream) {
			d.GraphQL, d.ErrorPath = &streams.GraphQL{ConnectionPath: "data.events"}, "error"
			d.Pagination = streams.Pagination{Type: streams.PageGraphQL}
		}, false},
		{"CSV pages", func(d *streams.Definition, _ *Stream) { d.Format = streams.FormatCSV }, true},
		{"JSON Lines pages", func(d *streams.Definition, _ *Stream) { d.Format, d.RecordsPath = streams.FormatJSONL, "" }, true},
		{"JSON Lines pages, records inside each line", func(d *streams.Definition, _ *Stream) { d.Format = streams.FormatJSONL }, true},
		{"XML pages", func(d *streams.Definition, _ *Stream) { d.Format = streams.FormatXML }, false},
		{"offset pages (deduped by their captured keys)", func(d *streams.Definition, _ *Stream) {
			d.Pagination = streams.Pagination{Type: streams.PageOffset, Options: &streams.OffsetOptions{TotalPath: "meta.total"}}
		}, true},
		{"a cursor in the body", func(d *streams.Definition, _ *Stream) {
			d.Pagination = streams.Pagination{Type: streams.PageCursor, Options: &streams.CursorOptions{NextCursorPath: "meta.next", HasMorePath: "more"}}
		}, true},
		{"a cursor from the last record", func(d *streams.Definition, _ *Stream) {
			d.Pagination = streams.Pagination{Type: streams.PageCursor, Options: &streams.CursorOptions{CursorFromLastRecord: "id"}}
		}, true},
		{"a cursor inside the records", func(d *streams.Definition, _ *Stream) {
			d.Pagination = streams.Pagination{Type: streams.PageCursor, Options: &streams.CursorOptions{NextCursorPath: "events.0.id"}}
		}, false},
		{"a next URL in the body", func(d *streams.Definition, _ *Stream) {
			d.Pagination = streams.Pagination{Type: streams.PageNextURL, Options: &streams.NextURLOptions{NextURLPath: "links.next"}}
		}, true},
		{"page numbers with a total", func(d *streams.Definition, _ *Stream) {
			d.Pagination = streams.Pagination{Type: streams.PageNumber, Options: &streams.PageNumberOptions{TotalPagesPath: "meta.pages"}}
		}, true},
		{"keyset without options", func(d *streams.Definition, _ *Stream) { d.Pagination.Options = nil }, false},
		{"pagination none", func(d *streams.Definition, _ *Stream) { d.Pagination = streams.Pagination{Type: streams.PageNone} }, true},
		{"link_header pages", func(d *streams.Definition, _ *Stream) {
			d.Pagination = streams.Pagination{Type: streams.PageLinkHeader}
		}, true},
		{"no pagination named (read through the tree, as always)", func(d *streams.Definition, _ *Stream) { d.Pagination = streams.Pagination{} }, false},
		{"a dotted replication key", func(d *streams.Definition, _ *Stream) { d.ReplicationKey = "payload.at" }, false},
		{"a schema outside the walker's subset", func(_ *streams.Definition, s *Stream) {
			s.Schema = map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"$ref": "#/x"}}}
		}, false},
		{"a map of named properties", func(_ *streams.Definition, s *Stream) {
			s.Maps = []*streammap.Transformer{transformer(t, map[string]any{"type": nil})}
		}, true},
		{"a map that reads the record", func(_ *streams.Definition, s *Stream) {
			s.Maps = []*streammap.Transformer{transformer(t, map[string]any{"n": "json.dumps(record)"})}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := events()
			s := Stream{Def: d, Schema: eventsSchema, Written: true}
			tt.change(d, &s)
			if got := New(s) != nil; got != tt.splice {
				t.Errorf("splices: %v, want %v", got, tt.splice)
			}
		})
	}
}

// TestScan reads pages: the records the walker is sure of are spliced
// with their captured keys, the others are handed over as trees, and a
// page the scan is not sure of is refused whole.
func TestScan(t *testing.T) {
	type rec struct {
		Spliced bool
		Raw     string
		ID, At  any // the captured keys of a spliced record
		Tree    any // the tree of another
	}
	tests := []struct {
		name string
		body string
		ok   bool
		want []rec
	}{
		{"spliced", `{"events":[{"id":1,"type":"a","occurred_at":"2026-01-01T00:00:00Z"},{"occurred_at":null,"id":-2}]}`, true, []rec{
			{Spliced: true, Raw: `{"id":1,"type":"a","occurred_at":"2026-01-01T00:00:00Z"}`, ID: json.Number("1"), At: "2026-01-01T00:00:00Z"},
			{Spliced: true, Raw: `{"occurred_at":null,"id":-2}`, ID: json.Number("-2")},
		}},
		{"an escaped time: the tree's", `{"events":[{"id":3,"occurred_at":"2026-01-01T00:00:00\u005a"}]}`, true, []rec{
			{Raw: `{"id":3,"occurred_at":"2026-01-01T00:00:00\u005a"}`, Tree: map[string]any{"id": json.Number("3"), "occurred_at": "2026-01-01T00:00:00Z"}},
		}},
		{"not sure: trees", `{"events":[{"id":"4"},{"id":5,"id":6},{"id":7,"type":"x"}]}`, true, []rec{
			{Raw: `{"id":"4"}`, Tree: map[string]any{"id": "4"}},
			{Raw: `{"id":5,"id":6}`, Tree: map[string]any{"id": json.Number("6")}},
			{Spliced: true, Raw: `{"id":7,"type":"x"}`, ID: json.Number("7")},
		}},
		{"no primary key: the tree, hashed by content", `{"events":[{"type":"x"}]}`, true, []rec{
			{Raw: `{"type":"x"}`, Tree: map[string]any{"type": "x"}},
		}},
		{"empty", `{"events":[]}`, true, nil},
		{"no records array", `{"data":[]}`, false, nil},
		{"records null", `{"events":null}`, false, nil},
		{"not JSON", `{"events":[{"id":1}`, false, nil},
		{"a repeated records key", `{"events":[],"events":[{"id":1}]}`, false, nil},
	}
	r := New(Stream{Def: events(), Schema: eventsSchema, Written: true})
	p := r.Take()
	defer p.Release()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ok := p.Scan(append(p.Buffer(t.Context(), len(tt.body)), tt.body...)); ok != tt.ok || !ok {
				if ok != tt.ok {
					t.Fatalf("Scan: %v, want %v", ok, tt.ok)
				}
				return
			}
			var got []rec
			for i := range p.Records() {
				raw, spliced, err := p.Raw(i)
				if err != nil {
					t.Fatal(err)
				}
				r := rec{Spliced: spliced, Raw: string(raw)}
				if spliced {
					if r.ID, err = p.Value(i, "id"); err != nil {
						t.Fatal(err)
					}
					if r.At, err = p.Value(i, "occurred_at"); err != nil {
						t.Fatal(err)
					}
				} else {
					r.Tree = p.Records()[i]
				}
				got = append(got, r)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestKeys: the keys a parent's children read, from a spliced record's
// captured text as from its tree (a tree is its own map).
func TestKeys(t *testing.T) {
	r := New(Stream{Def: events(), Schema: eventsSchema, Written: true, Children: []string{"id", "name"}})
	if r == nil {
		t.Fatal("a parent of captured keys does not splice")
	}
	p := r.Take()
	defer p.Release()
	body := `{"events":[{"name":"a\"b","id":1},{"id":2},{"id":3,"name":null},{"id":"4"}]}`
	if !p.Scan(append(p.Buffer(t.Context(), len(body)), body...)) {
		t.Fatal("Scan refused the page")
	}
	want := []map[string]any{
		{"id": json.Number("1"), "name": `a"b`},
		{"id": json.Number("2")}, // no name: not in the map
		{"id": json.Number("3"), "name": nil},
		{"id": "4"}, // the tree: all of it
	}
	for i, rec := range p.Records() {
		got, ok := Keys(rec, []string{"id", "name"})
		if !ok {
			t.Fatalf("record %d: not an object", i)
		}
		if d := cmp.Diff(want[i], got); d != "" {
			t.Errorf("record %d (-want +got):\n%s", i, d)
		}
	}
	if _, ok := Keys([]any{1}, []string{"id"}); ok {
		t.Error("an array has keys")
	}
}

// TestInject: a child's spliced records gain the parent key before their
// closing brace once the page is given it, a valid one; any other record,
// and every record of a page without a valid key, is the tree's.
func TestInject(t *testing.T) {
	schema := map[string]any{"type": "object", "required": []any{"order_id"}, "properties": map[string]any{
		"id": map[string]any{"type": "integer"}, "order_id": map[string]any{"type": "integer"}, "note": map[string]any{"type": "string"}}}
	d := &streams.Definition{Name: "items", RecordsPath: "items", PrimaryKey: []string{"order_id", "id"},
		Parent: &streams.Parent{Stream: "orders", Key: "id", As: "order_id"}, Pagination: streams.Pagination{Type: streams.PageNone}}
	r := New(Stream{Def: d, Schema: schema, Written: true})
	if r == nil {
		t.Fatal("a child with parent.as does not splice")
	}
	body := `{"items":[{"id":1,"note":"a"},{ "id":2},{"id":3,"order_id":9},{"note":7},{}]}`
	tests := []struct {
		name string
		key  any // nil: not injected
		want []string
	}{
		{"not given", nil, []string{"", "", "", "", ""}},
		{"a number", json.Number("7"), []string{`{"id":1,"note":"a","order_id":7}`, `{ "id":2,"order_id":7}`, "", "", ""}},
		{"not valid against the schema", "7", []string{"", "", "", "", ""}},
		{"not sure (an exponent)", json.Number("7e0"), []string{"", "", "", "", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := r.Take()
			defer p.Release()
			if !p.Scan(append(p.Buffer(t.Context(), len(body)), body...)) {
				t.Fatal("Scan refused the page")
			}
			// The walk reads the keys before the page is given the parent key.
			if text, ok := p.Records()[0].(codec.Fields).Field("order_id"); ok {
				t.Errorf("order_id before Inject: %s", text)
			}
			if tt.key != nil {
				p.Inject(tt.key)
			}
			for i := range p.Records() {
				raw, ok, err := p.Raw(i)
				if err != nil {
					t.Fatal(err)
				}
				got := ""
				if ok {
					got = string(raw)
					var m map[string]any
					if err := json.Unmarshal(raw, &m); err != nil {
						t.Fatalf("record %d: %v: %s", i, err, raw)
					}
					if text, _ := p.Records()[i].(codec.Fields).Field("order_id"); text != "7" {
						t.Errorf("record %d: order_id's text %q, want 7", i, text)
					}
				} else if _, isTree := p.Records()[i].(map[string]any); !isTree {
					t.Errorf("record %d: not spliced, and not a tree: %T", i, p.Records()[i])
				}
				if got != tt.want[i] {
					t.Errorf("record %d: %q, want %q", i, got, tt.want[i])
				}
			}
		})
	}
	// An empty record: no comma. (Its key is the parent's alone, so
	// nothing of it is captured.)
	d.PrimaryKey = []string{"order_id"}
	one := New(Stream{Def: d, Schema: schema, Written: true}).Take()
	empty := `{"items":[{},{ }]}`
	if !one.Scan(append(one.Buffer(t.Context(), len(empty)), empty...)) {
		t.Fatal("Scan refused the page")
	}
	one.Inject(json.Number("7"))
	for i, want := range []string{`{"order_id":7}`, `{ "order_id":7}`} {
		if raw, ok, err := one.Raw(i); err != nil || !ok || string(raw) != want {
			t.Errorf("empty record %d: %q, %v, %v; want %q spliced", i, raw, ok, err, want)
		}
	}
	// A page scanned again forgets the last page's key.
	p := r.Take()
	p.Inject(json.Number("7"))
	if !p.Scan(append(p.Buffer(t.Context(), len(body)), body...)) {
		t.Fatal("Scan refused the page")
	}
	if _, ok, _ := p.Raw(0); ok {
		t.Error("a page scanned again keeps the last page's parent key")
	}
}

// TestPages: a page is reused once released, and its body buffer serves
// the next page that needs one; a huge one is not kept.
func TestPages(t *testing.T) {
	r := New(Stream{Def: events(), Schema: eventsSchema, Written: true})
	a, b := r.Take(), r.Take()
	if a == b {
		t.Fatal("two pages in use are one")
	}
	buf := a.Buffer(t.Context(), 100)
	if cap(buf) < 100 || len(buf) != 0 {
		t.Fatalf("Buffer(100): len %d cap %d", len(buf), cap(buf))
	}
	a.Release()
	c := r.Take()
	if c != a {
		t.Error("a released page is not reused")
	}
	if got := c.Buffer(t.Context(), 10); cap(got) < 100 || &got[:1][0] != &buf[:1][0] {
		t.Error("a released body buffer is not reused")
	}
	c.Release()
	big := b.Buffer(t.Context(), maxKeptBody+1)
	b.Release()
	if got := r.Take().Buffer(t.Context(), maxKeptBody+1); &got[:1][0] == &big[:1][0] {
		t.Errorf("a body buffer of %d bytes is kept", cap(big))
	}
}

// TestLookAhead: a body that would make the walk's held bodies more than
// aheadBytes waits for the page before to give its buffer back, and
// takes it; without the wait (it timed out, or the walk is done) it
// gets a buffer of its own; a small one never waits.
func TestLookAhead(t *testing.T) {
	const size = aheadBytes/2 + 1
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tt := range []struct {
		name  string
		wait  time.Duration
		ctx   context.Context
		size  int
		reuse bool
	}{
		{"waits", time.Hour, t.Context(), size, true},
		{"timed out", 0, t.Context(), size, false},
		{"walk done", time.Hour, cancelled, size, false},
		{"small", time.Hour, t.Context(), aheadBytes / 4, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := New(Stream{Def: events(), Schema: eventsSchema, Written: true})
			r.wait = tt.wait
			written, next := r.Take(), r.Take()
			held := written.Buffer(t.Context(), size)
			got := make(chan []byte, 1)
			go func() { got <- next.Buffer(tt.ctx, tt.size) }()
			if !tt.reuse {
				// It does not wait for the release below: it returns
				// while the page before holds its buffer.
				b := <-got
				if &b[:1][0] == &held[:1][0] {
					t.Fatal("two pages hold one buffer")
				}
				written.Release()
				return
			}
			written.Release()
			if b := <-got; &b[:1][0] != &held[:1][0] {
				t.Error("the next page did not take the buffer of the page before")
			}
		})
	}
}

// TestSplicedMaps: with maps, a record the maps are sure of is spliced
// and its outputs are the maps'; one they are not sure of takes the tree.
func TestSplicedMaps(t *testing.T) {
	tr := transformer(t, map[string]any{"type": nil, "kind": "type.upper() if type else None"})
	r := New(Stream{Def: events(), Schema: eventsSchema, Written: true, Maps: []*streammap.Transformer{tr}})
	if r == nil {
		t.Fatal("the map does not splice")
	}
	p := r.Take()
	defer p.Release()
	if !p.Scan([]byte(`{"events":[{"id":1,"type":"login"}]}`)) {
		t.Fatal("Scan refused the page")
	}
	_, ok, err := p.Raw(0)
	if err != nil || !ok {
		t.Fatalf("Spliced: %v, %v", ok, err)
	}
	out, keep := p.Mapped().Record(0)
	got, err := codec.Decode(out)
	if err != nil || !keep {
		t.Fatalf("the map's record %s (keep %v): %v", out, keep, err)
	}
	if d := cmp.Diff(map[string]any{"id": json.Number("1"), "kind": "LOGIN"}, got); d != "" {
		t.Errorf("the map's record (-want +got):\n%s", d)
	}
}

func TestValue(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want any
	}{
		{`"a"`, "a"}, {`"\u00e9"`, "é"}, {`12`, json.Number("12")}, {`-1.5e3`, json.Number("-1.5e3")},
		{`null`, nil}, {`true`, true}, {`{"a":[1]}`, map[string]any{"a": []any{json.Number("1")}}},
	} {
		got, err := value(tt.raw)
		if err != nil {
			t.Fatalf("%s: %v", tt.raw, err)
		}
		want, _ := codec.Decode([]byte(tt.raw))
		if d := cmp.Diff(tt.want, got); d != "" || !cmp.Equal(want, got) {
			t.Errorf("%s: (-want +got):\n%s (codec.Decode: %#v)", tt.raw, d, want)
		}
	}
}

// TestFields: the walk reads a spliced record's keys as their text, and a
// page of them allocates nothing per record once its Page is warm.
func TestFields(t *testing.T) {
	r := New(Stream{Def: events(), Schema: eventsSchema, Written: true})
	p := r.Take()
	defer p.Release()
	body := []byte(`{"events":[{"id":12,"occurred_at":"2026-01-01T00:00:00Z"},{"id":13,"type":"x"}]}`)
	if !p.Scan(body) {
		t.Fatal("Scan refused the page")
	}
	f, ok := p.Records()[0].(codec.Fields)
	if !ok {
		t.Fatalf("a spliced record is read as %T", p.Records()[0])
	}
	for name, want := range map[string]string{"id": "12", "occurred_at": `"2026-01-01T00:00:00Z"`, "type": ""} {
		if got, ok := f.Field(name); got != want || ok != (want != "") {
			t.Errorf("Field(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	// Without its replication key the guard and the paginator read the
	// tree; the record is spliced all the same.
	if _, ok := p.Records()[1].(map[string]any); !ok {
		t.Errorf("a record without a captured key is read as %T", p.Records()[1])
	}
	if _, ok, _ := p.Raw(1); !ok {
		t.Error("a record without its replication key is not spliced")
	}

	var page bytes.Buffer
	page.WriteString(`{"events":[`)
	for i := range 1000 {
		if i > 0 {
			page.WriteByte(',')
		}
		fmt.Fprintf(&page, `{"id":%d,"type":"login","occurred_at":"2026-01-01T00:00:%02dZ"}`, i, i%60)
	}
	page.WriteString(`]}`)
	if !p.Scan(page.Bytes()) {
		t.Fatal("Scan refused the page")
	}
	// One string of the page's keys; nothing per record.
	if n := testing.AllocsPerRun(10, func() { p.Scan(page.Bytes()) }); n > 1 {
		t.Errorf("Scan of 1,000 records: %v allocations", n)
	}
}
