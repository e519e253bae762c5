package decoder

import (
	"bytes"
	"fmt"
	"io"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams"
)

// maxJSONBody bounds a json body, which is one document and is decoded
// whole (the HTTP client bounds a JSON page the same).
const maxJSONBody = 256 << 20

// jsonReader reads a json body: one document, decoded whole, whose
// records are at records_path (as Extract finds them).
type jsonReader struct {
	dec  *Decoder
	body io.Reader
	recs []any
	done bool
}

func (r *jsonReader) Read() (any, error) {
	if !r.done {
		r.done = true
		b, err := io.ReadAll(io.LimitReader(r.body, maxJSONBody+1))
		if err != nil {
			return nil, err
		}
		if len(b) > maxJSONBody {
			return nil, fmt.Errorf("stream %q: a json body larger than %d MiB; use jsonl for files this large", r.dec.stream, maxJSONBody>>20)
		}
		v, err := codec.DecodeRecords(bytes.TrimPrefix(b, bom))
		if err != nil {
			return nil, fmt.Errorf("stream %q: the body is not JSON: %w", r.dec.stream, err)
		}
		d := streams.Definition{Name: r.dec.stream, RecordsPath: r.dec.recordsPath}
		if r.recs, err = d.Extract(v); err != nil {
			return nil, err
		}
	}
	if len(r.recs) == 0 {
		return nil, io.EOF
	}
	rec := r.recs[0]
	r.recs = r.recs[1:]
	return rec, nil
}
