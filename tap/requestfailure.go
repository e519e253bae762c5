package tap

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
	"github.com/tap-dev/tap/streams/pages"
	"github.com/tap-dev/tap/tap/report"
)

// deadLetter turns the error of one walk of n (a child's walk for one
// parent, one chunk window, one report job, a whole stream) into a request
// dead letter when the stream asks for it — on_request_failure
// dead_letter, or an on_status rule dead_letter for the last status — and
// returns nil so that the run goes on. Any other error is returned as is.
//
// Once a request of n is dead-lettered, n's bookmark (with per-partition
// bookmarks, that partition's) stays where it was for the rest of the
// run: the rows that request would have read are below every bookmark the
// run could write.
func (e *engine) deadLetter(n *node, first streams.Request, part streams.Partition, err error) error {
	l, ok := e.letterFor(n, first, part, err)
	if !ok {
		return err
	}
	if w := n.window; w != nil {
		l.WindowStart, l.WindowEnd = w.Start.UTC().Format(time.RFC3339), w.End.UTC().Format(time.RFC3339)
		if l.Context == nil {
			l.Context = map[string]any{"window": map[string]any{"start": l.WindowStart, "end": l.WindowEnd}}
		}
	}
	if !n.plan.FullTable() && e.state != nil {
		l.Bookmark = e.state.Value(n.def.Name)
	}
	if werr := e.dead.Request(l); werr != nil {
		return errors.Join(err, werr)
	}
	n.deadLetters.Add(1) // the summary table's column
	if n.plan.PerPartition() && part.ID() != "" {
		if n.held1 == nil {
			n.held1 = map[string]bool{}
		}
		n.held1[part.ID()] = true // the other partitions move on
	} else {
		n.held.Store(true)
	}
	if n.def.Async != nil {
		// The letter has the job now: the next run starts a new one
		// rather than polling this one too.
		e.setAsyncJob(n, "")
	}
	e.log.Warn("request dead-lettered; the run goes on", "stream", n.def.Name, "status", l.Status,
		"attempts", l.Attempts, "error", l.Error)
	return nil
}

// letterFor returns the letter of n's own failed request in err (from
// first, for part), and whether it must be written.
func (e *engine) letterFor(n *node, first streams.Request, part streams.Partition, err error) (records.RequestLetter, bool) {
	var se *client.StatusError
	var je *report.Error
	hasSE := errors.As(err, &se) && se.Stream == n.def.Name
	hasJob := errors.As(err, &je) && je.Stream == n.def.Name
	switch {
	case !hasSE && !hasJob:
		return records.RequestLetter{}, false // a child's failure is the child's to judge
	case hasSE && n.continuing && se.Status >= 400 && se.Status <= 499 && se.Status != 429:
		return records.RequestLetter{}, false // a resume position refused: walkTop starts over from the bookmark
	}
	dead := e.replaying || n.def.OnRequestFailure == streams.RequestFailureDeadLetter ||
		hasSE && se.Status != 0 && streams.StatusRules(e.cfg.OnStatus, n.def)[se.Status] == streams.StatusDeadLetter
	if !dead {
		return records.RequestLetter{}, false
	}
	l := records.RequestLetter{
		Stream: n.def.Name, Context: part.Context,
		Method: first.Method, URL: first.URL, RequestBody: string(first.Body),
		Attempts: 1, Error: e.redact.Redact(err.Error()), Time: e.now(),
	}
	if hasJob {
		// Replay runs a new job: the context only says which one failed.
		l.Context = map[string]any{"report": n.def.Name, "phase": je.Phase}
		if je.ID != "" {
			l.Context["job_id"] = je.ID
		}
		l.Method, l.RequestBody = je.Req.Method, string(je.Req.Body)
		l.URL = je.Req.URL
		if je.Body != "" {
			l.Status, l.ResponseBody = 200, je.Body // the poll answer that said failed, or still pending
		}
		l.Attempts = max(je.Polls, 1)
		if je.Msg != "" {
			l.Error = je.Msg
		}
		var de *client.DeferError
		l.Transient = errors.As(err, &de) // still pending: it may be done later
	}
	var pe *pageError
	if errors.As(err, &pe) && (n.continuing || !sameRequest(pe.Req, first)) {
		// Replay starts at the page that failed: the pages before it
		// were written (by this walk, or by the run it resumes).
		l.Resume = pages.Resume{Next: e.relative(pe.Req)}.Tree()
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
	return l, true
}

// pageError is the failure of one page request of a walk.
type pageError struct {
	Req streams.Request
	Err error
}

func (e *pageError) Error() string { return e.Err.Error() }
func (e *pageError) Unwrap() error { return e.Err }

// pageErrors makes fetch's errors say which request failed.
func pageErrors(fetch streams.Fetch) streams.Fetch {
	return func(ctx context.Context, req streams.Request) (*streams.Response, error) {
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

// clientRule is the client's rule for an on_status rule: dead_letter is a
// permanent failure to the client; deadLetter does the rest.
func clientRule(rule string) client.StatusRule {
	if rule == streams.StatusDeadLetter {
		return client.StatusFail
	}
	return client.StatusRule(rule)
}

// reportDeadLetters logs the run's dead letters by stream and kind, as a
// line and as METRIC lines, and warns when they pass dead_letter_alert.
func (e *engine) reportDeadLetters() {
	total := 0
	for _, d := range e.dead.Depths() {
		total += d.N
		e.log.Info("dead letters", "stream", d.Stream, "kind", d.Kind, "count", d.N, "path", e.cfg.DeadLetterPath)
		e.metric(e.metricsLevel(), "counter", "dead_letters", d.N, map[string]any{"endpoint": d.Stream, "kind": d.Kind})
	}
	if total > e.cfg.DeadLetterAlert {
		e.log.Warn("dead letters pass dead_letter_alert", "count", total, "dead_letter_alert", e.cfg.DeadLetterAlert, "path", e.cfg.DeadLetterPath)
	}
}
