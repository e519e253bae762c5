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
			p := codec.NewPage(j.shape, tt.records, tt.errors)
			recs, ok := p.Scan(nil, []byte(tt.body))
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
