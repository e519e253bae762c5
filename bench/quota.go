package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/tap-dev/tap/demoapi"
)

// The quota scenario's settings.
const (
	demoRPS        = 10   // the demo's quota, requests per one-second window
	tapRPS         = 9    // the tap's rate_limit.requests_per_second
	quotaPageSize  = 10   // records per page on every stream
	quotaStreams   = 5    // customers, orders, events, invoices, tickets
	quotaParallel  = 2    // max_parallel_streams, as in sample_config.json
	maxWallRatio   = 1.05 // wall time ÷ floor
	maxReqsPerPage = 1.12 // requests sent ÷ pages
)

// quotaPlan sizes the five streams so that they take pages pages of
// quotaPageSize in total, and returns the demo config and the streams.
func (b *bench) quotaPlan(pages int) (demoapi.Config, []any) {
	per := make([]int, quotaStreams) // pages of each stream
	for i := range per {
		per[i] = pages / quotaStreams
		if i < pages%quotaStreams {
			per[i]++
		}
	}
	demo := demoapi.Config{
		Seed: 7, Now: "2026-11-01T00:00:00Z", // the demo's data_end: every row visible
		Customers: per[0] * quotaPageSize,
		Orders:    per[1] * quotaPageSize,
		// Keyset pagination ends on a short page: make the last one short
		// rather than ask for an extra empty one.
		Events:            per[2]*quotaPageSize - quotaPageSize/2,
		Invoices:          per[3] * quotaPageSize,
		Tickets:           per[4] * quotaPageSize,
		RequestsPerSecond: demoRPS,
		LatencyMS:         50,
		FailRate:          0.08,
	}
	var streams []any
	for _, name := range []string{"customers", "orders", "events", "invoices", "tickets"} {
		streams = append(streams, b.stream(name, quotaPageSize))
	}
	return demo, streams
}

// quota runs the tap at 9 requests/s against the demo's 10/s quota with
// 8% 503s and 50 ms latency, on about pages pages. The demo counts a 503
// against its window like any answer; the tap runs with
// retries_spend_tokens false because its rate, 10% under the demo's,
// leaves room for the ~8% of retries: pages keep their pace and the
// retries fill the gap, so wall time stays near pages ÷ 9 with no 429.
func (b *bench) quota(ctx context.Context, rep *report, pages int) error {
	const sc = "quota"
	if pages < quotaStreams {
		pages = quotaStreams
	}
	demo, streams := b.quotaPlan(pages)
	srv, url, err := startDemo(demo)
	if err != nil {
		return err
	}
	defer srv.Close()
	cfg, err := b.writeConfig("quota.json", map[string]any{
		"base_url":             url,
		"rate_limit":           map[string]any{"requests_per_second": tapRPS, "burst": 1, "max_in_flight": 4, "retries_spend_tokens": false},
		"retry":                map[string]any{"max_attempts": 6, "base_delay_ms": 200, "max_delay_ms": 5000, "max_retry_after_s": 300},
		"request_timeout_s":    10,
		"max_parallel_streams": quotaParallel,
		"on_schema_violation":  "dead_letter",
		"dead_letter_path":     filepath.Join(b.dir, "quota.dead_letter.jsonl"),
		"streams":              streams,
	})
	if err != nil {
		return err
	}
	progress(fmt.Sprintf("quota: tap on ~%d pages at %d requests/s (floor %.0f s)", pages, tapRPS, float64(pages)/tapRPS))
	timeout := time.Minute + 3*time.Duration(pages)*time.Second/tapRPS
	t, err := b.runTap(ctx, cfg, false, timeout)
	if err != nil {
		return err
	}

	st := srv.Stats()
	got := st.ByStatus[200]
	if got == 0 {
		return fmt.Errorf("no page answered 200 (statuses %v)", st.ByStatus)
	}
	floor := float64(got) / tapRPS
	wall := t.wall.Seconds()
	perPage := float64(st.Requests) / float64(got)
	rep.add(sc, "mode", "retries_spend_tokens false: 9/s leaves the demo's 10/s room for ~8% retries", "", "")
	rep.add(sc, "pages (200 answers)", fmt.Sprintf("%d (planned %d)", got, pages), "", "")
	rep.add(sc, "requests / 503s", fmt.Sprintf("%d / %d", st.Requests, st.ByStatus[503]), "", "")
	rep.add(sc, "wall time", fmt.Sprintf("%.1f s", wall), "", "")
	rep.add(sc, fmt.Sprintf("floor = pages / %d per s", tapRPS), fmt.Sprintf("%.1f s", floor), "", "")
	rep.check(sc, "wall / floor", fmt.Sprintf("%.3f", wall/floor), fmt.Sprintf("<= %.2f", maxWallRatio), wall/floor <= maxWallRatio)
	rep.check(sc, "requests per page", fmt.Sprintf("%.3f", perPage), fmt.Sprintf("<= %.2f", maxReqsPerPage), perPage <= maxReqsPerPage)
	rep.check(sc, "429 answers", fmt.Sprint(st.ByStatus[429]), "0", st.ByStatus[429] == 0)
	return nil
}
