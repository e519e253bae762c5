package deletes

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/tap-dev/tap/tap/reconcile"
)

func TestDeletionTimes(t *testing.T) {
	read := time.Date(2026, 12, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range []struct {
		name   string
		v      any
		format string
		want   string
	}{
		{"an RFC 3339 time, normalized to UTC", "2026-10-05T11:20:13+02:00", "", "2026-10-05T09:20:13Z"},
		{"unix seconds", json.Number("1791192188"), "unix", "2026-10-05T09:23:08Z"},
		{"unix milliseconds", json.Number("1791192188500"), "unix_ms", "2026-10-05T09:23:08.5Z"},
		{"no time: when it was read", nil, "", "2026-12-02T03:04:05Z"},
		{"not a time: when it was read", "yesterday", "", "2026-12-02T03:04:05Z"},
	} {
		if got := eventTime(tt.v, tt.format, read); got != tt.want {
			t.Errorf("%s: eventTime(%v) = %s, want %s", tt.name, tt.v, got, tt.want)
		}
	}
	// A soft delete's numeric replication key is a version, not a time.
	if got := deletedAt(json.Number("17"), read); got != "2026-12-02T03:04:05Z" {
		t.Errorf("deletedAt(17) = %s, want the time read", got)
	}
}

func TestKeyKind(t *testing.T) {
	schema := map[string]any{"properties": map[string]any{
		"id":   map[string]any{"type": "integer"},
		"nid":  map[string]any{"type": []any{"null", "integer"}},
		"code": map[string]any{"type": "string"},
		"num":  map[string]any{"type": "number"},
	}}
	for pk, want := range map[string]reconcile.Kind{"id": reconcile.Int, "nid": reconcile.Int, "code": reconcile.Text, "num": reconcile.Text} {
		if got := KeyKind(schema, pk); got != want {
			t.Errorf("KeyKind(%s) = %v, want %v", pk, got, want)
		}
	}
}
