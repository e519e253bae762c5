package tap

import (
	"context"
	"log/slog"

	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/pages"
	"github.com/tap-dev/tap/tap/output"
	"github.com/tap-dev/tap/tap/state"
)

// Schemas writes the SCHEMA message of every stream, by the engine's own
// SCHEMA path, so that `--test=schema` shows what a sync would send, and
// flushes.
func Schemas(cfg *Config, st *state.State, w output.Writer, log *slog.Logger) error {
	e, err := newEngine(cfg, run{policy: policy{mode: modeSchemas}, state: st, out: w, log: log})
	if err != nil {
		return err
	}
	defer e.close()
	for _, n := range e.nodes {
		if err := e.schema(n); err != nil {
			return err
		}
	}
	return w.Flush()
}

// walkPages is pages.Walk, but in order in a test run: a run that stops
// after RecordLimit records would mostly send a look-ahead request only to
// cancel it, and a test's requests would depend on timing.
func (e *engine) walkPages(ctx context.Context, d *streams.Definition, p streams.Paginator, first streams.Request, fetch streams.Fetch, page func(*streams.Page) error) error {
	if e.policy.testRun() {
		return pages.WalkInOrder(ctx, d, p, first, fetch, page)
	}
	return pages.Walk(ctx, d, p, first, fetch, page)
}
