package codec

import (
	"encoding/json"
	"testing"
)

// TestScalar: what Scalar reads is what Decode gives; what it leaves is
// left to Decode.
func TestScalar(t *testing.T) {
	for _, tt := range []struct {
		text string
		ok   bool
	}{
		{`"abc"`, true}, {`""`, true}, {`"é ☃"`, true}, {`0`, true}, {`-12.5e+3`, true}, {`9007199254740993`, true},
		{`"a\"b"`, false}, {`"\u00e9"`, false}, {`null`, false}, {`true`, false}, {`false`, false}, {`{"a":1}`, false}, {`[1]`, false}, {``, false},
	} {
		s, number, ok := Scalar(tt.text)
		if ok != tt.ok {
			t.Errorf("%s: ok %v, want %v", tt.text, ok, tt.ok)
			continue
		}
		if !ok {
			continue
		}
		want, err := Decode([]byte(tt.text))
		if err != nil {
			t.Fatalf("%s: %v", tt.text, err)
		}
		var got any = s
		if number {
			got = json.Number(s)
		}
		if got != want {
			t.Errorf("%s: %#v, Decode gives %#v", tt.text, got, want)
		}
	}
}
