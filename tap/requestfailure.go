package tap

import (
	"errors"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/records"
	"github.com/tap-dev/tap/streams"
)

// deadLetter turns the error of one walk of n (a child's walk for one
// parent, one chunk window, a whole stream) into a request dead letter
// when the stream asks for it — on_request_failure dead_letter, or an
// on_status rule dead_letter for the last status — and returns nil so that
// the run goes on. Any other error is returned as is.
//
// Once a request of n is dead-lettered, n's bookmark (with per-partition
// bookmarks, that partition's) stays where it was for the rest of the
// run: the rows that request would have read are below every bookmark the
// run could write.
func (e *engine) deadLetter(n *node, first streams.Request, part streams.Partition, err error) error {
	se, ok := e.letterFor(n, err)
	if !ok {
		return err
	}
	l := records.RequestLetter{
		Stream: n.def.Name, Context: part.Context,
		Method: se.Method, URL: se.URL, RequestBody: string(first.Body),
		Status: se.Status, ResponseBody: se.Body, Transient: se.Transient(),
		Attempts: se.Attempts, Time: e.now(),
	}
	if l.URL == "" {
		l.URL = se.Path
	}
	if w := n.window; w != nil {
		l.WindowStart, l.WindowEnd = w.Start.UTC().Format(time.RFC3339), w.End.UTC().Format(time.RFC3339)
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
	e.log.Warn("request dead-lettered; the run goes on", "stream", n.def.Name, "status", se.Status,
		"attempts", se.Attempts, "error", se.Error())
	return nil
}

// letterFor returns the StatusError of n's own request in err, and whether
// it must become a dead letter.
func (e *engine) letterFor(n *node, err error) (*client.StatusError, bool) {
	var se *client.StatusError
	if err == nil || !errors.As(err, &se) || se.Stream != n.def.Name {
		return nil, false // a child's failure is the child's to judge
	}
	if n.continuing && se.Status >= 400 && se.Status <= 499 && se.Status != 429 {
		return nil, false // a resume position refused: walkTop starts over from the bookmark
	}
	if e.replaying || n.def.OnRequestFailure == streams.RequestFailureDeadLetter {
		return se, true
	}
	return se, se.Status != 0 && streams.StatusRules(e.cfg.OnStatus, n.def)[se.Status] == streams.StatusDeadLetter
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
