package tap

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/pages"
	"github.com/tap-dev/tap/tap/catalog"
	"github.com/tap-dev/tap/tap/resume"
)

// commit copies the plan's bookmark into the state when it changed and
// reports whether it did. Callers checkpoint after the records it covers.
func (o *sink) commit() bool {
	n := o.n
	e := n.e
	if n.hold.Held() {
		return false // a dead-lettered request's rows are not read yet
	}
	if ps := n.plan.Partitions(); ps != nil {
		set, folded, floor, moved := ps.Changes()
		if moved {
			e.state.SetPartitions(n.def.Name, n.def.ReplicationKey, set, folded, floor)
		}
		return moved
	}
	v, moved := n.plan.Checkpoint()
	if moved {
		e.state.SetValue(n.def.Name, n.def.ReplicationKey, v)
	}
	return moved
}

// checkpoint writes STATE. Dead letters are written to their file as they
// happen (unbuffered), so none can be lost behind a bookmark that moved
// past it.
func (o *sink) checkpoint() error {
	n := o.n
	e := n.e
	if err := o.schema(); err != nil || !e.policy.writesState() {
		return err // a replay writes one STATE, at its end
	}
	return e.out.State(n.def.Name, e.state, n.counts.Records.Load())
}

// schema writes a stream's SCHEMA before its first message. Sending it
// lazily keeps stdout empty when a run fails before any data arrives.
func (o *sink) schema() error {
	n := o.n
	e := n.e
	if !o.writer.SchemaDue() {
		return nil
	}
	if o.outs != nil {
		return o.schemaMapped()
	}
	return e.out.Schema(n.def.Name, catalog.OutputSchema(e.cfg.Schemas[n.def.Name], n.model.dropped), n.def.PrimaryKey, catalog.BookmarkProperties(n.def))
}

func (o *sink) activateVersion() error {
	n := o.n
	e := n.e
	if err := o.schema(); err != nil {
		return err
	}
	for _, name := range n.out.selectedOutputs() {
		if err := e.out.ActivateVersion(name, o.writer.Version()); err != nil {
			return err
		}
	}
	return nil
}

// endStream notes a stream's record count in its bookmark and warns when a
// stream that had records last time returned none: an API that silently
// changed shape or filter looks exactly like that. An incremental stream
// that is caught up writes no new record, and that is normal; but the
// overlap re-reads the rows at its bookmark, so a source that returned
// nothing at all is suspicious there too.
func (o *sink) endStream() {
	n := o.n
	e := n.e
	records := n.counts.Records.Load()
	last, ok := e.state.LastRecords(n.def.Name)
	if ok && last > 0 && (n.counts.Received.Load() == 0 || (n.plan.FullTable() && records == 0)) {
		e.log.Warn("stream returned zero records where its last run returned some; check the API, the records_path and the filter",
			"stream", n.def.Name, "last_run_records", last)
	}
	e.state.SetLastRecords(n.def.Name, records)
}

// tracksChildren reports whether n is a top-level stream whose children's
// walks are checkpointed in its walk (again: a failed window read again,
// which leaves the resume object to the window at the walk's position):
// its resume then points at the page in progress and says how far into
// it the run has come.
func (n *node) tracksChildren(again bool) bool {
	e := n.e
	if n.def.Parent != nil || !n.model.selected || e.policy.testRun() || again {
		return false
	}
	for _, c := range n.children {
		if c.needed() {
			return true
		}
	}
	return false
}

// resumePoint is the resume of a top-level stream's walk in
// progress (package resume).
func (o *sink) resumePoint() *pages.Resume {
	n := o.n
	e := n.e
	return n.track.Point(e.relative, n.plan.High(), o.writer.Version())
}

// relative keeps a resume URL under the connection's base URL (without
// a final slash) relative, so that it outlives a demo API's port.
func (e *engine) relative(req streams.Request) streams.Request {
	if e.conn == nil {
		return req
	}
	base := e.conn.Base
	if rest, ok := strings.CutPrefix(req.URL, base); ok && base != "" && (rest == "" || strings.ContainsAny(rest[:1], "/?")) {
		req.URL = "/" + strings.TrimPrefix(rest, "/")
	}
	return req
}

// endWalk removes the resume object of a walk that has ended.
func (o *sink) endWalk() {
	n := o.n
	e := n.e
	e.state.SetResume(n.def.Name, nil)
	n.track.EndWalk()
}

// handleTracked is handlePage for a stream whose children's walks are
// tracked: after each record and its children's walks, its resume says
// how far into the page the run has come. On the first page of a resumed
// walk, the records the last run had finished have their children
// skipped, and the child walk it was in goes on at its page.
func (n *node) handleTracked(ctx context.Context, resp *streams.Page, extracted time.Time, ws walkStart) error {
	e := n.e
	switch n.track.BeginPage(resp.Records, func(rec any) string { return recordID(n, rec) },
		func(rec any, c *pages.Resume) bool { return childOf(n, rec, c) }) {
	case resume.Shorter:
		e.log.Info("the page the walk resumes on is shorter than it was; its children are walked again", "stream", n.def.Name)
	case resume.Changed:
		e.log.Info("the page the walk resumes on changed; its children are walked again", "stream", n.def.Name)
	}
	defer n.track.EndPage()
	if p := resp.Spliced; p != nil {
		defer p.Release()
	}
	for i := range resp.Records {
		n.track.Record(i)
		if err := n.handleAt(ctx, resp, i, extracted, ws); err != nil {
			return err
		}
		if !n.track.Handled(recordID(n, resp.Records[i])) {
			continue // the state already says so
		}
		e.state.SetResume(n.def.Name, n.out.resumePoint())
		if err := n.out.checkpoint(); err != nil {
			return err
		}
	}
	return nil
}

// childOf reports whether rec's walk of the child stream c names is the
// partition c names.
func childOf(n *node, rec any, c *pages.Resume) bool {
	m, ok := parentKeys(n, rec)
	for _, child := range n.children {
		if child.def.Name != c.Stream || !ok {
			continue
		}
		if part, err := child.plan.Partition(m); err == nil && part.ID() == c.Partition {
			return true
		}
	}
	return false
}

// recordID names a parent record by what its children's walks are made
// of: the values of their parent keys.
func recordID(n *node, rec any) string {
	m, _ := parentKeys(n, rec)
	var b strings.Builder
	for _, c := range n.children {
		fmt.Fprint(&b, m[c.def.Parent.Key])
		b.WriteByte(0)
	}
	return b.String()
}

// startJob returns, for each top-level stream this run reads, a count of
// the streams left to end, shared by all. A stream the run this state
// comes from had ended before it was interrupted is left out: a restart
// goes on with the job instead of asking every finished stream again
// (a full table read whole, an incremental one from its bookmark − its
// overlap). The next run, started from a state of a run that ended,
// reads them all again.
func (e *engine) startJob() map[*node]*atomic.Int64 {
	done := map[string]bool{}
	if e.jobs() {
		for _, name := range e.state.JobDone() {
			done[name] = true
		}
	}
	left := new(atomic.Int64)
	out := map[*node]*atomic.Int64{}
	for _, n := range e.nodes {
		if n.def.Parent != nil || !n.needed() {
			continue
		}
		if done[n.def.Name] {
			e.log.Info("stream ended in the interrupted run this one goes on with; it is read again by the next run", "stream", n.def.Name)
			continue
		}
		out[n] = left
		left.Add(1)
	}
	return out
}

// endedInJob records that root's tree has ended, unless it is the last of
// the run (the run ends with it, and job_done with the run) or it has
// failed windows, which the next run retries first.
func (e *engine) endedInJob(root *node, left map[*node]*atomic.Int64) error {
	if !e.jobs() || left[root].Add(-1) == 0 {
		return nil
	}
	if failed, _ := e.state.FailedWindows(root.def.Name); len(failed) > 0 {
		return nil
	}
	e.state.SetJobDone(root.def.Name)
	return root.out.stateOf()
}

// stateOf writes STATE as the first selected stream of n's tree, never
// as a stream read only for its children: Airbyte's state is per stream,
// and only for the streams of its catalog.
func (o *sink) stateOf() error {
	n := o.n
	e := n.e
	var s *node
	n.each(func(c *node) {
		if s == nil && c.model.selected {
			s = c
		}
	})
	if s == nil {
		return nil
	}
	return e.out.State(s.def.Name, e.state, s.counts.Records.Load())
}

// endJob writes the STATE of a run that has ended, without job_done.
func (e *engine) endJob() error {
	for _, n := range e.nodes {
		if n.def.Parent == nil && n.needed() {
			return n.out.stateOf()
		}
	}
	return nil
}

// jobs reports whether a run interrupted after some of its streams ended
// leaves their names in the state (job_done), for the next run to go on
// with the others only: not in a test run or a replay, and not in
// Airbyte's per-stream state, which does not carry it.
func (e *engine) jobs() bool { return e.policy.writesState() }
