package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tap-dev/tap/demoapi"
	"github.com/tap-dev/tap/internal/redistest"
)

// The scale-out scenario: 4 tap processes against a demo enforcing
// scaleRPS requests per one-second window, first sharing one key in Redis
// at scaleRPS, then each with its own in-process limiter at scaleRPS.
const (
	scaleProcs   = 4
	scaleRPS     = 20
	minRateShare = 0.95 // aggregate rate ÷ scaleRPS, shared limit
)

// scaleOut runs the scenario on about pages pages per process.
func (b *bench) scaleOut(ctx context.Context, rep *report, pages int) error {
	const sc = "scale-out"
	rs, err := redistest.Start(b.dir)
	if errors.Is(err, redistest.ErrNotInstalled) {
		rep.add(sc, "4 processes, one shared key", "skipped: redis-server not installed", "", "SKIP")
		return nil
	}
	if err != nil {
		return err
	}
	defer rs.Stop()
	for _, shared := range []bool{true, false} {
		demo, streams := b.quotaPlan(pages)
		demo.RequestsPerSecond = scaleRPS
		demo.FailRate, demo.LatencyMS = 0, 20
		srv, err := demoapi.New(demo)
		if err != nil {
			return err
		}
		srv.RecordArrivals()
		url, err := srv.Start("127.0.0.1:0")
		if err != nil {
			return err
		}
		rl := map[string]any{"requests_per_second": scaleRPS, "burst": 1, "max_in_flight": 4}
		label := "in-process limiters"
		if shared {
			rl["shared"] = map[string]any{"redis_url": rs.URL(), "key": "bench:scale"}
			label = "one shared key"
		}
		var cfgs []string
		for i := range scaleProcs {
			cfg, err := b.writeConfig(fmt.Sprintf("scale-%v-%d.json", shared, i), map[string]any{
				"base_url": url, "rate_limit": rl,
				"retry":                map[string]any{"max_attempts": 8, "base_delay_ms": 200, "max_delay_ms": 5000, "max_retry_after_s": 300},
				"max_parallel_streams": quotaParallel, "streams": streams,
			})
			if err != nil {
				srv.Close()
				return err
			}
			cfgs = append(cfgs, cfg)
		}
		progress(fmt.Sprintf("scale-out: %d processes, %s at %d requests/s, demo enforcing %d/s", scaleProcs, label, scaleRPS, scaleRPS))
		timeout := time.Minute + 3*time.Duration(pages*scaleProcs)*time.Second/scaleRPS
		start := time.Now()
		errs := make([]error, scaleProcs)
		var wg sync.WaitGroup
		for i, cfg := range cfgs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = b.runTap(ctx, cfg, false, timeout)
			}()
		}
		wg.Wait()
		wall := time.Since(start).Seconds()
		st := srv.Stats()
		srv.Close()
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("%s: %w", label, err)
		}
		ok := st.ByStatus[200]
		rateFig := float64(ok) / wall
		rep.add(sc, label+": requests / 200s", fmt.Sprintf("%d / %d in %.1f s", st.Requests, ok, wall), "", "")
		rep.add(sc, label+": shortest span of 21 arrivals", tightest(srv.Arrivals(), scaleRPS+1), "(a window of 20 answers 429 only below 1 s)", "")
		if shared {
			rep.check(sc, label+": aggregate rate (200 answers/s)", fmt.Sprintf("%.2f", rateFig),
				fmt.Sprintf(">= %.0f", minRateShare*scaleRPS), rateFig >= minRateShare*scaleRPS)
			rep.check(sc, label+": 429 answers", fmt.Sprint(st.ByStatus[429]), "0", st.ByStatus[429] == 0)
		} else {
			rep.add(sc, label+": aggregate rate (200 answers/s)", fmt.Sprintf("%.2f", rateFig), "", "")
			rep.add(sc, label+": 429 answers", fmt.Sprint(st.ByStatus[429]), "(shown, not a target)", "")
		}
	}
	return nil
}

// tightest is the shortest time between the first and the last of n
// consecutive arrivals.
func tightest(arrivals []time.Time, n int) string {
	slices.SortFunc(arrivals, time.Time.Compare)
	if len(arrivals) < n {
		return "-"
	}
	best := arrivals[n-1].Sub(arrivals[0])
	for i := n; i < len(arrivals); i++ {
		best = min(best, arrivals[i].Sub(arrivals[i-n+1]))
	}
	return fmt.Sprintf("%.0f ms", best.Seconds()*1000)
}
