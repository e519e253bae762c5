// Package dedupe drops the rows an offset walk reads twice.
//
// An offset walk over a source that shifts under it (rows inserted before
// the offset between two requests) reads the rows pushed across a page
// boundary again on the next page. A Window remembers the primary keys of
// the rows of the last Pages pages, so memory is flat in the length of the
// run (an identity per row of those pages, a few hundred KiB for pages of
// 1,000), and a row whose key is among them is a repeat.
//
// What it catches: a row repeated on the same page or on any of the next
// Pages-1 pages — a source that gained up to (Pages-1) pages of rows
// ahead of the walk between two requests. What it does not: a row read
// again further on than that (a source that reorders, or grows by more
// between two requests), which is written again; a target that keys by
// primary key keeps one copy either way.
//
// How: the identities are kept in the order they came, their bytes one
// after the other in one buffer, and found by their hash in a table of
// the window's own (open addressing, linear probing, deletion by
// backward shift) that holds 32 bits of each hash beside its place in
// the ring, so that a probe reads the table only. A row is a repeat only
// when its key is equal, byte for byte, to one in the window. A Go map of
// strings did the same job at about three times the CPU per row: a
// window deletes as many keys as it inserts, the map's probes grew with
// the deleted slots it kept, and each key was a string of its own.
package dedupe

import (
	"bytes"
	"hash/maphash"
	"math/bits"

	"github.com/tap-dev/tap/codec"
)

// Pages is how many of the last pages a row is compared with.
const Pages = 4

// A Window holds the primary keys of the last rows of a walk.
type Window struct {
	fields []string

	// ring holds the last rows' identities in the order they came, the
	// oldest at next once full; their bytes follow each other in text
	// (the oldest live one at ring[next].off), which is compacted when
	// the dead bytes before them are at least half of it.
	ring []entry
	next int
	text []byte

	// table holds, by hash, each identity's place in the ring (probe
	// runs end at an empty slot, idx 0). It has a power of two ≥ twice
	// the ring's size of slots, so the hash's low 32 bits pick the slot.
	table []slot
	mask  uint32

	seed maphash.Seed
	buf  []byte
}

// An entry is an identity in the ring: the low 32 bits of its hash and
// where its bytes are in the window's text.
type entry struct {
	tag    uint32
	off, n uint32
}

// A slot of the table: idx is 1 + the entry's place in the ring, 0 for
// an empty slot; tag is the entry's.
type slot struct {
	tag uint32
	idx int32
}

// New returns the window of a stream keyed by primaryKey whose pages hold
// pageSize rows.
func New(primaryKey []string, pageSize int) *Window {
	size := Pages * min(max(pageSize, 1), 1<<28)
	slots := 1 << bits.Len(uint(2*size-1)) // the power of two ≥ 2 × size
	return &Window{
		fields: primaryKey,
		ring:   make([]entry, 0, size),
		table:  make([]slot, slots),
		mask:   uint32(slots - 1),
		seed:   maphash.MakeSeed(),
	}
}

// Repeated reports whether rec, a decoded object or a spliced record's
// captured keys (codec.Fields), has the primary key of one of the last
// rows; when not, the window remembers it. Keys are exact and typed
// (codec.AppendKey): "7" is not 7, a missing field is not null.
func (w *Window) Repeated(rec any) (bool, error) {
	switch r := rec.(type) {
	case map[string]any:
		w.buf = codec.AppendKey(w.buf[:0], r, w.fields)
	case codec.Fields:
		var err error
		if w.buf, err = codec.AppendFieldsKey(w.buf[:0], r, w.fields); err != nil {
			return false, err
		}
	default:
		return false, nil // not an object: the pipeline refuses it
	}
	tag := uint32(maphash.Bytes(w.seed, w.buf))
	s := tag & w.mask
	for ; w.table[s].idx != 0; s = (s + 1) & w.mask {
		if t := w.table[s]; t.tag == tag && bytes.Equal(w.key(w.ring[t.idx-1]), w.buf) {
			return true, nil
		}
	}
	i := len(w.ring)
	if i < cap(w.ring) {
		w.ring = append(w.ring, entry{})
	} else {
		i = w.next
		w.next = (w.next + 1) % len(w.ring)
		w.remove(i)
		// The removal emptied a slot, maybe on the probe run above, and
		// may have moved entries back into the empty slot it ended on:
		// probe again for the first empty one.
		for s = tag & w.mask; w.table[s].idx != 0; s = (s + 1) & w.mask {
		}
	}
	w.ring[i] = entry{tag: tag, off: w.store(i), n: uint32(len(w.buf))}
	w.table[s] = slot{tag: tag, idx: int32(i + 1)}
	return false, nil
}

func (w *Window) key(e entry) []byte { return w.text[e.off : e.off+e.n] }

// store appends the key in buf to the text, for ring entry i (which holds
// no key now), and returns where it starts.
func (w *Window) store(i int) uint32 {
	if len(w.text)+len(w.buf) > cap(w.text) && len(w.ring) == cap(w.ring) {
		// Full: the live keys are the text from the oldest one on.
		if start := w.ring[w.next].off; int(start) >= len(w.text)/2 {
			w.text = w.text[:copy(w.text, w.text[start:])]
			for j := range w.ring {
				if j != i {
					w.ring[j].off -= start
				}
			}
		}
	}
	off := uint32(len(w.text))
	w.text = append(w.text, w.buf...)
	return off
}

// remove takes ring entry i out of the table, shifting back the entries
// after it on its probe run so that no probe stops short of them.
func (w *Window) remove(i int) {
	s := w.ring[i].tag & w.mask
	for w.table[s].idx != int32(i+1) {
		s = (s + 1) & w.mask
	}
	hole := s
	for j := (hole + 1) & w.mask; w.table[j].idx != 0; j = (j + 1) & w.mask {
		home := w.table[j].tag & w.mask
		// The entry at j may fill the hole when its home is not in the
		// cyclic range (hole, j]: its probe passes the hole on the way.
		if (j-home)&w.mask >= (j-hole)&w.mask {
			w.table[hole], w.table[j] = w.table[j], slot{}
			hole = j
		}
	}
	w.table[hole] = slot{}
}
