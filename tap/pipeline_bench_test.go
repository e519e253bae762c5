package tap

import (
	"io"
	"net/http"
	"testing"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/demoapi"
	"github.com/tap-dev/tap/records"
	"github.com/tap-dev/tap/schemas"
	"github.com/tap-dev/tap/streams"
)

// eventsPage fetches one page of 1000 demo events (about 300 bytes each)
// as the API sends it.
func eventsPage(b *testing.B) []byte {
	b.Helper()
	srv, err := demoapi.New(demoapi.Config{Seed: 7})
	if err != nil {
		b.Fatal(err)
	}
	base, err := srv.Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	resp, err := http.Get(base + "/v1/events?limit=1000")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("GET /v1/events: %d %v", resp.StatusCode, err)
	}
	return body
}

var eventsDef = streams.Definition{Name: "events", RecordsPath: "events", PrimaryKey: []string{"id"}, ReplicationKey: "id"}

// BenchmarkDecodeValidateEncode is the per-record pipeline of a sync
// without the network and the writer: one op decodes a page of 1000
// events, extracts them, validates each and encodes each with the node's
// encoder. The sub-benchmarks stop after each stage, so the differences
// show where the time goes.
func BenchmarkDecodeValidateEncode(b *testing.B) {
	page := eventsPage(b)
	raw, err := schemas.FS.ReadFile("events.json")
	if err != nil {
		b.Fatal(err)
	}
	schema, err := codec.Decode(raw)
	if err != nil {
		b.Fatal(err)
	}
	per := 0
	for _, stage := range []struct {
		name             string
		validate, encode bool
	}{
		{"decode", false, false},
		{"decode+validate", true, false},
		{"decode+validate+encode", true, true},
	} {
		b.Run(stage.name, func(b *testing.B) {
			v, err := records.New(records.Options{Stream: eventsDef.Name, Schema: schema.(map[string]any), Policy: records.DeadLetter})
			if err != nil {
				b.Fatal(err)
			}
			n := &node{def: &eventsDef, check: v}
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				body, err := codec.Decode(page)
				if err != nil {
					b.Fatal(err)
				}
				recs, err := eventsDef.Extract(body)
				if err != nil {
					b.Fatal(err)
				}
				per = len(recs)
				for _, r := range recs {
					m := r.(map[string]any)
					if stage.validate && v.Violations(m) != nil {
						b.Fatal("violation")
					}
					if stage.encode {
						if _, err := n.encode(m); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N*per)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
