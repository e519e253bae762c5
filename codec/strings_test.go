package codec

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMapStrings(t *testing.T) {
	in := map[string]any{"ab": []any{"a", json.Number("1"), map[string]any{"b": "ab"}, nil, true}, "x": "y"}
	want := map[string]any{"AB": []any{"A", json.Number("1"), map[string]any{"B": "AB"}, nil, true}, "X": "Y"}
	if got := MapStrings(in, strings.ToUpper); !cmp.Equal(got, want) {
		t.Errorf("MapStrings: %s", cmp.Diff(want, got))
	}
	if in["x"] != "y" || in["ab"].([]any)[0] != "a" {
		t.Errorf("MapStrings changed its input: %v", in)
	}
}
