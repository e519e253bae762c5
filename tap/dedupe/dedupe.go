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
package dedupe

import (
	"github.com/tap-dev/tap/codec"
)

// Pages is how many of the last pages a row is compared with.
const Pages = 4

// A Window holds the primary keys of the last rows of a walk.
type Window struct {
	fields []string
	ring   []string // the identities, the oldest at next once full
	next   int
	set    map[string]struct{}
	buf    []byte
}

// New returns the window of a stream keyed by primaryKey whose pages hold
// pageSize rows.
func New(primaryKey []string, pageSize int) *Window {
	size := Pages * max(pageSize, 1)
	return &Window{fields: primaryKey, ring: make([]string, 0, size), set: make(map[string]struct{}, size)}
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
	if _, ok := w.set[string(w.buf)]; ok {
		return true, nil
	}
	k := string(w.buf)
	if len(w.ring) < cap(w.ring) {
		w.ring = append(w.ring, k)
	} else {
		delete(w.set, w.ring[w.next])
		w.ring[w.next] = k
		w.next = (w.next + 1) % len(w.ring)
	}
	w.set[k] = struct{}{}
	return false, nil
}
