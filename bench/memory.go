package main

import (
	"context"
	"fmt"
)

// maxRSSMiB is the memory scenario's ceiling for either run.
const maxRSSMiB = 64

// memory compares the tap's peak RSS on small and large events runs (the
// throughput config). large is the throughput scenario's run of that
// size, or nil to run it here.
func (b *bench) memory(ctx context.Context, rep *report, small, large int, largeRun *tapRun) error {
	const sc = "memory"
	progress(fmt.Sprintf("memory: tap on %s events", thousands(int64(small))))
	s, err := b.runEvents(ctx, small, nil)
	if err != nil {
		return err
	}
	l := largeRun
	if l == nil {
		progress(fmt.Sprintf("memory: tap on %s events", thousands(int64(large))))
		if l, err = b.runEvents(ctx, large, nil); err != nil {
			return err
		}
	}
	if s.maxRSSKiB == 0 || l.maxRSSKiB == 0 {
		return fmt.Errorf("no peak RSS from the operating system")
	}
	target := fmt.Sprintf("<= %d MiB", maxRSSMiB)
	rep.check(sc, "peak RSS, "+thousands(int64(small))+" records", fmt.Sprintf("%.1f MiB", mib(s.maxRSSKiB)), target, mib(s.maxRSSKiB) <= maxRSSMiB)
	rep.check(sc, "peak RSS, "+thousands(int64(large))+" records", fmt.Sprintf("%.1f MiB", mib(l.maxRSSKiB)), target, mib(l.maxRSSKiB) <= maxRSSMiB)
	ratio := float64(l.maxRSSKiB) / float64(s.maxRSSKiB)
	rep.check(sc, "peak RSS ratio large/small", fmt.Sprintf("%.2f", ratio), "<= 1.20", ratio <= 1.2)
	return nil
}
