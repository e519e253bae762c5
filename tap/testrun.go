package tap

import (
	"context"
	"fmt"
	"io"

	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/pages"
	"github.com/tap-dev/tap/tap/output"
)

// Test modes of `tap --test`, as the Meltano SDK names them.
const (
	TestAll    = "all"    // sync one record per stream
	TestSchema = "schema" // write only the SCHEMA messages
)

// SingerTest is `tap --config C --test[=all|schema]`, the connection test
// `meltano config <tap> test` runs. As in the Meltano SDK every stream is
// synced, whatever the catalog selects. No STATE is written: a test that
// read one record must not move a bookmark.
func SingerTest(ctx context.Context, f Files, mode string, stdout, stderr io.Writer) error {
	cfg, st, _, err := f.load()
	if err != nil {
		return err
	}
	w := output.NewSinger(stdout)
	log := output.NewStderrLogger(stderr, f.logLevel(cfg), cfg.Redactor)
	switch mode {
	case TestSchema:
		// The engine's own SCHEMA path, so that the test shows what a
		// sync would send.
		e, err := newEngine(cfg, nil, st, w, log)
		if err != nil {
			return err
		}
		defer e.dead.Close()
		for _, n := range e.nodes {
			if err := e.schema(n); err != nil {
				return err
			}
		}
		return w.Flush()
	case TestAll:
		return Sync(ctx, Options{Config: cfg, State: st, Writer: w, Log: log, RecordLimit: 1})
	}
	return &UsageError{Msg: fmt.Sprintf("--test: expected all or schema, got %q", mode)}
}

// walkPages is pages.Walk, but in order in a test run: a run that stops
// after RecordLimit records would mostly send a look-ahead request only to
// cancel it, and a test's requests would depend on timing.
func (e *engine) walkPages(ctx context.Context, d *streams.Definition, p streams.Paginator, first streams.Request, fetch streams.Fetch, page func(*streams.Response) error) error {
	if e.recordLimit > 0 {
		return pages.WalkInOrder(ctx, d, p, first, fetch, page)
	}
	return pages.Walk(ctx, d, p, first, fetch, page)
}
