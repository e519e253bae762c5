package records

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/demoapi"
	"github.com/tap-dev/tap/schemas"
	"github.com/tap-dev/tap/streammap"
	"github.com/tap-dev/tap/streams"
)

// eventsPage is one page of 1000 demo events (about 300 bytes each) as
// the API sends it.
func eventsPage(b *testing.B) []byte {
	srv, err := demoapi.New(demoapi.Config{Seed: 7})
	if err != nil {
		b.Fatal(err)
	}
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/v1/events?limit=1000", nil))
	if w.Code != http.StatusOK {
		b.Fatalf("GET /v1/events: %d %s", w.Code, w.Body)
	}
	return w.Body.Bytes()
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

// BenchmarkDecodeValidateEncode is the per-record pipeline of a sync
// without the network and the writer: one op decodes a page of 1000
// events, extracts them, validates each and encodes each as the tap
// writes a RECORD (codec.AppendObject, key order kept across records).
// The sub-benchmarks stop after each stage, so the differences show where
// the time goes.
func BenchmarkDecodeValidateEncode(b *testing.B) {
	page := eventsPage(b)
	per := len(decodeRecords(b, page))
	for _, stage := range []struct {
		name             string
		validate, encode bool
	}{
		{"decode", false, false},
		{"decode+validate", true, false},
		{"decode+validate+encode", true, true},
	} {
		b.Run(stage.name, func(b *testing.B) {
			v := eventsValidator(b)
			var buf []byte
			var keys []string
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
				for _, r := range recs {
					m := r.(map[string]any)
					if stage.validate && v.Violations(m) != nil {
						b.Fatal("violation")
					}
					if stage.encode {
						if buf, err = codec.AppendObject(buf[:0], m, &keys); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			b.StopTimer()
			reportRecords(b, per)
		})
	}
}

// BenchmarkDecodeValidateMapEncode is BenchmarkDecodeValidateEncode's
// last stage with and without the bench command's stream map (an md5,
// arithmetic, a removal) between validation and encoding, mapped in place
// as the tap does for a stream with one output: the difference is what
// the map costs per record.
func BenchmarkDecodeValidateMapEncode(b *testing.B) {
	page := eventsPage(b)
	per := len(decodeRecords(b, page))
	raw, err := schemas.FS.ReadFile("events.json")
	if err != nil {
		b.Fatal(err)
	}
	s, err := codec.Decode(raw)
	if err != nil {
		b.Fatal(err)
	}
	m, err := streammap.NewMapper(streammap.MapConfig{StreamMaps: map[string]any{"events": map[string]any{
		"ip": "md5(str(ip))", "id_x2": "id * 2", "user_agent": nil}}},
		map[string]streammap.StreamSchema{"events": {Schema: s.(map[string]any), KeyProperties: eventsDef.PrimaryKey}})
	if err != nil {
		b.Fatal(err)
	}
	for _, mapped := range []bool{false, true} {
		name := "unmapped"
		if mapped {
			name = "mapped"
		}
		b.Run(name, func(b *testing.B) {
			v := eventsValidator(b)
			tr := m.Outputs("events")[0].Transformer()
			var buf []byte
			var keys []string
			b.ReportAllocs()
			for b.Loop() {
				for _, r := range decodeRecords(b, page) {
					rec := r.(map[string]any)
					if v.Violations(rec) != nil {
						b.Fatal("violation")
					}
					if mapped {
						if rec, err = tr.TransformInPlace(rec); err != nil {
							b.Fatal(err)
						}
					}
					if buf, err = codec.AppendObject(buf[:0], rec, &keys); err != nil {
						b.Fatal(err)
					}
				}
			}
			reportRecords(b, per)
		})
	}
}
