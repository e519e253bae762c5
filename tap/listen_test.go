package tap

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/tap/catalog"
)

// TestFeedSpliceAgainstTree reads each protocol's feed of the demo
// twice, its messages spliced and through the tree path only, under each
// fault the feeds handle: the same records in the same order, the same
// dead letters, the same final STATE and the same error; and the spliced
// run did splice.
func TestFeedSpliceAgainstTree(t *testing.T) {
	faults := []struct {
		name string
		demo map[string]any // the demo's fault knobs
		feed map[string]any // the feed's own settings
		// tight is a schema that 2 trades of 9 break (size at most 7):
		// dead letters, which the walker leaves to the tree path.
		tight bool
	}{
		{name: "clean"},
		{name: "gap, reconnect", demo: map[string]any{"feed_drop": 150}},
		{name: "gap, backfill", demo: map[string]any{"feed_drop": 150}, feed: map[string]any{"on_gap": "backfill",
			"backfill": map[string]any{"stream": "trade_history", "from_param": "from_seq", "to_param": "to_seq"}}},
		{name: "gap, fail", demo: map[string]any{"feed_drop": 150}, feed: map[string]any{"on_gap": "fail"}},
		{name: "silence", demo: map[string]any{"feed_silence_after": 120}},
		{name: "cut", demo: map[string]any{"feed_close_after": 170}},
		{name: "replay", demo: map[string]any{"feed_close_after": 170, "feed_replay": 20}},
		{name: "stop at max_records", feed: map[string]any{"stop": map[string]any{"max_records": 222}}},
		{name: "schema violations", tight: true},
	}
	schema, err := os.ReadFile("../schemas/trades.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range faults {
		for _, protocol := range []string{"websocket", "sse", "ndjson"} {
			t.Run(f.name+"/"+protocol, func(t *testing.T) {
				run := func(tree bool) feedRun {
					return runFeed(t, protocol, f.demo, f.feed, f.tight, schema, tree)
				}
				tree, spliced := run(true), run(false)
				if d := cmp.Diff(tree.records, spliced.records); d != "" {
					t.Errorf("records differ (-tree +spliced):\n%s", d)
				}
				if d := cmp.Diff(tree.dead, spliced.dead); d != "" {
					t.Errorf("dead letters differ (-tree +spliced):\n%s", d)
				}
				if d := cmp.Diff(tree.state, spliced.state); d != "" {
					t.Errorf("final STATE differs (-tree +spliced):\n%s", d)
				}
				if tree.err != spliced.err {
					t.Errorf("error: tree %q, spliced %q", tree.err, spliced.err)
				}
				if len(tree.records) == 0 {
					t.Fatal("no records")
				}
				if spliced.splices == 0 {
					t.Error("the spliced run spliced no record")
				}
				t.Logf("%d records (%d spliced), %d dead letters, error %q", len(spliced.records), spliced.splices, len(spliced.dead), spliced.err)
			})
		}
	}
}

// feedRun is what a run of one feed stream wrote.
type feedRun struct {
	records []map[string]any
	splices int // records whose bytes are the API's (the tree path sorts keys)
	state   any
	dead    []map[string]any
	err     string
}

// runFeed reads the demo's 300 trades as a feed of protocol, with the
// demo's fault knobs and the feed's settings given, through the tree
// path only or spliced.
func runFeed(t *testing.T, protocol string, knobs, feedOpts map[string]any, tight bool, schema []byte, tree bool) feedRun {
	t.Helper()
	dir := t.TempDir()
	if tight {
		var s map[string]any
		json.Unmarshal(schema, &s)
		s["properties"].(map[string]any)["size"] = map[string]any{"type": "integer", "maximum": 7}
		schema, _ = json.Marshal(s)
	}
	if err := os.WriteFile(filepath.Join(dir, "trades.json"), schema, 0o600); err != nil {
		t.Fatal(err)
	}
	demo := map[string]any{"seed": 7, "token": "demo-token", "feed_trades": 300, "feed_heartbeat_ms": 5}
	for k, v := range knobs {
		demo[k] = v
	}
	feed := map[string]any{"protocol": protocol, "path": "/v1/feed/" + protocol, "resume_param": "from",
		"seq_path": "seq", "type_path": "type", "record_types": []string{"trade"},
		"heartbeat_types": []string{"heartbeat"}, "end_types": []string{"end"}}
	if protocol == "websocket" {
		delete(feed, "resume_param")
		feed["path"] = "/v1/feed/ws"
		feed["subscribe"] = map[string]any{"op": "subscribe", "from": "{from_seq}"}
	}
	for k, v := range feedOpts {
		feed[k] = v
	}
	cfg := map[string]any{
		"base_url": "embedded://demo", "auth": map[string]any{"type": "bearer", "token": "demo-token"},
		"rate_limit": map[string]any{"requests_per_second": 0, "max_in_flight": 1},
		"retry":      map[string]any{"max_attempts": 2, "base_delay_ms": 1, "max_delay_ms": 5},
		"feed":       map[string]any{"idle_timeout_s": 0.3, "max_reconnects": 5},
		"demo":       demo, "on_schema_violation": "dead_letter", "dead_letter_path": filepath.Join(dir, "dead.jsonl"),
		"streams": []any{
			map[string]any{"name": "trades", "primary_key": []string{"seq"}, "feed": feed, "schema": "trades.json"},
			map[string]any{"name": "trade_history", "path": "/v1/trades", "records_path": "data", "primary_key": []string{"seq"}, "schema": "trades.json"},
		},
	}
	b, _ := json.Marshal(cfg)
	path := filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := settings.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	w := &rawRecorder{raw: map[string][][]byte{}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	// The history stream is read for the backfill only.
	cat, _ := json.Marshal(map[string]any{"streams": []any{map[string]any{"tap_stream_id": "trades",
		"metadata": []any{map[string]any{"breadcrumb": []any{}, "metadata": map[string]any{"selected": true}}}}}})
	sel, err := catalog.Parse(cat, loaded, nil)
	if err != nil {
		t.Fatal(err)
	}
	var res feedRun
	if err := syncTree(context.Background(), Options{Config: loaded, Selection: sel, Writer: w, Log: log}, tree); err != nil {
		res.err = err.Error()
	}
	for i, m := range w.msgs {
		switch m.Type {
		case "RECORD":
			res.records = append(res.records, m.Record)
			sorted, _ := json.Marshal(m.Record)
			if !bytes.Equal(sorted, w.raw["trades"][len(res.records)-1]) {
				res.splices++
			}
		case "STATE":
			res.state = w.msgs[i].State
		}
	}
	res.dead = readDeadLetters(t, filepath.Join(dir, "dead.jsonl"), "")
	return res
}
