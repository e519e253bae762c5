// Package report drives a report job (an async stream): the request that
// creates it, the polls until it is done, failed or out of time, the
// download of its files, and the error of a job that failed for good.
//
// The model: a job outlives a run. Its id is saved as soon as it is known
// (Job.SetID, then Job.Checkpoint), so that a run that stops while the job
// is pending — killed, or out of poll.timeout_s — polls the same job when
// it runs again and never creates a second one; a job of an earlier run
// that the API no longer knows is replaced by a new one. The engine owns
// the rest through the function values of Job: it sends the requests,
// keeps the id in its state, and walks each file as the pages of a body
// read as it arrives (streams/pages), through its record pipeline. The job's shape is the stream's async block (streams.Async).
package report

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
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
	Log    *slog.Logger

	// SetID records the id of the job in progress in the state; "" forgets
	// it, for the next run to create a new job.
	SetID func(id string)
	// Checkpoint writes the state out, with the id SetID recorded.
	Checkpoint func() error
	// Read reads one file of a done job, its records going to the run.
	Read func(ctx context.Context, file streams.Request) error
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

// Run takes a job from its create — or, when saved is the id of the job
// the last run left pending, from that job's polls — to its files, read
// one by one. The id of a new job is checkpointed before its first poll.
// A saved job the API answers 404 or 410 for has expired upstream: a new
// one is created. The caller forgets the job once Run returns nil (its
// records' bookmark goes out in the stream's final STATE).
//
// A job that fails for good — its create, poll or download request out
// of retries, the API saying it failed, or still pending at
// poll.timeout_s — is an *Error.
func (j *Job) Run(ctx context.Context, first streams.Request, saved string) error {
	d, a := j.Def, j.Def.Async
	id := saved
	if id != "" {
		j.Log.Info("polling the report job of the last run", "stream", d.Name, "job_id", id)
	} else {
		var err error
		if id, err = j.create(ctx, first); err != nil {
			return err
		}
	}
	body, pollURL, err := j.poll(ctx, id)
	var se *client.StatusError
	if saved != "" && errors.As(err, &se) && (se.Status == http.StatusNotFound || se.Status == http.StatusGone) {
		j.Log.Warn("the report job of the last run is gone; creating a new one", "stream", d.Name, "job_id", id, "status", se.Status)
		if id, err = j.create(ctx, first); err != nil {
			return err
		}
		body, pollURL, err = j.poll(ctx, id)
	}
	if err != nil {
		return err
	}
	urls, err := a.DownloadURLs(d.Name, body, pollURL)
	if err != nil {
		return err
	}
	j.Log.Info("report job done; downloading", "stream", d.Name, "job_id", id, "files", len(urls))
	for _, u := range urls {
		req := streams.Request{Method: "GET", URL: u}
		if err := j.Read(ctx, req); err != nil {
			return &Error{Stream: d.Name, ID: id, Phase: "download", Req: req, Err: err}
		}
	}
	return nil
}

// create sends the create request and checkpoints the new job's id.
func (j *Job) create(ctx context.Context, first streams.Request) (string, error) {
	d := j.Def
	req := CreateRequest(d, first)
	body, _, err := j.Get(ctx, req)
	if err != nil {
		return "", &Error{Stream: d.Name, Phase: "create", Req: req, Err: err}
	}
	id, err := d.Async.JobID(d.Name, body)
	if err != nil {
		return "", err
	}
	j.SetID(id)
	j.Log.Info("report job created", "stream", d.Name, "job_id", id)
	if err := j.Checkpoint(); err != nil {
		return "", err
	}
	return id, nil
}

// poll polls job id every poll.interval_s until it is done, and returns
// the answer that said so with its URL. A failed job is an error carrying
// the API's message; the job is forgotten first (SetID(""), then
// Checkpoint) so that the next run creates a new one, and a checkpoint's
// error joins it. A job still pending after poll.timeout_s is a
// *client.DeferError (exit 75), the job id staying in STATE for the next
// run to poll.
func (j *Job) poll(ctx context.Context, id string) (any, *url.URL, error) {
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
			j.SetID("")
			err := j.Checkpoint()
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
