package decoder

import (
	"errors"
	"io"
)

// The caps on what a body's records may take, as the json and jsonl
// formats are capped (maxJSONBody, maxJSONLLine): a hostile or broken
// export (a field of gigabytes, a gzip bomb) fails the stream with an
// error saying which cap it passed instead of taking the machine's
// memory.
const (
	// maxRecordText bounds the text of one record of a csv or xml body
	// (a row; a record element from its start tag to its end tag) and,
	// in an xml body, the text between two records: as a jsonl line.
	maxRecordText = 64 << 20
	// maxPageBody bounds a csv, jsonl or xml page once inflated when its
	// records are held (a paginated stream, PageConsumer): as a json
	// body. A body read as it arrives (Pages) has no bound as a whole.
	maxPageBody = 256 << 20
)

// readAhead is how far encoding/csv and encoding/xml read past what they
// have consumed (the size of the bufio.Reader each wraps its input in).
const readAhead = 4096

var (
	errRecordTooLarge = errors.New("record too large")
	errPageTooLarge   = errors.New("page too large")
)

// budget reads r until more than limit bytes are read in all, then fails
// with err.
type budget struct {
	r     io.Reader
	n     int64 // bytes read
	limit int64
	err   error
}

// allow lets reading go on until max bytes past offset, a position in the
// stream of a reader that reads ahead of it by at most readAhead.
func (b *budget) allow(offset, max int64) { b.limit = offset + max + readAhead }

func (b *budget) Read(p []byte) (int, error) {
	if b.n >= b.limit {
		return 0, b.err
	}
	if rest := b.limit - b.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	return n, err
}
