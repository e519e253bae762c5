package tap

import (
	"context"
	"errors"
	"log/slog"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/tap/connect"
	"github.com/tap-dev/tap/tap/output"
	"github.com/tap-dev/tap/tap/state"
)

// CheckConnection sends one cheap request per stream — its first page —
// through the same client (limiter, retries, auth) and the same request
// building (path, params, incremental lower bound from start_date, first
// chunk window, pagination parameters, records extraction) as a sync. A
// child stream is checked with the first record of its parent's first
// page; it is skipped when that page is empty. The first failure is
// returned; a status listed in a stream's ignore_statuses is no failure.
// A rotated refresh token is kept as a sync keeps it: in a CONTROL
// message of aw, or in the config file when aw is nil.
func CheckConnection(ctx context.Context, cfg *Config, log *slog.Logger, aw *output.Airbyte) error {
	var keep connect.Keeper // nil: in the config file, checked first
	if aw != nil {
		keep = connect.InControl(cfg, aw, log)
	}
	return checkConnection(ctx, cfg, log, keep)
}

// checkConnection is CheckConnection keeping a rotated refresh token with
// keep. A failed token request is a config error: the credentials are
// wrong, not the API.
func checkConnection(ctx context.Context, cfg *Config, log *slog.Logger, keep connect.Keeper) (err error) {
	defer func() {
		var te *client.TokenError
		if errors.As(err, &te) && te.Code != "" {
			err = &InputError{File: cfg.Path, Err: te}
		}
	}()
	e, err := newEngine(cfg, run{policy: policy{mode: ModeCheck}, state: state.New(), out: output.Discard, log: log,
		connect: &connect.Options{Log: log, Keep: keep}})
	if err != nil {
		return err
	}
	defer e.close()
	for _, n := range e.nodes {
		if n.def.Parent == nil {
			if err := e.plan(n); err != nil {
				return err
			}
			if err := e.checkTree(ctx, n, streams.Partition{}); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkTree checks n, whose plan is made, in partition part, then its
// children with n's first record.
func (e *engine) checkTree(ctx context.Context, n *node, part streams.Partition) error {
	if n.def.Async != nil {
		// A report job costs the API work, and often quota.
		e.log.Info("check: async stream not checked: it would create a report job", "stream", n.def.Name)
		return nil
	}
	first, count, err := e.checkStream(ctx, n, part)
	if err != nil {
		return err
	}
	e.log.Info("check: stream answered", "stream", n.def.Name, "records_on_first_page", count)
	for _, c := range n.children {
		if first == nil {
			e.log.Info("check: stream skipped: its parent's first page has no record to fill its path", "stream", c.def.Name, "parent", n.def.Name)
			continue
		}
		if err := e.plan(c); err != nil {
			return err
		}
		cp, err := c.plan.Partition(first)
		if err != nil {
			return err
		}
		if err := e.checkTree(ctx, c, cp); err != nil {
			return err
		}
	}
	return nil
}

// checkStream fetches the first page of n (of its first chunk window, when
// chunked) and returns its first record.
func (e *engine) checkStream(ctx context.Context, n *node, part streams.Partition) (map[string]any, int, error) {
	var w *keys.Window
	if ws := n.plan.Windows(); len(ws) > 0 && n.def.Parent == nil {
		w = &ws[0]
	}
	req, err := n.plan.Request(part, w)
	if err != nil {
		return nil, 0, err
	}
	p, err := e.pager(n)
	if err != nil {
		return nil, 0, err
	}
	resp, err := e.fetchOf(n)(ctx, p.First(req))
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
