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

// mapRuns is how many runs of each kind the stream maps scenario makes.
const mapRuns = 3

// streamMaps measures the tap on the throughput config with benchMaps
// against the same config unmapped: the two interleaved, mapRuns of each,
// medians, so that the ratio compares runs under the same load.
func (b *bench) streamMaps(ctx context.Context, rep *report, n int) error {
	const sc = "stream maps"
	var plain, mapped []*tapRun
	for i := range mapRuns {
		progress(fmt.Sprintf("stream maps: tap on %s events, unmapped and with a hash, arithmetic and a removal (%d of %d)",
			thousands(int64(n)), i+1, mapRuns))
		p, err := b.runEvents(ctx, n, nil)
		if err != nil {
			return err
		}
		m, err := b.runEvents(ctx, n, benchMaps)
		if err != nil {
			return err
		}
		plain, mapped = append(plain, p), append(mapped, m)
	}
	p, m := median(plain), median(mapped)
	plainRate, mappedRate := float64(n)/p.wall.Seconds(), float64(n)/m.wall.Seconds()
	plainCPU, mappedCPU := medianCPU(plain).Seconds(), medianCPU(mapped).Seconds()
	rep.add(sc, "unmapped records/s (median)", thousands(int64(plainRate)), "", "")
	rep.add(sc, "mapped records/s (median)", thousands(int64(mappedRate)), "", "")
	rep.add(sc, "CPU user+sys (median)", fmt.Sprintf("mapped %.2f s, unmapped %.2f s", mappedCPU, plainCPU), "", "")
	rep.add(sc, "mapped/unmapped (records per CPU s)", fmt.Sprintf("%.2f", plainCPU/mappedCPU), "", "")
	rep.check(sc, "mapped/unmapped (records/s)", fmt.Sprintf("%.2f", mappedRate/plainRate), ">= 0.70", mappedRate/plainRate >= 0.7)
	return nil
}
