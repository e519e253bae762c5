package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/tap-dev/tap/demoapi"
)

// pause: three streams (customers, orders, tickets) run at once, four
// requests in flight, against the demo with 50 ms latency; the demo answers
// one request in the middle of the run 429 with Retry-After: 3. The figure
// is the number of requests any stream started (arrived at the demo)
// inside those 3 s: the shared limiter must hold every stream back, not
// only the one that got the 429.
func (b *bench) pause(ctx context.Context, rep *report, pages int) error {
	const sc = "pause"
	per := max(pages/3, 6)
	demo := demoapi.Config{
		Seed: 7, Now: "2026-11-01T00:00:00Z",
		Customers: per * quotaPageSize, Orders: per * quotaPageSize, Tickets: per * quotaPageSize,
		LatencyMS:     50,
		Throttle429At: 3 * per / 2,
	}
	srv, url, err := startDemo(demo)
	if err != nil {
		return err
	}
	defer srv.Close()
	var streams []any
	for _, name := range []string{"customers", "orders", "tickets"} {
		streams = append(streams, b.stream(name, quotaPageSize))
	}
	cfg, err := b.writeConfig("pause.json", map[string]any{
		"base_url":             url,
		"rate_limit":           map[string]any{"requests_per_second": tapRPS, "burst": 1, "max_in_flight": 4},
		"retry":                map[string]any{"max_attempts": 6, "base_delay_ms": 200, "max_delay_ms": 5000},
		"max_parallel_streams": 3,
		"dead_letter_path":     filepath.Join(b.dir, "pause.dead_letter.jsonl"),
		"streams":              streams,
	})
	if err != nil {
		return err
	}
	progress(fmt.Sprintf("pause: 3 streams, ~%d pages, one 429 with Retry-After: 3 at request %d", 3*per, demo.Throttle429At))
	t, err := b.runTap(ctx, cfg, false, 2*time.Minute+3*time.Duration(3*per)*time.Second/tapRPS)
	if err != nil {
		return err
	}
	from, to, inside, ok := srv.Throttle429Window()
	if !ok {
		return fmt.Errorf("the demo never answered its 429 (statuses %v)", srv.Stats().ByStatus)
	}
	st := srv.Stats()
	rep.add(sc, "requests / 429s", fmt.Sprintf("%d / %d", st.Requests, st.ByStatus[429]), "", "")
	rep.add(sc, "Retry-After window", to.Sub(from).String(), "", "")
	rep.add(sc, "wall time", fmt.Sprintf("%.1f s", t.wall.Seconds()), "", "")
	rep.check(sc, "requests started inside the window", fmt.Sprint(inside), "0", inside == 0)
	return nil
}

// The cost scenario's settings.
const (
	costPoints    = 1000 // the demo's and the tap's budget
	costRestore   = 50   // points a second
	costPageSize  = 100  // each query asks (and costs) 100 points
	maxCostRatio  = 1.10 // wall ÷ the budget floor
	costIssues    = 3500 // 35 queries: floor (3500 − 1000) / 50 = 50 s
	costIssuesQck = 1500 // -quick: floor 10 s
)

// cost: the GraphQL issues stream against the demo's cost budget (1,000
// points restoring 50/s, each query costing its page size of 100), the
// tap told the same budget and no request rate limit, so that the budget
// alone paces it. The floor is (total cost − the initial points) ÷ the
// restore rate: what a tap that never overdraws and never idles takes.
// No query may be answered THROTTLED.
func (b *bench) cost(ctx context.Context, rep *report, quick bool) error {
	const sc = "cost"
	issues := costIssues
	if quick {
		issues = costIssuesQck
	}
	srv, url, err := startDemo(demoapi.Config{
		Seed: 7, Now: "2026-11-01T00:00:00Z", Issues: issues,
		CostPoints: costPoints, CostRestorePerS: costRestore,
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	d := b.stream("issues", costPageSize)
	d["error_path"] = "errors" // a THROTTLED answer is retried, not read as data
	cfg, err := b.writeConfig("cost.json", map[string]any{
		"base_url": url,
		"rate_limit": map[string]any{"requests_per_second": 0, "max_in_flight": 4,
			"cost": map[string]any{"points": costPoints, "restore_per_s": costRestore}},
		"retry":            map[string]any{"max_attempts": 6, "base_delay_ms": 200, "max_delay_ms": 5000},
		"dead_letter_path": filepath.Join(b.dir, "cost.dead_letter.jsonl"),
		"streams":          []any{d},
	})
	if err != nil {
		return err
	}
	floor := float64(issues-costPoints) / costRestore
	progress(fmt.Sprintf("cost: %d issues in queries of %d points, budget %d restoring %d/s (floor %.0f s)", issues, costPageSize, costPoints, costRestore, floor))
	t, err := b.runTap(ctx, cfg, false, time.Minute+3*time.Duration(floor)*time.Second)
	if err != nil {
		return err
	}
	if t.out.records != int64(issues) {
		return fmt.Errorf("the tap emitted %d records, want %d", t.out.records, issues)
	}
	wall := t.wall.Seconds()
	rep.add(sc, "queries", fmt.Sprint(srv.Stats().ByPath["graphql"]), "", "")
	rep.add(sc, "wall time", fmt.Sprintf("%.1f s", wall), "", "")
	rep.add(sc, fmt.Sprintf("floor = (cost - %d) / %d per s", costPoints, costRestore), fmt.Sprintf("%.1f s", floor), "", "")
	rep.check(sc, "wall / floor", fmt.Sprintf("%.3f", wall/floor), fmt.Sprintf("<= %.2f", maxCostRatio), wall/floor <= maxCostRatio)
	rep.check(sc, "THROTTLED answers", fmt.Sprint(srv.Throttled()), "0", srv.Throttled() == 0)
	return nil
}
