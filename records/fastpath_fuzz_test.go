package records

import (
	"encoding/json"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tap-dev/tap/codec"
)

// The fast path's one promise, checked over generated schemas and records:
// it never says "certainly valid" for a record the library rejects.

// gen builds schemas from the fast path's subset and records for them,
// valid ones and broken ones, from one seeded source.
type gen struct{ r *rand.Rand }

var (
	genNames    = []string{"id", "a", "b", "updated_at", "x/y", "t~1", "", "é", "1"}
	genTypes    = []string{"object", "array", "string", "integer", "number", "boolean", "null"}
	genFormats  = []string{"date-time", "date-time", "date-time", "date", "email", "uuid", "no-such-format"}
	genDrafts   = []string{"", "", "", "https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2019-09/schema", "http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-04/schema#"}
	goodStrings = map[string][]string{
		"date-time": {"2026-01-02T03:04:05Z", "2026-01-02T03:04:05.123456+02:00", "1999-12-31T23:59:59-08:00", "2026-01-02t03:04:05z"},
		"date":      {"2026-01-02", "2024-02-29"},
		"email":     {"a@example.com"},
		"uuid":      {"123e4567-e89b-12d3-a456-426614174000"},
	}
	// Values near the edge of what a type or a format accepts.
	edgeStrings = []string{
		"2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:00:60Z",
		"2016-12-31T23:59:60Z", "2026-01-01T00:00:00", "2026-01-01 00:00:00Z", "2026-01-01T00:00:00+2:00",
		"yesterday", "", " 2026-01-01T00:00:00Z", "2026-01-02", "2025-02-29", "not-an-email", "123e4567",
	}
	edgeNumbers = []string{"0", "-0", "1", "-7", "1.0", "1.5", "-0.25", "1e3", "1E+2", "2E-1", "0.0", "1e-0",
		"12345678901234567890", "123456789012345678901234567890.5", "1e400"}
	intNumbers = []string{"0", "-0", "1", "-7", "42", "12345678901234567890"}
	numNumbers = []string{"1.5", "-0.25", "3.14159", "1e3", "2E-1", "6.02e23"}
)

func (g gen) pick(list []string) string { return list[g.r.IntN(len(list))] }

// schema returns a schema of the subset; top is an object schema.
func (g gen) schema(depth int, top bool) map[string]any {
	s := map[string]any{}
	kind := "object"
	if !top {
		kinds := genTypes
		if depth >= 3 {
			kinds = genTypes[2:] // scalars only, deep down
		}
		kind = g.pick(kinds)
		if g.r.IntN(8) == 0 {
			kind = "" // no type: anything goes
		}
	}
	if kind != "" {
		switch g.r.IntN(4) {
		case 0:
			if kind != "null" {
				s["type"] = []any{kind, "null"}
			} else {
				s["type"] = kind
			}
		case 1:
			if other := g.pick(genTypes); other != kind {
				s["type"] = []any{kind, other}
			} else {
				s["type"] = kind
			}
		default:
			s["type"] = kind
		}
	}
	if kind == "object" || kind == "" && g.r.IntN(2) == 0 {
		props := map[string]any{}
		var names []any
		for i := g.r.IntN(5); i > 0; i-- {
			name := g.pick(genNames)
			props[name] = g.schema(depth+1, false)
		}
		// Maps are walked in sorted order so that a seed makes one set
		// of cases.
		for _, name := range slices.Sorted(maps.Keys(props)) {
			if g.r.IntN(2) == 0 {
				names = append(names, name)
			}
		}
		undescribed := false
		if g.r.IntN(6) == 0 {
			names = append(names, "absent_"+g.pick(genNames)) // required, never described
			undescribed = true
		}
		if len(props) > 0 || g.r.IntN(2) == 0 {
			s["properties"] = props
		}
		if len(names) > 0 {
			s["required"] = names
		}
		switch g.r.IntN(4) {
		case 0:
			if !undescribed { // else no record could be valid
				s["additionalProperties"] = false
			}
		case 1:
			s["additionalProperties"] = true
		}
	}
	if kind == "array" || kind == "" && g.r.IntN(3) == 0 {
		if g.r.IntN(5) > 0 {
			s["items"] = g.schema(depth+1, false)
		}
	}
	if kind == "string" || kind == "" || g.r.IntN(10) == 0 {
		if g.r.IntN(2) == 0 {
			s["format"] = g.pick(genFormats)
		}
	}
	if g.r.IntN(10) == 0 {
		s["description"] = "an annotation"
	}
	if top {
		if d := g.pick(genDrafts); d != "" {
			s["$schema"] = d
		}
	}
	return s
}

func types(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			out = append(out, e.(string))
		}
		return out
	}
	return nil
}

// valid returns a value the schema accepts, avoiding the values the fast
// path leaves to the library (an integer written 1.0 or 1e3, a leap
// second), so that the fast path should pass it too.
func (g gen) valid(s map[string]any, depth int) any {
	ts := types(s)
	t := ""
	if len(ts) > 0 {
		t = ts[g.r.IntN(len(ts))]
	} else {
		// Any type: one the schema's other keywords leave alone.
		switch {
		case s["properties"] != nil || s["required"] != nil || s["additionalProperties"] == false:
			t = "object"
		case s["items"] != nil:
			t = "array"
		default:
			t = g.pick([]string{"string", "integer", "boolean", "null"})
		}
	}
	switch t {
	case "null":
		return nil
	case "boolean":
		return g.r.IntN(2) == 0
	case "integer":
		return json.Number(g.pick(intNumbers))
	case "number":
		return json.Number(g.pick(append(numNumbers, intNumbers...)))
	case "string":
		if f, _ := s["format"].(string); goodStrings[f] != nil {
			return g.pick(goodStrings[f])
		} else if f == "" || f == "no-such-format" {
			return g.pick([]string{"x", "", "Zoë", "2026-13-01"})
		}
		return g.pick(goodStrings["email"]) // a format not listed: keep to a known-good value
	case "array":
		items, _ := s["items"].(map[string]any)
		out := []any{}
		for i := g.r.IntN(4); i > 0; i-- {
			if items == nil {
				out = append(out, g.random(depth+1))
			} else {
				out = append(out, g.valid(items, depth+1))
			}
		}
		return out
	}
	// object
	props, _ := s["properties"].(map[string]any)

	out := map[string]any{}
	for _, r := range req(s) {
		if p, ok := props[r].(map[string]any); ok {
			out[r] = g.valid(p, depth+1)
		} else {
			out[r] = g.random(depth + 1)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		if _, done := out[name]; !done && g.r.IntN(2) == 0 {
			out[name] = g.valid(props[name].(map[string]any), depth+1)
		}
	}
	if s["additionalProperties"] != false && g.r.IntN(3) == 0 {
		if _, described := props["extra"]; !described {
			out["extra"] = g.random(depth + 1)
		}
	}
	return out
}

func req(s map[string]any) []string {
	var out []string
	list, _ := s["required"].([]any)
	for _, e := range list {
		out = append(out, e.(string))
	}
	return out
}

// random returns any JSON value, near the edges of the types and formats.
func (g gen) random(depth int) any {
	n := 7
	if depth > 6 {
		n = 5 // scalars only
	}
	switch g.r.IntN(n) {
	case 0:
		return nil
	case 1:
		return g.r.IntN(2) == 0
	case 2, 3:
		return json.Number(g.pick(edgeNumbers))
	case 4:
		return g.pick(edgeStrings)
	case 5:
		out := []any{}
		for i := g.r.IntN(3); i > 0; i-- {
			out = append(out, g.random(depth+1))
		}
		return out
	}
	out := map[string]any{}
	for i := g.r.IntN(3); i > 0; i-- {
		out[g.pick(genNames)] = g.random(depth + 1)
	}
	return out
}

// deep returns a value nested n levels, arrays and objects in turn.
func (g gen) deep(n int) any {
	var v any = g.random(7)
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			v = []any{v}
		} else {
			v = map[string]any{g.pick(genNames): v}
		}
	}
	return v
}

// mutate breaks v in one place: a value of another type, a null, a
// removed or added property, a bad date-time, an integer written as a
// fraction, deep nesting.
func (g gen) mutate(v any) any {
	switch c := v.(type) {
	case map[string]any:
		if len(c) > 0 && g.r.IntN(3) > 0 {
			keys := slices.Sorted(maps.Keys(c))
			k := keys[g.r.IntN(len(keys))]
			if g.r.IntN(4) == 0 {
				delete(c, k)
			} else {
				c[k] = g.mutate(c[k])
			}
			return c
		}
		if g.r.IntN(2) == 0 {
			c[g.pick(genNames)] = g.random(3)
			return c
		}
	case []any:
		if len(c) > 0 && g.r.IntN(3) > 0 {
			i := g.r.IntN(len(c))
			c[i] = g.mutate(c[i])
			return c
		}
		if g.r.IntN(2) == 0 {
			return append(c, g.random(3))
		}
	}
	switch g.r.IntN(6) {
	case 0:
		return nil
	case 1:
		return g.pick(edgeStrings)
	case 2:
		return json.Number(g.pick(edgeNumbers))
	case 3:
		return g.deep(20 + g.r.IntN(40))
	}
	return g.random(0)
}

// roundTrip writes v as JSON and decodes it as the tap does, so the
// values are what a record holds after a page is read.
func roundTrip(t testing.TB, v any) (any, []byte) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := codec.Decode(b)
	if err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return out, b
}

// differential checks one record against one schema: the fast path may
// say valid only when the library agrees. It reports whether each said
// valid.
func differential(t testing.TB, f *fastPath, v *Validator, schemaText, recText []byte, rec any) (fastOK, libOK bool) {
	t.Helper()
	fastOK = f.valid(rec)
	err := v.validate(rec)
	if fastOK && err != nil {
		t.Fatalf("the fast path passes a record the library rejects\nschema: %s\nrecord: %s\nlibrary: %v", schemaText, recText, err)
	}
	return fastOK, err == nil
}

func TestFastPathAgreesWithTheLibraryOnGeneratedRecords(t *testing.T) {
	const schemas, perSchema = 5000, 10 // 50,000 records
	g := gen{rand.New(rand.NewPCG(20261130, 7))}
	var stats struct{ validBuilt, validFast, mutated, mutatedRejected, fastPassedMutated int }
	for i := 0; i < schemas; i++ {
		raw, schemaText := roundTrip(t, g.schema(0, true))
		schema := raw.(map[string]any)
		v, err := New(Options{Stream: "gen", Schema: schema, Policy: DeadLetter})
		if err != nil {
			t.Fatalf("generated schema does not compile: %v\n%s", err, schemaText)
		}
		if v.fast == nil {
			t.Fatalf("no fast path for a schema of its subset: %s", schemaText)
		}
		for j := 0; j < perSchema; j++ {
			built := g.valid(schema, 0)
			if j%2 == 0 {
				// A record built to be valid: the library must accept it
				// (else the generator is wrong) and the fast path pass it
				// (else it does not earn its keep).
				rec, recText := roundTrip(t, built)
				fastOK, libOK := differential(t, v.fast, v, schemaText, recText, rec)
				if !libOK {
					t.Fatalf("a record built valid fails the library\nschema: %s\nrecord: %s\n%v", schemaText, recText, v.validate(rec))
				}
				stats.validBuilt++
				if fastOK {
					stats.validFast++
				}
				continue
			}
			for k := 1 + g.r.IntN(3); k > 0; k-- {
				built = g.mutate(built)
			}
			rec, recText := roundTrip(t, built)
			fastOK, libOK := differential(t, v.fast, v, schemaText, recText, rec)
			stats.mutated++
			if !libOK {
				stats.mutatedRejected++
			}
			if fastOK {
				stats.fastPassedMutated++
			}
		}
	}
	t.Logf("%+v", stats)
	// The check is only as good as its cases: the fast path passes what
	// was built valid, and the mutations break a good share of the records.
	if stats.validFast != stats.validBuilt {
		t.Errorf("the fast path passed %d of %d records built valid", stats.validFast, stats.validBuilt)
	}
	if stats.mutatedRejected < stats.mutated/4 {
		t.Errorf("the library rejects only %d of %d mutated records: the mutations are too gentle", stats.mutatedRejected, stats.mutated)
	}
}

// FuzzFastPath mutates schema and record texts: whenever the schema is in
// the fast path's subset and compiles, the fast path must not pass a record
// the library rejects. Run with go test -fuzz FuzzFastPath ./records/.
func FuzzFastPath(f *testing.F) {
	g := gen{rand.New(rand.NewPCG(1, 2))}
	for i := 0; i < 200; i++ {
		s := g.schema(0, true)
		rec := g.valid(s, 0)
		if i%2 == 1 {
			rec = g.mutate(rec)
		}
		sb, _ := json.Marshal(s)
		rb, _ := json.Marshal(rec)
		f.Add(sb, rb)
	}
	f.Add([]byte(ordersTestSchema), []byte(recValid))
	f.Add([]byte(`{"type":"object","properties":{"n":{"type":"integer"}}}`), []byte(`{"n":1e10000000}`))
	f.Fuzz(func(t *testing.T, schemaText, recText []byte) {
		raw, err := codec.Decode(schemaText)
		if err != nil {
			return
		}
		schema, isObj := raw.(map[string]any)
		if !isObj {
			return
		}
		if d, _ := schema["$schema"].(string); d != "" && !slices.Contains(genDrafts, d) {
			return // the library would try to load a metaschema from d
		}
		fast, ok := buildFastPath(schema)
		if !ok {
			return
		}
		v, err := New(Options{Stream: "fuzz", Schema: schema, Policy: DeadLetter})
		if err != nil {
			return
		}
		rec, err := codec.Decode(recText)
		if err != nil {
			return
		}
		differential(t, fast, v, schemaText, recText, rec)
		if m, isObj := rec.(map[string]any); isObj {
			// The validator's whole answer must not panic either.
			v.Violations(m)
		}
	})
}
