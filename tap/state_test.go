package tap

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/settings"
)

func TestLoadStateForms(t *testing.T) {
	tests := []struct {
		name, input string
		wantValue   map[string]any // stream → replication_key_value
		wantOther   map[string]any
		wantErr     string
	}{
		{
			name:      "meltano sdk state with unknown keys kept",
			input:     `{"bookmarks": {"orders": {"replication_key": "updated_at", "replication_key_value": "2026-08-18T09:00:00Z", "starting_replication_value": "x"}}, "currently_syncing": "orders", "tool": {"v": 1}}`,
			wantValue: map[string]any{"orders": "2026-08-18T09:00:00Z"},
			wantOther: map[string]any{"tool": map[string]any{"v": json.Number("1")}},
		},
		{
			name:      "airbyte per-stream messages",
			input:     `[{"type": "STREAM", "stream": {"stream_descriptor": {"name": "events"}, "stream_state": {"replication_key": "id", "replication_key_value": 42}}}]`,
			wantValue: map[string]any{"events": json.Number("42")},
			wantOther: map[string]any{},
		},
		{
			name:      "airbyte whole state messages",
			input:     `[{"type": "STATE", "state": {"type": "STREAM", "stream": {"stream_descriptor": {"name": "events"}, "stream_state": {"replication_key_value": 7}}}}]`,
			wantValue: map[string]any{"events": json.Number("7")},
			wantOther: map[string]any{},
		},
		{
			name:      "airbyte legacy object",
			input:     `{"type": "LEGACY", "data": {"bookmarks": {"a": {"replication_key_value": "v"}}}}`,
			wantValue: map[string]any{"a": "v"},
			wantOther: map[string]any{},
		},
		{name: "not an object", input: `"x"`, wantErr: "expected a JSON object"},
		{name: "bookmarks not an object", input: `{"bookmarks": 3}`, wantErr: "bookmarks: expected an object"},
		{name: "bookmark not an object", input: `{"bookmarks": {"a": 3}}`, wantErr: "bookmarks.a: expected a bookmark object"},
		{name: "airbyte global", input: `[{"type": "GLOBAL"}]`, wantErr: "GLOBAL state is not supported"},
		{name: "airbyte stream without name", input: `[{"type": "STREAM", "stream": {}}]`, wantErr: "stream_descriptor.name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.json")
			os.WriteFile(path, []byte(tt.input), 0o644)
			st, err := LoadState(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), path) {
					t.Fatalf("error %v, want one naming %s and containing %q", err, path, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for stream, want := range tt.wantValue {
				if got := st.Value(stream); !cmp.Equal(got, want) {
					t.Errorf("Value(%s) = %#v, want %#v", stream, got, want)
				}
			}
			if diff := cmp.Diff(tt.wantOther, st.other); diff != "" {
				t.Errorf("other keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStateRoundTripKeepsUnsyncedStreams(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	os.WriteFile(path, []byte(`{"bookmarks": {"old": {"replication_key": "k", "replication_key_value": "v", "extra": true}}, "x": 1}`), 0o644)
	st, err := LoadState(path)
	if err != nil {
		t.Fatal(err)
	}
	st.SetSyncing("orders", true)
	st.SetValue("orders", "updated_at", "2026-01-01T00:00:00Z")
	st.SetWindow("orders", "2026-01-01T00:00:00Z", "2026-01-08T00:00:00Z")
	b, _ := st.MarshalJSON()
	want := `{"bookmarks":{"old":{"extra":true,"replication_key":"k","replication_key_value":"v"},"orders":{"replication_key":"updated_at","replication_key_value":"2026-01-01T00:00:00Z","window":{"end":"2026-01-08T00:00:00Z","start":"2026-01-01T00:00:00Z"}}},"currently_syncing":"orders","x":1}`
	if string(b) != want {
		t.Errorf("state:\n%s\nwant:\n%s", b, want)
	}
	st.SetWindow("orders", "", "")
	st.SetSyncing("other", false) // clearing another stream leaves ours
	st.SetSyncing("orders", false)
	b, _ = st.MarshalJSON()
	if strings.Contains(string(b), "window") || !strings.Contains(string(b), `"currently_syncing":null`) {
		t.Errorf("window and currently_syncing not cleared: %s", b)
	}
}

// A bookmark that echoes a secret (a resume URL carrying a token) is
// written with the secret masked, in Singer and Airbyte form alike.
func TestStateIsRedacted(t *testing.T) {
	st := NewState()
	st.redact = settings.NewRedactor("hunter2")
	st.SetValue("orders", "resume", "https://api.example.com/v1/orders?page=2&key=hunter2")
	full, err := st.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	one, err := st.StreamJSON("orders")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]byte{full, one} {
		if strings.Contains(string(b), "hunter2") || !strings.Contains(string(b), "key=REDACTED") {
			t.Errorf("state not redacted: %s", b)
		}
	}
	// The run itself still reads the real value.
	if v := st.Value("orders"); v != "https://api.example.com/v1/orders?page=2&key=hunter2" {
		t.Errorf("Value = %v", v)
	}
}
