package tap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/streams/pages"
	"github.com/tap-dev/tap/tap/metrics"
	"github.com/tap-dev/tap/tap/reconcile"
)

// The engine's side of soft deletes, deletion events and reconcile
// (streams/deletes.go defines them; tap/reconcile keeps the keys and
// compares them). A stream's walk marks soft-deleted records and notes
// every key it writes; once the stream has ended, its deletion events are
// walked, the keys file saved, and, when due, the stream reconciled.

// deletions is what a stream with deletes or reconcile keeps over a run.
type deletions struct {
	keys    *reconcile.Keys // nil: no reconcile, or not in this run
	resumed bool            // the stream started from a bookmark
	deleted int64           // deletion records written
	scratch []string
}

// syncWithDeletes syncs a top-level stream and its children, then its
// deletion events and its reconcile.
func (e *engine) syncWithDeletes(ctx context.Context, n *node) error {
	d := n.def
	if !n.selected || (d.Deletes == nil && d.Reconcile == nil) || !e.policy.writesState() {
		return e.syncTree(ctx, n)
	}
	n.deletions = &deletions{resumed: e.state.Value(d.Name) != nil}
	if d.Reconcile != nil {
		if e.policy.shard.On() {
			e.log.Warn("reconcile is skipped under --shard: shards would race on one keys file", "stream", d.Name)
		} else {
			k, err := reconcile.Open(d.Name, d.Reconcile.KeysFile, keyKind(e.cfg.Schemas[d.Name], d.PrimaryKey[0]), 0)
			if err != nil {
				return &InputError{File: d.Reconcile.KeysFile, Err: err}
			}
			n.deletions.keys = k
			defer k.Close()
		}
	}
	err := e.syncTree(ctx, n)
	if err == nil && d.Deletes != nil {
		err = e.walkDeletes(ctx, n)
	}
	if err != nil {
		if k := n.deletions.keys; k != nil {
			// What was written before the failure stays written: its
			// keys are kept, or a reconcile would fetch them again.
			if serr := k.Save(); serr != nil {
				err = errors.Join(err, fmt.Errorf("stream %q: %w", d.Name, serr))
			}
		}
		return err
	}
	if k := n.deletions.keys; k != nil {
		due := k.Due(d.Reconcile.EveryRuns, e.policy.reconcile)
		// Saved before the listing: a run killed in it keeps the keys
		// it emitted, and its rerun is still due.
		if err := k.Save(); err != nil {
			return fmt.Errorf("stream %q: %w", d.Name, err)
		}
		if due {
			return e.reconcile(ctx, n)
		}
	}
	return nil
}

// keyKind is how a stream's keys file holds its key: integers when the
// schema says the key is one, text otherwise.
func keyKind(schema map[string]any, pk string) reconcile.Kind {
	props, _ := schema["properties"].(map[string]any)
	p, _ := props[pk].(map[string]any)
	if settings.TypeIncludes(p["type"], "integer") {
		return reconcile.Int
	}
	return reconcile.Text
}

// marked is the engine's hook on a record about to be written as a
// stream's own: a soft-deleted one gains _sdc_deleted_at, and the key of
// every one is noted for the keys file.
func (e *engine) marked(n *node, m map[string]any, extracted time.Time) error {
	d := n.def
	deleted := d.SoftDelete != nil && d.SoftDelete.SoftDeleted(m)
	if deleted {
		m[streams.DeletedAt] = deletedAt(m[d.ReplicationKey], extracted)
	}
	if n.deletions == nil || n.deletions.keys == nil {
		return nil
	}
	if deleted {
		return n.deletions.keys.Deleted(m[d.PrimaryKey[0]])
	}
	return n.deletions.keys.Emitted(m[d.PrimaryKey[0]])
}

// deletedAt is when a soft-deleted row was deleted: its replication-key
// value when that is a time, else the time it was read.
func deletedAt(key any, read time.Time) string {
	if t, ok := keys.ParseTime(key); ok {
		return t.UTC().Format(time.RFC3339Nano)
	}
	return read.UTC().Format(time.RFC3339Nano)
}

// eventTime is the time of a deletion event: an RFC 3339 time, or a
// number of unix seconds (milliseconds with format unix_ms); the time it
// was read when it has none.
func eventTime(v any, format string, read time.Time) string {
	var f float64
	switch x := v.(type) {
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return deletedAt(v, read)
		}
	case float64:
		f = x
	default:
		return deletedAt(v, read)
	}
	if format == "unix_ms" {
		f /= 1000
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC().Format(time.RFC3339Nano)
}

// writeDeletion writes the deletion record of key: the primary key and
// _sdc_deleted_at only, as a log-based tap writes a delete. It is not
// held to the schema: its required properties do not apply. With stream
// maps it is written as each stream the maps make of it, so that a
// renamed or aliased key stays the key the target has.
func (e *engine) writeDeletion(n *node, key any, at string) error {
	dl := n.deletions
	m := map[string]any{n.def.PrimaryKey[0]: key, streams.DeletedAt: at}
	if n.outs != nil {
		if err := e.emitMapped(n, m, e.now()); err != nil {
			return err
		}
		dl.deleted++
		return nil
	}
	b, err := codec.AppendObject(nil, m, &dl.scratch)
	if err != nil {
		return fmt.Errorf("stream %q: deletion record: %w", n.def.Name, err)
	}
	if err := e.schema(n); err != nil {
		return err
	}
	if err := e.record(n, n.def.Name, b, e.now()); err != nil {
		return err
	}
	dl.deleted++
	return nil
}

// subNode is a walk of n's that is not n's records (its deletion events,
// its key listing), fetched through the client as a stream of its own.
func subNode(d *streams.Definition) *node {
	return &node{def: d, model: &model{}, counts: metrics.Stream{Name: d.Name}}
}

// walkDeletes walks n's deletion events from their bookmark, writes a
// deletion record for each, and moves the bookmark once the walk has
// ended (the events need not come in order).
func (e *engine) walkDeletes(ctx context.Context, n *node) error {
	d, dl := n.def, n.deletions
	sub := d.DeletesDefinition()
	bm := e.state.Deletes(d.Name)
	_, numeric := bm.(json.Number)
	if _, f := bm.(float64); f {
		numeric = true
	}
	plan, err := streams.NewPlan(sub, streams.Bounds{Bookmark: bm, StartDate: e.cfg.Start, Now: e.now().UTC(), Numeric: numeric})
	if err != nil {
		return &InputError{File: "state", Err: fmt.Errorf("bookmarks.%s.deletes: %w", d.Name, err)}
	}
	first, err := plan.Request(streams.Partition{}, nil)
	if err != nil {
		return err
	}
	format := ""
	if sub.Incremental != nil {
		format = sub.Incremental.Format
	}
	before := dl.deleted
	err = e.walkSub(ctx, sub, first, func(m map[string]any) error {
		key, ok := streams.Lookup(m, d.Deletes.KeyPath)
		if !ok || key == nil {
			return fmt.Errorf("stream %q: deletes.key_path %q is not in a deletion event", d.Name, d.Deletes.KeyPath)
		}
		at := e.now()
		var t any
		if sub.ReplicationKey != "" {
			t, _ = streams.Lookup(m, sub.ReplicationKey)
			if _, err := plan.Observe(streams.Partition{}, t); err != nil {
				e.log.Warn("a deletion event's time cannot be compared; it does not move the bookmark", "stream", d.Name, "error", err)
			}
		}
		if dl.keys != nil {
			if err := dl.keys.Deleted(key); err != nil {
				return err
			}
		}
		return e.writeDeletion(n, key, eventTime(t, format, at))
	})
	if err != nil {
		return err
	}
	if err := plan.Close(); err != nil {
		return err
	}
	e.report.Counter("deleted_count", dl.deleted-before, map[string]any{"endpoint": d.Name, "source": "deletes"})
	if v, moved := plan.Checkpoint(); moved && v != nil {
		e.state.SetDeletes(d.Name, sub.ReplicationKey, v)
		return e.checkpoint(n)
	}
	return nil
}

// walkSub walks a sub-definition of a stream from first, handing each
// record, as an object, to each.
func (e *engine) walkSub(ctx context.Context, sub *streams.Definition, first streams.Request, each func(map[string]any) error) error {
	p, err := pages.New(sub)
	if err != nil {
		return err
	}
	sn := subNode(sub)
	return pages.Walk(ctx, sub, p, first, e.fetcher(sn), func(resp *streams.Page) error {
		for _, rec := range resp.Records {
			m, ok := rec.(map[string]any)
			if !ok {
				return fmt.Errorf("stream %q: a record is not a JSON object (got a JSON %s); check records_path", sub.Name, codec.TypeName(rec))
			}
			if err := each(m); err != nil {
				return err
			}
		}
		return nil
	})
}

// reconcile lists n's keys and compares them with its keys file: the
// keys gone upstream become deletion records, the keys the cursor missed
// are fetched by id (or reported).
func (e *engine) reconcile(ctx context.Context, n *node) error {
	d, dl := n.def, n.deletions
	r := d.Reconcile
	sub := d.ReconcileDefinition()
	run := reconcile.Run{
		MaxDeleteFraction: r.DeleteFraction(),
		Adopt:             !dl.keys.Existed() && dl.resumed,
		List: func(ctx context.Context, add func(any) error) error {
			first, err := sub.FirstRequest(nil)
			if err != nil {
				return err
			}
			return e.walkSub(ctx, sub, first, func(m map[string]any) error {
				if d.SoftDelete != nil && d.SoftDelete.SoftDeleted(m) {
					return nil // listed as deleted: not among the live keys
				}
				return add(m[d.PrimaryKey[0]])
			})
		},
		Delete: func(k reconcile.Key) error {
			return e.writeDeletion(n, k.Value(dl.keys.Kind()), e.now().UTC().Format(time.RFC3339Nano))
		},
	}
	if r.ByID != nil {
		run.Fetch = func(ctx context.Context, k reconcile.Key) (bool, error) { return e.fetchByID(ctx, n, k) }
	} else {
		var reported int
		run.Missed = func(k reconcile.Key) {
			if reported++; reported <= 20 {
				e.log.Warn("reconcile: a key the source lists was never emitted (no reconcile.by_id to fetch it)", "stream", d.Name, "key", k.String())
			}
		}
	}
	if run.Adopt {
		e.log.Warn("reconcile: no keys file yet and the stream was read from a bookmark: the listing becomes the known keys; nothing is deleted or fetched this time", "stream", d.Name, "keys_file", r.KeysFile)
	}
	sum, err := dl.keys.Reconcile(ctx, run)
	e.log.Info("reconcile", "stream", d.Name, "listed", sum.Listed, "deleted", sum.Deleted, "missed", sum.Missed, "fetched", sum.Fetched)
	tags := map[string]any{"endpoint": d.Name}
	for _, c := range []struct {
		name string
		v    int64
	}{{"reconcile_listed", sum.Listed}, {"reconcile_deleted", sum.Deleted}, {"reconcile_missed", sum.Missed}, {"reconcile_fetched", sum.Fetched}} {
		e.report.Counter(c.name, c.v, tags)
	}
	if err != nil {
		return err
	}
	if sum.Deleted > 0 || sum.Fetched > 0 {
		return e.checkpoint(n) // the records it wrote go out before the run's end
	}
	return nil
}

// fetchByID reads the row of key through reconcile.by_id and writes it as
// a record of n; a 404 or 410 is a row gone since the listing. It reports
// whether the row was written as a live one.
func (e *engine) fetchByID(ctx context.Context, n *node, k reconcile.Key) (bool, error) {
	d := n.def
	req, err := d.ByIDRequest(k.String())
	if err != nil {
		return false, err
	}
	bd := *d
	bd.IgnoreStatuses = append(slices.Clone(d.IgnoreStatuses), 404, 410)
	bn := subNode(&bd)
	creq := e.clientRequest(bn, req, streams.FormatJSON)
	var body any
	creq.Check = func(b []byte) error {
		body, err = decodeRecords(b)
		return err
	}
	resp, err := e.client.Do(ctx, creq)
	if err != nil {
		return false, err
	}
	if resp.Ignored {
		return false, nil
	}
	rec, ok := streams.Lookup(body, d.Reconcile.ByID.RecordsPath)
	if list, isList := rec.([]any); isList && len(list) == 1 {
		rec = list[0]
	}
	m, isObj := rec.(map[string]any)
	if !ok || !isObj {
		return false, fmt.Errorf("stream %q: reconcile.by_id: the answer for key %s holds no record at records_path %q", d.Name, k, d.Reconcile.ByID.RecordsPath)
	}
	if v := m[d.PrimaryKey[0]]; v == nil {
		return false, fmt.Errorf("stream %q: reconcile.by_id: the record for key %s has no %s", d.Name, k, d.PrimaryKey[0])
	}
	return e.emitFetched(n, m)
}

// emitFetched writes a row read by id as n's record: validated and
// marked as any, but not shown to the plan, whose bookmark is written.
func (e *engine) emitFetched(n *node, m map[string]any) (bool, error) {
	extracted := e.now()
	ok, err := n.check.Check(m, extracted)
	if err != nil || !ok {
		if err == nil {
			n.counts.DeadLetters.Add(1)
		}
		return false, err
	}
	keys := n.deletions.keys
	n.deletions.keys = nil // the reconcile writes the new keys file itself
	err = e.marked(n, m, extracted)
	n.deletions.keys = keys
	if err != nil {
		return false, err
	}
	if n.outs != nil {
		err = e.emitMapped(n, m, extracted)
	} else {
		var b []byte
		if b, err = n.encode(m); err == nil {
			if err = e.schema(n); err == nil {
				err = e.record(n, n.def.Name, b, extracted)
			}
		}
	}
	if err != nil {
		return false, err
	}
	_, deleted := m[streams.DeletedAt]
	return !deleted, nil
}
