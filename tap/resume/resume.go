// Package resume is a stream's resume tracker in the engine: where the
// last run stopped inside the stream's walk, and where this run's walk
// has come, for the resume object of STATE (streams/pages.Resume).
//
// A top-level stream's resume names the page to fetch next. A parent whose
// children's walks are tracked keeps its page in progress instead: its
// request and filter, how many of its records are handled with their
// children, their digest, and the child walk under way. From the last
// run's resume, the first page of the walk is checked against it: when it
// starts with the records the last run had finished, their children are
// skipped, and the child walk it was in goes on at its page.
//
// A Tracker is used by the one goroutine walking its stream; it needs no
// lock.
package resume

import (
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/pages"
)

// Tracker is one stream's resume tracker. The zero Tracker starts afresh.
type Tracker struct {
	from  *pages.Resume // the last run's position, until the walk takes it up
	pages int64         // the pages of the walk in progress, over every run

	// The page in progress of a parent whose children's walks are
	// tracked.
	req    streams.Request
	filter map[string]string
	done   int64
	digest pages.Digest
	child  *pages.Resume // the child walk under way

	// From the last run's resume: the resume until the first page checks
	// it, how many records of that page need no children walked, whether
	// the record in hand is one of them, and the child walk to go on with.
	pending   *pages.Resume
	skip      int64
	skipKids  bool
	childWalk *pages.Resume
}

// Resume sets where the last run stopped inside the walk (nil: start
// afresh).
func (t *Tracker) Resume(r *pages.Resume) { t.from = r }

// From is where the last run stopped, until the walk takes it up; nil
// when the walk starts afresh.
func (t *Tracker) From() *pages.Resume { return t.from }

// TakeUp starts the walk at the last run's position and returns it: its
// pages are counted on from there and its first page checked against it.
func (t *Tracker) TakeUp() *pages.Resume {
	r := t.from
	t.from, t.pending, t.pages = nil, r, r.Pages
	return r
}

// StartWalk starts a walk's count of pages: from 0, or from the pages the
// resume of a child's walk says were written.
func (t *Tracker) StartWalk(pages int64) { t.pages = pages }

// Track starts tracking a top-level walk: filter is the filter it began
// with, first its first page's request.
func (t *Tracker) Track(filter map[string]string, first streams.Request) {
	t.filter, t.req = filter, first
}

// NextPage moves the tracked walk on to the page of next: the next run
// starts there.
func (t *Tracker) NextPage(next streams.Request) {
	t.pages++
	t.req, t.done, t.digest, t.child = next, 0, pages.Digest{}, nil
}

// ChildPage is the resume of a child's walk, for the parent's resume,
// once one of its pages is written and next is the page after it.
func (t *Tracker) ChildPage(stream, partition string, next streams.Request, high any) *pages.Resume {
	t.pages++
	return &pages.Resume{Stream: stream, Partition: partition, Next: next, Pages: t.pages, High: high}
}

// InChild records the child walk under way on the parent's page.
func (t *Tracker) InChild(c *pages.Resume) { t.child = c }

// Point is the resume of the walk, for STATE: the page to fetch next
// (made relative by rel), or, while a page's children are walked, that
// page with how far into it the run has come. high and version are the
// plan's largest key and the table version.
func (t *Tracker) Point(rel func(streams.Request) streams.Request, high any, version int64) *pages.Resume {
	r := &pages.Resume{Next: rel(t.req), Filter: t.filter, High: high, Version: version, Pages: t.pages,
		Done: t.done, Child: t.child}
	if r.Done > 0 {
		r.Digest = t.digest.String()
	}
	return r
}

// EndWalk forgets the page in progress of a walk that has ended.
func (t *Tracker) EndWalk() {
	t.done, t.digest, t.child, t.pending = 0, pages.Digest{}, nil, nil
}

// Check is what BeginPage found of the last run's page on the first page
// of a resumed walk.
type Check int

// Outcomes of the check.
const (
	Same    Check = iota // the page starts with the records the last run finished (or nothing to check)
	Shorter              // the page is shorter than it was: its children are walked again
	Changed              // the page's first records changed: their children are walked again
)

// BeginPage starts the handling of a tracked page of records. On the
// first page of a resumed walk it checks the page against the last run's
// resume: id names a record by its children's walks, and child reports
// whether a record's walk of child stream c.Stream is the partition c
// names.
func (t *Tracker) BeginPage(recs []any, id func(rec any) string, child func(rec any, c *pages.Resume) bool) Check {
	r := t.pending
	if r == nil {
		return Same
	}
	t.pending = nil
	if r.Done > int64(len(recs)) {
		return Shorter
	}
	if r.Done > 0 {
		var d pages.Digest
		for _, rec := range recs[:r.Done] {
			d.Add(id(rec))
		}
		if d.String() != r.Digest {
			return Changed
		}
	}
	t.skip = r.Done
	if c := r.Child; c != nil && r.Done < int64(len(recs)) && child(recs[r.Done], c) {
		t.childWalk = c
	}
	return Same
}

// Record starts the handling of the page's record i.
func (t *Tracker) Record(i int) { t.skipKids = int64(i) < t.skip }

// SkipChildren reports whether the record in hand had its children walked
// before the last run stopped.
func (t *Tracker) SkipChildren() bool { return t.skipKids }

// Handled records that the record in hand, named id, is handled with its
// children; it reports whether the resume moved (and is to be
// checkpointed): not for a record the last run had finished.
func (t *Tracker) Handled(id string) bool {
	t.done++
	t.digest.Add(id)
	if t.skipKids {
		return false // the state already says so
	}
	t.childWalk, t.child = nil, nil
	return true
}

// EndPage ends the handling of a tracked page.
func (t *Tracker) EndPage() { t.skip, t.skipKids, t.childWalk = 0, false, nil }

// ChildFrom says whether the record in hand's walk of child stream is to
// be made, and from where: a child listed before the walk the last run
// was in had ended its own; that walk goes on at its page.
func (t *Tracker) ChildFrom(stream string) (from *pages.Resume, walk bool) {
	w := t.childWalk
	if w == nil {
		return nil, true
	}
	if w.Stream != stream {
		return nil, false
	}
	t.childWalk = nil
	return w, true
}
