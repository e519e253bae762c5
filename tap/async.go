package tap

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams"
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
// is a *jobError, which on_request_failure dead_letter makes a letter of.
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
			return &jobError{Stream: d.Name, ID: id, Phase: "download", Req: req, Err: err}
		}
	}
	// Read whole: the next run starts a new job. The bookmark that moves
	// with the records goes out in the stream's final STATE.
	e.setAsyncJob(n, "")
	return nil
}

// jobError is a report job that failed for good, at one of its phases
// (create, poll, download): what its dead letter is made of. It wraps the
// error as it was, so that without dead letters the run fails (or, for a
// job still pending, defers) as before.
type jobError struct {
	Stream, ID string
	Phase      string          // create, poll or download
	Req        streams.Request // the request that failed
	// Status is the job's status text when the API said it failed, and
	// Body the poll answer that said so.
	Status, Body string
	Polls        int // poll requests sent before the job failed or timed out
	// Msg, when set, says what failed better than Err does for a letter
	// (a job still pending: the run is not deferred, it goes on).
	Msg string
	Err error
}

func (e *jobError) Error() string { return e.Err.Error() }
func (e *jobError) Unwrap() error { return e.Err }

// setAsyncJob records the job in progress in the state, unless replaying.
func (e *engine) setAsyncJob(n *node, id string) {
	if !e.replaying {
		e.state.SetAsyncJob(n.def.Name, id, e.now())
	}
}

// createJob sends the create request and checkpoints the job id.
func (e *engine) createJob(ctx context.Context, n *node, first streams.Request) (string, error) {
	d, a := n.def, n.def.Async
	req := first
	if a.Create.Path != "" {
		req.URL = a.Create.Path
	}
	req.Method = strings.ToUpper(a.Create.Method)
	if req.Method == "" {
		req.Method = "POST"
	}
	if b := strings.TrimSpace(string(a.Create.Body)); b != "" && b != "null" {
		req.Body = []byte(b)
	} else if b := strings.TrimSpace(string(d.Body)); req.Method == "POST" && b != "" && b != "null" {
		req.Body = []byte(b)
	}
	if req.Method == "GET" {
		req.Body = nil
	}
	for k, v := range a.Create.Params {
		req = req.WithParam(k, v)
	}
	body, _, err := e.getJSON(ctx, n, req)
	if err != nil {
		return "", &jobError{Stream: d.Name, Phase: "create", Req: req, Err: err}
	}
	id, err := a.JobID(d.Name, body)
	if err != nil {
		return "", err
	}
	e.setAsyncJob(n, id)
	e.log.Info("report job created", "stream", d.Name, "job_id", id)
	if n.selected && !e.replaying {
		if err := e.checkpoint(n); err != nil {
			return "", err
		}
	}
	return id, nil
}

// pollJob polls job id every poll.interval_s until it is done, and returns
// the answer that said so with its URL. A failed job is an error carrying
// the API's message (and is forgotten: the next run creates a new one);
// a job still pending after poll.timeout_s defers the run (exit 75) with
// the job id in STATE.
func (e *engine) pollJob(ctx context.Context, n *node, id string) (any, *url.URL, error) {
	d, a := n.def, n.def.Async
	req, err := a.PollRequest(d.Name, id)
	if err != nil {
		return nil, nil, err
	}
	interval, timeout := a.Poll.Interval(), a.Poll.Timeout()
	start := e.now()
	fail := func(polls int, status string, body any, err error) *jobError {
		je := &jobError{Stream: d.Name, ID: id, Phase: "poll", Req: req, Status: status, Polls: polls, Err: err}
		if body != nil {
			b, _ := codec.Marshal(body)
			je.Body = string(b)
		}
		return je
	}
	for polls := 1; ; polls++ {
		body, u, err := e.getJSON(ctx, n, req)
		if err != nil {
			return nil, nil, fail(polls, "", nil, err)
		}
		state, status, msg, err := a.Status(d.Name, body)
		if err != nil {
			return nil, nil, err
		}
		switch state {
		case streams.JobDone:
			return body, u, nil
		case streams.JobFailed:
			e.setAsyncJob(n, "")
			if n.selected && !e.replaying {
				err = e.checkpoint(n)
			}
			if msg == "" {
				msg = "the API gave no message"
			}
			return nil, nil, fail(polls, status, body,
				errors.Join(fmt.Errorf("stream %q: report job %s failed (status %q): %s", d.Name, id, status, e.redact.Redact(msg)), err))
		}
		now := e.now()
		if now.Sub(start)+interval > timeout {
			late := fmt.Sprintf("report job %s is still %q after %d polls in %s (async.poll.timeout_s)", id, status, polls, now.Sub(start).Round(time.Millisecond))
			je := fail(polls, status, body, &client.DeferError{Stream: d.Name, Reason: late + "; the next run polls it again", RetryAt: now.Add(interval)})
			je.Msg = fmt.Sprintf("stream %q: %s", d.Name, late)
			return nil, nil, je
		}
		if err := client.Sleep(ctx, interval); err != nil {
			return nil, nil, fmt.Errorf("stream %q: waiting for report job %s: %w", d.Name, id, err)
		}
	}
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

// acceptHeader asks for a download in its format.
func acceptHeader(format string) http.Header {
	accept := map[string]string{
		streams.FormatJSONL: "application/x-ndjson, application/json;q=0.9, */*;q=0.5",
		streams.FormatCSV:   "text/csv, */*;q=0.5",
		streams.FormatXML:   "application/xml, text/xml;q=0.9, */*;q=0.5",
	}[format]
	if accept == "" {
		return nil
	}
	return http.Header{"Accept": {accept}}
}
