package tap

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/streams/pages"
	"github.com/tap-dev/tap/tap/connect"
	"github.com/tap-dev/tap/tap/output"
)

// Engine is the engine as the run modes drive it (tap/command, tap/replay):
// opened for one Mode, closed when done. Each package that drives it names
// the few methods it calls in an interface of its own; what the mode does
// with them (which streams, in which order, what it makes of the answers)
// is that package's.
type Engine struct{ e *engine }

// Open opens the engine for mode on the streams of o.Config, as
// o.Selection selects them, with o.State (nil: none, as --infer-schema
// reads pages; Sync gives a fresh one), writing to o.Writer. A check
// writes nothing but, when o.Writer is Airbyte's, the CONTROL message of
// a rotated refresh token. A replay's streams are planned from o.State
// and held: no bookmark moves. Every mode but ModeSchemas connects to
// the API. Close the engine when done.
func Open(mode Mode, o Options) (*Engine, error) {
	cfg := o.Config
	r := run{policy: policy{mode: mode, recordLimit: o.RecordLimit, shard: o.Shard, reconcile: o.Reconcile},
		sel: o.Selection, state: o.State, out: o.Writer, log: o.Log, report: o.Report}
	var keep connect.Keeper // nil: in the config file
	if aw, ok := o.Writer.(*output.Airbyte); ok {
		keep = connect.InControl(cfg, aw, o.Log)
	}
	switch mode {
	case ModeSync, ModeTest:
		r.connect = &connect.Options{Log: o.Log, Keep: keep}
		if o.State != nil {
			r.connect.Quota = o.State
		}
	case ModeCheck:
		r.connect = &connect.Options{Log: o.Log, Keep: keep}
	case ModeReplay, ModeInfer:
		r.connect = &connect.Options{Log: o.Log}
	}
	if mode == ModeCheck || r.out == nil {
		r.out = output.Discard
	}
	e, err := newEngine(cfg, r)
	if err != nil {
		return nil, err
	}
	if mode == ModeReplay {
		for _, n := range e.nodes {
			if err := n.makePlan(); err != nil {
				return nil, errors.Join(err, e.close())
			}
			n.hold.HoldAll() // no bookmark moves
		}
	}
	return &Engine{e: e}, nil
}

// Close closes the dead letters file and the connection (the client and
// the demo API); the error is the file's.
func (en *Engine) Close() error { return en.e.close() }

// Schema writes the SCHEMA message of stream by the engine's own SCHEMA
// path (with stream maps, of each stream they write), unless it is
// written already.
func (en *Engine) Schema(stream string) error {
	n, err := en.e.node(stream)
	if err != nil {
		return err
	}
	return n.out.schema()
}

// node is the node of stream, or an error naming it.
func (e *engine) node(stream string) (*node, error) {
	n := e.byName[stream]
	if n == nil {
		return nil, fmt.Errorf("stream %q is not in the config", stream)
	}
	return n, nil
}

// ErrReportJob is FirstPage's answer for an async stream: its first page
// would cost a report job, and often quota.
var ErrReportJob = errors.New("async stream not read: it would create a report job")

// FirstPage plans stream and reads its first page (of its first chunk
// window, when chunked; of a body read as it arrives, its first page) as a
// sync sends and reads it: the same client, request building and status
// rules. For a child stream, parent is the parent's record whose key
// fills its path. It returns the page's first record and how many it
// holds: none when the status is one the stream ignores. A feed stream is
// connected to once instead (feed.Probe): no record, and 1 when its first
// message came within its idle timeout.
func (en *Engine) FirstPage(ctx context.Context, stream string, parent map[string]any) (map[string]any, int, error) {
	e := en.e
	n, err := e.node(stream)
	if err != nil {
		return nil, 0, err
	}
	if err := n.makePlan(); err != nil {
		return nil, 0, err
	}
	var part streams.Partition
	if n.def.Parent != nil {
		if part, err = n.plan.Partition(parent); err != nil {
			return nil, 0, err
		}
	}
	if n.def.Async != nil {
		return nil, 0, ErrReportJob
	}
	if n.def.Feed != nil {
		// A feed has no first page: connecting to it, and its first
		// message, say what a first page would.
		heard, err := n.probeFeed(ctx)
		if heard {
			return nil, 1, err
		}
		return nil, 0, err
	}
	var w *keys.Window
	if ws := n.plan.Windows(); len(ws) > 0 && n.def.Parent == nil {
		w = &ws[0]
	}
	req, err := n.plan.Request(part, w)
	if err != nil {
		return nil, 0, err
	}
	p, err := n.model.paginator()
	if err != nil {
		return nil, 0, err
	}
	resp, err := n.model.fetchOf()(ctx, p.First(req))
	if errors.Is(err, errIgnored) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	if resp.More != nil {
		resp.More.Close() // a body read as it arrives: its first page will do
	}
	for _, r := range resp.Records {
		if m, ok := parentKeys(n, r); ok {
			return m, len(resp.Records), nil
		}
	}
	return nil, len(resp.Records), nil
}

// ReadPages follows d's pages from first as a sync sends and reads them —
// the same client (limiter, retries, auth), the same fetch (body formats,
// records extraction, ignored statuses) — with every record decoded whole
// and nothing written, handing each page to page; a status the stream
// ignores ends the walk quietly, as in a sync. It is what --infer-schema
// reads.
func (en *Engine) ReadPages(ctx context.Context, d *streams.Definition, first streams.Request, page func(*streams.Page) error) error {
	e := en.e
	n := e.looseNode(d)
	p, err := n.model.paginator()
	if err != nil {
		return err
	}
	err = pages.Walk(ctx, d, p, first, n.model.fetcher(), page)
	if errors.Is(err, errIgnored) {
		return nil
	}
	return err
}

// Requests is the number of requests sent so far.
func (en *Engine) Requests() int { return en.e.client.Stats().Requests }

// WriteRecord checks a record letter's record against today's schema
// (tap replay): it is written, as the stream or the streams its maps
// make of it, or written to the dead letters again.
func (en *Engine) WriteRecord(stream string, rec map[string]any, extracted time.Time) error {
	e := en.e
	n, err := e.node(stream)
	if err != nil {
		return err
	}
	// Through the sync's own write: a letter may hold a configured
	// secret (hand-made, from an older version, or written under another
	// config), which is masked as in a sync.
	return n.out.write(rec, extracted, streams.Partition{}, fromReplay)
}

// Walk is what a request letter asks to read again (Engine.Rewalk).
type Walk struct {
	Stream   string
	Context  map[string]any // a child stream's parent, as the letter names it
	Bookmark any            // the bookmark the request was filtered from
	Window   *keys.Window   // the chunk window, if any
	Resume   *pages.Resume  // the page that failed, if the letter says
}

// Rewalk walks a request letter's stream again, for its parent and
// window, from the bookmark it was filtered from, starting at the page
// that failed when the letter says which: only what the failed request
// would have read. A failure is written as a new letter, which settles
// the old one; an error means the walk could not be made.
func (en *Engine) Rewalk(ctx context.Context, w Walk) error {
	e := en.e
	n, err := e.node(w.Stream)
	if err != nil {
		return err
	}
	d := n.def
	b := streams.Bounds{Bookmark: w.Bookmark, StartDate: e.cfg.Start, Now: e.now().UTC(), Numeric: n.model.numeric}
	b.FullTable = b.Bookmark == nil && w.Window == nil
	p, err := streams.NewPlan(d, b)
	if err != nil {
		return fmt.Errorf("stream %q: %w", d.Name, err)
	}
	n.plan = p
	var part streams.Partition
	if par := d.Parent; par != nil {
		name := par.Key
		if par.As != "" {
			name = par.As
		}
		if part, err = p.Partition(map[string]any{par.Key: w.Context[name]}); err != nil {
			return err
		}
	}
	req, err := p.Request(part, w.Window)
	if err != nil {
		return err
	}
	ws := walkStart{first: req, part: part, window: w.Window}
	if w.Resume != nil {
		ws.first, ws.resumed = w.Resume.Next, true
	}
	return n.walk(ctx, ws)
}

// DeadLetters is how many letters the run has written.
func (en *Engine) DeadLetters() int { return en.e.dead.Count() }

// Records calls f with each stream's count of records written, in the
// config's order.
func (en *Engine) Records(f func(stream string, records int64)) {
	for _, n := range en.e.nodes {
		f(n.def.Name, n.counts.Records.Load())
	}
}

// Metric writes a counter METRIC line at the config's metrics level.
func (en *Engine) Metric(name string, value any, tags map[string]any) {
	en.e.report.Counter(name, value, tags)
}
