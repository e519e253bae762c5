package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// stdDecode is the reference: encoding/json with UseNumber.
func stdDecode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if len(bytes.TrimLeft(b[dec.InputOffset():], " \t\r\n")) > 0 {
		return nil, errTrailing
	}
	return v, nil
}

var errTrailing = json.Unmarshal([]byte("x"), new(any))

var decodeCases = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e-7`, `-12E+3`, `9007199254740993`,
	`12345678901234567890123456789`, `"plain"`, `" spaced "`,
	`{"a": [1, {"b": null}], "c": "d", "a": "dup key: last wins"}`,
	`"esc \" \\ \/ \b \f \n \r \t \u00e9 \u20AC \ud83d\ude00"`,
	`"lone \ud800 surrogate \udc00 and pair at end \ud83d"`,
	"\"invalid utf-8 \xff\xfe here\"", "{\"k\xff\": 1}",
	`"déjà 😀"`, " \n\t\r[ 1 ,2 ] \n",
	`{"events": [{"id": 1, "payload": {"ok": true, "bytes": 12}}, {"id": 2, "payload": null}]}`,
	// invalid
	``, ` `, `{`, `[1,]`, `{"a" 1}`, `{"a":1,}`, `01`, `1.`, `.5`, `-`, `1e`, `+1`, `tru`, `nul`, `"abc`,
	"\"ctl \x01\"", `"\x"`, `"\u12"`, `[1] [2]`, `{"a":1} x`, `NaN`, `[1 2]`, `{1: 2}`,
}

func TestDecode(t *testing.T) {
	for _, in := range decodeCases {
		checkDecode(t, []byte(in))
	}
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	if _, err := Decode([]byte(deep)); err == nil {
		t.Errorf("nesting deeper than 10000 should be an error")
	}
}

// Errors say what is wrong and where.
func TestDecodeErrors(t *testing.T) {
	tests := map[string]struct {
		in     string
		msg    string
		offset int
	}{
		"trailing value":    {`{} {}`, "data after the first value", 3},
		"trailing garbage":  {`[1]]`, "data after the first value", 3},
		"truncated":         {`{"a": [1, 2`, "unexpected end of input in array", 11},
		"empty":             {``, "empty JSON document", 0},
		"whitespace only":   {" \n", "empty JSON document", 2},
		"trailing bad char": {`1 x`, "data after the first value", 2},
		"bad key":           {"{\n  \"a\": 1,,\n}", `invalid character ',' in object key`, 11},
		"control character": {"\"a\x01\"", `invalid character '\x01' in string literal`, 2},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Decode([]byte(tt.in))
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Decode(%q) error = %v, want a *SyntaxError", tt.in, err)
			}
			if se.Msg != tt.msg || se.Offset != tt.offset {
				t.Errorf("Decode(%q): %q at byte %d, want %q at byte %d", tt.in, se.Msg, se.Offset, tt.msg, tt.offset)
			}
		})
	}
}

func checkDecode(t *testing.T, in []byte) {
	t.Helper()
	want, wantErr := stdDecode(in)
	got, err := Decode(in)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("Decode(%q) error = %v, encoding/json error = %v", in, err, wantErr)
	}
	if se, ok := err.(*SyntaxError); err != nil && (!ok || se.Offset < 0 || se.Offset > len(in)) {
		t.Fatalf("Decode(%q) error = %#v, want a *SyntaxError with an offset in the input", in, err)
	}
	if err == nil {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Decode(%q) differs from encoding/json (-want +got):\n%s", in, diff)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if bytes.Count(in, []byte("[")) > 1000 {
			return // nesting limits differ in wording only
		}
		checkDecode(t, in)
	})
}

func BenchmarkDecode(b *testing.B) {
	var page bytes.Buffer
	page.WriteString(`{"events": [`)
	for i := range 1000 {
		if i > 0 {
			page.WriteByte(',')
		}
		page.WriteString(`{"id": 123456, "type": "page_view", "actor_id": 42, "occurred_at": "2026-10-02T10:11:12Z", "source": "web", "ip": "10.1.2.3", "user_agent": "Mozilla/5.0 (X11; Linux x86_64)", "payload": {"path": "/pricing", "duration_ms": 1234, "bytes": 56789, "ok": true}}`)
	}
	page.WriteString(`]}`)
	b.Run("codec", func(b *testing.B) {
		for b.Loop() {
			Decode(page.Bytes())
		}
		b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("encoding_json", func(b *testing.B) {
		for b.Loop() {
			stdDecode(page.Bytes())
		}
		b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "records/s")
	})
}

// DecodeRecords marks an object whose keys became one once their invalid
// UTF-8 was replaced (a value lost), and every object it is in, with the
// pointer of the collision; TakeCollision takes the marks away. Decode
// marks nothing.
func TestDecodeRecordsMarksCollisions(t *testing.T) {
	page := "{\"data\":[{\"id\":1,\"a\xff\":1,\"a\xfe\":2},{\"id\":2,\"n\":[0,{\"b\xff\":1,\"b\uFFFD\":2}]},{\"id\":3,\"a\xff\":1,\"a\":2},{\"id\":4,\"id\":5}]}"
	v, err := DecodeRecords([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	root := v.(map[string]any)
	if got := root[CollisionKey]; got != "/data/0/a\uFFFD" {
		t.Errorf("the page's mark = %q, want the first collision's pointer", got)
	}
	recs := root["data"].([]any)
	for i, want := range []string{"/a\uFFFD", "/n/1/b\uFFFD", "", ""} {
		rec := recs[i].(map[string]any)
		p, ok := TakeCollision(rec)
		if p != want || ok != (want != "") {
			t.Errorf("record %d: TakeCollision = %q, %v; want %q", i, p, ok, want)
		}
		if s := fmt.Sprint(rec); strings.Contains(s, CollisionKey) {
			t.Errorf("record %d keeps a mark: %s", i, s)
		}
	}
	plain, err := Decode([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprint(plain); strings.Contains(s, CollisionKey) {
		t.Errorf("Decode marked %s", s)
	}
}
