package tap

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/decoder"
)

// streamBatch is how many records of a streamed body go through the
// pipeline between two checkpoints of a sorted stream.
const streamBatch = 1000

// maxGzipJSON bounds a gzipped JSON page once inflated, as the client
// bounds a plain one.
const maxGzipJSON = 256 << 20

// decoder returns the decoder of a stream's bodies in format.
func (e *engine) decoder(n *node, format string) (*decoder.Decoder, error) {
	return decoder.New(n.def, format, e.cfg.Schemas[n.def.Name])
}

// pageConsumer reads one page of a jsonl, csv or xml stream: the records
// of a page are held (a page is bounded by its size); the body is not.
func pageConsumer(dec *decoder.Decoder, recs *[]any) func(io.Reader, http.Header) error {
	return func(body io.Reader, h http.Header) error {
		*recs = (*recs)[:0]
		return eachRecord(dec, body, h, func(rec any) error {
			*recs = append(*recs, rec)
			return nil
		})
	}
}

// eachRecord decodes body (gunzipped when it is gzip) record by record.
func eachRecord(dec *decoder.Decoder, body io.Reader, h http.Header, f func(any) error) error {
	if err := dec.CheckContentType(h.Get("Content-Type")); err != nil {
		return err
	}
	r, err := decoder.Decompress(body, h)
	if err != nil {
		return err
	}
	rr := dec.Records(r)
	for {
		rec, err := rr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := f(rec); err != nil {
			return err
		}
	}
}

// gunzipJSON inflates a gzipped JSON page: gzip is recognised by its magic
// bytes, whatever the headers said.
func gunzipJSON(b []byte) ([]byte, error) {
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		return b, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("reading gzip body: %w", err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxGzipJSON+1))
	if err != nil {
		return nil, fmt.Errorf("reading gzip body: %w", err)
	}
	if len(out) > maxGzipJSON {
		return nil, fmt.Errorf("gzip body larger than %d MiB once inflated", maxGzipJSON>>20)
	}
	return out, nil
}

// streamBody reads one body of records as it arrives, each record going
// through the pipeline before the next is decoded: a body of any size runs
// in the memory of one record. A sorted stream checkpoints every
// streamBatch records.
func (e *engine) streamBody(ctx context.Context, n *node, req streams.Request, part streams.Partition, dec *decoder.Decoder) error {
	d := n.def
	var pipeErr error
	resp, err := e.client.Do(ctx, e.withLimits(d, client.Request{
		Stream: d.Name, Method: req.Method, URL: req.URL, Query: req.Query, Body: req.Body, Header: withAccept(req.Header, dec.Format()),
		IgnoreStatuses: d.IgnoreStatuses,
		Consume: func(body io.Reader, h http.Header) error {
			pipeErr = nil
			batch := 0
			extracted := e.now()
			return eachRecord(dec, body, h, func(rec any) error {
				n.received.Add(1)
				if err := e.handle(ctx, n, rec, extracted, part); err != nil {
					// The pipeline's error is not the response's: keep it
					// from the client's judgement and stop reading.
					pipeErr = err
					return errPipeline
				}
				if batch++; batch == streamBatch {
					batch, extracted = 0, e.now()
					return e.pageDone(n)
				}
				return nil
			})
		},
	}))
	if pipeErr != nil {
		return pipeErr
	}
	if err != nil {
		return err
	}
	if resp.Ignored {
		return errIgnored
	}
	n.pages.Add(1)
	return e.pageDone(n)
}

// errPipeline stops reading a body whose record the pipeline refused.
var errPipeline = errors.New("stopped by the record pipeline")

// pageDone checkpoints a sorted stream once the records before are written.
func (e *engine) pageDone(n *node) error {
	if err := n.plan.Page(); err != nil {
		return err
	}
	if e.commit(n) && n.selected {
		return e.checkpoint(n)
	}
	return nil
}

// withAccept adds an Accept header asking for format, unless h has one.
func withAccept(h http.Header, format string) http.Header {
	if h.Get("Accept") != "" {
		return h
	}
	a := acceptHeader(format)
	if a == nil {
		return h
	}
	out := h.Clone()
	if out == nil {
		out = http.Header{}
	}
	out["Accept"] = a["Accept"]
	return out
}

// errEnough stops a body once check has its first record.
var errEnough = errors.New("first record read")

// checkFormat is check for a streamed body: only its first record is
// read, not the whole export.
func (e *engine) checkFormat(ctx context.Context, n *node, req streams.Request) (map[string]any, int, error) {
	d := n.def
	dec, err := e.decoder(n, d.BodyFormat())
	if err != nil {
		return nil, 0, err
	}
	var first any
	resp, err := e.client.Do(ctx, client.Request{
		Stream: d.Name, Method: req.Method, URL: req.URL, Query: req.Query, Body: req.Body, Header: withAccept(req.Header, dec.Format()),
		IgnoreStatuses: d.IgnoreStatuses,
		Consume: func(body io.Reader, h http.Header) error {
			err := eachRecord(dec, body, h, func(rec any) error {
				first = rec
				return errEnough
			})
			if errors.Is(err, errEnough) {
				return nil
			}
			return err
		},
	})
	if err != nil {
		return nil, 0, err
	}
	if resp.Ignored || first == nil {
		return nil, 0, nil
	}
	m, _ := first.(map[string]any)
	return m, 1, nil
}
