package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/streams/pages"
)

func TestLoadForms(t *testing.T) {
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
		{name: "job_done not a list of names", input: `{"bookmarks": {}, "job_done": ["a", 3]}`, wantErr: "job_done: expected a list of stream names"},
		{name: "job_done not a list", input: `{"bookmarks": {}, "job_done": "a"}`, wantErr: "job_done: expected a list of stream names"},
		{name: "airbyte global", input: `[{"type": "GLOBAL"}]`, wantErr: "GLOBAL state is not supported"},
		{name: "airbyte stream without name", input: `[{"type": "STREAM", "stream": {}}]`, wantErr: "stream_descriptor.name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.json")
			os.WriteFile(path, []byte(tt.input), 0o644)
			st, err := Load(path)
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
	st, err := Load(path)
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
	st := New()
	st.SetRedactor(settings.NewRedactor("hunter2-pw"))
	st.SetValue("orders", "resume", "https://api.example.com/v1/orders?page=2&key=hunter2-pw")
	full, err := st.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	one, err := st.StreamJSON("orders")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]byte{full, one} {
		if strings.Contains(string(b), "hunter2-pw") || !strings.Contains(string(b), "key=REDACTED") {
			t.Errorf("state not redacted: %s", b)
		}
	}
	// The run itself still reads the real value.
	if v := st.Value("orders"); v != "https://api.example.com/v1/orders?page=2&key=hunter2-pw" {
		t.Errorf("Value = %v", v)
	}
}

// failed_windows is checked before any request: each bad shape is one line
// naming the file, the field and what was expected.
func TestLoadForChecksFailedWindows(t *testing.T) {
	cfg := &settings.Config{
		Streams: []streams.Definition{{Name: "events", ReplicationKey: "updated_at"}},
		Schemas: map[string]map[string]any{"events": {"properties": map[string]any{
			"updated_at": map[string]any{"type": "string", "format": "date-time"}}}},
	}
	bookmark := func(failed, high string) string {
		return `{"bookmarks": {"events": {"replication_key": "updated_at", "replication_key_value": "2026-01-02T00:00:00Z",
		  "window": {"start": "2026-01-05T00:00:00Z", "end": "2026-01-05T00:00:00Z", "high": ` + high + `}, "failed_windows": ` + failed + `}}}`
	}
	tests := map[string]struct {
		failed, high string
		want         []streams.FailedWindow
		wantErr      string
	}{
		"window.high not a time": {failed: `[]`, high: `5`, wantErr: `bookmarks.events.window.high: expected an RFC 3339 time (the largest "updated_at" read), got 5`},
		"two windows": {
			failed: `[{"start": "2026-01-02T00:00:00Z", "end": "2026-01-03T00:00:00Z", "error": "503"},
			          {"start": "2026-01-04T00:00:00Z", "end": "2026-01-05T00:00:00Z"}]`,
			want: []streams.FailedWindow{
				{Window: keys.Window{Start: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)}, Error: "503"},
				{Window: keys.Window{Start: time.Date(2026, 1, 4, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)}},
			},
		},
		"empty":            {failed: `[]`, want: []streams.FailedWindow{}},
		"not an array":     {failed: `{"start": "2026-01-02T00:00:00Z"}`, wantErr: `bookmarks.events.failed_windows: expected an array of {"start", "end", "error"}, got {"start":"2026-01-02T00:00:00Z"}`},
		"not an object":    {failed: `["2026-01-02"]`, wantErr: `bookmarks.events.failed_windows[0]: expected an object {"start", "end", "error"}, got "2026-01-02"`},
		"start not time":   {failed: `[{"start": "monday", "end": "2026-01-03T00:00:00Z"}]`, wantErr: `bookmarks.events.failed_windows[0].start: expected an RFC 3339 time, got "monday"`},
		"end missing":      {failed: `[{"start": "2026-01-02T00:00:00Z"}]`, wantErr: `bookmarks.events.failed_windows[0].end: expected an RFC 3339 time, got null`},
		"end before start": {failed: `[{"start": "2026-01-03T00:00:00Z", "end": "2026-01-02T00:00:00Z"}]`, wantErr: `bookmarks.events.failed_windows[0].end: expected a time after start "2026-01-03T00:00:00Z", got "2026-01-02T00:00:00Z"`},
		"error not text":   {failed: `[{"start": "2026-01-02T00:00:00Z", "end": "2026-01-03T00:00:00Z", "error": 503}]`, wantErr: `bookmarks.events.failed_windows[0].error: expected a string, got 503`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.json")
			if tt.high == "" {
				tt.high = `"2026-01-04T23:00:00Z"`
			}
			if err := os.WriteFile(path, []byte(bookmark(tt.failed, tt.high)), 0o644); err != nil {
				t.Fatal(err)
			}
			st, err := LoadFor(path, cfg, nil)
			if tt.wantErr != "" {
				if err == nil || err.Error() != path+": "+tt.wantErr {
					t.Fatalf("error:\n %v\nwant:\n %s: %s", err, path, tt.wantErr)
				}
				var ie *settings.InputError
				if !errors.As(err, &ie) {
					t.Errorf("error %T, want a *settings.InputError (exit 2)", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := st.FailedWindows("events")
			if err != nil {
				t.Fatal(err)
			}
			ignore := cmpopts.IgnoreUnexported(streams.FailedWindow{})
			if d := cmp.Diff(tt.want, got, ignore); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			// Written back as read.
			st.SetFailedWindows("events", got)
			again, _ := st.FailedWindows("events")
			if d := cmp.Diff(tt.want, again, cmpopts.EquateEmpty(), ignore); d != "" {
				t.Errorf("round trip (-want +got):\n%s", d)
			}
		})
	}
}

// Airbyte mode carries failed_windows in the stream state, both ways.
func TestAirbyteStreamStateCarriesFailedWindows(t *testing.T) {
	day := func(d int) string { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC).Format(time.RFC3339) }
	st := New()
	st.SetValue("s", "updated_at", day(3))
	st.update("s", func(b map[string]any) {
		b["failed_windows"] = []any{map[string]any{"start": day(3), "end": day(4), "error": "503"}}
	})
	raw, err := st.StreamJSON("s")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"failed_windows":[{"end":"`+day(4)+`","error":"503","start":"`+day(3)+`"}]`) {
		t.Fatalf("stream state %s lacks failed_windows", raw)
	}
	msg := `[{"type": "STREAM", "stream": {"stream_descriptor": {"name": "s"}, "stream_state": ` + string(raw) + `}}]`
	path := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(path, []byte(msg), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := back.FailedWindows("s")
	if err != nil || len(got) != 1 || got[0].Start.Format(time.RFC3339) != day(3) || got[0].Error != "503" {
		t.Errorf("FailedWindows = %v, %v", got, err)
	}
}

func TestReset(t *testing.T) {
	st := New()
	st.SetValue("orders", "updated_at", "2026-01-01T00:00:00Z")
	st.SetValue("tickets", "updated_at", "2026-02-01T00:00:00Z")
	st.Reset("orders")
	if st.Value("orders") != nil || st.Value("tickets") == nil {
		t.Errorf("orders %v, tickets %v", st.Value("orders"), st.Value("tickets"))
	}
}

// SetPartitions takes only what changed: a partition's bookmark is set in
// place, a new one added, a folded one removed; a bookmark that goes down
// is reported by MovedBack until the next snapshot.
func TestSetPartitionsChanges(t *testing.T) {
	st, err := Parse([]byte(`{"bookmarks":{"kids":{"partitions":[
		{"context":{"id":1},"replication_key":"k","replication_key_value":"2026-01-05T00:00:00Z"},
		{"context":{"id":2},"replication_key":"k","replication_key_value":"2026-01-06T00:00:00Z"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx := func(id int) map[string]any { return map[string]any{"id": json.Number(fmt.Sprint(id))} }
	pb := func(id int, v string) streams.PartitionBookmark {
		return streams.PartitionBookmark{Context: ctx(id), Value: v, ID: keys.PartitionID(ctx(id))}
	}
	st.SetPartitions("kids", "k", []streams.PartitionBookmark{pb(2, "2026-01-07T00:00:00Z"), pb(3, "2026-01-08T00:00:00Z")}, nil, nil)
	if st.MovedBack("kids") {
		t.Error("MovedBack after bookmarks that went up")
	}
	st.SetPartitions("kids", "k", []streams.PartitionBookmark{pb(3, "2026-01-02T00:00:00Z")}, []string{keys.PartitionID(ctx(1))}, "2026-01-05T00:00:00Z")
	if !st.MovedBack("kids") || !st.MovedBack("") {
		t.Error("no MovedBack after a partition's bookmark went down")
	}
	parts, floor := st.Partitions("kids")
	var got []string
	for _, p := range parts {
		got = append(got, fmt.Sprint(p.Context["id"], "=", p.Value))
	}
	if want := []string{"2=2026-01-07T00:00:00Z", "3=2026-01-02T00:00:00Z"}; !slices.Equal(got, want) || floor != "2026-01-05T00:00:00Z" {
		t.Errorf("partitions %v floor %v, want %v and the floor", got, floor, want)
	}
	if _, err := st.MarshalJSON(); err != nil || st.MovedBack("") {
		t.Errorf("MovedBack after a snapshot (%v)", err)
	}
}

// The bookmarks of streams the config does not have are written back as
// they came in, exactly, and a stream's bookmark held so is read again
// when asked for.
func TestCheckKeepsOtherStreamsRaw(t *testing.T) {
	st, err := Parse([]byte(`{"bookmarks":{"gone":{"replication_key_value":12345678901234567890123,"x":[1,{"y":null}]},"orders":{"replication_key":"updated_at","replication_key_value":"2026-01-01T00:00:00Z"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &settings.Config{Streams: []streams.Definition{{Name: "orders", ReplicationKey: "updated_at"}}}
	if err := st.Check(cfg, nil); err != nil {
		t.Fatal(err)
	}
	if len(st.raw) != 1 || len(st.bookmarks) != 1 {
		t.Fatalf("raw %d, trees %d; want gone raw and orders a tree", len(st.raw), len(st.bookmarks))
	}
	b, err := st.MarshalJSON()
	want := `{"bookmarks":{"gone":{"replication_key_value":12345678901234567890123,"x":[1,{"y":null}]},"orders":{"replication_key":"updated_at","replication_key_value":"2026-01-01T00:00:00Z"}},"currently_syncing":null}`
	if err != nil || string(b) != want {
		t.Errorf("state %s (%v), want %s", b, err, want)
	}
	if v := st.Value("gone"); fmt.Sprint(v) != "12345678901234567890123" {
		t.Errorf("Value(gone) = %v", v)
	}
}

// A state a run would skip rows by is refused before any request: a
// bookmark days in the future, a window that ends before it starts, a
// replication_key that is not the stream's. A bookmark a little ahead (an
// API's clock) and a window of no length (the walk's end) are fine.
func TestCheckRefusesSkippingBookmarks(t *testing.T) {
	cfg := &settings.Config{
		Streams: []streams.Definition{{Name: "events", ReplicationKey: "updated_at"}},
		Schemas: map[string]map[string]any{"events": {"properties": map[string]any{
			"updated_at": map[string]any{"type": "string", "format": "date-time"}}}},
	}
	now := time.Now().UTC()
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	tests := map[string]struct{ bookmark, wantErr string }{
		"in the future":       {`{"replication_key": "updated_at", "replication_key_value": "` + at(72*time.Hour) + `"}`, "is in the future"},
		"an hour ahead":       {`{"replication_key": "updated_at", "replication_key_value": "` + at(time.Hour) + `"}`, ""},
		"window backwards":    {`{"replication_key_value": "2026-01-01T00:00:00Z", "window": {"start": "2026-06-01T00:00:00Z", "end": "2026-01-01T00:00:00Z"}}`, "ends (2026-01-01T00:00:00Z) before it starts (2026-06-01T00:00:00Z)"},
		"window of no length": {`{"replication_key_value": "2026-01-01T00:00:00Z", "window": {"start": "2026-06-01T00:00:00Z", "end": "2026-06-01T00:00:00Z"}}`, ""},
		"another key":         {`{"replication_key": "created_at", "replication_key_value": "2026-01-01T00:00:00Z"}`, `"created_at", but the stream's replication_key is "updated_at"`},
		"no replication_key":  {`{"replication_key_value": "2026-01-01T00:00:00Z"}`, ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.json")
			if err := os.WriteFile(path, []byte(`{"bookmarks": {"events": `+tt.bookmark+`}}`), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadFor(path, cfg, nil)
			var ie *settings.InputError
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &ie) || ie.File != path):
				t.Fatalf("error %v, want an input error naming %s with %q", err, path, tt.wantErr)
			}
		})
	}
}

// TestSnapshotTextIsEncodingJSONs: the snapshot, encoded without
// reflection, is the text encoding/json writes of the same value, <, >
// and & escaped as it escapes them.
func TestSnapshotTextIsEncodingJSONs(t *testing.T) {
	st, err := Parse([]byte(`{"bookmarks":{"b":{"replication_key_value":"x"}},"other":{"n":1.5,"list":[true,null,"<a>"]},` +
		`"quota":{"day":"2026-01-01","used":3},"a_first":"\u2028"}`))
	if err != nil {
		t.Fatal(err)
	}
	st.SetValue("a", "updated_at", "2026-01-01T00:00:00Z")
	st.SetResume("a", &pages.Resume{Pages: 3, Next: streams.Request{Method: "GET", URL: "/v1/x?a=1&b=<2>"}})
	st.SetVersion("a", 1700000000000)
	st.SetSyncing("a", true)
	st.SetJobDone("b")
	got, err := st.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var tree any
	if err := json.Unmarshal(got, &tree); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(tree)
	if string(got) != string(want) {
		t.Errorf("snapshot\n%s\nencoding/json\n%s", got, want)
	}
}

// BenchmarkStateWithSecrets encodes the STATE a keyset walk writes after
// each page, in a run whose config has secrets (the demo's token): what
// holds none is not walked for them.
func BenchmarkStateWithSecrets(b *testing.B) {
	st := New()
	st.SetRedactor(settings.NewRedactor("demo-token-1234"))
	st.SetResume("trades", &pages.Resume{Next: streams.Request{Method: "GET", URL: "/v1/trades", Query: url.Values{"after_seq": {"123456"}}},
		Filter: map[string]string{"from": "2026-01-01T00:00:00Z"}})
	st.SetValue("customers", "replication_key_value", "2026-08-18T09:00:00Z")
	for b.Loop() {
		if _, err := st.MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}
