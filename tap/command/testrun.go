package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/tap-dev/tap/tap"
	"github.com/tap-dev/tap/tap/inputs"
	"github.com/tap-dev/tap/tap/output"
	"github.com/tap-dev/tap/tap/runreport"
	"github.com/tap-dev/tap/tap/state"
)

// Test modes of `tap --test`, as the Meltano SDK names them.
const (
	TestAll    = "all"    // sync one record per stream
	TestSchema = "schema" // write only the SCHEMA messages
)

// SingerTest is `tap --config C --test[=all|schema]`, the Meltano SDK's
// connection test (`meltano config test` runs a plain sync instead and
// stops at its first RECORD). As in the Meltano SDK every stream is
// synced, whatever the catalog selects. No STATE is written: a test that
// read one record must not move a bookmark.
func SingerTest(ctx context.Context, f inputs.Files, mode string, stdout, stderr io.Writer) (err error) {
	cfg, st, _, err := f.Load()
	if err != nil {
		return err
	}
	w := output.NewSinger(stdout)
	rec, log, finish := runreport.Start(cfg, "Singer --test", f.Logger(cfg, stderr), st.Value)
	defer func() { err = errors.Join(err, finish(tap.ExitCode(err), err)) }()
	switch mode {
	case TestSchema:
		return writeSchemas(cfg, st, w, log)
	case TestAll:
		return tap.Sync(ctx, tap.Options{Config: cfg, State: st, Writer: w, Log: log, RecordLimit: 1, Report: rec})
	}
	return &tap.UsageError{Msg: fmt.Sprintf("--test: expected all or schema, got %q", mode)}
}

// writeSchemas writes the SCHEMA message of every stream, in the config's
// order, by the engine's own SCHEMA path, so that --test=schema shows
// what a sync would send, and flushes. Nothing is sent to the API.
func writeSchemas(cfg *tap.Config, st *state.State, w output.Writer, log *slog.Logger) error {
	e, err := tap.Open(tap.ModeSchemas, tap.Options{Config: cfg, State: st, Writer: w, Log: log})
	if err != nil {
		return err
	}
	defer e.Close()
	for _, d := range cfg.Streams {
		if err := e.Schema(d.Name); err != nil {
			return err
		}
	}
	return w.Flush()
}
