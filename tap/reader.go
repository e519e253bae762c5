package tap

import (
	"context"
	"errors"
	"log/slog"

	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/pages"
	"github.com/tap-dev/tap/tap/connect"
	"github.com/tap-dev/tap/tap/output"
)

// Reader reads pages of the configured streams outside a sync, as a sync
// sends and reads them — the same client (limiter, retries, auth), the
// same fetch (body formats, records extraction, ignored statuses) — with
// every record decoded whole and nothing written: what --infer-schema
// reads.
type Reader struct{ e *engine }

// NewReader starts the demo API when the config names it and makes the
// client. Close the Reader when done.
func NewReader(cfg *Config, log *slog.Logger) (*Reader, error) {
	e, err := newEngine(cfg, run{policy: policy{mode: ModeInfer}, out: output.Discard, log: log, connect: &connect.Options{Log: log}})
	if err != nil {
		return nil, err
	}
	return &Reader{e: e}, nil
}

// Walk follows d's pages from first, handing each to page; a status the
// stream ignores ends the walk quietly, as in a sync.
func (r *Reader) Walk(ctx context.Context, d *streams.Definition, first streams.Request, page func(*streams.Page) error) error {
	// A node of its own, not selected: its pages are never spliced, so
	// every record is a decoded value.
	n := &node{def: d, model: &model{}}
	p, err := r.e.pager(n)
	if err != nil {
		return err
	}
	err = pages.Walk(ctx, d, p, first, r.e.fetcher(n), page)
	if errors.Is(err, errIgnored) {
		return nil
	}
	return err
}

// Requests is the number of requests sent so far.
func (r *Reader) Requests() int { return r.e.client.Stats().Requests }

// Close closes the client and stops the demo API, if it was started.
func (r *Reader) Close() { r.e.close() }
