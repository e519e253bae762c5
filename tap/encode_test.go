package tap

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/tap-dev/tap/settings"
)

// appendJSON must write exactly what encoding/json writes (HTML escaping
// off), so targets see the same bytes whichever path wrote them.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	inputs := []string{
		`{"b": 1, "a": [true, false, null, 1.50, -2e10, 9007199254740993], "c": {"z": "", "y": {}}}`,
		`{"s": "quote \" backslash \\ newline \n tab \t cr \r bell \u0007 bs \b ff \f del \u007f"}`,
		`{"html": "<a href=\"x\">&amp;</a>", "ls": "\u2028 \u2029", "emoji": "😀", "accents": "déjà vu"}`,
		`{"k\u0000ey": [[], [{}], [[1]]], "": "empty key"}`,
		`[1, "two", {"three": 3}]`,
		`"just a string"`,
		`12345678901234567890123`,
	}
	for _, in := range inputs {
		v, err := settings.DecodeJSON([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendJSON(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := marshal(v)
		if !bytes.Equal(got, want) {
			t.Errorf("appendJSON(%s)\n got %s\nwant %s", in, got, want)
		}
	}
	// Records of one stream, with the key order reused or not.
	var order []string
	for _, in := range []string{`{"a": 1, "b": 2}`, `{"b": 3, "a": 4}`, `{"a": 5, "c": 6}`, `{"a": 7}`, `{"c": 8, "a": 9}`, `{}`} {
		v, _ := settings.DecodeJSON([]byte(in))
		got, err := appendRecord(nil, v.(map[string]any), &order)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := marshal(v)
		if !bytes.Equal(got, want) {
			t.Errorf("appendRecord(%s) = %s, want %s", in, got, want)
		}
	}
	// Invalid UTF-8 is replaced, as encoding/json does.
	got, _ := appendJSON(nil, "a\xffb")
	want, _ := json.Marshal("a\xffb")
	if !bytes.Equal(got, want) {
		t.Errorf("invalid UTF-8: got %s, want %s", got, want)
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	v, _ := settings.DecodeJSON([]byte(`{"id": 123456, "type": "page_view", "actor_id": 42, "occurred_at": "2026-10-02T10:11:12Z", "source": "web", "ip": "10.1.2.3", "user_agent": "Mozilla/5.0 (X11; Linux x86_64)", "payload": {"path": "/pricing", "duration_ms": 1234, "bytes": 56789, "ok": true}}`))
	var buf []byte
	for b.Loop() {
		buf, _ = appendJSON(buf[:0], v)
	}
}

func BenchmarkEncodingJSON(b *testing.B) {
	v, _ := settings.DecodeJSON([]byte(`{"id": 123456, "type": "page_view", "actor_id": 42, "occurred_at": "2026-10-02T10:11:12Z", "source": "web", "ip": "10.1.2.3", "user_agent": "Mozilla/5.0 (X11; Linux x86_64)", "payload": {"path": "/pricing", "duration_ms": 1234, "bytes": 56789, "ok": true}}`))
	for b.Loop() {
		marshal(v)
	}
}
