package streams

import (
	"encoding/json"
	"testing"
)

func TestFeedCheck(t *testing.T) {
	cases := []struct {
		name, def, want string
	}{
		{"websocket", `{"protocol": "websocket", "path": "/v1/feed/ws", "seq_path": "seq", "subscribe": {"from": "{from_seq}"}}`, ""},
		{"sse with backfill", `{"protocol": "sse", "url": "https://api.example.com/s", "seq_path": "seq", "on_gap": "backfill", "backfill": {"stream": "history", "from_param": "a", "to_param": "b"}}`, ""},
		{"no seq_path", `{"protocol": "ndjson", "path": "/f", "resume_param": "from"}`, `stream "trades": feed.seq_path: is required: where a message holds its sequence number, e.g. "seq"`},
		{"no protocol", `{"path": "/f", "seq_path": "seq"}`, `stream "trades": feed.protocol: is required`},
		{"unknown protocol", `{"protocol": "mqtt", "path": "/f", "seq_path": "seq"}`, `stream "trades": feed.protocol: must be "websocket", "sse" or "ndjson", got "mqtt"`},
		{"http URL for websocket", `{"protocol": "websocket", "url": "http://api.example.com/ws", "seq_path": "seq"}`, `stream "trades": feed.url: a websocket feed needs a ws:// or wss:// URL, got "http://api.example.com/ws"`},
		{"ws URL for sse", `{"protocol": "sse", "url": "ws://api.example.com/ws", "seq_path": "seq"}`, `stream "trades": feed.url: a sse feed needs a http:// or https:// URL, got "ws://api.example.com/ws"`},
		{"no path", `{"protocol": "sse", "seq_path": "seq"}`, `stream "trades": feed.path: is required (or feed.url), e.g. "/v1/stream"`},
		{"ndjson without resume_param", `{"protocol": "ndjson", "path": "/f", "seq_path": "seq"}`, `stream "trades": feed.resume_param: is required for an ndjson feed: the query parameter carrying the first seq asked for, e.g. "from"`},
		{"subscribe on sse", `{"protocol": "sse", "path": "/f", "seq_path": "seq", "subscribe": {}}`, `stream "trades": feed.subscribe: is for a websocket feed; a sse feed asks with feed.resume_param`},
		{"types without type_path", `{"protocol": "sse", "path": "/f", "seq_path": "seq", "heartbeat_types": ["hb"]}`, `stream "trades": feed.type_path: is required with record_types, heartbeat_types or end_types: where a message holds its type, e.g. "type"`},
		{"backfill without stream", `{"protocol": "sse", "path": "/f", "seq_path": "seq", "on_gap": "backfill"}`, `stream "trades": feed.backfill.stream: is required with on_gap "backfill": the REST stream that serves a range of seqs`},
		{"backfill without params", `{"protocol": "sse", "path": "/f", "seq_path": "seq", "on_gap": "backfill", "backfill": {"stream": "h"}}`, `stream "trades": feed.backfill: needs from_param and to_param: the query parameters of the first and last seq of a range`},
		{"unknown on_gap", `{"protocol": "sse", "path": "/f", "seq_path": "seq", "on_gap": "skip"}`, `stream "trades": feed.on_gap: must be "reconnect", "backfill" or "fail", got "skip"`},
		{"zero idle timeout", `{"protocol": "sse", "path": "/f", "seq_path": "seq", "idle_timeout_s": 0}`, `stream "trades": feed.idle_timeout_s: must be from 0.001 to 86400, got 0`},
		// A nanosecond made a ticker of no period (a panic); centuries
		// overflowed time.Duration and failed every connect.
		{"a nanosecond's idle timeout", `{"protocol": "sse", "path": "/f", "seq_path": "seq", "idle_timeout_s": 1e-9}`, `stream "trades": feed.idle_timeout_s: must be from 0.001 to 86400, got 1e-09`},
		{"an idle timeout of centuries", `{"protocol": "sse", "path": "/f", "seq_path": "seq", "idle_timeout_s": 1e10}`, `stream "trades": feed.idle_timeout_s: must be from 0.001 to 86400, got 10000000000`},
		{"too many reconnects", `{"protocol": "sse", "path": "/f", "seq_path": "seq", "max_reconnects": 10000001}`, `stream "trades": feed.max_reconnects: must be from 0 to 1000000, got 10000001`},
		{"negative stop", `{"protocol": "sse", "path": "/f", "seq_path": "seq", "stop": {"max_records": -1}}`, `stream "trades": feed.stop.max_records: must not be negative, got -1`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Definition{Name: "trades"}
			if err := json.Unmarshal([]byte(c.def), &d.Feed); err != nil {
				t.Fatal(err)
			}
			err := d.Check()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != c.want {
				t.Errorf("Check() = %q, want %q", got, c.want)
			}
		})
	}
}

// A feed keeps its place by seq: the page-walk fields are refused.
func TestFeedRefusesPageFields(t *testing.T) {
	feed := &Feed{Protocol: FeedSSE, Path: "/f", SeqPath: "seq"}
	for _, c := range []struct {
		d    Definition
		want string
	}{
		{Definition{Name: "t", Feed: feed, Pagination: Pagination{Type: "cursor"}}, `stream "t": pagination.type: a feed stream reads messages, not pages; remove pagination`},
		{Definition{Name: "t", Feed: feed, ReplicationKey: "ts"}, `stream "t": replication_key: a feed stream keeps its place by seq (bookmarks.<stream>.seq); remove replication_key and incremental`},
		{Definition{Name: "t", Feed: feed, Parent: &Parent{Stream: "p", Key: "id"}}, `stream "t": parent: a feed stream cannot be a child stream`},
	} {
		if err := c.d.Check(); err == nil || err.Error() != c.want {
			t.Errorf("Check() = %v, want %s", err, c.want)
		}
	}
}
