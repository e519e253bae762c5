package gcpace

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, tt := range []struct {
		name                         string
		live, heapScan, stack, globs uint64
		want                         int
	}{
		{"all pointers: GOGC=100's pace", 8 * mib, 8 * mib, 0, 0, 100},
		{"a heap of trees with stacks and globals", 6 * mib, 6 * mib, mib / 2, mib / 2, 100},
		{"mostly buffers: grows by what is scanned", 8 * mib, 2 * mib, 0, 0, 25},
		{"scan counts stacks and globals", 8 * mib, 3 * mib / 2, mib / 4, mib / 4, 24}, // 2 of 8.5 MiB, rounded up
		{"little scanned: at least minHeadroom", 16 * mib, mib / 8, 0, 0, 7},           // 1 of 16 MiB, rounded up
		{"a huge heap of buffers: at least 1", 4096 * mib, 0, 0, 0, 1},
		{"a small heap: never above 100", mib / 2, mib / 4, 0, 0, 100},
		{"nothing yet", 0, 0, 0, 0, 100},
	} {
		if got := Percent(tt.live, tt.heapScan, tt.stack, tt.globs); got != tt.want {
			t.Errorf("%s: Percent = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestCycle: a collection runs the pacer, which sets GOGC from what the
// collection found (a heap of buffers: below 100) and arms itself for
// the next.
func TestCycle(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	set := make(chan int, 1)
	p := newPacer()
	p.percent, p.set = -2, set // no GOGC is -2: each cycle sets it
	keep := make([]byte, 256<<20)
	p.arm()
	for cycle := range 2 {
		runtime.GC()
		select {
		case got := <-set:
			if got >= 100 {
				t.Errorf("cycle %d: GOGC %d for a heap of buffers, want below 100", cycle, got)
			}
			if now := debug.SetGCPercent(got); now != got {
				t.Errorf("cycle %d: GOGC is %d, the pacer said %d", cycle, now, got)
			}
			p.percent = -2
		case <-time.After(10 * time.Second):
			t.Fatalf("cycle %d: the pacer did not run within 10 s of a collection", cycle)
		}
	}
	runtime.KeepAlive(keep)
}
