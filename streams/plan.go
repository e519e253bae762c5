package streams

import (
	"errors"
	"fmt"
	"time"

	"github.com/tap-dev/tap/streams/keys"
)

// Plan is how one stream is read in one run, and what the run has read of
// it so far.
//
// As in Airbyte's declarative framework, reading a stream splits into a
// cursor and a partition router. The cursor is the replication key: where
// reading starts (the lower bound: bookmark − overlap, or start_date), the
// chunk windows reading is cut into, and the bookmark the records read
// have earned. The partition router is the parent: a child stream is read
// once per parent record, each read a Partition with its own path
// placeholders. The tap asks a Plan for requests and tells it what it
// wrote:
//
//   - Windows lists the chunk windows to read, in order;
//   - Partition turns a parent record into a child's partition;
//   - Request builds the first request of one walk: the path placeholders
//     of a partition and the incremental filter of the lower bound or of a
//     window;
//   - Observe takes the replication-key value of each record before it is
//     written; Page says a page's records are written; Close says a window
//     or the whole stream has been read to its end;
//   - Checkpoint returns the bookmark STATE may hold now.
//
// The bookmark model. A Plan holds three values of the key: the bookmark
// (every row the filter covers with a smaller key has been written), the
// high-water mark (the largest key observed) and the previous key (to
// check order). The high-water mark becomes the bookmark at Close, and at
// Page on a sorted top-level stream, whose rows come in key order. A
// sorted stream whose key goes down was not sorted: per the stream's
// on_unsorted it fails, or it is demoted to unsorted for the rest of the
// run. Either way the bookmark falls back to its value at the last Close —
// the rows after it may not all have been read; on a failure to the key
// that went down if smaller — and moves again only at the next Close. So a
// bookmark never passes a row not yet read.
//
// A child stream with a replication key keeps one bookmark per partition
// (per parent record), the Meltano SDK's shape: each partition's walk is
// filtered by its own bookmark − overlap, so a new parent never inherits
// another parent's bookmark. A partition's high-water mark becomes its
// bookmark when its walk ends (Partitions.Close). Beyond MaxPartitions the
// partitions with the smallest bookmarks are folded into a floor, the
// smallest value dropped, which filters every parent with no entry: more
// is re-read, nothing is lost.
//
// A Plan is used by one goroutine at a time.
type Plan struct {
	def       *Definition
	fullTable bool
	lower     any

	bookmark any // safe to write in STATE
	closed   any // the bookmark at the last Close (or the run's start)
	high     any // the largest key observed
	prev     any // the previous key observed in partition prevPart
	prevPart string
	sorted   bool // is_sorted, and not demoted
	moved    bool // the bookmark changed since the last Checkpoint

	// parts are the per-partition bookmarks of a child stream (nil:
	// the stream keeps one bookmark).
	parts *Partitions

	// backfill is a chunked stream's walk through its windows (nil: the
	// stream is not read in windows).
	backfill *Backfill
	out      any // the bookmark Checkpoint returned last

	request *RequestTemplate // the first request of its walks, compiled on the first
}

// Bounds are what a Plan starts from.
type Bounds struct {
	// Bookmark is the stream's replication-key value in state, or nil.
	Bookmark any
	// WindowStart is the start of the chunk window in progress in state
	// (zero when none): a chunked read resumes there, and keeps the end
	// the state recorded, WindowEnd (zero when not known; keys.KeepEnd).
	WindowStart, WindowEnd time.Time
	// StartDate is the config's start_date (zero when none): the lower
	// bound of a time-keyed stream with no bookmark.
	StartDate time.Time
	// Now ends the last chunk window: the config's end_date, or the
	// run's clock.
	Now time.Time
	// Numeric says the replication key is a number: no start_date, no
	// windows.
	Numeric bool
	// Partitions are the per-partition bookmarks in state of a child
	// stream, and Floor the value of the partitions folded away; Bookmark
	// is not used for a child stream.
	Partitions []PartitionBookmark
	Floor      any
	// MaxPartitions bounds how many partitions are kept (0: the default).
	MaxPartitions int
	// Shard keeps the chunk windows of one shard (--shard I/N), indexed
	// from StartDate (or the stream's start when there is none).
	Shard keys.Shard
	// Failed are the windows a previous run did not read to their end
	// (failed_windows): read first, before the walk goes on at
	// WindowStart. WalkHigh is the largest key of the windows that run
	// read (window.high), which Bookmark, held back, does not show.
	Failed   []FailedWindow
	WalkHigh any
	// FullTable reads the whole stream: no filter, no windows, and the
	// bookmark is neither read nor moved (catalog replication-method
	// FULL_TABLE, a stream with no replication key, or a parent read only
	// for its children).
	FullTable bool
}

// ErrNoWindowStart is returned by NewPlan for a chunked stream with no
// bookmark, no window in progress and no start_date.
var ErrNoWindowStart = errors.New("incremental.chunk_days: needs start_date in the config (or a bookmark) to know where the backfill begins")

// BookmarkError is a bookmark NewPlan cannot start from.
type BookmarkError struct{ Err error }

func (e *BookmarkError) Error() string { return e.Err.Error() }
func (e *BookmarkError) Unwrap() error { return e.Err }

// NewPlan plans a read of d from b.
func NewPlan(d *Definition, b Bounds) (*Plan, error) {
	p := &Plan{def: d, fullTable: b.FullTable || d.ReplicationKey == ""}
	if p.fullTable {
		return p, nil
	}
	p.sorted = d.IsSorted
	inc := d.Incremental
	if d.Parent != nil {
		parts, err := newPartitions(d, b)
		p.parts = parts
		return p, err
	}
	p.bookmark, p.closed, p.out = b.Bookmark, b.Bookmark, b.Bookmark
	if inc == nil || (b.Bookmark == nil && (b.Numeric || b.StartDate.IsZero())) {
		p.lower = nil
	} else {
		lower, err := LowerBound(b.Bookmark, inc, b.StartDate)
		if err != nil {
			return nil, &BookmarkError{err}
		}
		p.lower = lower
	}
	if inc == nil || inc.ChunkDays <= 0 || b.Numeric {
		return p, nil
	}
	start, _ := p.lower.(time.Time)
	if !b.WindowStart.IsZero() {
		start = b.WindowStart
	}
	if start.IsZero() {
		return nil, ErrNoWindowStart
	}
	windows := keys.PlanWindows(start, b.Now, inc.ChunkDays)
	if b.Shard.On() {
		origin := b.StartDate
		if origin.IsZero() || origin.After(start) {
			origin = start
		}
		windows = b.Shard.Windows(origin, start, b.Now, inc.ChunkDays)
	}
	p.backfill = newBackfill(keys.KeepEnd(windows, b.WindowStart, b.WindowEnd), start, b)
	return p, nil
}

// Partitions are the per-partition bookmarks of a child stream; nil
// for a stream that keeps one bookmark.
func (p *Plan) Partitions() *Partitions { return p.parts }

// FullTable reports whether the stream is read whole, with no filter.
func (p *Plan) FullTable() bool { return p.fullTable }

// Lower is the incremental filter's value of a walk without a window: a
// time.Time, a json.Number or an opaque string; nil sends no filter.
func (p *Plan) Lower() any { return p.lower }

// Windows lists the chunk windows to read, in order; nil when the stream
// is not read in windows (an empty list when it is, and nothing is left).
func (p *Plan) Windows() []keys.Window {
	if p.backfill == nil {
		return nil
	}
	return p.backfill.windows
}

// Backfill is a chunked stream's walk through its windows; nil for a
// stream not read in windows.
func (p *Plan) Backfill() *Backfill { return p.backfill }

// Sorted reports whether the stream is still taken as sorted.
func (p *Plan) Sorted() bool { return p.sorted && !p.fullTable }

// ErrNoParentKey is the error of Partition for a parent record whose
// parent.key is null or missing: no request can be made for it.
var ErrNoParentKey = errors.New("it is null or missing")

// Partition is one parent record's share of a child stream.
type Partition struct {
	// Context names the parent record: {parent.as (or parent.key): value}.
	Context map[string]any
	// Key is the parent's key value, copied into each record under
	// parent.as.
	Key  any
	vars map[string]string
	id   string
}

// ID is a text that identifies the partition among the stream's; "" for a
// stream with no parent.
func (pt Partition) ID() string { return pt.id }

// Partition makes the partition of a child stream for one parent record.
func (p *Plan) Partition(parent map[string]any) (Partition, error) {
	par := p.def.Parent
	if par == nil {
		return Partition{}, fmt.Errorf("stream %q: has no parent", p.def.Name)
	}
	key := parent[par.Key]
	if key == nil {
		return Partition{}, fmt.Errorf("stream %q: a record of parent stream %q has no %q to fill the path: %w", p.def.Name, par.Stream, par.Key, ErrNoParentKey)
	}
	text := fmt.Sprint(key)
	name := par.Key
	vars := map[string]string{par.Key: text}
	if par.As != "" {
		vars[par.As] = text
		name = par.As
	}
	ctx := map[string]any{name: key}
	pt := Partition{Context: ctx, Key: key, vars: vars, id: keys.PartitionID(ctx)}
	if p.parts != nil {
		p.parts.cursor(pt)
	}
	return pt, nil
}

// Request builds the first request of a walk of part (the zero Partition
// for a stream with no parent) in w (nil: no window): the path with its
// placeholders filled, then the incremental filter — incremental.param
// from w.Start or the lower bound, and incremental.end_param from w.End —
// as query parameters, or as GraphQL variables.
func (p *Plan) Request(part Partition, w *keys.Window) (Request, error) {
	d := p.def
	if p.request == nil {
		t, err := compileRequest(d, true)
		if err != nil {
			return Request{}, err
		}
		p.request = t
	}
	walk := WalkValues{Vars: part.vars, Context: part.Context}
	if d.Incremental != nil && !p.fullTable {
		walk.Lower, walk.Window = p.lower, w
		if w != nil {
			walk.Lower = w.Start
		}
		if p.parts != nil {
			lower, err := p.parts.lower(part)
			if err != nil {
				return Request{}, streamErr(d.Name, "partition %s: %v", part.id, err)
			}
			walk.Lower = lower
		}
	}
	return p.request.Build(walk)
}

// Observation is what Observe made of a key.
type Observation int

const (
	// Observed: the key is in order and counts toward the bookmark.
	Observed Observation = iota
	// NullKey: the record has no key; it is written and moves nothing.
	NullKey
	// Uncomparable: the key cannot be ordered with the others (a value of
	// another kind); the record is written, the key never becomes the
	// bookmark.
	Uncomparable
	// Demoted: the key is below the previous one on a sorted stream whose
	// on_unsorted is "demote": the record is written and the stream is
	// read as unsorted from now on.
	Demoted
	// Unsorted: the key is below the previous one on a sorted stream whose
	// on_unsorted is "fail": the record must not be written.
	Unsorted
)

// Observe takes the replication-key value of a record of part about to be
// written. The error explains Uncomparable, Demoted (an *UnsortedError)
// and Unsorted (an *UnsortedError); it is nil otherwise. Only Unsorted
// stops the record.
func (p *Plan) Observe(part Partition, key any) (Observation, error) {
	if p.fullTable {
		return Observed, nil
	}
	if key == nil {
		return NullKey, nil
	}
	if inc := p.def.Incremental; inc != nil && inc.KeyFormat != "" {
		t, ok := keys.TimeOf(key, inc.KeyFormat)
		if !ok {
			return Uncomparable, fmt.Errorf("replication key value %s does not read as a time in key_format %q", keys.Describe(key), inc.KeyFormat)
		}
		key = t
	}
	high := &p.high
	if p.parts != nil {
		high = &p.parts.cursor(part).high
	}
	h, err := keys.Max(*high, key)
	if err != nil {
		return Uncomparable, err
	}
	if ue := p.outOfOrder(part, key); ue != nil {
		if !ue.Demoted {
			p.rollBack(part, key) // the row is not written: the next run must read it
			return Unsorted, ue
		}
		if p.parts == nil { // a partition's bookmark moves only when its walk ends
			p.fallBack()
		}
		*high, p.prev = h, key
		return Demoted, ue
	}
	*high, p.prev = h, key
	return Observed, nil
}

// outOfOrder reports a key below the previous key of the same partition on
// a sorted stream; with on_unsorted "demote" the stream is read as unsorted
// from now on and the error says so.
func (p *Plan) outOfOrder(part Partition, key any) *UnsortedError {
	if part.id != p.prevPart {
		p.prev, p.prevPart = nil, part.id
	}
	if !p.sorted || p.prev == nil {
		return nil
	}
	if c, err := keys.Compare(key, p.prev); err != nil || c >= 0 {
		return nil
	}
	ue := &UnsortedError{Stream: p.def.Name, Key: p.def.ReplicationKey, Prev: p.prev, Value: key}
	if p.def.OnUnsorted == UnsortedDemote {
		p.sorted = false
		ue.Demoted = true
	}
	return ue
}

// fallBack returns the bookmark to its value at the last Close.
func (p *Plan) fallBack() {
	if !keys.Same(p.bookmark, p.closed) {
		p.bookmark, p.moved = p.closed, true
	}
}

// rollBack is fallBack, then key when smaller (or not comparable): key's
// row is not written.
func (p *Plan) rollBack(part Partition, key any) {
	if p.parts != nil {
		p.parts.rollBack(part, key)
		return
	}
	if p.fallBack(); below(key, p.bookmark) {
		p.bookmark, p.closed, p.moved = key, key, true
	}
}

// Page says the records of a page are written: on a sorted top-level
// stream the high-water mark becomes the bookmark.
func (p *Plan) Page() error {
	if !p.Sorted() || p.def.Parent != nil {
		return nil
	}
	return p.advance()
}

// Close says a window, or the whole stream, has been read to its end: the
// high-water mark becomes the bookmark, and the value a disorder falls
// back to.
func (p *Plan) Close() error {
	if p.fullTable || p.parts != nil {
		return nil
	}
	if err := p.advance(); err != nil {
		return err
	}
	p.closed = p.bookmark
	return nil
}

func (p *Plan) advance() error {
	if p.high == nil {
		return nil
	}
	if p.bookmark != nil {
		c, err := keys.Compare(p.high, p.bookmark)
		if err != nil {
			return fmt.Errorf("stream %q: cannot compare replication key %v with the bookmark in state: %w", p.def.Name, p.high, err)
		}
		if c <= 0 {
			return nil
		}
	}
	p.bookmark, p.moved = p.high, true
	return nil
}

// Checkpoint returns the bookmark STATE may hold now, and whether it
// changed since the last Checkpoint. While a chunk window is failed the
// bookmark is held where it stood when it failed (see Fail).
func (p *Plan) Checkpoint() (bookmark any, moved bool) {
	v, held := p.backfill.held(p.bookmark)
	moved = !sameText(v, p.out) || (p.moved && !held)
	p.moved, p.out = false, v
	return v, moved
}

// Values of Definition.OnUnsorted.
const (
	UnsortedFail   = "fail"
	UnsortedDemote = "demote"
)

// UnsortedError is a key below the previous one on a stream declared
// sorted.
type UnsortedError struct {
	Stream, Key string
	Prev, Value any
	Demoted     bool // the stream reads on as unsorted
}

func (e *UnsortedError) Error() string {
	if e.Demoted {
		return fmt.Sprintf("stream %q is declared is_sorted but replication key %q went down from %s to %s; reading it as unsorted for the rest of the run (the bookmark moves only when the stream ends)",
			e.Stream, e.Key, keys.Describe(e.Prev), keys.Describe(e.Value))
	}
	return fmt.Sprintf("stream %q is declared is_sorted but replication key %q went down from %s to %s; fix is_sorted, or set \"on_unsorted\": \"demote\" to read such a stream as unsorted",
		e.Stream, e.Key, keys.Describe(e.Prev), keys.Describe(e.Value))
}

// High is the largest replication-key value observed so far (nil when
// none, and always for a per-partition stream): a resume carries it.
func (p *Plan) High() any { return p.high }

// ResumeHigh restores the largest key a resumed walk had written before
// the resume position, so that the bookmark at the walk's end counts it.
func (p *Plan) ResumeHigh(v any) {
	if p.fullTable || p.parts != nil || v == nil {
		return
	}
	if h, err := keys.Max(p.high, v); err == nil {
		p.high = h
	}
}

// Filter returns the incremental parameters of a walk's first request.
func (p *Plan) Filter(first Request) map[string]string {
	inc := p.def.Incremental
	if inc == nil || p.fullTable {
		return nil
	}
	out := map[string]string{}
	for _, name := range []string{inc.Param, inc.EndParam} {
		if name != "" && first.Query.Has(name) {
			out[name] = first.Query.Get(name)
		}
	}
	return out
}

// below reports whether key is below bookmark bm, or cannot be compared
// with it; never below no bookmark.
func below(key, bm any) bool {
	c, err := keys.Compare(key, bm)
	return bm != nil && (err != nil || c < 0)
}
