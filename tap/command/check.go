package command

import (
	"context"
	"errors"
	"log/slog"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/tap"
	"github.com/tap-dev/tap/tap/backfill"
	"github.com/tap-dev/tap/tap/inputs"
	"github.com/tap-dev/tap/tap/output"
	"github.com/tap-dev/tap/tap/state"
)

// airbyteCheck is `tap check --config C`. A config that cannot be loaded
// is an error (TRACE ERROR, non-zero exit); otherwise it writes
// CONNECTION_STATUS SUCCEEDED or FAILED and returns nil.
func airbyteCheck(ctx context.Context, f inputs.Files, aw *output.Airbyte) error {
	cfg, err := loadAirbyteConfig("check", f, aw)
	if err != nil {
		return err
	}
	// check is given no state: a backfill with no start is a config error,
	// found before the demo starts or any request is sent.
	if err := backfill.CheckStarts(cfg, state.New(), nil); err != nil {
		return err
	}
	log := aw.Logger(f.Level(cfg))
	status := map[string]any{"status": "SUCCEEDED"}
	if err := checkConnection(ctx, cfg, log, aw); err != nil {
		// One rule for config errors, whatever finds them: a TRACE ERROR
		// (config_error) and exit 2. CONNECTION_STATUS is for the API.
		var ie *tap.InputError
		if errors.As(err, &ie) {
			return err
		}
		status = map[string]any{"status": "FAILED", "message": cfg.Redactor.Redact("Connection check failed: " + err.Error())}
	}
	return aw.ConnectionStatus(status)
}

// firstPages is the engine as check drives it.
type firstPages interface {
	FirstPage(ctx context.Context, stream string, parent map[string]any) (map[string]any, int, error)
}

// checkConnection sends one cheap request per stream — its first page —
// through the same client (limiter, retries, auth) and the same request
// building (path, params, incremental lower bound from start_date, first
// chunk window, pagination parameters, records extraction) as a sync. A
// child stream is checked with the first record of its parent's first
// page; it is skipped when that page is empty. The first failure is
// returned; a status listed in a stream's ignore_statuses is no failure.
// A rotated refresh token is kept as a sync keeps it: in a CONTROL
// message of aw, or in the config file when aw is nil. A failed token
// request is a config error: the credentials are wrong, not the API.
func checkConnection(ctx context.Context, cfg *tap.Config, log *slog.Logger, aw *output.Airbyte) (err error) {
	defer func() {
		var te *client.TokenError
		if errors.As(err, &te) && te.Code != "" {
			err = &tap.InputError{File: cfg.Path, Err: te}
		}
	}()
	o := tap.Options{Config: cfg, State: state.New(), Log: log}
	if aw != nil {
		o.Writer = aw // for a rotated token's CONTROL message only
	}
	e, err := tap.Open(tap.ModeCheck, o)
	if err != nil {
		return err
	}
	defer e.Close()
	for i := range cfg.Streams {
		d := &cfg.Streams[i]
		var parent map[string]any // a stream walked for values (parent.values): the first
		switch p := d.Parent; {
		case p != nil && (p.Stream != "" || len(p.Values) == 0):
			continue // checked below its parent, or walked for no value
		case p != nil:
			parent = map[string]any{p.Key: p.Values[0]}
		}
		if err := checkTree(ctx, e, cfg, d, parent, log); err != nil {
			return err
		}
	}
	return nil
}

// checkTree checks d, for parent's record when it is a child, then its
// children, in the config's order, with d's first record.
func checkTree(ctx context.Context, e firstPages, cfg *tap.Config, d *streams.Definition, parent map[string]any, log *slog.Logger) error {
	first, count, err := e.FirstPage(ctx, d.Name, parent)
	if errors.Is(err, tap.ErrReportJob) {
		// A report job costs the API work, and often quota.
		log.Info("check: async stream not checked: it would create a report job", "stream", d.Name)
		return nil
	}
	if err != nil {
		return err
	}
	if d.Feed != nil {
		log.Info("check: feed connected", "stream", d.Name, "first_message", count > 0)
	} else {
		log.Info("check: stream answered", "stream", d.Name, "records_on_first_page", count)
	}
	for i := range cfg.Streams {
		c := &cfg.Streams[i]
		if c.Parent == nil || c.Parent.Stream != d.Name {
			continue
		}
		if first == nil {
			log.Info("check: stream skipped: its parent's first page has no record to fill its path", "stream", c.Name, "parent", d.Name)
			continue
		}
		if err := checkTree(ctx, e, cfg, c, first, log); err != nil {
			return err
		}
	}
	return nil
}
