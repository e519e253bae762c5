package backfill

import (
	"errors"
	"testing"
	"time"

	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/tap/catalog"
	"github.com/tap-dev/tap/tap/state"
)

func TestCheckStarts(t *testing.T) {
	chunked := &streams.Incremental{Param: "since", ChunkDays: 7}
	timeKey := map[string]any{"type": "object", "properties": map[string]any{
		"id": map[string]any{"type": "integer"}, "updated_at": map[string]any{"type": "string", "format": "date-time"}}}
	numberKey := map[string]any{"type": "object", "properties": map[string]any{
		"id": map[string]any{"type": "integer"}, "seq": map[string]any{"type": "integer"}}}
	config := func() *settings.Config {
		return &settings.Config{
			Path: "config.json",
			Streams: []streams.Definition{
				{Name: "plain", PrimaryKey: []string{"id"}, ReplicationKey: "updated_at", Incremental: &streams.Incremental{Param: "since"}},
				{Name: "events", PrimaryKey: []string{"id"}, ReplicationKey: "updated_at", Incremental: chunked},
				{Name: "ledger", PrimaryKey: []string{"id"}, ReplicationKey: "seq", Incremental: chunked},
			},
			Schemas: map[string]map[string]any{"plain": timeKey, "events": timeKey, "ledger": numberKey},
		}
	}
	const noStart = `config.json: stream "events": incremental.chunk_days: needs start_date in the config (or a bookmark in the state) to know where the backfill begins`
	for _, c := range []struct {
		name  string
		cfg   func(*settings.Config)
		state func(*state.State)
		sel   string // a Singer catalog; "" selects every stream
		want  string
	}{{
		name: "a chunked stream with no start_date and no state",
		want: noStart,
	}, {
		name: "start_date given",
		cfg:  func(c *settings.Config) { c.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) },
	}, {
		name:  "a bookmark in the state",
		state: func(st *state.State) { st.SetValue("events", "updated_at", "2026-01-05T00:00:00Z") },
	}, {
		name:  "a window in progress in the state",
		state: func(st *state.State) { st.SetWindow("events", "2026-01-05T00:00:00Z", "2026-01-12T00:00:00Z") },
	}, {
		name:  "another stream's bookmark does not do",
		state: func(st *state.State) { st.SetValue("plain", "updated_at", "2026-01-05T00:00:00Z") },
		want:  noStart,
	}, {
		name: "the stream is not selected",
		sel:  `{"streams":[{"tap_stream_id":"plain","metadata":[{"breadcrumb":[],"metadata":{"selected":true}}]}]}`,
	}, {
		name: "the stream is selected",
		sel:  `{"streams":[{"tap_stream_id":"events","metadata":[{"breadcrumb":[],"metadata":{"selected":true}}]}]}`,
		want: noStart,
	}, {
		name: "a numeric replication key starts at its lowest value: no start needed",
		cfg:  func(c *settings.Config) { c.Streams = c.Streams[2:] },
	}} {
		t.Run(c.name, func(t *testing.T) {
			cfg := config()
			if c.cfg != nil {
				c.cfg(cfg)
			}
			st := state.New()
			if c.state != nil {
				c.state(st)
			}
			var sel *catalog.Selection
			if c.sel != "" {
				var err error
				if sel, err = catalog.Parse([]byte(c.sel), cfg, nil); err != nil {
					t.Fatal(err)
				}
			}
			err := CheckStarts(cfg, st, sel)
			if c.want == "" {
				if err != nil {
					t.Fatalf("CheckStarts = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != c.want {
				t.Fatalf("CheckStarts = %v,\nwant %s", err, c.want)
			}
			var ie *settings.InputError
			if !errors.As(err, &ie) {
				t.Errorf("error %T, want an *settings.InputError (exit 2)", err)
			}
		})
	}
}
