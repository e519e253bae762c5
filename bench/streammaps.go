package main

import (
	"context"
	"fmt"
)

// benchMaps is the stream map of the stream maps scenario: a hash, an
// arithmetic expression and a removal, on every event.
var benchMaps = map[string]any{
	"events": map[string]any{
		"ip":         "md5(str(ip))",
		"id_x2":      "id * 2",
		"user_agent": nil,
	},
}

// streamMaps measures the tap on the throughput config with benchMaps,
// beside the same config unmapped: plain, the throughput scenario's run
// of this process (run again here when that scenario failed).
func (b *bench) streamMaps(ctx context.Context, rep *report, n int, plain *tapRun) error {
	const sc = "stream maps"
	if plain == nil {
		progress(fmt.Sprintf("stream maps: tap on %s events, unmapped", thousands(int64(n))))
		var err error
		if plain, err = b.runEvents(ctx, n, nil); err != nil {
			return err
		}
	}
	progress(fmt.Sprintf("stream maps: tap on %s events with a hash, arithmetic and a removal", thousands(int64(n))))
	mapped, err := b.runEvents(ctx, n, benchMaps)
	if err != nil {
		return err
	}
	plainRate := float64(n) / plain.wall.Seconds()
	mappedRate := float64(n) / mapped.wall.Seconds()
	rep.add(sc, "unmapped records/s", thousands(int64(plainRate)), "", "")
	rep.add(sc, "mapped records/s", thousands(int64(mappedRate)), "", "")
	rep.add(sc, "mapped CPU user+sys", fmt.Sprintf("%.2f+%.2f s (unmapped %.2f+%.2f s)",
		mapped.user.Seconds(), mapped.sys.Seconds(), plain.user.Seconds(), plain.sys.Seconds()), "", "")
	cpu := func(r *tapRun) float64 { return (r.user + r.sys).Seconds() }
	rep.add(sc, "mapped/unmapped (records per CPU s)", fmt.Sprintf("%.2f", cpu(plain)/cpu(mapped)), "", "")
	rep.check(sc, "mapped/unmapped (records/s)", fmt.Sprintf("%.2f", mappedRate/plainRate), ">= 0.70", mappedRate/plainRate >= 0.7)
	return nil
}
