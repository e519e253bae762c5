package failure

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/tap-dev/tap/records"
)

// Hold is a stream's dead-letter hold, the part of the engine that turns
// the error ending one of the stream's walks into a request letter and
// keeps the bookmark where it was. Once a request is dead-lettered the
// stream's bookmark (with per-partition bookmarks, that partition's) stays
// for the rest of the run: the rows that request would have read are below
// every bookmark the run could write. The zero Hold holds nothing.
type Hold struct {
	all   atomic.Bool     // the stream's bookmark stays
	parts map[string]bool // with per-partition bookmarks: the partitions that stay
}

// Letters is where a Hold writes its letters (*records.DeadLetters).
type Letters interface {
	Request(records.RequestLetter) error
}

// Letter is what became of a walk's error that Judge made a letter of.
type Letter struct {
	records.RequestLetter
	Written bool // false: err was not a letter, and is the caller's still
}

// Judge judges err, the error that ended walk w: when w's rules make it a
// letter (Walk.Letter), the letter is written to out at now, with the
// bookmark the walk was filtered from, and the stream is held — only
// partition, when it names one of a stream with per-partition bookmarks.
// The error returned is out's, joined to err; a Letter not Written leaves
// err to the caller.
func (h *Hold) Judge(w Walk, err error, out Letters, now time.Time, bookmark any, partition string) (Letter, error) {
	l, ok := w.Letter(err)
	if !ok {
		return Letter{}, nil
	}
	l.Time, l.Bookmark = now, bookmark
	if werr := out.Request(l); werr != nil {
		return Letter{}, errors.Join(err, werr)
	}
	if partition != "" {
		h.HoldPartition(partition) // the other partitions move on
	} else {
		h.HoldAll()
	}
	return Letter{RequestLetter: l, Written: true}, nil
}

// HoldAll keeps the stream's bookmark where it is for the rest of the run
// (tap replay holds every stream).
func (h *Hold) HoldAll() { h.all.Store(true) }

// HoldPartition keeps one partition's bookmark where it is.
func (h *Hold) HoldPartition(id string) {
	if h.parts == nil {
		h.parts = map[string]bool{}
	}
	h.parts[id] = true
}

// Held reports whether the stream's bookmark stays.
func (h *Hold) Held() bool { return h.all.Load() }

// PartitionHeld reports whether partition id's bookmark stays.
func (h *Hold) PartitionHeld(id string) bool { return h.parts[id] }
