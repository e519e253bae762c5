package tap

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/decoder"
)

// streamBatch is how many records of a streamed body go through the
// pipeline between two checkpoints of a sorted stream.
const streamBatch = 1000

// streamBody reads one body of records as it arrives, each record going
// through the pipeline before the next is decoded: a body of any size runs
// in the memory of one record. A sorted stream checkpoints every
// streamBatch records.
func (e *engine) streamBody(ctx context.Context, n *node, req streams.Request, part streams.Partition, dec *decoder.Decoder) error {
	var pipeErr error
	creq := e.clientRequest(n, req, dec.Format())
	creq.Consume = func(body io.Reader, h http.Header) error {
		pipeErr = nil
		batch := 0
		extracted := e.now()
		return dec.Each(body, h, func(rec any) error {
			n.counts.Received.Add(1)
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
	}
	resp, err := e.client.Do(ctx, creq)
	if pipeErr != nil {
		return pipeErr
	}
	if err != nil {
		return err
	}
	if resp.Ignored {
		return errIgnored
	}
	n.counts.Pages.Add(1)
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

// checkFormat is check for a streamed body: only its first record is
// read, not the whole export.
func (e *engine) checkFormat(ctx context.Context, n *node, req streams.Request) (map[string]any, int, error) {
	dec, err := e.decoder(n, n.def.BodyFormat())
	if err != nil {
		return nil, 0, err
	}
	var first any
	creq := e.clientRequest(n, req, dec.Format())
	creq.Consume = func(body io.Reader, h http.Header) (err error) {
		first, err = dec.First(body, h)
		return err
	}
	resp, err := e.client.Do(ctx, creq)
	if err != nil {
		return nil, 0, err
	}
	if resp.Ignored || first == nil {
		return nil, 0, nil
	}
	m, _ := first.(map[string]any)
	return m, 1, nil
}
