package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/tap-dev/tap/demoapi"
)

// feedsConfig is a tap config reading the demo's n trades as a websocket
// feed or as keyset pages of 1,000 (/v1/trades?after_seq=K), validated
// against schemas/trades.json, unthrottled.
func (b *bench) feedsConfig(name, baseURL string, feed bool) (string, error) {
	def := map[string]any{
		"name": "trades", "path": "/v1/trades", "records_path": "data", "primary_key": []string{"seq"},
		"pagination": map[string]any{"type": "keyset", "key_param": "after_seq", "key_field": "seq",
			"page_size_param": "limit", "page_size": pageSize},
		"schema": "schemas/trades.json",
	}
	if feed {
		def = map[string]any{
			"name": "trades", "primary_key": []string{"seq"},
			"feed": map[string]any{
				"protocol": "websocket", "path": "/v1/feed/ws",
				"subscribe": map[string]any{"op": "subscribe", "from": "{from_seq}"},
				"seq_path":  "seq", "type_path": "type", "record_types": []string{"trade"},
				"heartbeat_types": []string{"heartbeat"}, "end_types": []string{"end"},
			},
			"schema": "schemas/trades.json",
		}
	}
	return b.writeConfig(name, map[string]any{
		"base_url":             baseURL,
		"rate_limit":           map[string]any{"requests_per_second": 0, "max_in_flight": 1},
		"max_parallel_streams": 1,
		"request_timeout_s":    600,
		"dead_letter_path":     filepath.Join(b.dir, name+".dead_letter.jsonl"),
		"streams":              []any{def},
	})
}

// feeds measures the tap, pinned to one core, on the same n small trades
// read as a local websocket feed and as keyset pages: records/s and CPU
// time (user + system) per record.
func (b *bench) feeds(ctx context.Context, rep *report, n int) error {
	const sc = "feeds"
	rates := map[bool]float64{}
	for _, feed := range []bool{true, false} {
		what := "keyset pages"
		if feed {
			what = "websocket feed"
		}
		progress(fmt.Sprintf("feeds: tap on %s trades as a %s", thousands(int64(n)), what))
		srv, url, err := startDemo(demoapi.Config{Seed: 7, FeedTrades: n, MaxPageSize: pageSize})
		if err != nil {
			return err
		}
		cfg, err := b.feedsConfig(fmt.Sprintf("trades_%v_%d.json", feed, n), url, feed)
		if err != nil {
			srv.Close()
			return err
		}
		r, err := b.runPinnedTap(ctx, cfg, n, what)
		srv.Close()
		if err != nil {
			return err
		}
		rates[feed] = float64(n) / r.wall.Seconds()
		rep.add(sc, what+" records/s", thousands(int64(rates[feed])), "", "")
		cpu := (r.user + r.sys).Seconds() / float64(n) * 1e6
		rep.add(sc, what+" CPU per record", fmt.Sprintf("%.2f µs", cpu), "", "")
	}
	rep.add(sc, "feed/pages (records/s)", fmt.Sprintf("%.2f", rates[true]/rates[false]), "", "")
	return nil
}
