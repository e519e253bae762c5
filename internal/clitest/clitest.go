// Package clitest holds the file helpers the CLI table (main_test.go) and
// the end-to-end suite (integration_test) share: both write a row's config
// as the base config with a JSON merge patch applied.
package clitest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// MergePatch applies an RFC 7386 JSON merge patch to doc and returns the
// result indented.
func MergePatch(t testing.TB, doc, patch []byte) []byte {
	t.Helper()
	var d, p any
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(merge(d, p), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// merge is RFC 7386's MergePatch: a null member removes a key, an object
// merges, anything else replaces.
func merge(doc, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	dm, ok := doc.(map[string]any)
	if !ok {
		dm = map[string]any{}
	}
	for k, v := range pm {
		if v == nil {
			delete(dm, k)
		} else {
			dm[k] = merge(dm[k], v)
		}
	}
	return dm
}

// WriteFile writes b to path, making its directory.
func WriteFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
