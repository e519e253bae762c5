// Package gcpace sets the pace of the process's garbage collector.
//
// With GOGC at its default, the collector lets the heap grow by as much
// as was live after the last cycle. Most of a spliced run's live heap is
// its page bodies, each a buffer reused page after page that holds no
// pointers: they cost a cycle nothing to mark, yet under GOGC=100 they
// double the heap the run grows to. A walk of 2 MB pages (1,000 records
// of 100 properties) held 6 MB live and grew to 12 MB between cycles,
// 5 MiB of peak RSS more than a walk of 300 KB pages, for a collector
// that ran ten times in a million records.
//
// The pacer instead grows the heap by what a cycle must scan — the
// heap's objects with pointers, the stacks and the globals, so that a
// cycle's marking is paid for by as many bytes allocated as under
// GOGC=100 — and at least by minHeadroom, never by more than GOGC=100
// would. A run whose heap is trees (the tree path, every record
// decoded) is all pointers, and keeps GOGC=100's pace.
package gcpace

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// minHeadroom is the least the heap grows by between cycles. Below it,
// a run whose heap is mostly buffers would collect after a few hundred
// KB of allocation: a spliced page allocates some per page (its request,
// its headers, its captured keys' text).
const minHeadroom = 1 << 20

// memoryLimit is the soft limit set when GOMEMLIMIT is not: a ceiling
// for a stream of huge records.
const memoryLimit = 48 << 20

// Start sets the soft memory limit (unless GOMEMLIMIT is set) and, unless
// GOGC is set, paces the collector after every cycle for the rest of the
// process's life.
func Start() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	if os.Getenv("GOGC") != "" {
		return // the user's choice
	}
	newPacer().arm()
}

// A pacer sets GOGC after each cycle from what the cycle found.
type pacer struct {
	samples []metrics.Sample
	percent int
	set     chan<- int // a test's: told each GOGC the pacer sets; nil: none
}

func newPacer() *pacer {
	return &pacer{samples: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/scan/heap:bytes"},
		{Name: "/gc/scan/stack:bytes"},
		{Name: "/gc/scan/globals:bytes"},
	}, percent: 100}
}

// sentinel is an object with a pointer (a tiny one, without, may share
// its block and outlive a cycle), allocated to be dropped: its cleanup
// runs once a cycle has found it unreachable.
type sentinel struct {
	_ *pacer
	_ [2]uint64
}

// arm makes the next cycle call p.cycle.
func (p *pacer) arm() {
	runtime.AddCleanup(&sentinel{}, (*pacer).cycle, p)
}

// cycle runs after each collection, on the runtime's cleanup goroutine.
func (p *pacer) cycle() {
	metrics.Read(p.samples)
	live := p.samples[0].Value.Uint64()
	heapScan := p.samples[1].Value.Uint64()
	stack := p.samples[2].Value.Uint64()
	globals := p.samples[3].Value.Uint64()
	// Armed before anyone is told: a collection that follows the news
	// must find the next sentinel already allocated, or it would wait
	// for the collection after.
	p.arm()
	if percent := Percent(live, heapScan, stack, globals); percent != p.percent {
		p.percent = percent
		debug.SetGCPercent(percent)
		if p.set != nil {
			p.set <- percent
		}
	}
}

// Percent is the GOGC that grows a heap of live bytes (after a cycle) by
// the bytes a cycle scans (heapScan of them, stack and globals), at
// least minHeadroom: the runtime's goal is live + (live + stack +
// globals) × GOGC/100. It is at most 100, at least 1.
func Percent(live, heapScan, stack, globals uint64) int {
	base := live + stack + globals
	if base == 0 {
		return 100
	}
	headroom := max(heapScan+stack+globals, minHeadroom)
	percent := (headroom*100 + base - 1) / base
	return int(min(max(percent, 1), 100))
}
