package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tap-dev/tap/manifest"
)

// census loads every Airbyte manifest under dir (go run ./bench -manifests
// DIR: a folder of manifests, or a checkout of Airbyte's connectors with
// their manifest.yaml) and prints the tally: loaded, needs Python, not
// implemented, bad input (issue 40's target: at least 85% load), the CPU
// time it took, then by component type the manifests using it, how many
// of those loaded and how many it was refused in, and last the manifests
// refused for something other than Python, with the first line of why.
func census(dir string, w io.Writer) int {
	before := cpuTime()
	start := time.Now()
	c, err := manifest.TakeCensus(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	cpu, wall := cpuTime()-before, time.Since(start)
	n := c.Total()
	if n == 0 {
		fmt.Fprintf(os.Stderr, "bench: no manifests in %s\n", dir)
		return 1
	}
	pct := func(k int) string { return fmt.Sprintf("%5.1f%%", 100*float64(k)/float64(n)) }
	fmt.Fprintf(w, "census of %d manifests in %s (load average %s)\n\n", n, dir, loadAvg())
	verdict := "PASS"
	if 100*c.Outcomes[manifest.Loaded] < 85*n {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "%-16s %5d %s   target >= 85%%  %s\n", manifest.Loaded, c.Outcomes[manifest.Loaded], pct(c.Outcomes[manifest.Loaded]), verdict)
	for _, o := range []manifest.Outcome{manifest.NeedsPython, manifest.NotImplemented, manifest.BadInput} {
		fmt.Fprintf(w, "%-16s %5d %s\n", o, c.Outcomes[o], pct(c.Outcomes[o]))
	}
	fmt.Fprintf(w, "%-16s %5d %s   of all: loaded, and every stream compiled for a run (a sample config)\n", "runs", c.Runs, pct(c.Runs))
	fmt.Fprintf(w, "CPU (user+sys) %.2f s, %.2f ms a manifest; wall %.2f s\n\n", cpu.Seconds(), cpu.Seconds()*1000/float64(n), wall.Seconds())
	fmt.Fprintf(w, "%-70s %9s\n", "loaded, not run: the first form the compiler refused", "manifests")
	whys := slices.Collect(maps.Keys(c.NotRun))
	slices.SortFunc(whys, func(a, b string) int { return cmp.Or(c.NotRun[b]-c.NotRun[a], strings.Compare(a, b)) })
	for _, why := range whys {
		fmt.Fprintf(w, "%-70s %9d\n", why, c.NotRun[why])
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-40s %9s %7s %8s  %s\n", "component type", "manifests", "loaded", "refused", "implemented")
	for _, t := range c.Sorted() {
		impl := "no"
		switch {
		case manifest.Implemented(t.Type):
			impl = "yes"
		case manifest.IsPython(t.Type, false):
			impl = "Python"
		}
		fmt.Fprintf(w, "%-40s %9d %7d %8d  %s\n", t.Type, t.Manifests, t.Loaded, t.Refused, impl)
	}
	fmt.Fprintln(w)
	for _, f := range c.Files {
		if f.Outcome == manifest.NotImplemented || f.Outcome == manifest.BadInput {
			fmt.Fprintf(w, "%s: %s\n", f.Outcome, f.Why)
		}
	}
	fmt.Fprintln(w)
	for _, f := range c.Files {
		if f.Outcome == manifest.Loaded && !f.Runs {
			fmt.Fprintf(w, "not run: %s\n", f.NotRun)
		}
	}
	return 0
}

// cpuTime is the user and system CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
