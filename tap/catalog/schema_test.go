package catalog

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams"
)

func TestOutputSchema(t *testing.T) {
	const schema = `{"type": "object", "additionalProperties": false,
		"properties": {"id": {"type": "integer"}, "note": {"type": "string"}, "secret": {"type": "string"}},
		"required": ["id", "secret"]}`
	for _, c := range []struct {
		name    string
		dropped map[string]bool
		want    string
	}{{
		name: "nothing dropped: the schema as it is",
		want: schema,
	}, {
		name:    "a property dropped that is not required",
		dropped: map[string]bool{"note": true},
		want: `{"type": "object", "additionalProperties": false,
			"properties": {"id": {"type": "integer"}, "secret": {"type": "string"}}, "required": ["id", "secret"]}`,
	}, {
		name:    "a required property dropped leaves required",
		dropped: map[string]bool{"secret": true},
		want: `{"type": "object", "additionalProperties": false,
			"properties": {"id": {"type": "integer"}, "note": {"type": "string"}}, "required": ["id"]}`,
	}, {
		name:    "every required property dropped: no required at all",
		dropped: map[string]bool{"id": true, "secret": true},
		want:    `{"type": "object", "additionalProperties": false, "properties": {"note": {"type": "string"}}}`,
	}, {
		name:    "a property the schema does not have",
		dropped: map[string]bool{"gone": true},
		want:    schema,
	}} {
		t.Run(c.name, func(t *testing.T) {
			in := decode(t, schema)
			got := OutputSchema(in, c.dropped)
			if diff := cmp.Diff(decode(t, c.want), got); diff != "" {
				t.Errorf("schema (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(decode(t, schema), in); diff != "" {
				t.Errorf("the schema given was changed (-before +after):\n%s", diff)
			}
		})
	}
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	v, err := codec.Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

func TestBookmarkProperties(t *testing.T) {
	for _, c := range []struct {
		d    streams.Definition
		want []string
	}{
		{streams.Definition{Name: "tickets"}, nil},
		{streams.Definition{Name: "orders", ReplicationKey: "updated_at"}, []string{"updated_at"}},
	} {
		if got := BookmarkProperties(&c.d); !cmp.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.d.Name, got, c.want)
		}
	}
}
