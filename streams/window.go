package streams

import (
	"fmt"
	"slices"
	"time"

	"github.com/tap-dev/tap/streams/keys"
)

// LowerBound is the value of incremental.param for a run that starts from
// bookmark: what changed since then, with an overlap so that rows
// committed late with an older replication key are read again. No
// bookmark (nil) is startDate, the config's start_date; otherwise the
// bookmark less inc.TimeOverlap() (a time) or inc.Overlap (a number):
// see keys.Subtract. inc may be nil (no overlap).
func LowerBound(bookmark any, inc *Incremental, startDate time.Time) (any, error) {
	if bookmark == nil {
		return startDate, nil
	}
	if inc == nil {
		return keys.Subtract(bookmark, 0, "")
	}
	return keys.Subtract(bookmark, inc.TimeOverlap(), inc.Overlap)
}

// DefaultOverlapS is the overlap of a time replication key whose
// incremental block gives no overlap_s: the rows committed in the five
// minutes before the bookmark, late, are read again (an updated-since
// minus overlap cursor, as the Meltano SDK's and Airbyte's lookback
// windows do). A primary key makes the repeat harmless to a target that
// upserts.
const DefaultOverlapS = 300

// TimeOverlap is what is subtracted from a time bookmark: overlap_s, or
// DefaultOverlapS when it is absent.
func (inc *Incremental) TimeOverlap() time.Duration {
	if inc.OverlapS == nil {
		return DefaultOverlapS * time.Second
	}
	return time.Duration(*inc.OverlapS) * time.Second
}

// FailedWindow is a chunk window whose walk did not reach its end: it
// failed after its retries, or was deferred. Error says why, in one line.
type FailedWindow struct {
	keys.Window
	Error string

	before any // the bookmark when it failed: every row below it was read
}

// Backfill is a chunked stream's walk through its windows, with their
// outcomes. The walk goes on past a window that fails; Backfill keeps
// the failed windows, and the Plan holds the bookmark where it stood when
// the earliest of them failed (held), so that a reader knowing nothing
// of failed windows never skips their rows. The walk's position (the
// next window of Windows) moves on regardless.
//
// The largest key of the windows read (Plan.WalkHigh) is what the
// bookmark would be without them; STATE keeps it beside the position
// (window.high), so that once the last failed window is read, in this run
// or a later one, the bookmark takes it up.
type Backfill struct {
	windows []keys.Window  // to read, in order
	retries []keys.Window  // windows a previous run left failed, read first
	failed  []FailedWindow // windows not read to their end, by start
	next    int            // index in windows of the walk's position
	walkEnd time.Time      // where the walk stops: the last window's end
	inHigh  any            // the largest key of the windows earlier runs read (window.high)
}

func newBackfill(windows []keys.Window, start time.Time, b Bounds) *Backfill {
	if windows == nil {
		windows = []keys.Window{} // chunked, with nothing left to read
	}
	bf := &Backfill{windows: windows, walkEnd: start, inHigh: b.WalkHigh}
	if n := len(windows); n > 0 {
		bf.walkEnd = windows[n-1].End
	}
	for _, f := range b.Failed {
		f.before = b.Bookmark
		bf.addFailed(f)
	}
	for _, f := range bf.failed {
		bf.retries = append(bf.retries, f.Window)
	}
	return bf
}

// Retries are the windows a previous run left unfinished, by start: they
// are read first, before Windows.
func (bf *Backfill) Retries() []keys.Window { return bf.retries }

// Failed lists the windows not read to their end, by start; none on a
// nil Backfill.
func (bf *Backfill) Failed() []FailedWindow {
	if bf == nil {
		return nil
	}
	return slices.Clone(bf.failed)
}

// Next is the window the walk is at: the first of Windows neither done nor
// failed; false when the walk is over.
func (bf *Backfill) Next() (keys.Window, bool) {
	if bf.next < len(bf.windows) {
		return bf.windows[bf.next], true
	}
	return keys.Window{}, false
}

// Position is the start of the window the walk is at, or where the walk
// ends once it is over.
func (bf *Backfill) Position() time.Time {
	if w, ok := bf.Next(); ok {
		return w.Start
	}
	return bf.walkEnd
}

// WalkHigh is the largest key of the windows read to their end, in this
// run and (Bounds.WalkHigh) the earlier ones; nil when there is none.
func (p *Plan) WalkHigh() any {
	if p.backfill == nil {
		return p.closed
	}
	h, err := keys.Max(p.closed, p.backfill.inHigh)
	if err != nil {
		return p.closed
	}
	return h
}

// Fail says w was not read to its end, and why (one line). The walk moves
// past it; the bookmark is held where it stands until Done(w). Only a
// chunked stream (Backfill not nil) has windows to fail.
func (p *Plan) Fail(w keys.Window, why string) {
	bf := p.backfill
	bf.step(w)
	bf.addFailed(FailedWindow{Window: w, Error: why, before: p.closed})
}

// Done says w was read to its end: its keys count toward the bookmark
// (Close) and it leaves the failed windows.
func (p *Plan) Done(w keys.Window) error {
	if bf := p.backfill; bf != nil {
		bf.step(w)
		bf.failed = slices.DeleteFunc(bf.failed, func(f FailedWindow) bool { return sameWindow(f.Window, w) })
	}
	return p.Close()
}

// Reread says a window behind the walk's position is read again: its keys
// come below those read since, and that is no disorder.
func (p *Plan) Reread() { p.prev, p.prevPart = nil, "" }

// step moves the walk's position past w when w is the window it is at.
func (bf *Backfill) step(w keys.Window) {
	if cur, ok := bf.Next(); ok && sameWindow(cur, w) {
		bf.next++
	}
}

func sameWindow(a, b keys.Window) bool { return a.Start.Equal(b.Start) && a.End.Equal(b.End) }

// addFailed adds f to the failed windows, by start; a window failing
// again keeps the bookmark it first failed at.
func (bf *Backfill) addFailed(f FailedWindow) {
	for i := range bf.failed {
		if sameWindow(bf.failed[i].Window, f.Window) {
			bf.failed[i].Error = f.Error
			return
		}
	}
	i, _ := slices.BinarySearchFunc(bf.failed, f.Start, func(e FailedWindow, t time.Time) int { return e.Start.Compare(t) })
	bf.failed = slices.Insert(bf.failed, i, f)
}

// held is the bookmark STATE may hold, given the unfinished windows, and
// whether they decided it: while a window is failed, the smallest
// bookmark one failed at; once none is, at least the largest key earlier
// runs read. A nil Backfill holds nothing back.
func (bf *Backfill) held(v any) (any, bool) {
	if bf == nil {
		return v, false
	}
	if len(bf.failed) > 0 {
		low := bf.failed[0].before
		for _, f := range bf.failed[1:] {
			if c, err := keys.Compare(f.before, low); err == nil && c < 0 {
				low = f.before
			}
		}
		return low, true
	}
	if bf.inHigh != nil {
		if m, err := keys.Max(v, bf.inHigh); err == nil {
			return m, true
		}
	}
	return v, false
}

// sameText reports whether two bookmarks are the same value written the
// same way.
func sameText(a, b any) bool {
	return keys.Same(a, b) && fmt.Sprint(a) == fmt.Sprint(b)
}
