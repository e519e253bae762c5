// Package jsontest holds the JSON helpers the tests of several packages
// share.
package jsontest

import (
	"testing"

	"github.com/tap-dev/tap/codec"
)

// Decode decodes s as the tap decodes bodies (numbers as json.Number), or
// fails the test.
func Decode(t testing.TB, s string) any {
	t.Helper()
	v, err := codec.Decode([]byte(s))
	if err != nil {
		t.Fatalf("codec.Decode(%s): %v", s, err)
	}
	return v
}
