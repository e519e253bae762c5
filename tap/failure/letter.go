// Package failure says what a request that failed for good leaves
// behind when its stream asks for dead letters: the request dead letter
// (records.RequestLetter) that `tap replay` rebuilds the request from.
//
// The model: a stream is read in walks — a whole stream, one chunk
// window, a child's walk for one parent record, one report job. A walk
// that ends in an error is judged once, by the engine, with Walk.Letter:
// the error is a letter when it is the walk's own request failing (not a
// child's) and the stream's rules say so (on_request_failure dead_letter,
// an on_status rule dead_letter for the last status, or `tap replay`,
// where every failure is one). The engine then writes the letter, holds
// the stream's bookmark and goes on; any other error fails the run as
// before. Which page of a walk failed is told by the fetch that Pages
// wraps, so that replay starts at that page rather than at the walk's
// first.
package failure

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/records"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/streams/pages"
	"github.com/tap-dev/tap/tap/report"
)

// Walk is one walk of a stream that ended in an error, and the stream's
// rules for its failures.
type Walk struct {
	Stream string
	First  streams.Request // the walk's first request
	// Context names the parent record of a child's walk; nil otherwise.
	Context map[string]any
	Window  *keys.Window // the chunk window walked; nil when none
	// Resumed: the walk started at a resume position of the last run.
	// The API refusing it (a 4xx other than 429) is not a letter: the
	// engine starts over from the bookmark.
	Resumed bool

	// DeadLetter makes every failure of the walk's own requests a letter
	// (on_request_failure dead_letter, or `tap replay`).
	DeadLetter bool
	// OnStatus are the stream's merged status rules: a last status ruled
	// dead_letter is a letter.
	OnStatus map[int]string
	// Relative makes a page request's URL relative to the API's base, as
	// resume positions keep it; nil keeps it as it is.
	Relative func(streams.Request) streams.Request
}

// Letter returns the letter of the walk's own failed request in err and
// whether the rules make one of it; when not, the run fails with err.
// The letter's Time and Bookmark are the caller's to set. Its strings are
// not masked here: records.DeadLetters masks what it writes.
func (w Walk) Letter(err error) (records.RequestLetter, bool) {
	var se *client.StatusError
	var je *report.Error
	hasSE := errors.As(err, &se) && se.Stream == w.Stream
	hasJob := errors.As(err, &je) && je.Stream == w.Stream
	switch {
	case !hasSE && !hasJob:
		return records.RequestLetter{}, false // a child's failure is the child's to judge
	case hasSE && w.Resumed && se.Status >= 400 && se.Status <= 499 && se.Status != 429:
		return records.RequestLetter{}, false // a resume position refused
	}
	dead := w.DeadLetter || hasSE && se.Status != 0 && w.OnStatus[se.Status] == streams.StatusDeadLetter
	if !dead {
		return records.RequestLetter{}, false
	}
	l := records.RequestLetter{
		Stream: w.Stream, Context: w.Context,
		Method: w.First.Method, URL: w.First.URL, RequestBody: string(w.First.Body),
		Attempts: 1, Error: err.Error(),
	}
	if hasJob {
		jobLetter(&l, je)
		var de *client.DeferError
		l.Transient = errors.As(err, &de) // still pending: it may be done later
	}
	var pe *pageError
	if errors.As(err, &pe) && (w.Resumed || !sameRequest(pe.Req, w.First)) {
		// Replay starts at the page that failed: the pages before it
		// were written (by this walk, or by the run it resumes).
		next := pe.Req
		if w.Relative != nil {
			next = w.Relative(next)
		}
		l.Resume = pages.Resume{Next: next}.Tree()
	}
	if hasSE {
		l.Method, l.URL, l.Status, l.ResponseBody = se.Method, se.URL, se.Status, se.Body
		if l.URL == "" {
			l.URL = se.Path
		}
		l.Transient, l.Attempts = se.Transient(), se.Attempts
	}
	if hasJob && je.Phase == "download" {
		l.URL = pathOnly(l.URL) // a pre-signed URL carries a signature
	}
	if w.Window != nil {
		l.WindowStart, l.WindowEnd = w.Window.Start.UTC().Format(time.RFC3339), w.Window.End.UTC().Format(time.RFC3339)
		if l.Context == nil {
			l.Context = map[string]any{"window": map[string]any{"start": l.WindowStart, "end": l.WindowEnd}}
		}
	}
	return l, true
}

// jobLetter fills l from a report job's failure. Replay runs a new job:
// the context only says which one failed.
func jobLetter(l *records.RequestLetter, je *report.Error) {
	l.Context = map[string]any{"report": je.Stream, "phase": je.Phase}
	if je.ID != "" {
		l.Context["job_id"] = je.ID
	}
	l.Method, l.URL, l.RequestBody = je.Req.Method, je.Req.URL, string(je.Req.Body)
	if je.Body != "" {
		l.Status, l.ResponseBody = 200, je.Body // the poll answer that said failed, or still pending
	}
	l.Attempts = max(je.Polls, 1)
	if je.Msg != "" {
		l.Error = je.Msg
	}
}

// pageError is the failure of one page request of a walk.
type pageError struct {
	Req streams.Request
	Err error
}

func (e *pageError) Error() string { return e.Err.Error() }
func (e *pageError) Unwrap() error { return e.Err }

// Pages makes fetch's errors say which page request failed, for Letter.
func Pages(fetch streams.Fetch) streams.Fetch {
	return func(ctx context.Context, req streams.Request) (*streams.Page, error) {
		resp, err := fetch(ctx, req)
		if err != nil {
			return nil, &pageError{Req: req, Err: err}
		}
		return resp, nil
	}
}

// sameRequest reports whether two requests send the same thing.
func sameRequest(a, b streams.Request) bool {
	return strings.EqualFold(cmp.Or(a.Method, "GET"), cmp.Or(b.Method, "GET")) && a.URL == b.URL &&
		a.Query.Encode() == b.Query.Encode() && bytes.Equal(a.Body, b.Body)
}

// pathOnly is a URL without its query.
func pathOnly(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String()
}

// ClientRule is the client's rule for an on_status rule: dead_letter is a
// permanent failure to the client, which Letter then judges.
func ClientRule(rule string) client.StatusRule {
	if rule == streams.StatusDeadLetter {
		return client.StatusFail
	}
	return client.StatusRule(rule)
}
