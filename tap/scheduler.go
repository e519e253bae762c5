package tap

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/records"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/tap/backfill"
	"github.com/tap-dev/tap/tap/catalog"
	"github.com/tap-dev/tap/tap/clientside"
	"github.com/tap-dev/tap/tap/connect"
	"github.com/tap-dev/tap/tap/dedupe"
	"github.com/tap-dev/tap/tap/failure"
	"github.com/tap-dev/tap/tap/inputs"
	"github.com/tap-dev/tap/tap/metrics"
	"github.com/tap-dev/tap/tap/output"
	"github.com/tap-dev/tap/tap/resume"
	"github.com/tap-dev/tap/tap/splice"
	"github.com/tap-dev/tap/tap/state"
)

// node is one stream of a run, with the streams that are its children.
// A node is walked by one goroutine at a time (a top-level stream and its
// children run on the same goroutine), so its fields need no lock; the
// counters are atomic because the progress reporter reads them.
type node struct {
	e   *engine // what the streams of the run share
	def *streams.Definition
	// model is what the definition and the catalog compile to for this
	// run, once (model.go): selection, validator, paginator, fetcher.
	model    *model
	children []*node
	below    *clientside.Filter // drops what earlier runs wrote, without an incremental block
	plan     *streams.Plan      // this run's plan, made when the stream starts

	// track is where the last run stopped inside this stream's walk, and
	// where this run's walk has come (package resume).
	track resume.Tracker

	// dedupe drops the rows an offset stream's pages repeat when the
	// source shifts under them (nil: none).
	dedupe *dedupe.Window

	counts metrics.Stream // what the stream did, read by the progress reporter

	hold failure.Hold // a request was dead-lettered: the bookmark stays

	windows backfill.Windows // the chunk window walked, and what became of each

	out sink // where its records go: the one write path, its checkpoints
}

// newNode is the node of stream d in engine e, m what it compiles to; its
// sink and its model know it.
func newNode(e *engine, d *streams.Definition, m *model) *node {
	n := &node{e: e, def: d, model: m, counts: metrics.Stream{Name: d.Name}}
	n.out.n, m.n = n, n
	return n
}

// engine runs one sync, replay, test run, check or read of pages, as its
// policy says: the same engine serves Singer and Airbyte; only the Writer
// differs.
type engine struct {
	cfg    *Config
	policy policy // what the run is for, given at construction (policy.go)
	state  *state.State
	out    output.Writer
	log    *slog.Logger
	report *metrics.Run // what the run counts, the lines it writes
	dead   *records.DeadLetters
	now    func() time.Time
	nodes  []*node // in config order
	byName map[string]*node
	// fetch gives a stream's page fetcher: the client's (fetcher), or a
	// fake in tests.
	fetch func(*node) streams.Fetch

	// conn is the connection to the API (nil: the run sends nothing);
	// client is its client.
	conn   *connect.Conn
	client *client.Client

	// splice makes the reader of a stream's pages as spliced records:
	// splice.New (nil: the stream reads every record's tree).
	splice func(splice.Stream) *splice.Reader
}

// newEngine is the one constructor of the engine: the streams of cfg as
// r selects them, each compiled once, and the connection r asks for.
// Close the engine when done.
func newEngine(cfg *Config, r run) (*engine, error) {
	level, _ := settings.Level(cfg.MetricsLogLevel) // checked by the registry
	rep := metrics.Reporter{Log: r.log, Level: level}
	if r.report != nil {
		rep.Watch = r.report
	}
	e := &engine{cfg: cfg, policy: r.policy, state: r.state, out: r.out, log: r.log, now: time.Now,
		report: metrics.NewRun(rep)}
	e.fetch, e.splice = func(n *node) streams.Fetch { return n.model.fetcher() }, splice.New
	id, err := records.NewRun(e.now())
	if err != nil {
		return nil, err
	}
	e.dead = records.NewDeadLetters(cfg.DeadLetterPath, id, cfg.Redactor)
	if r.mode != ModeInfer { // a read of pages makes a node per walk
		if err := e.addStreams(r.sel); err != nil {
			return nil, errors.Join(err, e.dead.Close())
		}
	}
	if r.connect != nil {
		co := *r.connect
		switch r.mode {
		case ModeSync, ModeTest:
			co.OnAttempt, co.OnBreaker = e.report.Attempt, e.breakerMetric
		case ModeReplay:
			co.OnAttempt = e.report.Attempt
		}
		if r.report != nil {
			co.OnTrace = r.report.Attempt
		}
		conn, err := connect.Open(cfg, co)
		if err != nil {
			return nil, errors.Join(err, e.dead.Close())
		}
		e.conn, e.client = conn, conn.Client
	}
	return e, nil
}

// close closes the dead letters file and the connection (the client and
// the demo API); the error is the file's.
func (e *engine) close() error {
	err := e.dead.Close()
	if e.conn != nil {
		e.conn.Close()
		e.conn = nil
	}
	return err
}

// addStreams makes the node of each stream of the config, as sel selects
// it, and hangs the children below their parents.
func (e *engine) addStreams(sel *catalog.Selection) error {
	cfg := e.cfg
	maps, err := inputs.Maps(cfg)
	if err != nil {
		return err
	}
	byName := map[string]*node{}
	e.byName = byName
	for i := range cfg.Streams {
		d := &cfg.Streams[i]
		n := newNode(e, d, &model{selected: sel.Selected(d.Name), dropped: sel.Dropped(d.Name), fullTable: sel.FullTable(d.Name)})
		n.counts.Feed = d.Feed != nil
		n.model.numeric = settings.StreamKeyKind(d, cfg.Schemas[d.Name]) == "number"
		if size, ok := d.Pagination.RepeatsRows(); ok && len(d.PrimaryKey) > 0 {
			n.dedupe = dedupe.New(d.PrimaryKey, size)
		}
		attachMaps(n, maps, sel, cfg.Redactor.Redact)
		byName[d.Name] = n
		e.report.Add(&n.counts, n.model.selected)
		e.nodes = append(e.nodes, n)
	}
	for _, n := range e.nodes {
		if p := n.def.Parent; p != nil && p.Stream != "" {
			parent := byName[p.Stream]
			parent.children = append(parent.children, n)
		}
	}
	// A stream walked for a list of values (parent.values) gets a parent
	// of them: a node of no stream and never written, whose one page
	// holds a record of each value (its key the value). The child is then
	// walked, bookmarked per value and resumed as any child is. The
	// parent bears the child's name, which is what the logs and the
	// state's job_done say of it.
	for _, n := range slices.Clone(e.nodes) {
		p := n.def.Parent
		if p == nil || p.Stream != "" {
			continue
		}
		recs := make([]map[string]any, len(p.Values))
		for i, v := range p.Values {
			recs[i] = map[string]any{p.Key: v}
		}
		// Its path is never asked for: the values are its page.
		d := &streams.Definition{Name: n.def.Name, Path: "/"} // the default pagination: none
		v := newNode(e, d, &model{values: recs})
		v.children = []*node{n}
		e.nodes = append(e.nodes, v)
	}
	if err := cfg.CheckEnv(func(stream string) bool { return byName[stream].needed() }); err != nil {
		return err
	}
	// A schema is compiled for the streams the run walks, here, so that a
	// bad one stops the run before its first message; the others only if
	// a command reads them (checker). On a config of 141 streams from
	// Stripe's document, compiling all of them was most of a run's start.
	for _, n := range e.nodes {
		if n.needed() {
			if _, err := n.model.checker(); err != nil {
				return err
			}
		}
	}
	return nil
}

// checker is n's record validator, compiled from its schema on first use;
// nil for the parent of a stream's values, whose records are never
// written.
func (m *model) checker() (*records.Validator, error) {
	n := m.n
	e := n.e
	if n.model.check != nil || m.values != nil {
		return n.model.check, nil
	}
	d := n.def
	v, err := records.New(records.Options{Stream: d.Name, PrimaryKey: d.PrimaryKey, Schema: e.cfg.Schemas[d.Name],
		Policy: records.Policy(e.cfg.OnSchemaViolation), Redactor: e.cfg.Redactor, DeadLetters: e.dead, Log: e.log})
	if err != nil {
		return nil, &InputError{File: e.cfg.StreamsPath, Err: err}
	}
	n.model.check = v
	return v, nil
}

// needed reports whether a stream must be walked: it is selected, or a
// selected stream hangs below it.
func (n *node) needed() bool {
	if n.model.selected {
		return true
	}
	for _, c := range n.children {
		if c.needed() {
			return true
		}
	}
	return false
}

func (n *node) each(f func(*node)) {
	f(n)
	for _, c := range n.children {
		c.each(f)
	}
}

// run syncs every needed top-level stream, max_parallel_streams at a time.
// The first error cancels the others; the state written so far stays valid.
func (e *engine) run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, e.cfg.MaxParallelStreams)
	var wg sync.WaitGroup
	var errOnce sync.Once
	var firstErr error
	left := e.startJob()
	for _, n := range e.nodes {
		if n.def.Parent != nil || !n.needed() || left[n] == nil {
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(n *node) {
			defer wg.Done()
			defer func() { <-sem }()
			err := n.out.syncWithDeletes(ctx)
			if err == nil {
				err = e.endedInJob(n, left)
			}
			if err != nil {
				errOnce.Do(func() { firstErr = err; cancel(err) })
			}
		}(n)
	}
	wg.Wait()
	if firstErr == nil {
		firstErr = context.Cause(ctx)
		if errors.Is(firstErr, context.Canceled) && ctx.Err() == nil {
			firstErr = nil
		}
	}
	if firstErr == nil && e.jobs() && e.state.EndJob() {
		if err := e.endJob(); err != nil {
			return err
		}
	}
	// A failed window did not stop the run; it fails it at the end.
	return backfill.RunError(e.backfills(), firstErr)
}

// syncTree syncs a top-level stream and, inline, its children.
func (e *engine) syncTree(ctx context.Context, root *node) error {
	var err error
	root.each(func(n *node) {
		if n.needed() {
			err = errors.Join(err, n.makePlan())
		}
	})
	if err != nil {
		return err
	}
	root.each(func(n *node) {
		if n.model.selected {
			n.below = clientside.New(n.def, n.plan.FullTable(), e.state.Value(n.def.Name),
				func(p streams.Partition) any { return n.plan.Partitions().Since(p) }, e.log)
			n.counts.Start(e.now())
			e.logStart(n)
			e.status(n, output.StatusStarted)
			e.state.SetSyncing(n.def.Name, true)
		}
	})
	err = e.syncStream(ctx, root)
	root.each(func(n *node) {
		if !n.model.selected {
			return
		}
		n.counts.Stop()
		if err != nil {
			// currently_syncing stays set: the stream did not finish.
			e.status(n, output.StatusIncomplete)
			return
		}
		e.state.SetSyncing(n.def.Name, false)
		if n != root {
			// A child's partitions were checkpointed as each ended.
			n.out.endStream()
			if cerr := n.plan.Close(); cerr != nil {
				err = errors.Join(err, cerr)
			}
			n.out.commit()
			err = errors.Join(err, n.out.checkpoint())
		}
		if n.chunked() && n.windows.Book().Count(n.plan.Backfill().Failed()).Unlettered > 0 {
			e.status(n, output.StatusIncomplete) // a window is still to read
		} else {
			e.status(n, output.StatusComplete)
		}
		e.report.StreamDone(&n.counts, e.client.Stats().ByStream[n.def.Name])
	})
	return err
}

func (e *engine) status(n *node, s string) {
	for _, name := range n.out.selectedOutputs() {
		if err := e.out.StreamStatus(name, s); err != nil {
			e.log.Warn("cannot write stream status", "stream", name, "error", err)
		}
	}
}

// syncStream walks a top-level stream once, in chunk windows when asked.
func (e *engine) syncStream(ctx context.Context, n *node) error {
	d, p := n.def, n.plan
	if e.policy.shard.I != 0 && p.Windows() == nil {
		return nil // shard 0 reads the streams that are not chunked
	}
	if d.Feed != nil {
		return n.listen(ctx) // tap/feed
	}
	if n.model.selected && d.FullTableVersioning && p.FullTable() && !e.policy.testRun() {
		if r := n.track.From(); r != nil && r.Version != 0 {
			// A resumed walk goes on filling the version it began.
			n.out.writer.SetVersion(r.Version)
		} else {
			n.out.writer.SetVersion(e.now().UnixMilli())
			if err := n.out.activateVersion(); err != nil {
				return err
			}
		}
	}
	if ws := p.Windows(); ws != nil {
		if err := e.syncWindows(ctx, n, ws); err != nil {
			return err
		}
	} else {
		req, err := p.Request(streams.Partition{}, nil)
		if err != nil {
			return err
		}
		if err := n.walkTop(ctx, req, nil); err != nil {
			return err
		}
		if err := p.Close(); err != nil {
			return err
		}
		n.out.commit()
	}
	e.state.SetSyncing(d.Name, false)
	if n.model.selected {
		n.out.endStream()
		if err := n.out.checkpoint(); err != nil {
			return err
		}
	}
	if v := n.out.writer.Version(); v != 0 {
		e.state.SetVersion(d.Name, v)
		return n.out.activateVersion()
	}
	return nil
}

// syncWindows walks the plan's chunk windows: first those a previous run
// left failed, then the walk from its position, checkpointing the window
// in progress before it starts, so that a run killed in window N resumes
// at window N. A window that fails is recorded and the walk goes on; the
// windows still failed at the end are read once more (retryWindow).
func (e *engine) syncWindows(ctx context.Context, n *node, ws []keys.Window) error {
	d, p := n.def, n.plan
	if s, end, ok := e.state.Window(d.Name); ok && s != end && len(ws) > 0 {
		n.windows.Book().Resume() // the first window is the one a stopped run was in
	}
	for _, w := range p.Backfill().Retries() {
		if n.full() {
			return nil // a test run has its records: no other window is read
		}
		n.windows.Book().Resume()
		e.log.Info("reading first a window the last run left failed", "stream", d.Name,
			"start", w.Start.UTC().Format(time.RFC3339), "end", w.End.UTC().Format(time.RFC3339))
		if err := e.retryWindow(ctx, n, w); err != nil {
			return err
		}
	}
	for _, w := range ws {
		if n.full() {
			return nil
		}
		backfill.Position(e.state, d.Name, p) // at w
		if n.model.selected {
			if err := n.out.checkpoint(); err != nil {
				return err
			}
		}
		req, err := p.Request(streams.Partition{}, &w)
		if err != nil {
			return err
		}
		letters := n.counts.DeadLetters.Load()
		err = n.walkTop(ctx, req, &w)
		if n.windows.WasCut() {
			return nil // w was not read to its end: it is neither done nor failed
		}
		if err := e.windowEnd(n, w, err, n.counts.DeadLetters.Load() > letters, true); err != nil {
			return err
		}
	}
	if len(p.Backfill().Failed()) > 0 && n.model.selected {
		// A run killed while it reads them again goes on after the walk.
		backfill.Position(e.state, d.Name, p)
		if err := n.out.checkpoint(); err != nil {
			return err
		}
	}
	for _, f := range p.Backfill().Failed() {
		if !n.windows.Book().ReadAgain(f.Window) {
			continue // deferred, dead-lettered, or not tried in this run
		}
		if n.full() {
			return nil
		}
		e.log.Info("reading again a window that failed", "stream", d.Name,
			"start", f.Start.UTC().Format(time.RFC3339), "end", f.End.UTC().Format(time.RFC3339))
		if err := e.retryWindow(ctx, n, f.Window); err != nil {
			return err
		}
	}
	backfill.Position(e.state, d.Name, p)
	return nil
}

// retryWindow reads again a window that failed. Its pages write no
// resume object: that belongs to the window at the walk's position.
func (e *engine) retryWindow(ctx context.Context, n *node, w keys.Window) error {
	req, err := n.plan.Request(streams.Partition{}, &w)
	if err != nil {
		return err
	}
	n.plan.Reread()
	letters := n.counts.DeadLetters.Load()
	err = n.walk(ctx, walkStart{first: req, window: &w, again: true})
	if n.windows.WasCut() {
		return nil // cut short by a test run's record limit
	}
	return e.windowEnd(n, w, err, n.counts.DeadLetters.Load() > letters, false)
}

// windowEnd records how the walk of w ended: err is its error, lettered
// says one of its requests became a dead letter (which ends the walk with
// no error), at that w is the window at the walk's position rather than
// one read again. It returns an error only when the stream must stop.
func (e *engine) windowEnd(n *node, w keys.Window, err error, lettered, at bool) error {
	keep := backfill.Keep{State: e.state, Def: n.def, Plan: n.plan}
	if err == nil && !lettered {
		return n.windows.Finish(keep, w, backfill.Outcome{}, "", at)
	}
	o := backfill.Outcome{Kind: backfill.Lettered}
	why := "a request was dead-lettered to " + e.cfg.DeadLetterPath
	if err != nil {
		if o = backfill.OutcomeOf(err); o.Kind == "" {
			return err // not the window's failure: the stream stops here, as before
		}
		why = backfill.OneLine(e.cfg.Redactor.Redact(err.Error()))
	}
	if err := n.windows.Finish(keep, w, o, why, at); err != nil {
		return err
	}
	if o.EndsWalk() {
		backfill.Position(e.state, n.def.Name, n.plan)
		if n.model.selected {
			err = errors.Join(err, n.out.checkpoint())
		}
		return err
	}
	if o.Kind == backfill.Failed {
		e.log.Warn("backfill window failed; the walk goes on", "stream", n.def.Name,
			"start", w.Start.UTC().Format(time.RFC3339), "end", w.End.UTC().Format(time.RFC3339), "error", why)
	}
	return nil
}

// backfills lists the selected streams read in chunk windows in this run,
// in config order, with what became of their windows.
func (e *engine) backfills() []backfill.Stream {
	var out []backfill.Stream
	for _, n := range e.nodes {
		if n.chunked() {
			out = append(out, backfill.Stream{Name: n.def.Name, Book: n.windows.Book(), Failed: n.plan.Backfill().Failed()})
		}
	}
	return out
}

// chunked reports whether n is a selected stream read in chunk windows in
// this run.
func (n *node) chunked() bool {
	return n.model.selected && n.def.Parent == nil && n.plan != nil && n.plan.Windows() != nil
}

// backfillSummary logs a line per chunked stream: what became of its
// windows.
func (e *engine) backfillSummary() {
	for _, s := range e.backfills() {
		e.log.Info(s.Book.Count(s.Failed).String(), "stream", s.Name)
	}
}

// logStart says a stream starts, and from where: a run whose first
// requests are slow is not silent.
func (e *engine) logStart(n *node) {
	args := []any{"stream", n.def.Name}
	switch lower := n.plan.Lower(); {
	case n.def.Feed != nil:
		args = append(args, "feed", n.def.Feed.Protocol)
	case n.plan.FullTable() || lower == nil:
		args = append(args, "read", "all")
	default:
		if t, ok := lower.(time.Time); ok {
			lower = t.UTC().Format(time.RFC3339)
		}
		args = append(args, "from", lower)
	}
	e.log.Info("stream started", args...)
}
