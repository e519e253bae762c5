package tap

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/tap-dev/tap/streammap"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/tap/splice"
)

// splicer is the reader of n's pages as spliced records (package splice);
// nil when the run reads every record's tree: tap --tree, a stream not
// written, children walked from its records, or properties to drop
// without maps that drop them.
func (e *engine) splicer(n *node) *splice.Reader {
	var maps []*streammap.Transformer
	for _, mo := range n.outs {
		if mo.selected {
			maps = append(maps, mo.tr)
		}
	}
	tree := e.policy.tree || !n.selected || len(n.children) > 0 || len(n.dropped) > 0 && n.outs == nil
	return splice.New(splice.Stream{Def: n.def, Schema: e.cfg.Schemas[n.def.Name], Tree: tree, Maps: maps})
}

// handlePage takes a page's records in order: on a spliced page the
// splicable ones are written from their bytes; the others go through
// handle.
func (e *engine) handlePage(ctx context.Context, n *node, resp *streams.Page, extracted time.Time, part streams.Partition) (err error) {
	// The walk has just started fetching the next page. On one CPU that
	// fetch would wait for this page to be written (nothing blocks until
	// then), and the API's time would add to ours: let it send its
	// request first, and the answer arrive while this page is written.
	runtime.Gosched()
	if len(n.children) == 0 && len(n.selectedOutputs()) == 1 {
		// Nothing else of the stream is written in the middle of the
		// page: its lines go out together.
		n.write.StartPage(e.out)
		defer func() {
			if ferr := n.write.EndPage(); err == nil {
				err = ferr
			}
		}()
	}
	p := resp.Spliced
	if p == nil {
		for _, rec := range resp.Records {
			if err := e.handle(ctx, n, rec, extracted, part); err != nil {
				return err
			}
		}
		return nil
	}
	defer p.Release()
	d := n.def
	for i := range resp.Records {
		raw, ok, err := p.Raw(i)
		if err != nil {
			return err
		}
		if !ok {
			if err := e.handle(ctx, n, resp.Records[i], extracted, part); err != nil {
				return err
			}
			continue
		}
		if dup, err := e.repeated(n, resp.Records[i]); dup || err != nil {
			if err != nil {
				return err
			}
			continue
		}
		if e.full(n) {
			return errRecordLimit
		}
		if rk := d.ReplicationKey; rk != "" {
			v, err := p.Value(i, rk)
			if err != nil {
				return err
			}
			if n.below.Below(part, v) {
				continue // client-side incremental: an earlier run wrote it
			}
			if err := e.observe(n, part, v); err != nil {
				return err
			}
		}
		if err := e.schema(n); err != nil {
			return err
		}
		if s := p.Mapped(); s != nil {
			if err := e.writeMapped(n, s, extracted); err != nil {
				return err
			}
			continue
		}
		if err := e.record(n, d.Name, raw, extracted); err != nil {
			return err
		}
		n.counts.Records.Add(1)
	}
	return nil
}

// repeated reports whether rec (a tree or a spliced record's keys)
// repeats a row of the last pages of an offset stream, counting it.
func (e *engine) repeated(n *node, rec any) (bool, error) {
	if n.dedupe == nil {
		return false, nil
	}
	dup, err := n.dedupe.Repeated(rec)
	if err != nil {
		return false, fmt.Errorf("stream %q: primary key: %w", n.def.Name, err)
	}
	if dup {
		n.counts.Dupes.Add(1)
	}
	return dup, nil
}
