package state

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tap-dev/tap/codec"
)

// The daily quota count in STATE: read from a Singer state's top level or
// from the copies in Airbyte stream states, written back in both.
func TestStateQuota(t *testing.T) {
	decode := func(s string) any {
		v, err := codec.Decode([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name     string
		state    string
		wantDay  string
		wantUsed int
		wantOK   bool
		wantErr  string
	}{
		{"singer", `{"bookmarks": {}, "quota": {"day": "2026-11-30", "used": 812}}`, "2026-11-30", 812, true, ""},
		{"none", `{"bookmarks": {}}`, "", 0, false, ""},
		{"airbyte: the latest copy wins", `[
			{"type": "STREAM", "stream": {"stream_descriptor": {"name": "a"}, "stream_state": {"quota": {"day": "2026-11-30", "used": 7}}}},
			{"type": "STREAM", "stream": {"stream_descriptor": {"name": "b"}, "stream_state": {"quota": {"day": "2026-11-30", "used": 9}}}},
			{"type": "STREAM", "stream": {"stream_descriptor": {"name": "c"}, "stream_state": {"quota": {"day": "2026-11-29", "used": 99}}}}]`,
			"2026-11-30", 9, true, ""},
		{"not a date", `{"quota": {"day": "yesterday", "used": 1}}`, "", 0, false, `quota: expected {"day": "YYYY-MM-DD", "used": N >= 0}`},
		{"negative", `{"quota": {"day": "2026-11-30", "used": -1}}`, "", 0, false, "quota: expected"},
		{"not an object", `{"quota": 5}`, "", 0, false, "quota: expected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := fromTree(decode(tt.state))
			if err != nil {
				t.Fatal(err)
			}
			day, used, ok, err := st.Quota()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || day != tt.wantDay || used != tt.wantUsed || ok != tt.wantOK {
				t.Errorf("quota %q %d %v %v, want %q %d %v", day, used, ok, err, tt.wantDay, tt.wantUsed, tt.wantOK)
			}
			for name, b := range st.bookmarks {
				if _, has := b[quotaKey]; has {
					t.Errorf("bookmark %s kept the quota copy", name)
				}
			}
		})
	}
}

// A run's quota count goes into every snapshot: the Singer state's top
// level and each Airbyte stream state.
func TestStateQuotaWritten(t *testing.T) {
	st := New()
	st.SetValue("orders", "updated_at", "2026-11-30T00:00:00Z")
	st.SetQuotaSource(func() (string, int) { return "2026-11-30", 812 })
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"quota":{"day":"2026-11-30","used":812}`) {
		t.Errorf("Singer state %s", b)
	}
	b, err = st.StreamJSON("orders")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"quota":{"day":"2026-11-30","used":812}`) || !strings.Contains(string(b), `"replication_key_value"`) {
		t.Errorf("Airbyte stream state %s", b)
	}
	if _, has := st.bookmarks["orders"][quotaKey]; has {
		t.Error("the copy went into the bookmark itself")
	}
}
