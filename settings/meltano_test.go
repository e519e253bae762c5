package settings

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The committed plugin definition is what the registry generates now: a
// setting added without regenerating it fails here, with the command.
func TestMeltanoFileIsCurrent(t *testing.T) {
	committed, err := os.ReadFile("../" + MeltanoFile)
	if err != nil {
		t.Fatalf("%v; generate it from the repository root: %s", err, MeltanoCommand)
	}
	if diff := cmp.Diff(strings.Split(string(committed), "\n"), strings.Split(AboutInfo().Meltano(), "\n")); diff != "" {
		t.Errorf("%s is stale (-committed +generated):\n%s\nregenerate it from the repository root: %s", MeltanoFile, diff, MeltanoCommand)
	}
}

func TestMeltanoKind(t *testing.T) {
	for _, tc := range []struct {
		s    Setting
		want string
	}{
		{Setting{Type: "string"}, "string"},
		{Setting{Type: "string", Secret: true}, "string"}, // sensitive, not the deprecated password kind
		{Setting{Type: "string", Enum: []string{"a", "b"}}, "options"},
		{Setting{Type: "string", Format: "date-time"}, "date_iso8601"},
		{Setting{Type: "integer"}, "integer"},
		{Setting{Type: "number"}, "decimal"},
		{Setting{Type: "boolean"}, "boolean"},
		{Setting{Type: "object"}, "object"},
		{Setting{Type: "array"}, "array"},
	} {
		if got := tc.s.MeltanoKind(); got != tc.want {
			t.Errorf("%+v: kind %q, want %q", tc.s, got, tc.want)
		}
	}
}

// Every kind and capability is one meltano.yml's schema allows, so that
// Meltano loads the definition.
func TestMeltanoKindsAndCapabilitiesAreMeltanos(t *testing.T) {
	kinds := []string{"oauth", "date_iso8601", "file", "email", "integer", "decimal", "options", "object", "array", "boolean", "string"}
	for _, s := range Settings() {
		if k := s.MeltanoKind(); !slices.Contains(kinds, k) {
			t.Errorf("setting %s: kind %q is not a Meltano setting kind", s.Name, k)
		}
	}
	capabilities := []string{"properties", "catalog", "discover", "state", "about", "stream-maps", "activate-version",
		"batch", "test", "log-based", "schema-flattening", "structured-logging"}
	for _, c := range AboutInfo().Capabilities {
		if !slices.Contains(capabilities, c) {
			t.Errorf("capability %q is not a Meltano extractor capability", c)
		}
	}
}
