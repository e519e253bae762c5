package tap

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/codec"
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

// runAsync drives a report stream: create a job (or take up the one the
// state names), poll it until it is done, then read its files. The job id
// is checkpointed as soon as it is known, so a run that stops while the
// job is pending (killed, or out of poll.timeout_s: exit 75) polls the
// same job when it runs again, and never creates a second one.
//
// Replay runs a new job and leaves the state alone: its one STATE is the
// one it was given.
//
// A job that fails for good — its create, poll or download request out of
// retries, the API saying it failed, or still pending at poll.timeout_s —
// is a *report.Error, which on_request_failure dead_letter makes a letter of.
func (e *engine) runAsync(ctx context.Context, n *node, first streams.Request, part streams.Partition) error {
	d, a := n.def, n.def.Async
	id := ""
	if !e.replaying {
		id = e.state.AsyncJob(d.Name)
	}
	resumed := id != ""
	if resumed {
		e.log.Info("polling the report job of the last run", "stream", d.Name, "job_id", id)
	} else {
		var err error
		if id, err = e.createJob(ctx, n, first); err != nil {
			return err
		}
	}
	body, pollURL, err := e.pollJob(ctx, n, id)
	var se *client.StatusError
	if resumed && errors.As(err, &se) && (se.Status == http.StatusNotFound || se.Status == http.StatusGone) {
		// The job of an earlier run has expired upstream.
		e.log.Warn("the report job of the last run is gone; creating a new one", "stream", d.Name, "job_id", id, "status", se.Status)
		if id, err = e.createJob(ctx, n, first); err != nil {
			return err
		}
		body, pollURL, err = e.pollJob(ctx, n, id)
	}
	if err != nil {
		return err
	}
	urls, err := a.DownloadURLs(d.Name, body, pollURL)
	if err != nil {
		return err
	}
	dec, err := e.decoder(n, a.DownloadFormat(d))
	if err != nil {
		return err
	}
	e.log.Info("report job done; downloading", "stream", d.Name, "job_id", id, "files", len(urls))
	for _, u := range urls {
		req := streams.Request{Method: "GET", URL: u}
		if err := e.streamBody(ctx, n, req, part, dec); err != nil {
			return &report.Error{Stream: d.Name, ID: id, Phase: "download", Req: req, Err: err}
		}
	}
	// Read whole: the next run starts a new job. The bookmark that moves
	// with the records goes out in the stream's final STATE.
	e.setAsyncJob(n, "")
	return nil
}

// setAsyncJob records the job in progress in the state, unless replaying.
func (e *engine) setAsyncJob(n *node, id string) {
	if !e.replaying {
		e.state.SetAsyncJob(n.def.Name, id, e.now())
	}
}

// reportJob is n's report job, its requests sent by the engine's client.
func (e *engine) reportJob(n *node) *report.Job {
	return &report.Job{
		Def:    n.def,
		Get:    func(ctx context.Context, req streams.Request) (any, *url.URL, error) { return e.getJSON(ctx, n, req) },
		Now:    e.now,
		Redact: e.redact,
	}
}

// createJob creates a job and checkpoints its id.
func (e *engine) createJob(ctx context.Context, n *node, first streams.Request) (string, error) {
	id, err := e.reportJob(n).Create(ctx, first)
	if err != nil {
		return "", err
	}
	e.setAsyncJob(n, id)
	e.log.Info("report job created", "stream", n.def.Name, "job_id", id)
	if n.selected && !e.replaying {
		if err := e.checkpoint(n); err != nil {
			return "", err
		}
	}
	return id, nil
}

// pollJob polls job id until it is done; a job the API says failed is
// forgotten, so that the next run creates a new one.
func (e *engine) pollJob(ctx context.Context, n *node, id string) (any, *url.URL, error) {
	return e.reportJob(n).Poll(ctx, id, func() error {
		e.setAsyncJob(n, "")
		if n.selected && !e.replaying {
			return e.checkpoint(n)
		}
		return nil
	})
}

// getJSON sends req and decodes its JSON answer.
func (e *engine) getJSON(ctx context.Context, n *node, req streams.Request) (any, *url.URL, error) {
	var body any
	resp, err := e.client.Do(ctx, client.Request{
		Stream: n.def.Name, Method: req.Method, URL: req.URL, Query: req.Query, Body: req.Body,
		Check: func(b []byte) error {
			v, err := codec.Decode(b)
			if err != nil {
				if cutShort(b) {
					return client.Transient(fmt.Errorf("response body is cut short: %w", err))
				}
				return fmt.Errorf("response body is not JSON: %w", err)
			}
			body = v
			return nil
		},
	})
	if err != nil {
		return nil, nil, err
	}
	return body, resp.URL, nil
}
