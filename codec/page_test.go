package codec_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams"
)

// TestPage holds the page scan to the tree path's Extract: a page it is
// sure of has the records Extract finds, in order; the others it leaves
// to the tree path.
func TestPage(t *testing.T) {
	j := newJudge(t, "events", "id")
	tests := []struct {
		name, records, errors, body string
		sure                        bool
	}{
		{"top array", "", "", `[` + event + `, {"id":2}]`, true},
		{"dotted", "data.events", "", ` {"meta":{"n":[1,2]},"data":{"x":null,"events":[{"id":1},{"id":2,"x":{"y":[]}}]}} `, true},
		{"empty", "events", "", `{"events":[]}`, true},
		{"null records", "events", "", `{"events":null}`, false},
		{"null on the way", "data.events", "", `{"data":null}`, false},
		{"missing", "events", "", `{"other":[]}`, false},
		{"not an array", "events", "", `{"events":{"id":1}}`, false},
		{"repeated key", "events", "", `{"events":[{"id":1}],"events":[{"id":2}]}`, false},
		{"escaped key", "events", "", `{"ev\u0065nts":[{"id":1}]}`, false},
		{"no error", "events", "error", `{"error":null,"events":[{"id":1}]}`, true},
		{"empty error", "events", "error", `{"events":[{"id":1}],"error":""}`, true},
		{"an error", "events", "error", `{"events":[{"id":1}],"error":"boom"}`, false},
		{"error beside", "data.events", "data.error", `{"data":{"error":{"message":"x"},"events":[]}}`, false},
		{"error holds records", "data.events", "data", `{"data":{"events":[]}}`, false},
		{"syntax error after", "events", "", `{"events":[{"id":1}],"x":tru}`, false},
		{"trailing data", "events", "", `{"events":[{"id":1}]} {}`, false},
		{"record not an object", "events", "", `{"events":[1,{"id":1}]}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := codec.NewPage(j.shape, codec.PageSpec{Records: tt.records, Error: tt.errors})
			if err != nil {
				t.Fatal(err)
			}
			recs, _, ok := p.Scan(nil, nil, []byte(tt.body))
			if ok != tt.sure {
				t.Fatalf("sure %v, want %v", ok, tt.sure)
			}
			if !ok {
				return
			}
			body, err := codec.Decode([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			d := streams.Definition{Name: "events", RecordsPath: tt.records, ErrorPath: tt.errors}
			want, err := d.Extract(body)
			if err != nil {
				t.Fatalf("the page scan is sure of a page Extract rejects: %v", err)
			}
			var got []any
			for _, r := range recs {
				v, err := codec.Decode(r.Raw)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, v)
			}
			if d := cmp.Diff(want, got); d != "" && len(want)+len(got) > 0 {
				t.Errorf("records differ (-tree +scan):\n%s", d)
			}
		})
	}
}

// TestPageEnvelope holds the values the scan keeps outside the records,
// and a GraphQL connection's records, to the tree's: Lookup over the
// decoded body and Extract.
func TestPageEnvelope(t *testing.T) {
	j := newJudge(t, "events", "id")
	paths := []string{"meta.next", "has_more", "data.next", "data.meta.pages.0", "data", "data.conn", "data.conn.pageInfo", "links"}
	tests := []struct {
		name, records string
		connection    bool
		body          string
		sure          bool
	}{
		{"cursor beside", "data.items", false, `{"meta":{"next":"c2","x":[1]},"data":{"items":[{"id":1}],"next":null},"has_more":true}`, true},
		{"after the records", "data.items", false, `{"data":{"items":[{"id":1}],"meta":{"pages":[3,4]}},"meta":null}`, true},
		{"repeated member: the last", "data.items", false, `{"has_more":true,"data":{"items":[]},"has_more":false}`, true},
		{"absent", "data.items", false, `{"data":{"items":[{"id":2}]}}`, true},
		{"edges", "data.conn", true, `{"data":{"conn":{"edges":[{"cursor":"a","node":{"id":1}},{"node":{"id":2},"cursor":"b"}],"pageInfo":{"hasNextPage":true,"endCursor":"b"}}}}`, true},
		{"nodes", "data.conn", true, `{"data":{"conn":{"pageInfo":{"hasNextPage":false},"nodes":[{"id":1},{"id":2}]}},"errors":[]}`, true},
		{"a null node", "data.conn", true, `{"data":{"conn":{"nodes":[{"id":1},null]}}}`, false},
		{"an edge without a node", "data.conn", true, `{"data":{"conn":{"edges":[{"cursor":"a"}]}}}`, false},
		{"an edge with two nodes", "data.conn", true, `{"data":{"conn":{"edges":[{"node":{"id":1},"node":{"id":2}}]}}}`, false},
		{"edges and nodes", "data.conn", true, `{"data":{"conn":{"edges":[],"nodes":[{"id":1}]}}}`, false},
		{"null edges", "data.conn", true, `{"data":{"conn":{"edges":null,"nodes":[{"id":1}]}}}`, false},
		{"neither", "data.conn", true, `{"data":{"conn":{"pageInfo":{}}}}`, false},
		{"a GraphQL error", "data.conn", true, `{"errors":[{"message":"no"}],"data":{"conn":{"nodes":[]}}}`, false},
		{"a null connection", "data.conn", true, `{"data":{"conn":null}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := codec.PageSpec{Records: tt.records, Connection: tt.connection}
			var want []string
			for _, path := range paths {
				if _, err := codec.NewPage(j.shape, codec.PageSpec{Records: tt.records, Connection: tt.connection, Envelope: []string{path}}); err == nil {
					want = append(want, path)
				}
			}
			spec.Envelope = want
			if tt.connection {
				spec.Error = "errors"
			}
			p, err := codec.NewPage(j.shape, spec)
			if err != nil {
				t.Fatal(err)
			}
			recs, env, ok := p.Scan(nil, nil, []byte(tt.body))
			if ok != tt.sure {
				t.Fatalf("sure %v, want %v", ok, tt.sure)
			}
			if !ok {
				return
			}
			body, err := codec.Decode([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			for i, path := range spec.Envelope {
				rest, enclosing := p.EnvelopeRest(i, path)
				tv, tfound := streams.LookupNullable(body, path)
				if enclosing {
					if _, isObject := tv.(map[string]any); !tfound || !isObject {
						t.Errorf("%s: encloses the records, but the tree has %v (found %v)", path, tv, tfound)
					}
					continue
				}
				var got any
				found := env[i] != nil
				if found {
					v, err := codec.Decode(env[i])
					if err != nil {
						t.Fatal(err)
					}
					got, found = streams.LookupNullable(v, rest)
				}
				if found != tfound || !cmp.Equal(got, tv) {
					t.Errorf("%s: scan %v (found %v), tree %v (found %v)", path, got, found, tv, tfound)
				}
			}
			d := streams.Definition{Name: "events", RecordsPath: tt.records}
			if tt.connection {
				d.RecordsPath, d.GraphQL = "", &streams.GraphQL{ConnectionPath: tt.records}
			}
			wantRecs, err := d.Extract(body)
			if err != nil {
				t.Fatalf("the page scan is sure of a page Extract rejects: %v", err)
			}
			var got []any
			for _, r := range recs {
				v, err := codec.Decode(r.Raw)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, v)
			}
			if d := cmp.Diff(wantRecs, got); d != "" && len(wantRecs)+len(got) > 0 {
				t.Errorf("records differ (-tree +scan):\n%s", d)
			}
		})
	}
	for _, bad := range []string{"data.items", "data.items.0.id"} {
		if _, err := codec.NewPage(j.shape, codec.PageSpec{Records: "data.items", Envelope: []string{bad}}); err == nil {
			t.Errorf("envelope path %q into the records: no error", bad)
		}
	}
}

// TestRecordCaptures: a Record gives back the captured values Walk
// found, as subslices of its bytes that end where they do; absent ones
// are nil.
func TestRecordCaptures(t *testing.T) {
	s, err := codec.CompileShape(map[string]any{"type": "object"}, "id", "k", "nested", "gone")
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`[{"k":"x y","id":12,"nested":{"a":[1,2]}}]`)
	var w codec.Walker
	end, ok, caps, err := w.Walk(body, 1, s)
	if err != nil || !ok {
		t.Fatalf("Walk: %v, %v", ok, err)
	}
	r := codec.NewRecord(body[1:end], ok, caps)
	for slot, want := range []string{`12`, `"x y"`, `{"a":[1,2]}`, ""} {
		got := r.Capture(slot)
		if want == "" {
			if got != nil {
				t.Errorf("slot %d: %q, want nil", slot, got)
			}
			continue
		}
		if string(got) != want || string(got) != string(caps[slot]) {
			t.Errorf("slot %d: %q, want %q", slot, got, want)
		}
		if &got[0] != &caps[slot][0] || cap(got) != cap(caps[slot]) {
			t.Errorf("slot %d: not the subslice of the record's bytes Walk found", slot)
		}
	}
}
