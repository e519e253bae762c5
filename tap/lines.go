package tap

import (
	"io"
	"sync"

	"github.com/tap-dev/tap/codec"
)

// lineBatch is the most a lineWriter holds before it writes. It is the
// default capacity of a Linux pipe: a write that fits in the pipe is
// copied in whole without waiting for the reader, so a kill cannot land
// in the middle of it.
const lineBatch = 64 << 10

// lineWriter writes protocol messages as whole lines. Lines are built
// under a mutex, so messages of parallel streams interleave only at line
// boundaries, and are handed to the underlying writer only in batches of
// whole lines, one Write per batch: a tap killed at any moment has written
// no part of a line (a buffer flushed when full would cut one in two). A
// line longer than the batch is written alone, whole.
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte // whole lines not yet written
}

func newLineWriter(w io.Writer) *lineWriter {
	return &lineWriter{w: w, buf: make([]byte, 0, lineBatch)}
}

// write appends one line built by build; flush writes it out at once, as
// STATE must reach the target before anything else happens.
func (lw *lineWriter) write(flush bool, build func(b []byte) []byte) error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.writeLocked(flush, build)
}

// writeLocked is write for a caller that holds lw.mu. build appends to
// the pending lines, so a record is copied once, into the batch.
func (lw *lineWriter) writeLocked(flush bool, build func(b []byte) []byte) error {
	start := len(lw.buf)
	lw.buf = append(build(lw.buf), '\n')
	if start > 0 && len(lw.buf) > lineBatch {
		// The new line does not fit: write the lines before it.
		if _, err := lw.w.Write(lw.buf[:start]); err != nil {
			lw.buf = lw.buf[:0]
			return err
		}
		lw.buf = lw.buf[:copy(lw.buf, lw.buf[start:])]
	}
	if flush || len(lw.buf) >= lineBatch {
		return lw.flushLocked()
	}
	return nil
}

func (lw *lineWriter) flushLocked() error {
	if len(lw.buf) == 0 {
		return nil
	}
	_, err := lw.w.Write(lw.buf)
	lw.buf = lw.buf[:0]
	if cap(lw.buf) > 4*lineBatch {
		lw.buf = make([]byte, 0, lineBatch) // a huge line's buffer is not kept
	}
	return err
}

func (lw *lineWriter) Flush() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.flushLocked()
}

func (lw *lineWriter) writeJSON(flush bool, v any) error {
	data, err := codec.Marshal(v)
	if err != nil {
		return err
	}
	return lw.write(flush, func(b []byte) []byte { return append(b, data...) })
}
