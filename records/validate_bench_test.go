package records

import (
	"io"
	"net/http"
	"testing"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/demoapi"
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

func eventsValidator(b *testing.B) *Validator {
	b.Helper()
	raw, err := schemas.FS.ReadFile("events.json")
	if err != nil {
		b.Fatal(err)
	}
	s, err := codec.Decode(raw)
	if err != nil {
		b.Fatal(err)
	}
	v, err := New(Options{Stream: eventsDef.Name, PrimaryKey: eventsDef.PrimaryKey, Schema: s.(map[string]any), Policy: DeadLetter})
	if err != nil {
		b.Fatal(err)
	}
	return v
}

func decodeRecords(b *testing.B, page []byte) []any {
	v, err := codec.Decode(page)
	if err != nil {
		b.Fatal(err)
	}
	recs, err := eventsDef.Extract(v)
	if err != nil {
		b.Fatal(err)
	}
	return recs
}

func reportRecords(b *testing.B, perOp int) {
	b.ReportMetric(float64(b.N*perOp)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkValidate is validation alone: one op validates a page of 1000
// decoded events against schemas/events.json, through the validator
// ("violations") and, for comparison, through the JSON Schema library
// alone ("library").
func BenchmarkValidate(b *testing.B) {
	page := eventsPage(b)
	recs := decodeRecords(b, page)
	v := eventsValidator(b)
	for _, r := range recs {
		if bad := v.Violations(r.(map[string]any)); bad != nil {
			b.Fatalf("demo event fails its schema: %v", bad)
		}
	}
	b.Run("violations", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			for _, r := range recs {
				if v.Violations(r.(map[string]any)) != nil {
					b.Fatal("violation")
				}
			}
		}
		b.StopTimer()
		reportRecords(b, len(recs))
	})
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			for _, r := range recs {
				if err := v.schema.Validate(r); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.StopTimer()
		reportRecords(b, len(recs))
	})
}
