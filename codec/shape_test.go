package codec_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/records"
)

// judgeOf compiles schema for the walker (with the library for what is
// outside its subset, when lib) and for the tree path's validator.
func judgeOf(t testing.TB, schema string, lib bool, capture ...string) judge {
	t.Helper()
	d, err := codec.Decode([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	m := d.(map[string]any)
	v, err := records.New(records.Options{Stream: "x", Schema: m, Policy: records.Emit})
	if err != nil {
		t.Fatal(err)
	}
	var library codec.Library
	if lib {
		library = v.Library()
	}
	s, err := codec.CompileShapeWith(m, library, capture...)
	if err != nil {
		t.Fatal(err)
	}
	return judge{shape: s, v: v, warm: &codec.Walker{}}
}

// keywordSchema holds every keyword the walker checks itself, and some
// it leaves to the library.
const keywordSchema = `{"type":"object","required":["id"],"properties":{
	"id":{"type":"integer","minimum":1,"maximum":1000000000000000000000},
	"score":{"type":["number","null"],"exclusiveMinimum":0,"exclusiveMaximum":10.5},
	"big":{"type":"number","minimum":-1.5e2,"maximum":12345678901234567890.25},
	"code":{"type":"string","pattern":"^[A-Z]{2}-[0-9]+$"},
	"word":{"type":"string","pattern":"\\w+é"},
	"day":{"type":"string","format":"date"},
	"at":{"type":["string","null"],"format":"date-time"},
	"mail":{"type":"string","format":"email"},
	"uid":{"type":"string","format":"uuid"},
	"ip":{"type":"string","format":"ipv4"},
	"host":{"type":"string","format":"hostname"},
	"amount":{"type":"string","format":"singer.decimal"},
	"tags":{"type":"array","items":{"type":"string","maxLength":3},"minItems":1,"uniqueItems":true},
	"qty":{"type":"integer","multipleOf":5},
	"either":{"anyOf":[{"type":"string"},{"type":"integer","minimum":0}]},
	"ref":{"$ref":"#/definitions/pos"},
	"ref2":{"$ref":"#/definitions/pos","description":"the same"},
	"refMin":{"$ref":"#/definitions/pos","maximum":5},
	"tree":{"$ref":"#/definitions/node"},
	"cents":{"type":"number","multipleOf":0.01},
	"hundreds":{"type":"integer","multipleOf":100},
	"fine":{"type":"number","multipleOf":1e-38},
	"halves":{"type":"number","multipleOf":2.5},
	"meta":{"type":"object","additionalProperties":{"type":"integer"}},
	"pp":{"type":"object","properties":{"a":{"type":"string"}},"patternProperties":{"^x-":{"type":"integer"}},"additionalProperties":false},
	"pair":{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],"items":false},
	"cond":{"if":{"type":"string"},"then":{"minLength":2}},
	"never":false,
	"level":{"enum":[1,2,"three"]},
	"nested":{"type":"object","required":["n"],"minProperties":2,"properties":{"n":{"type":"integer","maximum":9}}}},
	"definitions":{"pos":{"type":"integer","minimum":0},
		"node":{"type":"object","required":["v"],"properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/definitions/node"}}}}}}`

// TestWalkerKeywords holds the walker to the library on every keyword it
// checks and every kind it leaves to the library: a record it is sure of
// is valid, and a valid one it can read as it lies, it is sure of.
func TestWalkerKeywords(t *testing.T) {
	j := judgeOf(t, keywordSchema, true, "id")
	for _, tt := range []struct {
		rec  string
		sure bool
	}{
		{`{"id":1}`, true},
		{`{"id":0}`, false},
		{`{"id":1000000000000000000000}`, true},
		{`{"id":1000000000000000000001}`, false},
		{`{"id":1,"score":0.0000001}`, true},
		{`{"id":1,"score":0}`, false},
		{`{"id":1,"score":-0.0}`, false},
		{`{"id":1,"score":10.5}`, false},
		{`{"id":1,"score":10.4999999999999999999999}`, true},
		{`{"id":1,"score":null}`, true},
		{`{"id":1,"score":1e0}`, false}, // an exponent: the tree's
		{`{"id":1,"big":-150}`, true},
		{`{"id":1,"big":-150.0000000000000000001}`, false},
		{`{"id":1,"big":-0}`, true},
		{`{"id":1,"big":12345678901234567890.25}`, true},
		{`{"id":1,"big":12345678901234567890.2500000001}`, false},
		{`{"id":1,"big":012}`, false}, // not JSON
		{`{"id":1,"code":"AB-12"}`, true},
		{`{"id":1,"code":"ab-12"}`, false},
		{`{"id":1,"code":"A\u0042-12"}`, true}, // escaped: the library's check of the string alone
		{`{"id":1,"code":"A\u0062-12"}`, false},
		{`{"id":1,"word":"café"}`, true},
		{`{"id":1,"word":"é"}`, false},
		{`{"id":1,"day":"2024-02-29"}`, true},
		{`{"id":1,"day":"2023-02-29"}`, false},
		{`{"id":1,"day":"2024-2-29"}`, false},
		{`{"id":1,"at":"2024-02-29T23:59:59Z"}`, true},
		{`{"id":1,"at":"2016-12-31T23:59:60Z"}`, true}, // a leap second: the library's own check says yes
		{`{"id":1,"at":"2016-12-31T23:58:60Z"}`, false},
		{`{"id":1,"at":null}`, true},
		{`{"id":1,"mail":"a.b+c@example.com"}`, true},
		{`{"id":1,"mail":"\"a b\"@example.com"}`, true}, // quoted: net/mail's, through the library
		{`{"id":1,"mail":"a..b@example.com"}`, false},
		{`{"id":1,"mail":"ab@-x.com"}`, false},
		{`{"id":1,"uid":"123e4567-e89b-12d3-a456-426614174000"}`, true},
		{`{"id":1,"uid":"123e4567-e89b-12d3-a456-42661417400"}`, false},
		{`{"id":1,"ip":"10.0.0.255"}`, true},
		{`{"id":1,"ip":"10.0.0.256"}`, false},
		{`{"id":1,"ip":"10.0.0.01"}`, false},
		{`{"id":1,"ip":"10.0.0.00"}`, true}, // the library takes it
		{`{"id":1,"host":"example.com"}`, true},
		{`{"id":1,"host":"exa_mple.com"}`, false},
		{`{"id":1,"amount":"12.50"}`, true}, // a format the library does not know asserts nothing
		{`{"id":1,"tags":["a","bc"]}`, true},
		{`{"id":1,"tags":[]}`, false},
		{`{"id":1,"tags":["a","a"]}`, false},
		{`{"id":1,"tags":["abcd"]}`, false},
		{`{"id":1,"qty":15}`, true},
		{`{"id":1,"qty":16}`, false},
		{`{"id":1,"either":"x"}`, true},
		{`{"id":1,"either":-1}`, false},
		{`{"id":1,"either":true}`, false},
		{`{"id":1,"ref":3}`, true},
		{`{"id":1,"ref":-3}`, false},
		{`{"id":1,"ref2":0,"refMin":5}`, true},
		{`{"id":1,"ref2":-1}`, false},
		{`{"id":1,"refMin":6}`, false},
		{`{"id":1,"refMin":-1}`, false},
		{`{"id":1,"tree":{"v":1,"kids":[{"v":2,"kids":[{"v":3}]}]}}`, true},
		{`{"id":1,"tree":{"v":1,"kids":[{"v":2,"kids":[{"w":3}]}]}}`, false},
		{`{"id":1,"tree":{"kids":[]}}`, false},
		{`{"id":1,"cents":12.34,"hundreds":-1200,"fine":0.00000000000000000000000000000000000001}`, true},
		{`{"id":1,"cents":12.345}`, false},
		{`{"id":1,"cents":12.3400000}`, true},
		{`{"id":1,"cents":-0}`, true},
		{`{"id":1,"hundreds":1250}`, false},
		{`{"id":1,"hundreds":0}`, true},
		{`{"id":1,"fine":0.000000000000000000000000000000000000001}`, false},
		{`{"id":1,"halves":7.5}`, true},
		{`{"id":1,"halves":7.25}`, false},
		{`{"id":1,"meta":{"a":1,"b":2}}`, true},
		{`{"id":1,"meta":{"a":"1"}}`, false},
		{`{"id":1,"pp":{"a":"s","x-b":2}}`, true},
		{`{"id":1,"pp":{"a":"s","x-b":"2"}}`, false},
		{`{"id":1,"pp":{"c":1}}`, false},
		{`{"id":1,"pair":[1,"a"]}`, true},
		{`{"id":1,"pair":[1,"a",2]}`, false},
		{`{"id":1,"pair":["a"]}`, false},
		{`{"id":1,"cond":"ab"}`, true},
		{`{"id":1,"cond":5}`, true},
		{`{"id":1,"cond":"a"}`, false},
		{`{"id":1,"never":null}`, false},
		{`{"id":1,"level":2}`, true},
		{`{"id":1,"level":"three"}`, true},
		{`{"id":1,"level":3}`, false},
		{`{"id":1,"nested":{"n":9,"m":1}}`, true},
		{`{"id":1,"nested":{"n":9}}`, false},
		{`{"id":1,"nested":{"n":10,"m":1}}`, false},
		{`{"id":1,"nested":{"m":1,"o":2}}`, false},
	} {
		if got := j.check(t, []byte(tt.rec)); got != tt.sure {
			t.Errorf("%s: sure %v, want %v", tt.rec, got, tt.sure)
		}
	}
}

// Without a library, a keyword outside the subset does not compile (the
// stream keeps the tree path), and the walker's own checks stand alone.
func TestWalkerWithoutLibrary(t *testing.T) {
	for _, schema := range []string{
		`{"properties":{"a":{"multipleOf":2.5}}}`,
		`{"properties":{"a":{"format":"hostname"}}}`,
		`{"properties":{"a":{"$ref":"#/definitions/b","minimum":1}},"definitions":{"b":{}}}`,
		`{"anyOf":[{"required":["a"]}]}`,
	} {
		d, _ := codec.Decode([]byte(schema))
		if _, err := codec.CompileShape(d.(map[string]any)); err == nil {
			t.Errorf("%s compiled without a library", schema)
		}
	}
	j := judgeOf(t, `{"properties":{"mail":{"format":"email"},"n":{"minimum":0},"x":{"x-vendor":1,"nullable":true}}}`, false)
	for rec, sure := range map[string]bool{
		`{"mail":"a@b.c","n":0,"x":1}`: true,
		`{"mail":"\"a b\"@b.c"}`:       false, // valid, but only the library can tell
		`{"n":-1}`:                     false,
	} {
		if got := j.check(t, []byte(rec)); got != sure {
			t.Errorf("%s: sure %v, want %v", rec, got, sure)
		}
	}
}

// nullableSchema says "X or null" as generated schemas do: an anyOf (or
// a oneOf) of X and {"type": "null"}.
const nullableSchema = `{"type":"object","properties":{
	"a":{"anyOf":[{"type":"string","maxLength":3},{"type":"null"}]},
	"b":{"anyOf":[{"type":"null"},{"$ref":"#/definitions/pos"}],"title":"B","default":null},
	"c":{"oneOf":[{"type":"integer","minimum":0},{"type":"null"}]},
	"d":{"anyOf":[{"enum":["x","y"]},{"type":["null"]}]},
	"e":{"anyOf":[{"type":"object","required":["k"],"properties":{"k":{"type":"integer"}}},{"type":"null"}]},
	"f":{"anyOf":[{"type":"string","format":"date-time"},{"type":"null","description":"unknown"}]},
	"g":{"anyOf":[{"type":"array","items":{"anyOf":[{"type":"integer"},{"type":"null"}]}},{"type":"null"}]},
	"h":{"anyOf":[false,{"type":"null"}]}},
	"definitions":{"pos":{"type":"integer","minimum":0}}}`

// TestWalkerNullable: the walker checks "X or null" itself (it compiles
// without the library), null or X's value, held to the library.
func TestWalkerNullable(t *testing.T) {
	j := judgeOf(t, nullableSchema, false)
	for _, tt := range []struct {
		rec  string
		sure bool
	}{
		{`{"a":"abc","b":0,"c":1,"d":"x","e":{"k":1},"f":"2026-01-02T03:04:05Z","g":[1,null]}`, true},
		{`{"a":null,"b":null,"c":null,"d":null,"e":null,"f":null,"g":null,"h":null}`, true},
		{`{"a":"abcd"}`, false},
		{`{"a":1}`, false},
		{`{"b":-1}`, false},
		{`{"b":"0"}`, false},
		{`{"c":-1}`, false},
		{`{"d":"z"}`, false},
		{`{"e":{}}`, false},
		{`{"e":{"k":"1"}}`, false},
		{`{"e":[]}`, false},
		{`{"f":"yesterday"}`, false},
		{`{"g":[1,"2"]}`, false},
		{`{"g":{}}`, false},
		{`{"h":0}`, false},
	} {
		if got := j.check(t, []byte(tt.rec)); got != tt.sure {
			t.Errorf("%s: sure %v, want %v", tt.rec, got, tt.sure)
		}
	}
	// Other forms are the library's, value by value.
	for _, schema := range []string{
		`{"properties":{"a":{"anyOf":[{"type":"string"},{"type":"null"}],"maxLength":2}}}`, // a keyword beside it
		`{"properties":{"a":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`,
		`{"properties":{"a":{"anyOf":[{"type":"string"},{"type":"integer"},{"type":"null"}]}}}`,
		`{"properties":{"a":{"anyOf":[{"type":"string"},{"type":"null","minimum":1}]}}}`,
		`{"properties":{"a":{"oneOf":[{"minimum":1},{"type":"null"}]}}}`, // null meets both: invalid
		`{"properties":{"a":{"anyOf":[{"format":"hostname"},{"type":"null"}]}}}`,
	} {
		d, _ := codec.Decode([]byte(schema))
		if _, err := codec.CompileShape(d.(map[string]any)); err == nil {
			t.Errorf("%s compiled without a library", schema)
		}
	}
	lib := judgeOf(t, `{"properties":{
		"one":{"oneOf":[{"minimum":1},{"type":"null"}]},
		"not":{"anyOf":[{"not":{"type":"null"}},{"type":"null"}]},
		"host":{"anyOf":[{"type":"string","format":"hostname"},{"type":"null"}]}}}`, true)
	for _, tt := range []struct {
		rec  string
		sure bool
	}{
		{`{"one":null}`, false},
		{`{"one":2}`, true},
		{`{"not":null,"host":null}`, true}, // X's library keywords are not asked of a null
		{`{"not":1,"host":"example.com"}`, true},
		{`{"host":"exa_mple.com"}`, false},
	} {
		if got := lib.check(t, []byte(tt.rec)); got != tt.sure {
			t.Errorf("%s: sure %v, want %v", tt.rec, got, tt.sure)
		}
	}
}

// Keywords that mean something else compiled apart from where they lie
// keep the stream on the tree path.
func TestWalkerUnplaceable(t *testing.T) {
	for _, schema := range []string{
		`{"properties":{"a":{"$id":"http://x/a","type":"integer"}}}`,
		`{"properties":{"a":{"$anchor":"a"}}}`,
		`{"$defs":{"n":{"$dynamicAnchor":"n"}},"properties":{"a":{"$dynamicRef":"#n"}}}`,
	} {
		d, _ := codec.Decode([]byte(schema))
		m := d.(map[string]any)
		v, err := records.New(records.Options{Stream: "x", Schema: m, Policy: records.Emit})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := codec.CompileShapeWith(m, v.Library()); err == nil {
			t.Errorf("%s compiled", schema)
		}
	}
}

// Draft 4 reads exclusiveMinimum as a flag on minimum, draft 7 as a
// number; draft 7 reads a list of items as a tuple; a $ref in draft 7
// hides the keywords beside it from the library, not from the walker.
func TestWalkerDrafts(t *testing.T) {
	for _, tt := range []struct {
		schema string
		recs   map[string]bool
	}{
		{`{"$schema":"http://json-schema.org/draft-04/schema#","properties":{
			"a":{"type":"number","minimum":5,"exclusiveMinimum":true},
			"b":{"type":"number","maximum":5,"exclusiveMaximum":false}}}`, map[string]bool{
			`{"a":5.1,"b":5}`: true, `{"a":5}`: false, `{"b":5.01}`: false,
		}},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{
			"a":{"exclusiveMinimum":5},
			"t":{"items":[{"type":"integer"}],"additionalItems":{"type":"string"}},
			"r":{"$ref":"#/definitions/s","maxLength":1}},"definitions":{"s":{"type":"string"}}}`, map[string]bool{
			`{"a":6,"t":[1,"x","y"],"r":"a"}`: true, `{"a":5}`: false, `{"t":[1,2]}`: false,
			`{"t":["x"]}`: false, `{"r":"ab"}`: false, `{"r":1}`: false,
		}},
	} {
		j := judgeOf(t, tt.schema, true)
		for rec, sure := range tt.recs {
			if got := j.check(t, []byte(rec)); got != sure {
				t.Errorf("%s: sure %v, want %v", rec, got, sure)
			}
		}
	}
}

// wideSchema has n properties p0..p(n-1), of which required are required.
func wideSchema(n int, required ...int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"p%d":{"type":"integer"}`, i)
	}
	b.WriteString(`},"required":[`)
	for i, r := range required {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"p%d"`, r)
	}
	b.WriteString(`]}`)
	return b.String()
}

// wideRecord has the properties p0..p(n-1) but skip.
func wideRecord(n int, skip ...int) string {
	var b strings.Builder
	b.WriteString("{")
	first := true
	for i := 0; i < n; i++ {
		if contains(skip, i) {
			continue
		}
		if !first {
			b.WriteString(",")
		}
		first = false
		fmt.Fprintf(&b, `"p%d":%d`, i, i)
	}
	b.WriteString("}")
	return b.String()
}

func contains(list []int, x int) bool {
	for _, e := range list {
		if e == x {
			return true
		}
	}
	return false
}

// Objects of more than 64 properties: required and duplicate keys are
// checked beyond the 64th too.
func TestWalkerWide(t *testing.T) {
	j := judgeOf(t, wideSchema(200, 0, 63, 64, 130, 199), true, "p0", "p150")
	for _, tt := range []struct {
		rec  string
		sure bool
	}{
		{wideRecord(200), true},
		{wideRecord(200, 5, 70, 140), true},
		{wideRecord(200, 64), false},
		{wideRecord(200, 130), false},
		{wideRecord(200, 199), false},
		{wideRecord(200, 63), false},
		{`{}`, false},
		{strings.TrimSuffix(wideRecord(200), "}") + `,"p100":1}`, false}, // a duplicate beyond the 64th
		{strings.TrimSuffix(wideRecord(200), "}") + `,"p10":1}`, false},
		{strings.Replace(wideRecord(200), `"p150":150`, `"p150":"x"`, 1), false},
		{`{"inner":` + wideRecord(200) + `}`, false}, // not listed at the top
	} {
		if got := j.check(t, []byte(tt.rec)); got != tt.sure {
			t.Errorf("%.60s…: sure %v, want %v", tt.rec, got, tt.sure)
		}
	}
	var w codec.Walker
	_, ok, caps, err := w.Walk([]byte(wideRecord(200)), 0, j.shape)
	if err != nil || !ok || string(caps[0]) != "0" || string(caps[1]) != "150" {
		t.Errorf("captures %q, %v, %v", caps, ok, err)
	}
	// Nested wide objects keep their own bits.
	j = judgeOf(t, `{"type":"object","properties":{"a":`+wideSchema(100, 99)+`,"b":{"type":"array","items":`+wideSchema(70, 69)+`}}}`, true)
	for rec, sure := range map[string]bool{
		`{"a":` + wideRecord(100) + `,"b":[` + wideRecord(70) + `,` + wideRecord(70, 3) + `]}`: true,
		`{"a":` + wideRecord(100, 99) + `}`:                                                    false,
		`{"b":[` + wideRecord(70) + `,` + wideRecord(70, 69) + `]}`:                            false,
	} {
		if got := j.check(t, []byte(rec)); got != sure {
			t.Errorf("%.60s…: sure %v, want %v", rec, got, sure)
		}
	}
}

func FuzzWalkKeywords(f *testing.F) {
	f.Add([]byte(`{"id":12,"score":5.25,"big":-149.5,"code":"AB-12","word":"xé","day":"2024-02-29","mail":"a.b@c.de"}`))
	f.Add([]byte(`{"id":2,"ref":3,"meta":{"a":1},"pp":{"a":"s","x-b":2},"pair":[1,"a"],"cond":"ab","level":"three"}`))
	j := judgeOf(f, keywordSchema, true, "id")
	f.Fuzz(func(t *testing.T, rec []byte) {
		j.check(t, rec)
	})
}

// BenchmarkWalkShapes walks one event against the demo's events schema
// (plain) and against the same schema with enum, maxLength, minimum,
// pattern and format keywords (keywords): their ratio is the keywords'
// cost.
func BenchmarkWalkShapes(b *testing.B) {
	const keywords = `{"type":"object","required":["id"],"properties":{
	"id":{"type":"integer","minimum":1},
	"type":{"type":["null","string"],"enum":["logout","login",null]},
	"actor_id":{"type":["null","integer"],"minimum":0,"maximum":1000},
	"occurred_at":{"type":["null","string"],"format":"date-time"},
	"source":{"type":["null","string"],"enum":["web","api","mobile"]},
	"ip":{"type":["null","string"],"format":"ipv4"},
	"user_agent":{"type":["null","string"],"minLength":1,"maxLength":512},
	"payload":{"type":["null","object"],"properties":{
		"path":{"type":["null","string"],"pattern":"^/app/billing/[0-9]+/"},
		"duration_ms":{"type":["null","integer"],"minimum":0,"exclusiveMaximum":100000},
		"bytes":{"type":["null","integer"],"minimum":0},
		"ok":{"type":["null","boolean"]}}}}}`
	for _, tt := range []struct {
		name string
		j    judge
	}{
		{"plain", newJudge(b, "events", "id")},
		{"keywords", judgeOf(b, keywords, true, "id")},
	} {
		b.Run(tt.name, func(b *testing.B) {
			rec := []byte(event)
			var w codec.Walker
			b.SetBytes(int64(len(rec)))
			for b.Loop() {
				if _, ok, _, err := w.Walk(rec, 0, tt.j.shape); err != nil || !ok {
					b.Fatal(ok, err)
				}
			}
		})
	}
}
