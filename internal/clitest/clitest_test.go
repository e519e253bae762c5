package clitest

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestMergePatch(t *testing.T) {
	tests := []struct{ doc, patch, want string }{
		{`{"a":1,"b":{"c":2,"d":3}}`, `{"b":{"c":null,"e":4}}`, `{"a":1,"b":{"d":3,"e":4}}`},
		{`{"a":1}`, `{"a":{"x":1}}`, `{"a":{"x":1}}`},
		{`{"a":[1,2]}`, `{"a":[3]}`, `{"a":[3]}`},
		{`{"a":1}`, `{}`, `{"a":1}`},
		{`{"a":1}`, `["x"]`, `["x"]`},
	}
	for _, tt := range tests {
		got := MergePatch(t, []byte(tt.doc), []byte(tt.patch))
		var want bytes.Buffer
		if err := json.Indent(&want, []byte(tt.want), "", "  "); err != nil {
			t.Fatal(err)
		}
		if string(got) != want.String() {
			t.Errorf("MergePatch(%s, %s) = %s, want %s", tt.doc, tt.patch, got, want.String())
		}
	}
}
