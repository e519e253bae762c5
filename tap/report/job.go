// Package report holds the protocol of a report job (an async stream):
// the request that creates it, the polls until it is done, failed or out
// of time, and the error of a job that failed for good. The engine sends
// the requests, keeps the job id in its state and reads the job's files;
// the job's shape is the stream's async block (streams.Async).
package report

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
)

// Job is the report job of one async stream.
type Job struct {
	Def *streams.Definition // its Async is set
	// Get sends req and decodes its JSON answer, which came from the URL
	// it returns (after redirects).
	Get    func(ctx context.Context, req streams.Request) (any, *url.URL, error)
	Now    func() time.Time
	Redact *settings.Redactor // masks secrets in the API's message of a failed job
}

// Error is a report job that failed for good, at one of its phases
// (create, poll, download): what its dead letter is made of. It wraps the
// error as it was, so that without dead letters the run fails (or, for a
// job still pending, defers) as before.
type Error struct {
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

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// CreateRequest is the request that creates a job of d: first, the
// stream's request, with the create block's path, method (POST unless
// given), body (the create block's, else the stream's for a POST; none
// for a GET) and params.
func CreateRequest(d *streams.Definition, first streams.Request) streams.Request {
	a := d.Async
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
	return req
}

// Create sends the create request and returns the new job's id.
func (j *Job) Create(ctx context.Context, first streams.Request) (string, error) {
	d := j.Def
	req := CreateRequest(d, first)
	body, _, err := j.Get(ctx, req)
	if err != nil {
		return "", &Error{Stream: d.Name, Phase: "create", Req: req, Err: err}
	}
	return d.Async.JobID(d.Name, body)
}

// Poll polls job id every poll.interval_s until it is done, and returns
// the answer that said so with its URL. A failed job is an error carrying
// the API's message; failed is called first, for the engine to forget the
// job (the next run creates a new one), and its error joins it. A job
// still pending after poll.timeout_s is a *client.DeferError (exit 75),
// the job id staying in STATE for the next run to poll.
func (j *Job) Poll(ctx context.Context, id string, failed func() error) (any, *url.URL, error) {
	d, a := j.Def, j.Def.Async
	req, err := a.PollRequest(d.Name, id)
	if err != nil {
		return nil, nil, err
	}
	interval, timeout := a.Poll.Interval(), a.Poll.Timeout()
	start := j.Now()
	fail := func(polls int, status string, body any, err error) *Error {
		je := &Error{Stream: d.Name, ID: id, Phase: "poll", Req: req, Status: status, Polls: polls, Err: err}
		if body != nil {
			b, _ := codec.Marshal(body)
			je.Body = string(b)
		}
		return je
	}
	for polls := 1; ; polls++ {
		body, u, err := j.Get(ctx, req)
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
			err := failed()
			if msg == "" {
				msg = "the API gave no message"
			}
			return nil, nil, fail(polls, status, body,
				errors.Join(fmt.Errorf("stream %q: report job %s failed (status %q): %s", d.Name, id, status, j.Redact.Redact(msg)), err))
		}
		now := j.Now()
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
