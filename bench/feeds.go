package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/tap-dev/tap/demoapi"
)

// feedsConfig is a tap config reading the demo's n trades as a feed of
// protocol (websocket, sse, ndjson), or as keyset pages of 1,000
// (/v1/trades?after_seq=K) when protocol is "", validated against
// schemas/trades.json, unthrottled.
func (b *bench) feedsConfig(name, baseURL, protocol string) (string, error) {
	def := map[string]any{
		"name": "trades", "path": "/v1/trades", "records_path": "data", "primary_key": []string{"seq"},
		"pagination": map[string]any{"type": "keyset", "key_param": "after_seq", "key_field": "seq",
			"page_size_param": "limit", "page_size": pageSize},
		"schema": "schemas/trades.json",
	}
	if protocol != "" {
		feed := map[string]any{
			"protocol": protocol, "path": "/v1/feed/" + protocol,
			"seq_path": "seq", "type_path": "type", "record_types": []string{"trade"},
			"heartbeat_types": []string{"heartbeat"}, "end_types": []string{"end"},
		}
		if protocol == "websocket" {
			feed["path"] = "/v1/feed/ws"
			feed["subscribe"] = map[string]any{"op": "subscribe", "from": "{from_seq}"}
		} else {
			feed["resume_param"] = "from"
		}
		def = map[string]any{"name": "trades", "primary_key": []string{"seq"}, "feed": feed, "schema": "schemas/trades.json"}
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
// read as each protocol's local feed and as keyset pages, in reps
// interleaved rounds: the median records/s and CPU time (user + system)
// per record, and each feed's CPU per record against the pages' (issue
// 44's target: at most 1.5).
func (b *bench) feeds(ctx context.Context, rep *report, n, reps int) error {
	const sc = "feeds"
	protocols := []string{"", "websocket", "sse", "ndjson"}
	runs := map[string][]*tapRun{}
	for round := 1; round <= reps; round++ {
		for _, protocol := range protocols {
			what := feedWhat(protocol)
			progress(fmt.Sprintf("feeds: round %d of %d: tap on %s trades as a %s", round, reps, thousands(int64(n)), what))
			srv, url, err := startDemo(demoapi.Config{Seed: 7, FeedTrades: n, MaxPageSize: pageSize})
			if err != nil {
				return err
			}
			cfg, err := b.feedsConfig(fmt.Sprintf("trades_%s_%d.json", what, n), url, protocol)
			if err != nil {
				srv.Close()
				return err
			}
			r, err := b.runPinnedTap(ctx, cfg, n, what)
			srv.Close()
			if err != nil {
				return err
			}
			runs[protocol] = append(runs[protocol], r)
		}
	}
	cpu := map[string]float64{}
	for _, protocol := range protocols {
		what := feedWhat(protocol)
		cpu[protocol] = medianCPU(runs[protocol]).Seconds() / float64(n) * 1e6
		rep.add(sc, what+" records/s", thousands(int64(float64(n)/median(runs[protocol]).wall.Seconds())), "", "")
		rep.add(sc, what+" CPU per record", fmt.Sprintf("%.2f µs", cpu[protocol]), "", "")
	}
	for _, protocol := range protocols[1:] {
		ratio := cpu[protocol] / cpu[""]
		rep.check(sc, protocol+"/pages (CPU per record)", fmt.Sprintf("%.2f", ratio), "≤ 1.5", ratio <= 1.5)
	}
	return nil
}

func feedWhat(protocol string) string {
	if protocol == "" {
		return "keyset pages"
	}
	return protocol + " feed"
}
