package decoder

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams"
)

// maxJSONLLine bounds one line of a jsonl body: a line is one record, and
// a "line" of gigabytes is a body of another format.
const maxJSONLLine = 64 << 20

// jsonlReader reads a JSON Lines body: one JSON value per line, blank
// lines skipped. records_path, when set, is where the records are inside
// each line's value: an object there is one record, an array holds
// several, null none.
type jsonlReader struct {
	dec     *Decoder
	br      *bufio.Reader
	line    int
	pending []any
	buf     []byte
}

func newJSONLReader(dec *Decoder, body io.Reader) *jsonlReader {
	return &jsonlReader{dec: dec, br: bufio.NewReaderSize(body, 64<<10)}
}

func (r *jsonlReader) Read() (any, error) {
	for {
		if len(r.pending) > 0 {
			rec := r.pending[0]
			r.pending = r.pending[1:]
			return rec, nil
		}
		line, err := r.next()
		if err != nil {
			return nil, err
		}
		v, err := codec.DecodeRecords(line)
		if err != nil {
			return nil, fmt.Errorf("stream %q: line %d of the jsonl body is not JSON: %w", r.dec.stream, r.line, err)
		}
		if r.dec.recordsPath == "" {
			return v, nil
		}
		at, found := streams.LookupNullable(v, r.dec.recordsPath)
		switch recs := at.(type) {
		case nil:
			if !found {
				return nil, fmt.Errorf("stream %q: records_path %q is not in line %d of the jsonl body", r.dec.stream, r.dec.recordsPath, r.line)
			}
		case []any:
			r.pending = recs
		default:
			return at, nil
		}
	}
}

// next returns the next non-blank line, without its line ending.
func (r *jsonlReader) next() ([]byte, error) {
	for {
		r.buf = r.buf[:0]
		for {
			chunk, err := r.br.ReadSlice('\n')
			r.buf = append(r.buf, chunk...)
			if len(r.buf) > maxJSONLLine {
				return nil, fmt.Errorf("stream %q: line %d of the jsonl body is longer than %d MiB", r.dec.stream, r.line+1, maxJSONLLine>>20)
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil && err != io.EOF {
				return nil, err
			}
			if err == io.EOF && len(r.buf) == 0 {
				return nil, io.EOF
			}
			break
		}
		r.line++
		line := r.buf
		if r.line == 1 {
			line = bytes.TrimPrefix(line, bom)
		}
		if line := bytes.TrimSpace(line); len(line) > 0 {
			return line, nil
		}
	}
}

// Lines is a page of a jsonl body's records as the API sent them: one
// JSON text a line, blank lines left out. A record's bytes are its line,
// ready to be written as they came (the tap's splice path); Records
// decodes them for the tree path.
type Lines struct {
	dec  *Decoder
	buf  []byte
	ends []int // where each line ends in buf
	nums []int // the body's line number of each line
}

// Len is the number of lines.
func (l *Lines) Len() int { return len(l.ends) }

// Line is line i of the page, without its line ending.
func (l *Lines) Line(i int) []byte {
	from := 0
	if i > 0 {
		from = l.ends[i-1]
	}
	return l.buf[from:l.ends[i]:l.ends[i]]
}

// Records decodes the page's lines as the jsonl reader does: its records
// and, at the first line that is not JSON, the records before it with
// the error naming the line.
func (l *Lines) Records() ([]any, error) {
	recs := make([]any, 0, l.Len())
	for i := range l.ends {
		v, err := codec.DecodeRecords(l.Line(i))
		if err != nil {
			return recs, fmt.Errorf("stream %q: line %d of the jsonl body is not JSON: %w", l.dec.stream, l.nums[i], err)
		}
		recs = append(recs, v)
	}
	return recs, nil
}

// add appends a line to the page.
func (l *Lines) add(line []byte, num int) {
	l.buf = append(l.buf, line...)
	l.ends = append(l.ends, len(l.buf))
	l.nums = append(l.nums, num)
}

// SplitsLines reports whether the decoder's jsonl bodies are read by
// LinePages: a line is one record (no records_path).
func (dec *Decoder) SplitsLines() bool {
	return dec.format == streams.FormatJSONL && dec.recordsPath == ""
}

// LinePages is Pages for a jsonl body whose line is one record
// (SplitsLines), its records kept as the lines' text: the pages of at
// most size lines (PageRecords when size <= 0) go to page as Pages hands
// them. A line is checked only for its length (maxJSONLLine) here; its
// JSON is the reader's of the page (Lines.Records, or a walk of its
// bytes).
func (dec *Decoder) LinePages(body io.Reader, h http.Header, size int, page func(lines *Lines, last bool) error) error {
	if !dec.SplitsLines() {
		return fmt.Errorf("stream %q: LinePages reads a jsonl body without records_path", dec.stream)
	}
	if size <= 0 {
		size = PageRecords
	}
	if err := dec.CheckContentType(h.Get("Content-Type")); err != nil {
		return err
	}
	r, err := Decompress(body, h)
	if err != nil {
		return err
	}
	jr := newJSONLReader(dec, r)
	lines := &Lines{dec: dec}
	for {
		line, err := jr.next()
		if err == io.EOF {
			return page(lines, true)
		}
		if err != nil {
			if lines.Len() > 0 {
				// The records before the error are handed on, as a
				// body read record by record would have.
				if perr := page(lines, false); perr != nil {
					return perr
				}
			}
			return err
		}
		if lines.Len() == size {
			if err := page(lines, false); err != nil {
				return err
			}
			lines = &Lines{dec: dec, buf: make([]byte, 0, cap(lines.buf))}
		}
		lines.add(line, jr.line)
	}
}
