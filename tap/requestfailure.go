package tap

import (
	"errors"

	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/tap/failure"
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
	d := n.def
	w := failure.Walk{
		Stream: d.Name, First: first, Context: part.Context, Window: n.window, Resumed: n.continuing,
		DeadLetter: e.replaying || d.OnRequestFailure == streams.RequestFailureDeadLetter,
		OnStatus:   streams.StatusRules(e.cfg.OnStatus, d), Relative: e.relative,
	}
	l, ok := w.Letter(err)
	if !ok {
		return err
	}
	l.Time = e.now()
	if !n.plan.FullTable() && e.state != nil {
		l.Bookmark = e.state.Value(d.Name)
	}
	if werr := e.dead.Request(l); werr != nil {
		return errors.Join(err, werr)
	}
	n.counts.DeadLetters.Add(1) // the summary table's column
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
	e.log.Warn("request dead-lettered; the run goes on", "stream", d.Name, "status", l.Status,
		"attempts", l.Attempts, "error", e.redact.Redact(l.Error))
	return nil
}

// reportDeadLetters logs the run's dead letters by stream and kind.
func (e *engine) reportDeadLetters() {
	failure.Summary(e.log, e.report.Level, e.dead.Depths(), e.cfg.DeadLetterAlert, e.cfg.DeadLetterPath)
}
