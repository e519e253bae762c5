package tap

import (
	"fmt"

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
	r := run{policy: policy{mode: mode, recordLimit: o.RecordLimit, tree: o.Tree, shard: o.Shard, reconcile: o.Reconcile},
		sel: o.Selection, state: o.State, out: o.Writer, log: o.Log}
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
	return en.e.schema(n)
}

// node is the node of stream, or an error naming it.
func (e *engine) node(stream string) (*node, error) {
	n := e.byName[stream]
	if n == nil {
		return nil, fmt.Errorf("stream %q is not in the config", stream)
	}
	return n, nil
}
