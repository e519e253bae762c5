package tap

import (
	"context"
	"errors"
	"net/url"

	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/tap/report"
)

// errNotStreamed: the stream is walked page by page, not by walkFormat.
var errNotStreamed = errors.New("not a streamed stream")

// walkFormat reads the streams that are not walked page by page: an async
// report, or one unpaged body of jsonl, csv or xml read as it arrives.
func (e *engine) walkFormat(ctx context.Context, n *node, first streams.Request, part streams.Partition) error {
	d := n.def
	switch {
	case d.Async != nil:
		return e.runAsync(ctx, n, first, part)
	case d.Streamed():
		dec, err := e.decoder(n, d.BodyFormat())
		if err != nil {
			return err
		}
		return e.streamBody(ctx, n, first, part, dec)
	}
	return errNotStreamed
}

// runAsync drives a report stream through its job (tap/report), which
// reads each of the job's files through streamBody. Replay runs a new job
// and leaves the state alone: its one STATE is the one it was given. A
// job that fails for good is a *report.Error, for deadLetter to judge.
func (e *engine) runAsync(ctx context.Context, n *node, first streams.Request, part streams.Partition) error {
	d := n.def
	dec, err := e.decoder(n, d.Async.DownloadFormat(d))
	if err != nil {
		return err
	}
	saved := ""
	if !e.policy.replay() {
		saved = e.state.AsyncJob(d.Name)
	}
	job := &report.Job{
		Def:    d,
		Get:    func(ctx context.Context, req streams.Request) (any, *url.URL, error) { return e.getJSON(ctx, n, req) },
		Now:    e.now,
		Redact: e.cfg.Redactor,
		Log:    e.log,
		SetID:  func(id string) { e.setAsyncJob(n, id) },
		Checkpoint: func() error {
			if n.selected && !e.policy.replay() {
				return e.checkpoint(n)
			}
			return nil
		},
		Read: func(ctx context.Context, file streams.Request) error { return e.streamBody(ctx, n, file, part, dec) },
	}
	if err := job.Run(ctx, first, saved); err != nil {
		return err
	}
	// Read whole: the next run starts a new job. The bookmark that moves
	// with the records goes out in the stream's final STATE.
	e.setAsyncJob(n, "")
	return nil
}

// setAsyncJob records the job in progress in the state, unless replaying.
func (e *engine) setAsyncJob(n *node, id string) {
	if !e.policy.replay() {
		e.state.SetAsyncJob(n.def.Name, id, e.now())
	}
}

// getJSON sends req and decodes its JSON answer.
func (e *engine) getJSON(ctx context.Context, n *node, req streams.Request) (any, *url.URL, error) {
	var body any
	creq := e.clientRequest(n, req, streams.FormatJSON)
	// The job's own requests are not the stream's pages: the stream's
	// status rules and weight are for its pages.
	creq.IgnoreStatuses, creq.OnStatus, creq.Weight, creq.Cost = nil, nil, 0, 0
	creq.Check = func(b []byte) (err error) {
		body, err = decodeJSON(b)
		return err
	}
	resp, err := e.client.Do(ctx, creq)
	if err != nil {
		return nil, nil, err
	}
	return body, resp.URL, nil
}
