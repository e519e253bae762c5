package codec_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/records"
	"github.com/tap-dev/tap/schemas"
)

var mutations = flag.Int("mutations", 30000, "records mutated by TestWalkMutations (the full run: 300000)")

// judge is the tree path a record the walker is not sure of takes: the
// tap's decoder and its validator (the schema library behind its own
// fast path).
type judge struct {
	shape *codec.Shape
	v     *records.Validator
	// warm walks every record checked, after primer: its key guesses
	// come from the records before, and must never change an answer.
	warm   *codec.Walker
	primer []byte
}

func newJudge(t testing.TB, stream string, capture ...string) judge {
	b, err := schemas.FS.ReadFile(stream + ".json")
	if err != nil {
		t.Fatal(err)
	}
	schema, err := codec.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	m := schema.(map[string]any)
	s, err := codec.CompileShape(m, capture...)
	if err != nil {
		t.Fatalf("%s: %v", stream, err)
	}
	v, err := records.New(records.Options{Stream: stream, Schema: m, Policy: records.Emit})
	if err != nil {
		t.Fatal(err)
	}
	j := judge{shape: s, v: v, warm: &codec.Walker{}}
	if stream == "events" {
		j.primer = []byte(event)
	}
	return j
}

// check holds the walker to the tree path: the same syntax errors, and a
// record it calls splicable is valid and means, spliced as is, what the
// tree path writes.
func (j judge) check(t testing.TB, rec []byte) (splicable bool) {
	t.Helper()
	rec = bytes.TrimLeft(rec, " \t\r\n") // the page scan skips it
	var w codec.Walker
	end, splicable, caps, err := w.Walk(rec, 0, j.shape)
	if j.primer != nil {
		j.warm.Walk(j.primer, 0, j.shape)
	}
	wend, wsplicable, wcaps, werr := j.warm.Walk(rec, 0, j.shape)
	if wend != end || wsplicable != splicable || !cmp.Equal(wcaps, caps) || (werr == nil) != (err == nil) {
		t.Errorf("%q: a walker after other records says end %d, splicable %v, captures %q, error %v; a new one %d, %v, %q, %v",
			rec, wend, wsplicable, wcaps, werr, end, splicable, caps, err)
	}
	tree, derr := codec.Decode(rec)
	if err == nil && end != len(rec) {
		return false // data after the record: the page scan's to reject
	}
	if (err != nil) != (derr != nil) {
		t.Errorf("%q: walker error %v, decoder error %v", rec, err, derr)
		return false
	}
	if err != nil {
		var se *codec.SyntaxError
		if !asSyntax(err, &se) {
			t.Errorf("%q: walker error %T, want *codec.SyntaxError", rec, err)
		}
		return false
	}
	if !splicable {
		return false
	}
	m, ok := tree.(map[string]any)
	if !ok {
		t.Errorf("%q: splicable, but not an object", rec)
		return false
	}
	if bad := j.v.Violations(m); bad != nil {
		t.Errorf("%q: splicable, but the validator says %v", rec, bad)
	}
	written, err := codec.Append(nil, tree)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsAny(rec, "\n\r") {
		t.Errorf("%q: splicable with a line break", rec)
	}
	if d := cmp.Diff(std(t, written), std(t, rec)); d != "" {
		t.Errorf("%q: spliced bytes differ from the tree path's (-tree +spliced):\n%s", rec, d)
	}
	return true
}

func asSyntax(err error, se **codec.SyntaxError) bool {
	e, ok := err.(*codec.SyntaxError)
	*se = e
	return ok
}

// std is what a target's JSON parser reads.
func std(t testing.TB, b []byte) any {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	return v
}

const event = `{"id":1,"type":"logout","actor_id":26,"occurred_at":"2026-10-02T00:00:00Z","source":"api","ip":"163.24.216.101","user_agent":"demo-sdk-python/2.7.0 python/3.12.4","payload":{"path":"/app/billing/3727/activity","duration_ms":227,"bytes":28844,"ok":true}}`

func TestWalk(t *testing.T) {
	j := newJudge(t, "events", "id")
	tests := []struct {
		rec       string
		splicable bool
	}{
		{event, true},
		{`{"id":1, "type": "x" , "payload" : { "ok" : null } }`, true},
		{`{"id":-0,"type":"caf\u00e9 \ud83d\ude00 déjà"}`, true},
		{`{"id":1,"occurred_at":"2024-02-29T23:59:59.123+05:30"}`, true},
		{`{"id":1,"payload":{"extra":[1,{"a":null}],"more":{}}}`, true},
		{`{"id":12345678901234567890123,"type":null}`, true},
		{`{"id":1.0}`, false}, // an integer to the library, not to the walker
		{`{"id":1e2}`, false}, // exponents go to the library
		{`{"id":12E2}`, false},
		{`{"id":90.5}`, false},
		{`{"id":10,"actor_id":0,"payload":{"bytes":-3,"duration_ms":7}}`, true},
		{`{"id":123`, false},
		{`{"id":123}`, true},
		{`{"id":"1"}`, false},      // wrong type
		{`{"type":"x"}`, false},    // id is required
		{`{"id":1,"id":2}`, false}, // duplicate key: the tree keeps the last
		{`{"id":1,"payload":{"x":1,"x":2}}`, false},
		{`{"\u0069d":1}`, false},                   // escaped key
		{"{\"id\":1,\"type\":\"caf\xff\"}", false}, // invalid UTF-8
		{`{"id":1,"type":"\ud800"}`, false},        // lone surrogate
		{`{"id":1,"type":"\udc00\ud800"}`, false},
		{"{\"id\":1,\n\"type\":\"x\"}", false}, // a line break
		{`{"id":1,"occurred_at":"2026-10-02T00:00:60Z"}`, false},
		{`{"id":1,"occurred_at":"2026-02-29T00:00:00Z"}`, false},
		{`{"id":1,"occurred_at":"2024-02-29"}`, false},
		{`{"id":1,"occurred_at":"2024-13-01T00:00:00Z"}`, false},
		{`{"id":1,"occurred_at":"2024-01-01T00:00:00\u005a"}`, false},
		{`{"id":1,"occurred_at":5}`, false},
		{`{"id":1,"payload":{"ok":"yes"}}`, false},
		{`{"id":1,"payload":[]}`, false},
		{`{"id":1,"surprise":true}`, false}, // drift wants the value
		// The warm walker guesses each key from the event before.
		{`{"id" :1,"type"	:"x"}`, true},
		{`{"id":1,"typ":"x"}`, false},
		{`{"id":1,"types":"x"}`, false},
		{`{"id":1,"type":"x","actor_id":2}`, true}, // guessed within 16 bytes of the end
		{`{"id":1,"type"`, false},
		{`{"id":1,"type":`, false},
		{`[1]`, false},
		{`null`, false},
	}
	for _, tt := range tests {
		if got := j.check(t, []byte(tt.rec)); got != tt.splicable {
			t.Errorf("%q: splicable %v, want %v", tt.rec, got, tt.splicable)
		}
	}
}

func TestWalkCaptures(t *testing.T) {
	j := newJudge(t, "events", "id", "occurred_at", "absent")
	var w codec.Walker
	rec := []byte(`{"payload":{"id":9},"occurred_at":"2026-10-02T00:00:00Z","id":77}`)
	_, _, caps, err := w.Walk(rec, 0, j.shape)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`77`, `"2026-10-02T00:00:00Z"`, ``, ``}
	for i, c := range caps {
		if string(c) != want[i] || (c == nil) != (want[i] == "") {
			t.Errorf("capture %d = %q, want %q", i, c, want[i])
		}
	}
}

// The walker's syntax errors are the decoder's, at the same offset.
func TestWalkSyntaxErrors(t *testing.T) {
	j := newJudge(t, "events")
	for _, in := range []string{`{`, `{"id":1,}`, `{"id" 1}`, `{"id":01}`, `{"id":1.}`, `{"id":-}`, `{"id":tru}`,
		`{"id":"abc`, "{\"id\":\"\x01\"}", `{"id":"\x"}`, `{"id":"\u12"}`, `{"id":[1 2]}`, `{1:2}`, ``} {
		var w codec.Walker
		_, _, _, err := w.Walk([]byte(in), 0, j.shape)
		_, derr := codec.Decode([]byte(in))
		if err == nil || derr == nil {
			t.Errorf("%q: walker %v, decoder %v; want both errors", in, err, derr)
			continue
		}
		if err.(*codec.SyntaxError).Offset != derr.(*codec.SyntaxError).Offset {
			t.Errorf("%q: walker %v, decoder %v", in, err, derr)
		}
	}
}

// TestWalkMutations mutates demo records at random: no record the
// walker calls splicable may be one the tree path rejects or writes
// differently. -mutations sets the count (300000 for the full run).
func TestWalkMutations(t *testing.T) {
	type corpus struct {
		stream string
		recs   []string
		schema string // instead of the stream's, with the library for what the walker leaves
	}
	for _, c := range []corpus{
		{"events", []string{event, `{"id":1,"type":"caf\u00e9","payload":{"extra":[1,{"a":null}]}}`, `{"id":1,"occurred_at":"2024-02-29T23:59:59.123+05:30"}`}, ""},
		{"orders", []string{`{"id":1,"customer_id":2,"status":"paid","amount":12.50,"currency":"EUR","items_count":3,"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-02T00:00:00-01:00"}`}, ""},
		{"keywords", []string{
			`{"id":12,"score":5.25,"big":-149.5,"code":"AB-12","word":"xé","day":"2024-02-29","at":"2024-02-29T23:59:59Z","mail":"a.b@c.de"}`,
			`{"id":1,"uid":"123e4567-e89b-12d3-a456-426614174000","ip":"10.0.0.255","host":"a.b","tags":["a","bc"],"qty":15,"either":"x"}`,
			`{"id":2,"ref":3,"meta":{"a":1},"pp":{"a":"s","x-b":2},"pair":[1,"a"],"cond":"ab","level":"three","nested":{"n":9,"m":1}}`,
		}, keywordSchema},
	} {
		var j judge
		if c.schema != "" {
			j = judgeOf(t, c.schema, true)
		} else {
			j = newJudge(t, c.stream)
		}
		r := rand.New(rand.NewPCG(1, uint64(len(c.stream))))
		alphabet := []byte("{}[]\",:0123456789.eE-+ \n\\utnfrlsa\xff\xc3\xa9Z")
		n, spliced := *mutations, 0
		for i := 0; i < n && !t.Failed(); i++ {
			b := []byte(c.recs[r.IntN(len(c.recs))])
			for k := 0; k < 1+r.IntN(3) && len(b) > 0; k++ {
				p := r.IntN(len(b))
				switch r.IntN(3) {
				case 0:
					b[p] = alphabet[r.IntN(len(alphabet))]
				case 1:
					b = append(b[:p], b[p+1:]...)
				case 2:
					b = append(b[:p], append([]byte{alphabet[r.IntN(len(alphabet))]}, b[p:]...)...)
				}
			}
			if j.check(t, b) {
				spliced++
			}
		}
		// A mutation test that splices nothing tests nothing.
		if spliced == 0 || spliced == n {
			t.Errorf("%s: %d of %d mutated records splicable", c.stream, spliced, n)
		}
	}
}

func FuzzWalk(f *testing.F) {
	f.Add([]byte(event))
	f.Add([]byte(`{"id":1,"type":"\ud83d\ude00","payload":{"x":[{"y":1e5}]}}`))
	j := newJudge(f, "events", "id")
	f.Fuzz(func(t *testing.T, rec []byte) {
		j.check(t, rec)
	})
}

func BenchmarkWalk(b *testing.B) {
	j := newJudge(b, "events", "id")
	rec := []byte(event)
	var w codec.Walker
	b.SetBytes(int64(len(rec)))
	for b.Loop() {
		if _, ok, _, err := w.Walk(rec, 0, j.shape); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

// TestWalkerEnumAndLength holds the walker's enum, const, minLength and
// maxLength to the schema library: a record it is sure of is valid, and
// the valid ones it can compare as they are, it is sure of.
func TestWalkerEnumAndLength(t *testing.T) {
	schema, err := codec.Decode([]byte(`{"type":"object","required":["id"],"properties":{
		"id":{"type":"integer"},
		"status":{"type":["null","string"],"enum":["open","closed",null]},
		"kind":{"const":"event"},
		"code":{"type":"string","minLength":2,"maxLength":3},
		"many":{"enum":["a","b","c","d","e","f","g","h","i","j"]},
		"q":{"type":"integer","minimum":10,"exclusiveMaximum":20}}}`))
	if err != nil {
		t.Fatal(err)
	}
	m := schema.(map[string]any)
	s, err := codec.CompileShape(m, "id")
	if err != nil {
		t.Fatal(err)
	}
	v, err := records.New(records.Options{Stream: "x", Schema: m, Policy: records.Emit})
	if err != nil {
		t.Fatal(err)
	}
	j := judge{shape: s, v: v, warm: &codec.Walker{}}
	for rec, sure := range map[string]bool{
		`{"id":1,"status":"open","kind":"event","code":"ab"}`: true,
		`{"id":1,"status":"closed","code":"abc"}`:             true,
		`{"id":1,"code":"é€"}`:                                true, // two code points
		`{"id":1,"status":"pending"}`:                         false,
		`{"id":1,"status":null}`:                              true, // null is in the enum
		`{"id":1,"kind":"event","status":true}`:               false,
		`{"id":1,"status":"op\u0065n"}`:                       false, // escaped: the library's
		`{"id":1,"status":1}`:                                 false,
		`{"id":1,"kind":"events"}`:                            false,
		`{"id":1,"kind":null}`:                                false,
		`{"id":1,"code":"a"}`:                                 false,
		`{"id":1,"code":"abcd"}`:                              false,
		`{"id":1,"code":"é"}`:                                 false,
		`{"id":1,"code":"日本語"}`:                               true, // 9 bytes, 3 code points
		`{"id":1,"code":"日本語x"}`:                              false,
		`{"id":1,"code":"éé"}`:                                true,
		`{"id":1,"many":"j"}`:                                 true,
		`{"id":1,"many":"k"}`:                                 false,
		`{"id":1,"q":10}`:                                     true,
		`{"id":1,"q":19}`:                                     true,
		`{"id":1,"q":9}`:                                      false,
		`{"id":1,"q":20}`:                                     false,
		`{"id":1,"q":-15}`:                                    false,
		`{"id":1,"q":1234567890123456789012}`:                 false,
		`{"id":1,"q":15.0}`:                                   false, // the library's call
	} {
		if got := j.check(t, []byte(rec)); got != sure {
			t.Errorf("%s: sure %v, want %v", rec, got, sure)
		}
	}
}
