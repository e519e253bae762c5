package tap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/streams/pages"
	"github.com/tap-dev/tap/tap/connect"
	"github.com/tap-dev/tap/tap/output"
	"github.com/tap-dev/tap/tap/state"
)

// Replayer is the engine as `tap replay` drives it (package replay): it
// checks and writes one record letter, or walks a stream again for one
// request letter. It moves no bookmark and writes no STATE, and every
// request that fails becomes a new dead letter, in cfg.DeadLetterPath.
type Replayer struct{ e *engine }

// NewReplayer starts the engine for a replay: its API client, and each
// stream's plan from st, held so that no bookmark moves. Close it.
func NewReplayer(cfg *Config, st *state.State, out output.Writer, log *slog.Logger) (*Replayer, error) {
	e, err := newEngine(cfg, run{policy: policy{mode: ModeReplay}, state: st, out: out, log: log, connect: &connect.Options{Log: log}})
	if err != nil {
		return nil, err
	}
	r := &Replayer{e: e}
	for _, n := range e.nodes {
		if err := e.plan(n); err != nil {
			return nil, errors.Join(err, r.Close())
		}
		n.hold.HoldAll() // no bookmark moves
	}
	return r, nil
}

// Close closes the dead letters file and the connection (the client and
// the demo API); the error is the file's.
func (r *Replayer) Close() error { return r.e.close() }

// Has reports whether the config defines stream.
func (r *Replayer) Has(stream string) bool { return r.e.byName[stream] != nil }

// DeadLetters is how many letters the replay has written.
func (r *Replayer) DeadLetters() int { return r.e.dead.Count() }

// Record checks a record letter's record against today's schema: it is
// written, or written to the dead letters again.
func (r *Replayer) Record(stream string, rec map[string]any, extracted time.Time) error {
	e, n := r.e, r.e.byName[stream]
	if n == nil {
		return fmt.Errorf("stream %q is not in the config", stream)
	}
	ok, err := n.check.Check(rec, extracted)
	if err != nil || !ok {
		return err
	}
	if n.outs != nil {
		return e.emitMapped(n, rec, extracted)
	}
	b, err := n.encode(rec)
	if err != nil {
		return fmt.Errorf("stream %q: %w", n.def.Name, err)
	}
	if err := e.schema(n); err != nil {
		return err
	}
	if err := e.out.Record(n.def.Name, b, extracted, 0); err != nil {
		return err
	}
	n.counts.Records.Add(1)
	return nil
}

// Walk is what a request letter asks to read again.
type Walk struct {
	Stream   string
	Context  map[string]any // a child stream's parent, as the letter names it
	Bookmark any            // the bookmark the request was filtered from
	Window   *keys.Window   // the chunk window, if any
	Resume   *pages.Resume  // the page that failed, if the letter says
}

// Request walks a request letter's stream again, for its parent and
// window, from the bookmark it was filtered from, starting at the page
// that failed when the letter says which: only what the failed request
// would have read. A failure is written as a new letter, which settles
// the old one; an error means the walk could not be made.
func (r *Replayer) Request(ctx context.Context, w Walk) error {
	e, n := r.e, r.e.byName[w.Stream]
	if n == nil {
		return fmt.Errorf("stream %q is not in the config", w.Stream)
	}
	d := n.def
	b := streams.Bounds{Bookmark: w.Bookmark, StartDate: e.cfg.Start, Now: e.now().UTC(), Numeric: n.numeric}
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
	if w.Resume != nil {
		req = w.Resume.Next
		n.track.Continue(true)
	}
	n.windows.Walking(w.Window, false)
	defer func() { n.windows.Walked(); n.track.Continue(false) }()
	return e.walk(ctx, n, req, part)
}

// Records calls f with each stream's count of records written, in the
// config's order.
func (r *Replayer) Records(f func(stream string, records int64)) {
	for _, n := range r.e.nodes {
		f(n.def.Name, n.counts.Records.Load())
	}
}

// Metric writes a counter METRIC line at the config's metrics level.
func (r *Replayer) Metric(name string, value any, tags map[string]any) {
	r.e.report.Counter(name, value, tags)
}
