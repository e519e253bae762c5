package infer

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/records"
)

// inferFrom infers the schema of records written as a JSON array.
func inferFrom(t *testing.T, records string) (*Schema, []any) {
	t.Helper()
	v, err := codec.Decode([]byte(records))
	if err != nil {
		t.Fatalf("records: %v", err)
	}
	s := &Shape{}
	for _, r := range v.([]any) {
		s.Add(r)
	}
	return s.Schema(), v.([]any)
}

func TestInferShapes(t *testing.T) {
	for _, c := range []struct {
		name, records, want string
	}{{
		name:    "no records",
		records: `[]`,
		want:    `{"type":"object","properties":{}}`,
	}, {
		name:    "integer",
		records: `[{"a":1},{"a":-20}]`,
		want:    `{"type":"object","properties":{"a":{"type":["null","integer"]}}}`,
	}, {
		name:    "integer and number make number",
		records: `[{"a":1},{"a":1.5},{"a":1e3},{"a":2E-1}]`,
		want:    `{"type":"object","properties":{"a":{"type":["null","number"]}}}`,
	}, {
		name:    "a number with an exponent is not an integer",
		records: `[{"a":1e3}]`,
		want:    `{"type":"object","properties":{"a":{"type":["null","number"]}}}`,
	}, {
		name:    "20-digit integer",
		records: `[{"a":12345678901234567890}]`,
		want:    `{"type":"object","properties":{"a":{"type":["null","integer"]}}}`,
	}, {
		name:    "every property may be null, none is required (one sample proves neither)",
		records: `[{"id":1,"a":null,"b":"x"},{"id":2,"a":true}]`,
		want:    `{"type":"object","properties":{"a":{"type":["null","boolean"]},"b":{"type":["null","string"]},"id":{"type":["null","integer"]}}}`,
	}, {
		name:    "only null",
		records: `[{"a":null},{"a":null}]`,
		want:    `{"type":"object","properties":{"a":{"type":"null"}}}`,
	}, {
		name:    "date-time when every string is one",
		records: `[{"t":"2026-01-02T03:04:05Z","u":"2026-01-02T03:04:05.123+02:00"},{"t":"2025-12-31T23:59:59Z","u":null}]`,
		want:    `{"type":"object","properties":{"t":{"type":["null","string"],"format":"date-time"},"u":{"type":["null","string"],"format":"date-time"}}}`,
	}, {
		name:    "one string that is not a date-time drops the format",
		records: `[{"t":"2026-01-02T03:04:05Z"},{"t":"2026-01-02"},{"t":"yesterday"}]`,
		want:    `{"type":"object","properties":{"t":{"type":["null","string"]}}}`,
	}, {
		name:    "not quite RFC 3339",
		records: `[{"a":"2026-01-02 03:04:05Z"},{"b":"2026-01-02T03:04:05"},{"c":"2026-13-02T03:04:05Z"}]`,
		want:    `{"type":"object","properties":{"a":{"type":["null","string"]},"b":{"type":["null","string"]},"c":{"type":["null","string"]}}}`,
	}, {
		name: "nested objects",
		records: `[{"addr":{"city":"Paris","zip":"75001","geo":{"lat":48.8,"lon":2}}},
			{"addr":{"city":"Lyon","geo":{"lat":45.7,"lon":4.8}}},
			{"addr":null}]`,
		want: `{"type":"object","properties":{"addr":{"type":["null","object"],"properties":{"city":{"type":["null","string"]},"geo":{"type":["null","object"],"properties":{"lat":{"type":["null","number"]},"lon":{"type":["null","number"]}}},"zip":{"type":["null","string"]}}}}}`,
	}, {
		name:    "array items merged over every element",
		records: `[{"t":[1,2]},{"t":[]},{"t":[3.5,null,"x"]}]`,
		want:    `{"type":"object","properties":{"t":{"type":["null","array"],"items":{"type":["null","number","string"]}}}}`,
	}, {
		name:    "arrays of objects",
		records: `[{"l":[{"k":"a","v":1},{"k":"b"}]},{"l":[{"k":"c","v":2}]}]`,
		want:    `{"type":"object","properties":{"l":{"type":["null","array"],"items":{"type":"object","properties":{"k":{"type":["null","string"]},"v":{"type":["null","integer"]}}}}}}`,
	}, {
		name:    "only empty arrays: no items",
		records: `[{"t":[]},{"t":[]}]`,
		want:    `{"type":"object","properties":{"t":{"type":["null","array"]}}}`,
	}, {
		name:    "mixed types make a type array",
		records: `[{"a":"1"},{"a":1},{"a":false},{"a":{"x":1}},{"a":[true]}]`,
		want:    `{"type":"object","properties":{"a":{"type":["null","array","boolean","integer","object","string"],"properties":{"x":{"type":["null","integer"]}},"items":{"type":"boolean"}}}}`,
	}} {
		t.Run(c.name, func(t *testing.T) {
			got, recs := inferFrom(t, c.records)
			b, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			var gotV, wantV any
			if err := json.Unmarshal(b, &gotV); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(c.want), &wantV); err != nil {
				t.Fatalf("want: %v", err)
			}
			// An empty "required" in want stands for none.
			if m, ok := wantV.(map[string]any); ok {
				if r, ok := m["required"].([]any); ok && len(r) == 0 {
					delete(m, "required")
				}
			}
			if d := cmp.Diff(wantV, gotV); d != "" {
				t.Errorf("schema (-want +got):\n%s\ngot: %s", d, b)
			}
			// Whatever it infers, the records it came from must pass it.
			schema, err := codec.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			v, err := records.New(records.Options{Stream: "s", Schema: schema.(map[string]any), Policy: records.Fail})
			if err != nil {
				t.Fatalf("Schema schema does not compile: %v\n%s", err, b)
			}
			for i, r := range recs {
				if bad := v.Violations(r.(map[string]any)); bad != nil {
					t.Errorf("record %d fails its own Schema schema: %v", i, bad)
				}
			}
		})
	}
}

func TestInferOutputIsDeterministic(t *testing.T) {
	records := `[{"z":1,"a":{"y":"2026-01-01T00:00:00Z","b":[1,"x",null]},"m":null},{"a":{"c":true},"q":1.5}]`
	var first []byte
	for i := 0; i < 20; i++ {
		got, _ := inferFrom(t, records)
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		buf := bytes.NewBuffer(b)
		if i == 0 {
			first = buf.Bytes()
			if !bytes.HasPrefix(first, []byte("{\n  \"type\": \"object\",\n  \"properties\": {")) {
				t.Errorf("output should start with type then properties:\n%s", first)
			}
			continue
		}
		if !bytes.Equal(first, buf.Bytes()) {
			t.Fatalf("output differs between runs:\n%s\n---\n%s", first, buf.Bytes())
		}
	}
}
