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
	return &jsonlReader{dec: dec, br: bufio.NewReaderSize(body, bodyBuffer)}
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
		if r.dec.recordsPath == "" {
			v, err := codec.DecodeRecords(line)
			if err != nil {
				return nil, fmt.Errorf("stream %q: line %d of the jsonl body is not JSON: %w", r.dec.stream, r.line, err)
			}
			return v, nil
		}
		recs, err := r.records(line)
		if err != nil {
			return nil, err
		}
		r.pending = recs
	}
}

// records are the records of line, at records_path: an object there is
// one record, an array holds several, null none.
func (r *jsonlReader) records(line []byte) ([]any, error) {
	v, err := codec.DecodeRecords(line)
	if err != nil {
		return nil, fmt.Errorf("stream %q: line %d of the jsonl body is not JSON: %w", r.dec.stream, r.line, err)
	}
	at, found := streams.LookupNullable(v, r.dec.recordsPath)
	switch recs := at.(type) {
	case nil:
		if !found {
			return nil, fmt.Errorf("stream %q: records_path %q is not in line %d of the jsonl body", r.dec.stream, r.dec.recordsPath, r.line)
		}
		return nil, nil
	case []any:
		return recs, nil
	}
	return []any{at}, nil
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

// Lines is a page of a body's records as JSON texts, one a record: a
// jsonl body's lines as the API sent them, blank lines left out, or a csv
// body's rows, each as its record's JSON object. A record's bytes are
// ready to be written as they came (the tap's splice path); Records
// decodes them for the tree path. A csv row whose text could not stand
// for its tree (csvReader.next) is given as its tree (Tree), its text
// empty.
type Lines struct {
	dec   *Decoder
	buf   []byte
	ends  []int  // where each line ends in buf
	nums  []int  // the body's line (a csv body's row) number of each line
	trees []any  // by line, its tree when it has no text; nil when none has
	given []bool // by line, whether trees holds it
	// readers are the buffers the page's body was read through, kept
	// for the next body read into the page (ReadLines).
	readers readers
}

// Len is the number of lines.
func (l *Lines) Len() int { return len(l.ends) }

// Cap is the bytes the page's texts may take before it grows: what a
// page kept for the next holds.
func (l *Lines) Cap() int { return cap(l.buf) }

// Line is line i of the page, without its line ending; empty when the
// record is given as its tree.
func (l *Lines) Line(i int) []byte {
	from := 0
	if i > 0 {
		from = l.ends[i-1]
	}
	return l.buf[from:l.ends[i]:l.ends[i]]
}

// Tree is record i's tree when it is given as one (ok; a csv row whose
// text could not stand for it, a record of a jsonl line whose records the
// page scan was not sure of): its text is then empty; else it is Line(i).
func (l *Lines) Tree(i int) (tree any, ok bool) {
	if l.trees == nil || !l.given[i] {
		return nil, false
	}
	return l.trees[i], true
}

// Records decodes the page's lines as the body's reader does: its
// records and, at the first line that is not JSON, the records before it
// with the error naming the line.
func (l *Lines) Records() ([]any, error) {
	recs := make([]any, 0, l.Len())
	for i := range l.ends {
		if t, ok := l.Tree(i); ok {
			recs = append(recs, t)
			continue
		}
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
	l.end(num)
}

// end ends the line appended to buf.
func (l *Lines) end(num int) {
	l.ends = append(l.ends, len(l.buf))
	l.nums = append(l.nums, num)
	if l.trees != nil {
		l.trees, l.given = append(l.trees, nil), append(l.given, false)
	}
}

// addTree appends a record given as its tree.
func (l *Lines) addTree(tree any, num int) {
	if l.trees == nil {
		l.trees, l.given = make([]any, len(l.ends), cap(l.ends)), make([]bool, len(l.ends), cap(l.ends))
	}
	l.ends = append(l.ends, len(l.buf))
	l.nums = append(l.nums, num)
	l.trees, l.given = append(l.trees, tree), append(l.given, true)
}

// reset empties the page for the next, keeping its memory.
func (l *Lines) reset() {
	l.buf, l.ends, l.nums = l.buf[:0], l.ends[:0], l.nums[:0]
	if l.trees != nil {
		clear(l.trees)
		l.trees, l.given = l.trees[:0], l.given[:0]
	}
}

// SplitsLines reports whether the decoder's bodies are read by
// LinePages and ReadLines, as their records' JSON texts: a jsonl body (a
// line is a record, or holds them at records_path) or a csv body.
func (dec *Decoder) SplitsLines() bool {
	return dec.format == streams.FormatJSONL || dec.format == streams.FormatCSV
}

// LinePages is Pages for a body read as JSON texts, a record each
// (SplitsLines): the pages of at most size records (PageRecords when
// size <= 0) go to page as Pages hands them. A jsonl line is checked
// only for its length (maxJSONLLine) here; its JSON is the reader's of
// the page (Lines.Records, or a walk of its bytes). lines is one page,
// reused for the next once page returns: page keeps none of it.
func (dec *Decoder) LinePages(body io.Reader, h http.Header, size int, page func(lines *Lines, last bool) error) error {
	if !dec.SplitsLines() {
		return fmt.Errorf("stream %q: LinePages reads a jsonl or csv body", dec.stream)
	}
	if size <= 0 {
		size = PageRecords
	}
	lines := &Lines{dec: dec}
	next, err := dec.lineReader(body, h, 0, &lines.readers)
	if err != nil {
		return err
	}
	var tail Lines // the record read after a full page
	for {
		err := next(lines)
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
		if lines.Len() > size {
			// A full page goes once the record after it is read, so
			// that the body's last page is the one marked last.
			lines.moveLast(&tail)
			if err := page(lines, false); err != nil {
				return err
			}
			lines.reset()
			tail.moveLast(lines)
		}
	}
}

// lineReader is what adds the next record of body to a page of Lines
// (io.EOF after the last), reading at most max bytes of the inflated
// body (0: no bound), through rs's buffers.
func (dec *Decoder) lineReader(body io.Reader, h http.Header, max int64, rs *readers) (func(*Lines) error, error) {
	if err := dec.CheckContentType(h.Get("Content-Type")); err != nil {
		return nil, err
	}
	r, err := rs.decompress(body, h)
	if err != nil {
		return nil, err
	}
	if max > 0 {
		b := &budget{r: r, err: errPageTooLarge}
		b.allow(0, max)
		r = b
	}
	if dec.format == streams.FormatCSV {
		return newCSVTexts(dec, r).next, nil
	}
	jr := &jsonlReader{dec: dec, br: buffered(&rs.line, r)}
	if dec.recordsPath == "" {
		return func(l *Lines) error {
			line, err := jr.next()
			if err == nil {
				l.add(line, jr.line)
			}
			return err
		}, nil
	}
	// The records inside each line: found by a page scan of the line
	// (the array at records_path, each record's text as it lies), or,
	// when the scan is not sure of the line (an object or null there,
	// no records_path, not JSON, a key repeated on the way), read from
	// its tree as the jsonl reader reads them, with its errors.
	if rs.atPath == nil {
		anything, err := codec.CompileShape(map[string]any{})
		if err != nil {
			return nil, err
		}
		if rs.atPath, err = codec.NewPage(anything, codec.PageSpec{Records: dec.recordsPath}); err != nil {
			return nil, err
		}
	}
	scan := rs.atPath
	var found []codec.Record
	var texts [][]byte
	var trees []any
	return func(l *Lines) error {
		for {
			if len(texts) > 0 {
				l.add(texts[0], jr.line)
				texts = texts[1:]
				return nil
			}
			if len(trees) > 0 {
				l.addTree(trees[0], jr.line)
				trees[0], trees = nil, trees[1:]
				return nil
			}
			line, err := jr.next()
			if err != nil {
				return err
			}
			var ok bool
			if found, _, ok = scan.Scan(found, nil, line); ok {
				texts = texts[:0]
				for _, rec := range found {
					texts = append(texts, rec.Raw)
				}
				continue
			}
			if trees, err = jr.records(line); err != nil {
				return err
			}
		}
	}, nil
}

// NewLines returns an empty page of the decoder's records (ReadLines).
func (dec *Decoder) NewLines() *Lines { return &Lines{dec: dec} }

// ReadLines reads the body of one page of a paginated stream whose body
// is read as JSON texts (SplitsLines) into lines, emptied first: the
// page PageConsumer reads, bounded as it is, and with its errors. A jsonl
// line that is not JSON is found by the page's reader (Lines.Records, or
// a walk of its bytes), as LinePages leaves it; but when reading the
// body fails after such a line, that line's error is the one returned,
// as PageConsumer, which decodes each line as it reads it, would.
func (dec *Decoder) ReadLines(body io.Reader, h http.Header, lines *Lines) error {
	if !dec.SplitsLines() {
		return fmt.Errorf("stream %q: ReadLines reads a jsonl or csv body", dec.stream)
	}
	if lines.dec != dec {
		// The buffers kept are another decoder's (its records_path scan).
		lines.dec, lines.readers = dec, readers{}
	}
	lines.reset()
	next, err := dec.lineReader(body, h, dec.maxPage, &lines.readers)
	if err != nil {
		return err
	}
	for {
		err := next(lines)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if _, lerr := lines.Records(); lerr != nil {
				return lerr
			}
			if errors.Is(err, errPageTooLarge) {
				return fmt.Errorf("stream %q: a page of the %s body is larger than %d MiB once inflated", dec.stream, dec.format, dec.maxPage>>20)
			}
			return err
		}
	}
}

// moveLast moves l's last record to the end of to.
func (l *Lines) moveLast(to *Lines) {
	i := l.Len() - 1
	if t, ok := l.Tree(i); ok {
		to.addTree(t, l.nums[i])
	} else {
		to.add(l.Line(i), l.nums[i])
	}
	from := 0
	if i > 0 {
		from = l.ends[i-1]
	}
	l.buf, l.ends, l.nums = l.buf[:from], l.ends[:i], l.nums[:i]
	if l.trees != nil {
		l.trees[i] = nil
		l.trees, l.given = l.trees[:i], l.given[:i]
	}
}
