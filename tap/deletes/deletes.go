// Package deletes is a stream's deletes over one run (streams/deletes.go
// defines them): soft-deleted records marked with _sdc_deleted_at, every
// key written noted in the stream's keys file (tap/reconcile), its
// deletion events walked once the stream has ended, and, when due, the
// stream reconciled: the keys gone upstream written as deletion records,
// the keys the cursor missed fetched by id. The run reads the pages and
// writes the records, through the Run it gives; this package knows what
// they mean.
package deletes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/tap/reconcile"
)

// Run is what a stream's deletes need of the run that reads it.
type Run interface {
	// Walk reads the pages of d (a sub-definition of the stream: its
	// deletion events, its key listing) from first, handing each record,
	// a JSON object, to each.
	Walk(ctx context.Context, d *streams.Definition, first streams.Request, each func(map[string]any) error) error
	// WriteDeletion writes the deletion record of key, deleted at at (an
	// RFC 3339 time).
	WriteDeletion(key any, at string) error
	// FetchByID reads the row of key through reconcile.by_id and writes
	// it as the stream's record, validated, with Mark but not noted; live
	// says it was written as a live row.
	FetchByID(ctx context.Context, key reconcile.Key) (live bool, err error)
	// SetBookmark moves the deletion events' bookmark to v (their
	// replication key's) and writes STATE.
	SetBookmark(key string, v any) error
	// Checkpoint writes STATE: the records written go out before the
	// run's end.
	Checkpoint() error
	// Counter writes a METRIC counter line.
	Counter(name string, value any, tags map[string]any)
}

// Options of a stream's deletes in one run.
type Options struct {
	Def    *streams.Definition
	Schema map[string]any // the stream's, which says what its key is
	// Resumed says the stream starts from a bookmark; Bookmark is its
	// deletion events' (nil: none yet).
	Resumed  bool
	Bookmark any
	Start    time.Time // start_date, the events' lower bound without a bookmark
	// Shard: the run reads one shard (--shard), and does not reconcile.
	// Forced: reconcile whatever every_runs says (--reconcile).
	Shard, Forced bool
	Log           *slog.Logger
	Now           func() time.Time
}

// Stream is one stream's deletes over a run. It is used by the goroutine
// that walks the stream.
type Stream struct {
	o       Options
	keys    *reconcile.Keys // nil: no reconcile, or not in this run
	deleted int64           // deletion records written
}

// Open opens the stream's keys file when it reconciles. Close it.
func Open(o Options) (*Stream, error) {
	s := &Stream{o: o}
	d := o.Def
	if d.Reconcile == nil {
		return s, nil
	}
	if o.Shard {
		o.Log.Warn("reconcile is skipped under --shard: shards would race on one keys file", "stream", d.Name)
		return s, nil
	}
	k, err := reconcile.Open(d.Name, d.Reconcile.KeysFile, KeyKind(o.Schema, d.PrimaryKey[0]), 0)
	if err != nil {
		return nil, &settings.InputError{File: d.Reconcile.KeysFile, Err: err}
	}
	s.keys = k
	return s, nil
}

// Close removes what the keys' sorts spilled.
func (s *Stream) Close() error {
	if s == nil || s.keys == nil {
		return nil
	}
	return s.keys.Close()
}

// KeyKind is how a stream's keys file holds its key: integers when the
// schema says the key is one, text otherwise.
func KeyKind(schema map[string]any, pk string) reconcile.Kind {
	props, _ := schema["properties"].(map[string]any)
	p, _ := props[pk].(map[string]any)
	if settings.TypeIncludes(p["type"], "integer") {
		return reconcile.Int
	}
	return reconcile.Text
}

// Mark gives a soft-deleted record of d its _sdc_deleted_at and reports
// whether it is one.
func Mark(d *streams.Definition, m map[string]any, extracted time.Time) bool {
	deleted := d.SoftDelete != nil && d.SoftDelete.SoftDeleted(m)
	if deleted {
		m[streams.DeletedAt] = deletedAt(m[d.ReplicationKey], extracted)
	}
	return deleted
}

// Note notes the key of a record about to be written as the stream's own
// (deleted: as a deleted row) for the keys file. A nil Stream, or one
// that does not reconcile in this run, notes nothing.
func (s *Stream) Note(m map[string]any, deleted bool) error {
	if s == nil || s.keys == nil {
		return nil
	}
	if deleted {
		return s.keys.Deleted(m[s.o.Def.PrimaryKey[0]])
	}
	return s.keys.Emitted(m[s.o.Def.PrimaryKey[0]])
}

// writeDeletion writes, through run, the deletion record of key, and
// counts it.
func (s *Stream) writeDeletion(run Run, key any, at string) error {
	if err := run.WriteDeletion(key, at); err != nil {
		return err
	}
	s.deleted++
	return nil
}

// End is what follows the walk of the stream, which ended with err: its
// deletion events, the keys file saved and, when due, the reconcile.
// What was written before a failure stays written: its keys are kept,
// or a reconcile would fetch them again.
func (s *Stream) End(ctx context.Context, run Run, err error) error {
	d := s.o.Def
	if err == nil && d.Deletes != nil {
		err = s.walkEvents(ctx, run)
	}
	if s.keys == nil {
		return err
	}
	if err != nil {
		if serr := s.keys.Save(); serr != nil {
			err = errors.Join(err, fmt.Errorf("stream %q: %w", d.Name, serr))
		}
		return err
	}
	due := s.keys.Due(d.Reconcile.EveryRuns, s.o.Forced)
	// Saved before the listing: a run killed in it keeps the keys it
	// emitted, and its rerun is still due.
	if err := s.keys.Save(); err != nil {
		return fmt.Errorf("stream %q: %w", d.Name, err)
	}
	if due {
		return s.reconcile(ctx, run)
	}
	return nil
}

// walkEvents walks the deletion events from their bookmark, writes a
// deletion record for each, and moves the bookmark once the walk has
// ended (the events need not come in order).
func (s *Stream) walkEvents(ctx context.Context, run Run) error {
	d := s.o.Def
	sub := d.DeletesDefinition()
	bm := s.o.Bookmark
	_, numeric := bm.(json.Number)
	if _, f := bm.(float64); f {
		numeric = true
	}
	plan, err := streams.NewPlan(sub, streams.Bounds{Bookmark: bm, StartDate: s.o.Start, Now: s.o.Now().UTC(), Numeric: numeric})
	if err != nil {
		return &settings.InputError{File: "state", Err: fmt.Errorf("bookmarks.%s.deletes: %w", d.Name, err)}
	}
	first, err := plan.Request(streams.Partition{}, nil)
	if err != nil {
		return err
	}
	format := ""
	if sub.Incremental != nil {
		format = sub.Incremental.Format
	}
	before := s.deleted
	err = run.Walk(ctx, sub, first, func(m map[string]any) error {
		key, ok := streams.Lookup(m, d.Deletes.KeyPath)
		if !ok || key == nil {
			return fmt.Errorf("stream %q: deletes.key_path %q is not in a deletion event", d.Name, d.Deletes.KeyPath)
		}
		at := s.o.Now()
		var t any
		if sub.ReplicationKey != "" {
			t, _ = streams.Lookup(m, sub.ReplicationKey)
			if _, err := plan.Observe(streams.Partition{}, t); err != nil {
				s.o.Log.Warn("a deletion event's time cannot be compared; it does not move the bookmark", "stream", d.Name, "error", err)
			}
		}
		if s.keys != nil {
			if err := s.keys.Deleted(key); err != nil {
				return err
			}
		}
		return s.writeDeletion(run, key, eventTime(t, format, at))
	})
	if err != nil {
		return err
	}
	if err := plan.Close(); err != nil {
		return err
	}
	run.Counter("deleted_count", s.deleted-before, map[string]any{"endpoint": d.Name, "source": "deletes"})
	if v, moved := plan.Checkpoint(); moved && v != nil {
		return run.SetBookmark(sub.ReplicationKey, v)
	}
	return nil
}

// reconcile lists the stream's keys and compares them with its keys
// file: the keys gone upstream become deletion records, the keys the
// cursor missed are fetched by id (or reported).
func (s *Stream) reconcile(ctx context.Context, run Run) error {
	d, log := s.o.Def, s.o.Log
	r := d.Reconcile
	sub := d.ReconcileDefinition()
	rr := reconcile.Run{
		MaxDeleteFraction: r.DeleteFraction(),
		Adopt:             !s.keys.Existed() && s.o.Resumed,
		List: func(ctx context.Context, add func(any) error) error {
			first, err := sub.FirstRequest(nil)
			if err != nil {
				return err
			}
			return run.Walk(ctx, sub, first, func(m map[string]any) error {
				if d.SoftDelete != nil && d.SoftDelete.SoftDeleted(m) {
					return nil // listed as deleted: not among the live keys
				}
				return add(m[d.PrimaryKey[0]])
			})
		},
		Delete: func(k reconcile.Key) error {
			return s.writeDeletion(run, k.Value(s.keys.Kind()), s.o.Now().UTC().Format(time.RFC3339Nano))
		},
	}
	if r.ByID != nil {
		rr.Fetch = run.FetchByID
	} else {
		var reported int
		rr.Missed = func(k reconcile.Key) {
			if reported++; reported <= 20 {
				log.Warn("reconcile: a key the source lists was never emitted (no reconcile.by_id to fetch it)", "stream", d.Name, "key", k.String())
			}
		}
	}
	if rr.Adopt {
		log.Warn("reconcile: no keys file yet and the stream was read from a bookmark: the listing becomes the known keys; nothing is deleted or fetched this time", "stream", d.Name, "keys_file", r.KeysFile)
	}
	sum, err := s.keys.Reconcile(ctx, rr)
	log.Info("reconcile", "stream", d.Name, "listed", sum.Listed, "deleted", sum.Deleted, "missed", sum.Missed, "fetched", sum.Fetched)
	tags := map[string]any{"endpoint": d.Name}
	for _, c := range []struct {
		name string
		v    int64
	}{{"reconcile_listed", sum.Listed}, {"reconcile_deleted", sum.Deleted}, {"reconcile_missed", sum.Missed}, {"reconcile_fetched", sum.Fetched}} {
		run.Counter(c.name, c.v, tags)
	}
	if err != nil {
		return err
	}
	if sum.Deleted > 0 || sum.Fetched > 0 {
		return run.Checkpoint() // the records it wrote go out before the run's end
	}
	return nil
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
