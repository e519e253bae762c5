package codec

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The reference the encoder is held to is encoding/json with HTML escaping
// off, without the trailing newline: Marshal.
var stdMarshal = Marshal

// stdDecodeNumbers decodes with encoding/json, numbers as json.Number, so
// the encoder's tests do not depend on Decode.
func stdDecodeNumbers(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

var encodeDocs = []string{
	`{"b": 1, "a": [true, false, null, 1.50, -2e10, 9007199254740993], "c": {"z": "", "y": {}}}`,
	`{"s": "quote \" backslash \\ newline \n tab \t cr \r bell \u0007 bs \b ff \f del \u007f"}`,
	`{"html": "<a href=\"x\">&amp;</a>", "ls": "\u2028 \u2029", "emoji": "😀", "accents": "déjà vu"}`,
	`{"k\u0000ey": [[], [{}], [[1]]], "": "empty key"}`,
	`{"B": 1, "a": 2, "é": 3, "_": 4, "10": 5, "9": 6}`,
	`[1, "two", {"three": 3}]`,
	`"just a string"`,
	`12345678901234567890123`,
	`-0.0e-0`,
}

var encodeStrings = []string{
	"", "plain", `q"uote`, `back\slash`, "nl\n", "ünï", "<&>", "\u2028\u2029",
	"a\xffb", "\xed\xa0\x80 lone surrogate", "\x00\x1f\x7f", "\ufffd",
}

// Append must write exactly what encoding/json writes (HTML escaping
// off), so targets see the same bytes whichever path wrote them.
func TestAppend(t *testing.T) {
	for _, in := range encodeDocs {
		v, err := stdDecodeNumbers([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		checkAppend(t, v)
	}
	for _, s := range encodeStrings {
		checkAppend(t, s)
		checkAppend(t, map[string]any{s: s})
	}
	// Types Decode does not make go through encoding/json.
	checkAppend(t, []any{1.5, 7, map[string]any{"t": []string{"x"}}})
}

func checkAppend(t *testing.T, v any) {
	t.Helper()
	want, wantErr := stdMarshal(v)
	got, err := Append(nil, v)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("Append(%#v) error = %v, encoding/json error = %v", v, err, wantErr)
	}
	if err != nil {
		return
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Append(%#v)\n got %s\nwant %s", v, got, want)
	}
	if m, err := Marshal(v); err != nil || !bytes.Equal(m, want) {
		t.Fatalf("Marshal(%#v) = %s, %v; want %s", v, m, err, want)
	}
}

// AppendString writes what encoding/json writes with any byte in any
// position of the 8-byte words its plain prefix checks, and of the tail.
func TestAppendStringEveryByteEveryPosition(t *testing.T) {
	base := "0123456789abcdef0123" // two words and a tail
	for pos := range len(base) {
		for c := range 256 {
			checkAppend(t, base[:pos]+string([]byte{byte(c)})+base[pos+1:])
		}
	}
}

// AppendObject reuses the previous object's key order only when the keys
// are the same.
func TestAppendObject(t *testing.T) {
	var order []string
	for _, in := range []string{`{"a": 1, "b": 2}`, `{"b": 3, "a": 4}`, `{"a": 5, "c": 6}`, `{"a": 7}`, `{"c": 8, "a": 9}`, `{}`, `{"z": 1, "y": 2}`} {
		v, _ := stdDecodeNumbers([]byte(in))
		got, err := AppendObject(nil, v.(map[string]any), &order)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := stdMarshal(v)
		if !bytes.Equal(got, want) {
			t.Errorf("AppendObject(%s) = %s, want %s", in, got, want)
		}
	}
}

// FuzzAppendJSON holds Append and AppendObject to encoding/json over any
// document encoding/json decodes, plus any Go string (which may hold
// invalid UTF-8, which no decoded value does) as a value and as a key.
// Decoded values are where encoding/json's output is canonical for the
// encoder's settings (sorted keys, numbers as their text, no HTML
// escaping), so the bytes must be equal, not just the values.
func FuzzAppendJSON(f *testing.F) {
	for i, d := range encodeDocs {
		f.Add([]byte(d), encodeStrings[i%len(encodeStrings)])
	}
	f.Add([]byte("not json"), "a\xffb")
	f.Fuzz(func(t *testing.T, doc []byte, s string) {
		v, err := stdDecodeNumbers(doc)
		if err != nil {
			v = nil
		}
		values := []any{v, s, []any{v, s}, map[string]any{s: v, "k": s}}
		for _, val := range values {
			want, err := stdMarshal(val)
			if err != nil {
				t.Fatalf("encoding/json cannot encode %#v: %v", val, err)
			}
			got, err := Append(nil, val)
			if err != nil {
				t.Fatalf("Append(%#v): %v", val, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("Append(%#v)\n got %s\nwant %s", val, got, want)
			}
			sameValue(t, got, want)
		}
		// AppendObject, with an order left by an object with as many
		// keys but one different (written in part, then undone), then
		// with its own order.
		obj, ok := v.(map[string]any)
		if !ok {
			obj = map[string]any{s: v, "k": s}
		}
		order := slices.Sorted(maps.Keys(obj))
		if len(order) > 0 {
			order[len(order)-1] += "\x00"
		}
		for range 2 {
			got, err := AppendObject(nil, obj, &order)
			if err != nil {
				t.Fatalf("AppendObject(%#v): %v", obj, err)
			}
			want, _ := stdMarshal(obj)
			if !bytes.Equal(got, want) {
				t.Fatalf("AppendObject(%#v) with order %q\n got %s\nwant %s", obj, order, got, want)
			}
		}
	})
}

// sameValue checks that two encodings decode to equal values.
func sameValue(t *testing.T, got, want []byte) {
	t.Helper()
	g, err := stdDecodeNumbers(got)
	if err != nil {
		t.Fatalf("Append wrote invalid JSON %s: %v", got, err)
	}
	w, _ := stdDecodeNumbers(want)
	if d := cmp.Diff(w, g); d != "" {
		t.Fatalf("Append's output decodes differently (-encoding/json +Append):\n%s", d)
	}
}

const benchRecord = `{"id": 123456, "type": "page_view", "actor_id": 42, "occurred_at": "2026-10-02T10:11:12Z", "source": "web", "ip": "10.1.2.3", "user_agent": "Mozilla/5.0 (X11; Linux x86_64)", "payload": {"path": "/pricing", "duration_ms": 1234, "bytes": 56789, "ok": true}}`

func BenchmarkAppendJSON(b *testing.B) {
	v, _ := Decode([]byte(benchRecord))
	var buf []byte
	for b.Loop() {
		buf, _ = Append(buf[:0], v)
	}
}

func BenchmarkAppendObject(b *testing.B) {
	v, _ := Decode([]byte(benchRecord))
	var buf []byte
	var order []string
	for b.Loop() {
		buf, _ = AppendObject(buf[:0], v.(map[string]any), &order)
	}
}

func BenchmarkEncodingJSON(b *testing.B) {
	v, _ := Decode([]byte(benchRecord))
	for b.Loop() {
		Marshal(v)
	}
}
