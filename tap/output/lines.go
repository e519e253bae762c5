package output

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/tap-dev/tap/codec"
)

// lineBatch is the most a lineWriter holds before it writes. Into a
// larger pipe (the tap asks for 1 MiB) a writer batches up to a quarter
// of it: fewer writes, and fewer wake-ups of the reader, showed as 7% of
// the CPU. A batch goes into a pipe as whole lines only (wholeLines), so
// that a kill cannot leave part of a line in it.
const lineBatch = 64 << 10

// lineWriter writes protocol messages as whole lines. Lines are built
// under a mutex, so messages of parallel streams interleave only at line
// boundaries, and are handed to the underlying writer only in batches of
// whole lines, one Write per batch: a buffer flushed when full would cut
// a line in two. A line longer than the batch is written alone. Into a
// pipe, a Write is split as the pipe's room allows (wholeLines): a tap
// killed at any moment has written no part of a line.
type lineWriter struct {
	mu    sync.Mutex
	w     io.Writer
	buf   []byte // whole lines not yet written
	batch int    // lineBatch, or a quarter of a larger pipe
	total int64  // bytes of the lines taken so far
}

func newLineWriter(w io.Writer) *lineWriter {
	batch := lineBatch
	if f, ok := w.(*os.File); ok {
		if size := pipeSize(f); size > 0 {
			batch = max(batch, size/4)
			w = newWholeLines(f, size)
		}
	}
	return &lineWriter{w: w, buf: make([]byte, 0, lineBatch), batch: batch}
}

// batchSize is the most whole lines a caller should hand writeLines at
// once.
func (lw *lineWriter) batchSize() int { return lw.batch }

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
	lw.total += int64(len(lw.buf) - start)
	if start > 0 && len(lw.buf) > lw.batch {
		// The new line does not fit: write the lines before it.
		if _, err := lw.w.Write(lw.buf[:start]); err != nil {
			lw.buf = lw.buf[:0]
			return err
		}
		lw.buf = lw.buf[:copy(lw.buf, lw.buf[start:])]
	}
	if flush || len(lw.buf) >= lw.batch {
		return lw.flushLocked()
	}
	return nil
}

// writeLines takes whole lines built by the caller (each ends in '\n'),
// batched as write batches its own.
func (lw *lineWriter) writeLines(lines []byte) error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.writeLinesLocked(lines)
}

func (lw *lineWriter) writeLinesLocked(lines []byte) error {
	lw.total += int64(len(lines))
	if len(lw.buf)+len(lines) <= lineBatch {
		// A page's last lines wait for the next message, in a buffer
		// that stays the size it started with.
		lw.buf = append(lw.buf, lines...)
		return nil
	}
	if err := lw.flushLocked(); err != nil {
		return err
	}
	_, err := lw.w.Write(lines) // a batch already: no copy
	return err
}

func (lw *lineWriter) flushLocked() error {
	if len(lw.buf) == 0 {
		return nil
	}
	_, err := lw.w.Write(lw.buf)
	lw.buf = lw.buf[:0]
	if cap(lw.buf) > 4*lw.batch {
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

// recordFramer is a Writer whose RECORD lines the engine may build
// itself: every line is the frame's prefix, the record and the frame's
// suffix. A page's lines then share one frame — the stream's name and
// time_extracted formatted once — and reach the writer in batches, not
// in one locked call each.
type recordFramer interface {
	// recordFrame sets f to the frame of stream's records extracted at
	// extracted, reusing f's buffers. Call it only once a record follows.
	recordFrame(f *recordFrame, stream string, extracted time.Time, version int64) error
	// writeLines writes whole RECORD lines built in a frame, at most
	// batchSize bytes of them unless a single line is longer.
	writeLines(lines []byte) error
	batchSize() int
}

// recordFrame is what a RECORD line holds around its record.
type recordFrame struct{ prefix, suffix []byte }

// PageLines gathers the RECORD lines of the page being handled. Lines
// leave in the writer's batches and at End, so a page's records keep
// their order and a tap killed at any moment has written whole lines.
// The zero value gathers nothing until Start.
type PageLines struct {
	w      recordFramer // nil: not gathering, records go through Writer.Record
	framed bool         // frame is the page's
	frame  recordFrame
	buf    []byte
}

// Start gathers the lines of a page, when out can frame them (the
// writers of this package can).
func (p *PageLines) Start(out Writer) {
	p.w, _ = out.(recordFramer)
	p.framed = false
}

// Add appends one record's line; ok is false when the page is not being
// gathered, and the record is then the caller's to write.
func (p *PageLines) Add(stream string, rec []byte, extracted time.Time, version int64) (ok bool, err error) {
	if p.w == nil {
		return false, nil
	}
	if !p.framed {
		if err := p.w.recordFrame(&p.frame, stream, extracted, version); err != nil {
			return true, err
		}
		p.framed = true
	}
	if size := len(p.frame.prefix) + len(rec) + len(p.frame.suffix) + 1; len(p.buf)+size > p.w.batchSize() {
		if err := p.Flush(); err != nil {
			return true, err
		}
	}
	p.buf = append(append(append(append(p.buf, p.frame.prefix...), rec...), p.frame.suffix...), '\n')
	return true, nil
}

// Flush hands the gathered lines to the writer: call it before any other
// message of the stream, and at the end of the page.
func (p *PageLines) Flush() error {
	if len(p.buf) == 0 {
		return nil
	}
	err := p.w.writeLines(p.buf)
	p.buf = p.buf[:0]
	if cap(p.buf) > 4*p.w.batchSize() {
		p.buf = nil // a huge record's buffer is not kept
	}
	return err
}

// End flushes and stops gathering.
func (p *PageLines) End() error {
	if p.w == nil {
		return nil
	}
	err := p.Flush()
	p.w = nil
	return err
}
