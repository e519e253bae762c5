package decoder

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

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
