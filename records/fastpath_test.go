package records

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/schemas"
)

// The fast path may only ever say "valid" when the library agrees: a record
// it passes that the library rejects would be a record silently let
// through.
func TestFastPathNeverPassesWhatTheLibraryRejects(t *testing.T) {
	records := []string{
		`{"id": 1, "updated_at": "2026-01-01T00:00:00Z", "amount": 1.5}`,
		`{"id": 1.0, "updated_at": "2026-01-01T00:00:00Z", "amount": 1}`,
		`{"id": 1.5, "updated_at": "2026-01-01T00:00:00Z", "amount": 1}`,
		`{"id": 1e3, "updated_at": "2026-01-01T00:00:00+02:00", "amount": 2}`,
		`{"id": "1", "updated_at": "2026-01-01T00:00:00Z", "amount": 1}`,
		`{"id": 1, "updated_at": "2026-13-01T00:00:00Z", "amount": 1}`,
		`{"id": 1, "updated_at": "2026-01-01t00:00:00z", "amount": 1}`,
		`{"id": 1, "updated_at": "2016-12-31T23:59:60Z", "amount": 1}`,
		`{"id": 1, "updated_at": null, "amount": "12.30"}`,
		`{"id": 1, "amount": 1}`,
		`{"updated_at": "2026-01-01T00:00:00Z"}`,
		`{"id": 12345678901234567890, "updated_at": "2026-01-01T00:00:00Z", "amount": 1, "tags": ["a", 2], "address": {"zip": 5}}`,
		`{"id": 1, "updated_at": "2026-01-01T00:00:00Z", "amount": 1, "tags": null, "address": null, "payload": {"ok": "yes"}}`,
		`{"id": 1, "updated_at": "2026-01-01T00:00:00Z", "amount": 1, "t": "2026-01-01T00:00:00Z", "symbol": "X", "labels": [], "extra": {"deep": [1, {"x": null}]}}`,
		`{"symbol": 5, "t": "yesterday", "order_id": "7", "quantity": 1.25, "unit_price": "3"}`,
	}
	err := fs.WalkDir(schemas.FS, ".", func(path string, e fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(path, ".json") {
			return err
		}
		b, _ := schemas.FS.ReadFile(path)
		schema, err := codec.Decode(b)
		if err != nil {
			return err
		}
		fast, ok := buildFastPath(schema)
		if !ok {
			t.Errorf("%s: no fast path for a bundled schema", path)
			return nil
		}
		lib, err := Compile(path, schema.(map[string]any))
		if err != nil {
			return err
		}
		for _, r := range records {
			v, err := codec.Decode([]byte(r))
			if err != nil {
				t.Fatal(err)
			}
			libErr := lib.Validate(v)
			if fast.valid(v) && libErr != nil {
				t.Errorf("%s: fast path passes %s, the library rejects it: %v", path, r, libErr)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestBuildQuickRefusesKeywordsItDoesNotKnow(t *testing.T) {
	for _, s := range []string{
		`{"type": "object", "properties": {"a": {"type": "string", "pattern": "^x"}}}`,
		`{"type": "object", "properties": {"a": {"$ref": "#/definitions/x"}}}`,
		`{"type": "object", "anyOf": [{}]}`,
		`{"type": "object", "additionalProperties": {"type": "string"}}`,
		`{"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}}`,
		`{"type": "object", "properties": {"e": {"enum": ["a"]}}}`,
	} {
		v, err := codec.Decode([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := buildFastPath(v); ok {
			t.Errorf("buildFastPath(%s) built a fast path; it must leave this schema to the library", s)
		}
	}
}

// TestFormatOnly: a sub-schema of one format, checked by the library's
// format function, answers as the library's validation of it, value by
// value, in each draft.
func TestFormatOnly(t *testing.T) {
	values := []any{"example.com", "exa_mple.com", "a.-b", "", "/x?y#z", "http://[::1", `a\b`, "a@b.co", "a..b@c",
		"2026-01-02T03:04:05Z", "2026-13-02T03:04:05Z", "::1", "1.2.3.4", "urn:x", 12, nil, true, []any{"x"}}
	for _, draft := range []string{"", "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2020-12/schema"} {
		for _, name := range []string{"hostname", "uri-reference", "uri", "email", "date-time", "ipv6", "ipv4", "regex"} {
			kw := map[string]any{"format": name}
			f := formatOnly(kw)
			if f == nil {
				t.Fatalf("format %q: no check", name)
			}
			schema := map[string]any{"properties": map[string]any{"v": kw}}
			if draft != "" {
				schema["$schema"] = draft
			}
			v, err := New(Options{Stream: "x", Schema: schema, Policy: Emit})
			if err != nil {
				t.Fatal(err)
			}
			for _, val := range values {
				lib := v.Violations(map[string]any{"v": val}) == nil
				if got := f(val); got != lib {
					t.Errorf("%s format %q on %#v: %v, the library %v", draft, name, val, got, lib)
				}
			}
		}
	}
	for _, kw := range []map[string]any{{"format": "no-such"}, {"format": "email", "maxLength": 3}, {"minimum": 1}} {
		if formatOnly(kw) != nil {
			t.Errorf("%v: a format check", kw)
		}
	}
}
