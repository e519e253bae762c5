package tap

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/records"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/pages"
	"github.com/tap-dev/tap/tap/deletes"
	"github.com/tap-dev/tap/tap/reconcile"
)

// The engine's side of a stream's deletes (tap/deletes): the records
// that come from no page of the stream — deletion records (tombstones)
// and rows fetched by id — and the walks of its sub-definitions.

// syncWithDeletes syncs a top-level stream and its children, then hands
// what follows to its deletes: deletion events and reconcile.
func (o *sink) syncWithDeletes(ctx context.Context) error {
	n := o.n
	e := n.e
	d := n.def
	if !n.model.selected || (d.Deletes == nil && d.Reconcile == nil) || !e.policy.writesState() {
		return e.syncTree(ctx, n)
	}
	s, err := deletes.Open(deletes.Options{Def: d, Schema: e.cfg.Schemas[d.Name],
		Resumed: e.state.Value(d.Name) != nil, Bookmark: e.state.Deletes(d.Name), Start: e.cfg.Start,
		Shard: e.policy.shard.On(), Forced: e.policy.reconcile, Log: e.log, Now: e.now})
	if err != nil {
		return err
	}
	defer s.Close()
	n.out.deletions = s
	return s.End(ctx, &tombstones{e: e, n: n}, e.syncTree(ctx, n))
}

// tombstones is a stream's deletes.Run.
type tombstones struct {
	e *engine
	n *node
}

func (t *tombstones) Walk(ctx context.Context, sub *streams.Definition, first streams.Request, each func(map[string]any) error) error {
	return t.e.walkSub(ctx, sub, first, each)
}

func (t *tombstones) SetBookmark(key string, v any) error {
	t.e.state.SetDeletes(t.n.def.Name, key, v)
	return t.n.out.checkpoint()
}

func (t *tombstones) Checkpoint() error { return t.n.out.checkpoint() }

func (t *tombstones) Counter(name string, value any, tags map[string]any) {
	t.e.report.Counter(name, value, tags)
}

// WriteDeletion writes the deletion record of key: the primary key and
// _sdc_deleted_at only, as a log-based tap writes a delete. It is not
// held to the schema: its required properties do not apply. With stream
// maps it is written as each stream the maps make of it, so that a
// renamed or aliased key stays the key the target has.
func (t *tombstones) WriteDeletion(key any, at string) error {
	e, n := t.e, t.n
	m := map[string]any{n.def.PrimaryKey[0]: key, streams.DeletedAt: at}
	return n.out.write(m, e.now(), streams.Partition{}, fromDeletion)
}

// looseNode is a node for a walk outside the run's tree of streams: a
// stream's deletion events or key listing, a feed's backfill, the pages
// a caller reads (ReadPages). It is not selected, so its pages are never
// spliced: every record is a decoded value.
func (e *engine) looseNode(d *streams.Definition) *node { return newNode(e, d, &model{}) }

// walkSub walks a sub-definition of a stream from first, handing each
// record, as an object, to each.
func (e *engine) walkSub(ctx context.Context, sub *streams.Definition, first streams.Request, each func(map[string]any) error) error {
	p, err := pages.New(sub)
	if err != nil {
		return err
	}
	sn := e.looseNode(sub)
	return pages.Walk(ctx, sub, p, first, sn.model.fetcher(), func(resp *streams.Page) error {
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

// FetchByID reads the row of key through reconcile.by_id and writes it as
// a record of the stream; a 404 or 410 is a row gone since the listing. It
// reports whether the row was written as a live one.
func (t *tombstones) FetchByID(ctx context.Context, k reconcile.Key) (bool, error) {
	e, n := t.e, t.n
	d := n.def
	req, err := d.ByIDRequest(k.String())
	if err != nil {
		return false, err
	}
	bd := *d
	bd.IgnoreStatuses = append(slices.Clone(d.IgnoreStatuses), 404, 410)
	bn := e.looseNode(&bd)
	creq := bn.model.clientRequest(req, streams.FormatJSON)
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
	v := m[d.PrimaryKey[0]]
	if v == nil {
		return false, fmt.Errorf("stream %q: reconcile.by_id: the record for key %s has no %s", d.Name, k, d.PrimaryKey[0])
	}
	if got := keyText(v); got != k.String() {
		// The API answered for another key: writing it would write that
		// row again and count key k as emitted, so that k is never
		// delivered nor found missing again. A dead letter says so, and
		// k stays missing for the next reconcile.
		e.log.Warn("reconcile.by_id: the answer is the record of another key; set aside, the key stays missing", "stream", d.Name, "key", k.String(), "got", got)
		l := records.RequestLetter{Stream: d.Name, Context: map[string]any{d.PrimaryKey[0]: k.Value(keyKind(k))}, Method: cmp.Or(strings.ToUpper(req.Method), "GET"), URL: req.URL,
			Status: resp.Status, Error: fmt.Sprintf("stream %q: reconcile.by_id: the answer for key %s holds the record of key %s", d.Name, k, got), Time: e.now()}
		n.counts.DeadLetters.Add(1)
		return false, e.dead.Request(l)
	}
	return n.out.emitFetched(m)
}

// keyText is a primary-key value as reconcile.Key.String writes it.
func keyText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// keyKind is the kind of key k.
func keyKind(k reconcile.Key) reconcile.Kind {
	if k.String() == strconv.FormatInt(k.Int(), 10) {
		return reconcile.Int
	}
	return reconcile.Text
}

// emitFetched writes a row read by id as n's record (fromFetch). It
// reports whether the row was written as a live one.
func (o *sink) emitFetched(m map[string]any) (bool, error) {
	n := o.n
	e := n.e
	setAside := n.counts.DeadLetters.Load()
	if err := o.write(m, e.now(), streams.Partition{}, fromFetch); err != nil {
		return false, err
	}
	_, deleted := m[streams.DeletedAt]
	return n.counts.DeadLetters.Load() == setAside && !deleted, nil
}
