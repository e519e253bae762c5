package output

import (
	"time"

	"github.com/tap-dev/tap/codec"
)

// PageWriter is a stream's page writer in the engine: whether its SCHEMA
// has gone out, the table version its records carry, the record being
// encoded (its buffer and sorted keys, reused record after record) and
// the RECORD lines of the page being handled. The zero PageWriter is
// ready; a stream is written by one goroutine at a time.
type PageWriter struct {
	schemaSent bool
	version    int64
	buf        []byte
	keys       []string
	lines      PageLines
}

// SchemaDue reports whether the stream's SCHEMA is still to be sent, and
// counts it sent: SCHEMA goes out once, before the stream's first message.
func (w *PageWriter) SchemaDue() bool {
	due := !w.schemaSent
	w.schemaSent = true
	return due
}

// Started reports whether the stream's SCHEMA has gone out.
func (w *PageWriter) Started() bool { return w.schemaSent }

// SetVersion sets the table version of the stream's records
// (full_table_versioning); 0 is none.
func (w *PageWriter) SetVersion(v int64) { w.version = v }

// Version is the table version of the stream's records; 0 is none.
func (w *PageWriter) Version() int64 { return w.version }

// Encode renders m without its dropped properties, leaving m itself whole
// for the children that read it. The bytes are valid until the next
// Encode.
func (w *PageWriter) Encode(m map[string]any, dropped map[string]bool) ([]byte, error) {
	if len(dropped) > 0 {
		kept := make(map[string]any, len(m))
		for k, v := range m {
			if !dropped[k] {
				kept[k] = v
			}
		}
		m = kept
	}
	var err error
	w.buf, err = codec.AppendObject(w.buf[:0], m, &w.keys)
	return w.buf, err
}

// StartPage gathers the RECORD lines of a page, when out can frame them;
// EndPage writes what is left of them.
func (w *PageWriter) StartPage(out Writer) { w.lines.Start(out) }

// EndPage flushes the page's lines and stops gathering.
func (w *PageWriter) EndPage() error { return w.lines.End() }

// Flush writes the lines gathered so far: before any other message of the
// stream.
func (w *PageWriter) Flush() error { return w.lines.Flush() }

// Record writes one record of the stream as stream (its own name, or a
// mapped stream's): into the page's lines while a page is gathered, else
// through out.
func (w *PageWriter) Record(out Writer, stream string, rec []byte, extracted time.Time) error {
	if ok, err := w.lines.Add(stream, rec, extracted, w.version); ok {
		return err
	}
	return out.Record(stream, rec, extracted, w.version)
}
