package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tap-dev/tap/tap/reconcile"
)

// reconcileScenario measures a reconcile of a stream with n integer keys
// of which 1% are gone upstream (and 0.01% never emitted): its keys file
// saved as a run leaves it, the listing of every live key in the order an
// API lists them (ascending ids, in pages, each key a JSON number), the
// two compared as sorted streams, the deletion records counted, the new
// keys file written. It runs in a process of its own (this program with
// -reconcilekeys), so that its peak RSS (getrusage ru_maxrss) is the
// reconcile's alone: the target is 64 MiB at 10 M keys.
func (b *bench) reconcileScenario(ctx context.Context, rep *report, n int) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir := filepath.Join(b.dir, "reconcile")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	progress(fmt.Sprintf("reconcile: %s integer keys, 1%% deleted", thousands(int64(n))))
	cmd := exec.CommandContext(ctx, self, "-reconcilekeys", strconv.Itoa(n), "-reconciledir", dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("reconcile child: %w", err)
	}
	var res reconcileResult
	if err := json.Unmarshal(out, &res); err != nil {
		return fmt.Errorf("reconcile child said %q: %w", out, err)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return fmt.Errorf("no rusage for the reconcile child")
	}
	peak := ru.Maxrss // KiB on Linux
	wantDeleted := int64(n / 100)
	rep.add("reconcile", "keys known / listed", thousands(res.Known)+" / "+thousands(res.Listed), "", "")
	rep.check("reconcile", "deleted, missed", fmt.Sprintf("%s, %s", thousands(res.Deleted), thousands(res.Missed)),
		fmt.Sprintf("%s, %s", thousands(wantDeleted), thousands(int64(n/10000))), res.Deleted == wantDeleted && res.Missed == int64(n/10000))
	rep.add("reconcile", "time (save + list + compare)", fmt.Sprintf("%.2f s (%.0f ns/key)", res.Seconds, res.Seconds*1e9/float64(n)), "", "")
	rep.add("reconcile", "keys file", fmt.Sprintf("%.1f MiB (%.2f bytes/key)", float64(res.FileBytes)/(1<<20), float64(res.FileBytes)/float64(n)), "", "")
	rep.check("reconcile", "peak RSS", fmt.Sprintf("%.1f MiB", mib(peak)), "<= 64 MiB", mib(peak) <= 64)
	return nil
}

type reconcileResult struct {
	Known, Listed, Deleted, Missed int64
	Seconds                        float64
	FileBytes                      int64
}

// reconcileChild is the reconcile scenario's process: it writes a keys
// file of n keys (1..n), then times a run's Save and a Reconcile whose
// listing misses every key ≡ 37 (mod 100) and adds n/10000 keys above n,
// and prints a reconcileResult.
func reconcileChild(n int, dir string) int {
	// The tap's own setting (main.go): the reconcile runs under it.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(48 << 20)
	}
	path := filepath.Join(dir, "bench.keys")
	if err := writeBenchKeys(path, n); err != nil {
		fmt.Fprintln(os.Stderr, "reconcile:", err)
		return 1
	}
	start := time.Now()
	k, err := reconcile.Open("bench", path, reconcile.Int, 0)
	if err == nil {
		err = k.Save()
	}
	var sum reconcile.Summary
	if err == nil {
		extra := n / 10000
		sum, err = k.Reconcile(context.Background(), reconcile.Run{
			MaxDeleteFraction: 0.5,
			List: func(_ context.Context, add func(any) error) error {
				var num []byte
				for i := 1; i <= n+extra; i++ {
					if i <= n && i%100 == 37 {
						continue
					}
					num = strconv.AppendInt(num[:0], int64(i), 10)
					if err := add(json.Number(num)); err != nil {
						return err
					}
				}
				return nil
			},
			Delete: func(reconcile.Key) error { return nil },
			Missed: func(reconcile.Key) {},
		})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "reconcile:", err)
		return 1
	}
	secs := time.Since(start).Seconds()
	fi, err := os.Stat(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "reconcile:", err)
		return 1
	}
	b, _ := json.Marshal(reconcileResult{Known: sum.Known, Listed: sum.Listed, Deleted: sum.Deleted, Missed: sum.Missed, Seconds: secs, FileBytes: fi.Size()})
	fmt.Println(string(b))
	return 0
}

// writeBenchKeys writes the keys file of the keys 1..n as a run would
// have left it, through the package's own sort and save.
func writeBenchKeys(path string, n int) error {
	os.Remove(path)
	k, err := reconcile.Open("bench", path, reconcile.Int, 0)
	if err != nil {
		return err
	}
	for i := 1; i <= n; i++ {
		if err := k.Emitted(int64(i)); err != nil {
			return err
		}
	}
	if err := k.Save(); err != nil {
		return err
	}
	if b, err := os.ReadFile(path); err == nil && !strings.HasPrefix(string(b[:min(len(b), 32)]), "tap-keys 1 int") {
		return fmt.Errorf("%s is not a keys file", path)
	}
	return nil
}
