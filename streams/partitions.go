package streams

import (
	"fmt"
	"slices"
	"time"

	"github.com/tap-dev/tap/streams/keys"
)

// PartitionBookmark is one partition's bookmark, as state holds it.
type PartitionBookmark struct {
	Context map[string]any
	Value   any
	ID      string // keys.PartitionID of Context
}

// DefaultMaxPartitions is max_partitions when the config does not say.
const DefaultMaxPartitions = 10000

// Partitions are the bookmarks of a child stream, one per partition (a
// parent record): each moves when its partition's walk ends. At most
// MaxPartitions are kept; those with the smallest bookmarks are folded
// into a floor that a partition never seen (or folded) is read from.
type Partitions struct {
	def     *Definition
	start   time.Time // start_date, for a partition never seen
	numeric bool
	parts   []*partCursor // in the order first seen (state first)
	byID    map[string]*partCursor
	floor   any
	max     int
	moved   bool
	changed []*partCursor // bookmarks moved since Changes
	folded  []string      // IDs folded since Changes
}

// partCursor is one partition's bookmark and high-water mark.
type partCursor struct {
	id       string
	context  map[string]any
	bookmark any
	high     any
	changed  bool // listed in Partitions.changed
}

func newPartitions(d *Definition, b Bounds) (*Partitions, error) {
	ps := &Partitions{def: d, start: b.StartDate, numeric: b.Numeric, floor: b.Floor, max: b.MaxPartitions, byID: map[string]*partCursor{}}
	if ps.max <= 0 {
		ps.max = DefaultMaxPartitions
	}
	check := func(v any) error {
		if v == nil {
			return nil
		}
		_, err := LowerBound(v, d.Incremental, b.StartDate)
		return err
	}
	if err := check(b.Floor); err != nil {
		return nil, &BookmarkError{fmt.Errorf("floor: %w", err)}
	}
	for i, pb := range b.Partitions {
		if err := check(pb.Value); err != nil {
			return nil, &BookmarkError{fmt.Errorf("partitions[%d]: %w", i, err)}
		}
		id := keys.PartitionID(pb.Context)
		if c := ps.byID[id]; c != nil {
			c.bookmark = pb.Value
			continue
		}
		c := &partCursor{id: id, context: pb.Context, bookmark: pb.Value}
		ps.parts = append(ps.parts, c)
		ps.byID[id] = c
	}
	return ps, nil
}

// lower is the incremental filter of a partition's walk: its bookmark −
// overlap, else the floor − overlap, else start_date.
func (ps *Partitions) lower(part Partition) (any, error) {
	v := ps.floor
	if c := ps.byID[part.id]; c != nil && c.bookmark != nil {
		v = c.bookmark
	}
	if v == nil && (ps.numeric || ps.start.IsZero()) {
		return nil, nil
	}
	return LowerBound(v, ps.def.Incremental, ps.start)
}

// Since is the bookmark part's walk started from: its own, or the floor
// the partitions past MaxPartitions were folded into; nil for none, and
// on a nil Partitions. (A partition's bookmark moves only when its walk
// ends.)
func (ps *Partitions) Since(part Partition) any {
	if ps == nil {
		return nil
	}
	if c := ps.byID[part.id]; c != nil && c.bookmark != nil {
		return c.bookmark
	}
	return ps.floor
}

// Close says part has been read to its end: its high-water mark becomes
// its bookmark. Partitions past MaxPartitions are folded into the floor.
func (ps *Partitions) Close(part Partition) error {
	c := ps.byID[part.id]
	if c == nil || c.high == nil {
		return nil
	}
	if c.bookmark != nil {
		cmp, err := keys.Compare(c.high, c.bookmark)
		if err != nil {
			return fmt.Errorf("stream %q: partition %s: cannot compare replication key %v with the bookmark in state: %w", ps.def.Name, part.id, c.high, err)
		}
		if cmp <= 0 {
			c.high = nil
			return nil
		}
	}
	c.bookmark, c.high = c.high, nil
	ps.change(c)
	ps.fold()
	return nil
}

// rollBack puts part's bookmark back to key, when smaller (or not
// comparable): key's row is not written. A partition with no bookmark is
// read from the floor.
func (ps *Partitions) rollBack(part Partition, key any) {
	if c := ps.cursor(part); below(key, c.bookmark) || (c.bookmark == nil && below(key, ps.floor)) {
		c.bookmark = key
		ps.change(c)
	}
}

// cursor is part's cursor, made when the partition is first seen.
func (ps *Partitions) cursor(part Partition) *partCursor {
	c := ps.byID[part.id]
	if c == nil {
		c = &partCursor{id: part.id, context: part.Context}
		ps.parts = append(ps.parts, c)
		ps.byID[part.id] = c
	}
	return c
}

// change notes that c's bookmark moved.
func (ps *Partitions) change(c *partCursor) {
	if ps.moved = true; !c.changed {
		c.changed, ps.changed = true, append(ps.changed, c)
	}
}

// fold keeps at most max partitions with a bookmark, dropping those with
// the smallest ones into the floor.
func (ps *Partitions) fold() {
	var kept []*partCursor
	for _, c := range ps.parts {
		if c.bookmark != nil {
			kept = append(kept, c)
		}
	}
	over := len(kept) - ps.max
	if over <= 0 {
		return
	}
	bySize := slices.Clone(kept)
	slices.SortStableFunc(bySize, func(a, b *partCursor) int {
		c, _ := keys.Compare(a.bookmark, b.bookmark)
		return c
	})
	for _, c := range bySize[:over] {
		if ps.floor == nil {
			ps.floor = c.bookmark
		} else if cmp, err := keys.Compare(c.bookmark, ps.floor); err == nil && cmp < 0 {
			ps.floor = c.bookmark
		}
		delete(ps.byID, c.id)
		ps.folded = append(ps.folded, c.id)
	}
	ps.parts = slices.DeleteFunc(ps.parts, func(c *partCursor) bool { return ps.byID[c.id] != c })
}

// Changes returns only what changed since the last call (so a checkpoint
// costs what its parent changed): the partitions whose bookmark moved,
// the IDs folded into the floor, the floor, and whether any did.
func (ps *Partitions) Changes() (set []PartitionBookmark, folded []string, floor any, moved bool) {
	moved, ps.moved = ps.moved, false
	for _, c := range ps.changed {
		c.changed = false
		if ps.byID[c.id] == c && c.bookmark != nil {
			set = append(set, PartitionBookmark{Context: c.context, Value: c.bookmark, ID: c.id})
		}
	}
	folded, ps.changed, ps.folded = ps.folded, ps.changed[:0], nil
	return set, folded, ps.floor, moved
}

// High is the largest replication-key value observed in part's walk so
// far (nil when none, and on a nil Partitions): a child's resume carries
// it.
func (ps *Partitions) High(part Partition) any {
	if ps == nil {
		return nil
	}
	if c := ps.byID[part.id]; c != nil {
		return c.high
	}
	return nil
}

// ResumeHigh restores the largest key a resumed partition walk had
// written before the resume position, so that the partition's bookmark
// at the walk's end counts it.
func (ps *Partitions) ResumeHigh(part Partition, v any) {
	c := ps.byID[part.id]
	if v == nil || c == nil {
		return
	}
	if h, err := keys.Max(c.high, v); err == nil {
		c.high = h
	}
}
