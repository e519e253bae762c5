package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"
)

// The per-page scenario measures the tap's own cost per page: the same n
// events read in pages of 1,000 and of 100 (Stripe's, GitHub's and
// HubSpot's cap), by the pinned tap and, interleaved with it, by the
// pinned raw copy (Go's HTTP client, no parsing, every body to a stdout
// pipe), from the page server on the bench's CPUs. From the CPU time of
// each at both sizes, each's cost of one more page is
//
//	(cpu at 100 - cpu at 1,000) / (pages at 100 - pages at 1,000)
//
// and the tap's own cost per page is the tap's less the raw copy's: what
// a page costs the tap above the HTTP request itself (issue 44: at most
// 20 µs). Medians of reps runs of each.
func (b *bench) perPage(ctx context.Context, rep *report, n, reps int) error {
	const sc = "per page"
	self, err := os.Executable()
	if err != nil {
		return err
	}
	timeout := 2*time.Minute + time.Duration(n/10_000)*time.Second
	type side struct{ tap, raw time.Duration }
	cpu := map[int]side{}
	pages := map[int]int{}
	for _, size := range []int{1000, 100} {
		progress(fmt.Sprintf("per page: generating %s events in pages of %d", thousands(int64(n)), size))
		url, stop, err := b.startServer([]string{self, "-servepages", "-records", strconv.Itoa(n), "-pagesize", strconv.Itoa(size)})
		if err != nil {
			return err
		}
		d := b.stream("events", size)
		cfg, err := b.writeConfig(fmt.Sprintf("perpage_%d_%d.json", n, size), map[string]any{
			"base_url":             url,
			"rate_limit":           map[string]any{"requests_per_second": 0, "max_in_flight": 1},
			"max_parallel_streams": 1,
			"request_timeout_s":    60,
			"on_schema_violation":  "dead_letter",
			"dead_letter_path":     b.dir + "/perpage.dead_letter.jsonl",
			"streams":              []any{d},
		})
		if err != nil {
			stop()
			return err
		}
		var taps, raws []*tapRun
		for i := range reps {
			progress(fmt.Sprintf("per page: pages of %d, run %d of %d, tap then raw copy", size, i+1, reps))
			t, err := b.runPinned(ctx, []string{b.bin, "--config", cfg}, timeout)
			if err != nil {
				stop()
				return err
			}
			if t.out.records != int64(n) {
				stop()
				return fmt.Errorf("pages of %d: the tap emitted %d RECORD messages, want %d", size, t.out.records, n)
			}
			r, err := b.runPinned(ctx, []string{self, "-rawcopy", url, "-records", strconv.Itoa(n), "-pagesize", strconv.Itoa(size)}, timeout)
			if err != nil {
				stop()
				return err
			}
			taps, raws = append(taps, t), append(raws, r)
		}
		stop()
		cpu[size] = side{medianCPU(taps), medianCPU(raws)}
		pages[size] = n/size + 1 // the walk ends on a short (or empty) page
		rep.add(sc, fmt.Sprintf("pages of %d: CPU per record, tap / raw copy", size),
			fmt.Sprintf("%.2f / %.2f µs", micros(cpu[size].tap)/float64(n), micros(cpu[size].raw)/float64(n)), "", "")
	}
	extra := float64(pages[100] - pages[1000])
	tapPage := micros(cpu[100].tap-cpu[1000].tap) / extra
	rawPage := micros(cpu[100].raw-cpu[1000].raw) / extra
	rep.add(sc, "runs", fmt.Sprintf("%d of each at each size, interleaved; medians of CPU time", reps), "", "")
	rep.add(sc, "CPU of one more page: tap / raw copy", fmt.Sprintf("%.1f / %.1f µs", tapPage, rawPage), "", "")
	rep.check(sc, "the tap's own cost per page", fmt.Sprintf("%.1f µs", tapPage-rawPage), "<= 20 µs", tapPage-rawPage <= 20)
	return nil
}

// medianCPU is the median of the runs' user+sys CPU time.
func medianCPU(runs []*tapRun) time.Duration {
	ds := make([]time.Duration, len(runs))
	for i, r := range runs {
		ds[i] = r.user + r.sys
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }
