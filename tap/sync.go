package tap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/streams"
)

// node is one stream of a run, with the streams that are its children.
// A node is walked by one goroutine at a time (a top-level stream and its
// children run on the same goroutine), so its fields need no lock; the
// counters are atomic because the progress reporter reads them.
type node struct {
	def      *streams.Definition
	selected bool
	dropped  map[string]bool
	children []*node
	numeric  bool // the replication key is a number, not a time
	check    *validator

	// seen holds the primary keys emitted in this run by an offset stream,
	// whose pages repeat rows when the source shifts under them.
	seen    map[string]struct{}
	maxSeen any // largest replication-key value emitted and not yet in state
	version int64

	schemaSent bool // SCHEMA goes out before the stream's first message

	records, pages, dupes, nullKeys, badKeys, ignored atomic.Int64
	running                                           atomic.Bool
	started                                           time.Time

	buf  []byte   // the record being encoded
	keys []string // the sorted keys of the last record encoded
}

// engine runs one sync: the same engine serves Singer and Airbyte; only
// the Writer differs.
type engine struct {
	cfg    *Config
	state  *State
	out    Writer
	log    *slog.Logger
	client *client.Client
	dead   *deadLetters
	now    func() time.Time
	nodes  []*node // in config order
}

// errIgnored ends a walk whose request answered a status listed in the
// stream's ignore_statuses.
var errIgnored = errors.New("status ignored")

func newEngine(cfg *Config, sel *Selection, st *State, out Writer, log *slog.Logger) (*engine, error) {
	e := &engine{cfg: cfg, state: st, out: out, log: log, now: time.Now,
		dead: newDeadLetters(cfg.DeadLetterPath, cfg.Secrets())}
	byName := map[string]*node{}
	for i := range cfg.Streams {
		d := &cfg.Streams[i]
		n := &node{def: d, selected: sel.Selected(d.Name), dropped: sel.Dropped(d.Name)}
		n.numeric = keyKind(cfg.Schemas[d.Name], d.ReplicationKey) == "number"
		if d.Pagination.Type == streams.PageOffset && len(d.PrimaryKey) > 0 {
			n.seen = map[string]struct{}{}
		}
		v, err := newValidator(d, cfg.Schemas[d.Name], cfg.OnSchemaViolation, cfg.Secrets()...)
		if err != nil {
			return nil, err
		}
		n.check = v
		byName[d.Name] = n
		e.nodes = append(e.nodes, n)
	}
	for _, n := range e.nodes {
		if p := n.def.Parent; p != nil {
			parent := byName[p.Stream]
			parent.children = append(parent.children, n)
		}
	}
	return e, nil
}

// needed reports whether a stream must be walked: it is selected, or a
// selected stream hangs below it.
func (n *node) needed() bool {
	if n.selected {
		return true
	}
	for _, c := range n.children {
		if c.needed() {
			return true
		}
	}
	return false
}

func (n *node) each(f func(*node)) {
	f(n)
	for _, c := range n.children {
		c.each(f)
	}
}

// run syncs every needed top-level stream, max_parallel_streams at a time.
// The first error cancels the others; the state written so far stays valid.
func (e *engine) run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, *e.cfg.MaxParallelStreams)
	var wg sync.WaitGroup
	var errOnce sync.Once
	var firstErr error
	for _, n := range e.nodes {
		if n.def.Parent != nil || !n.needed() {
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(n *node) {
			defer wg.Done()
			defer func() { <-sem }()
			if err := e.syncTree(ctx, n); err != nil {
				errOnce.Do(func() { firstErr = err; cancel(err) })
			}
		}(n)
	}
	wg.Wait()
	if firstErr == nil {
		firstErr = context.Cause(ctx)
		if errors.Is(firstErr, context.Canceled) && ctx.Err() == nil {
			firstErr = nil
		}
	}
	return firstErr
}

// syncTree syncs a top-level stream and, inline, its children.
func (e *engine) syncTree(ctx context.Context, root *node) error {
	root.each(func(n *node) {
		if n.selected {
			n.started = e.now()
			n.running.Store(true)
			e.status(n, StatusStarted)
			e.state.SetSyncing(n.def.Name, true)
		}
	})
	err := e.syncStream(ctx, root)
	root.each(func(n *node) {
		if !n.selected {
			return
		}
		n.running.Store(false)
		if err != nil {
			// currently_syncing stays set: the stream did not finish.
			e.status(n, StatusIncomplete)
			return
		}
		e.state.SetSyncing(n.def.Name, false)
		if n != root {
			// A child's bookmark covers every parent walked in this run.
			e.endStream(n)
			err = errors.Join(err, e.commit(n), e.checkpoint(n))
		}
		e.status(n, StatusComplete)
		e.logStreamEnd(n)
	})
	return err
}

func (e *engine) status(n *node, s string) {
	if err := e.out.StreamStatus(n.def.Name, s); err != nil {
		e.log.Warn("cannot write stream status", "stream", n.def.Name, "error", err)
	}
}

// syncStream walks a top-level stream once, in chunk windows when asked.
func (e *engine) syncStream(ctx context.Context, n *node) error {
	d := n.def
	if n.selected && d.FullTableVersioning && d.ReplicationKey == "" {
		n.version = e.now().UnixMilli()
		if err := e.activateVersion(n); err != nil {
			return err
		}
	}
	lower, err := e.lowerBound(n)
	if err != nil {
		return err
	}
	inc := d.Incremental
	if inc != nil && inc.ChunkDays > 0 && !n.numeric {
		if err := e.syncWindows(ctx, n, lower); err != nil {
			return err
		}
	} else {
		req, err := e.firstRequest(n, nil, lower, nil)
		if err != nil {
			return err
		}
		if err := e.walk(ctx, n, req, nil); err != nil {
			return err
		}
		if err := e.commit(n); err != nil {
			return err
		}
	}
	e.state.SetSyncing(d.Name, false)
	if n.selected {
		e.endStream(n)
		if err := e.checkpoint(n); err != nil {
			return err
		}
	}
	if n.version != 0 {
		e.state.SetVersion(d.Name, n.version)
		return e.activateVersion(n)
	}
	return nil
}

// syncWindows walks [lower, now) in windows of chunk_days, checkpointing
// the window in progress before it starts and the bookmark after it ends,
// so that a run killed in window N resumes at window N.
func (e *engine) syncWindows(ctx context.Context, n *node, lower any) error {
	d := n.def
	start, _ := lower.(time.Time)
	if s, _, ok := e.state.Window(d.Name); ok {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return &InputError{File: "state", Err: fmt.Errorf("bookmarks.%s.window.start: expected an RFC 3339 time, got %q", d.Name, s)}
		}
		start = t
	}
	if start.IsZero() {
		return &InputError{File: e.cfg.Path, Err: fmt.Errorf("stream %q: incremental.chunk_days: needs start_date in the config (or a bookmark) to know where the backfill begins", d.Name)}
	}
	for _, w := range streams.PlanWindows(start, e.now().UTC(), d.Incremental.ChunkDays) {
		e.state.SetWindow(d.Name, w.Start.UTC().Format(time.RFC3339), w.End.UTC().Format(time.RFC3339))
		if n.selected {
			if err := e.checkpoint(n); err != nil {
				return err
			}
		}
		req, err := e.firstRequest(n, nil, w.Start, &w)
		if err != nil {
			return err
		}
		if err := e.walk(ctx, n, req, nil); err != nil {
			return err
		}
		if err := e.commit(n); err != nil {
			return err
		}
	}
	e.state.SetWindow(d.Name, "", "")
	return nil
}

// lowerBound is where an incremental stream starts: bookmark − overlap, or
// start_date. nil means "from the beginning" (no filter sent).
func (e *engine) lowerBound(n *node) (any, error) {
	d := n.def
	if d.Incremental == nil || !n.selected {
		return nil, nil
	}
	bm := e.state.Value(d.Name)
	if bm == nil && (n.numeric || e.cfg.Start.IsZero()) {
		return nil, nil
	}
	lower, err := streams.LowerBound(bm, d.Incremental, e.cfg.Start)
	if err != nil {
		return nil, &InputError{File: "state", Err: fmt.Errorf("bookmarks.%s.replication_key_value: %v", d.Name, err)}
	}
	return lower, nil
}

// firstRequest builds a walk's first request: path placeholders from the
// parent record, the incremental lower bound, and a window's end.
func (e *engine) firstRequest(n *node, vars map[string]string, lower any, w *streams.Window) (streams.Request, error) {
	d := n.def
	req, err := d.FirstRequest(vars)
	if err != nil {
		return req, err
	}
	set := func(name string, value any) error {
		if d.Pagination.Type == streams.PageGraphQL {
			req, err = req.WithVariable(name, value)
			return err
		}
		req = req.WithParam(name, fmt.Sprint(value))
		return nil
	}
	if inc := d.Incremental; inc != nil && lower != nil {
		if err := set(inc.Param, streams.FormatBound(lower, inc.Format)); err != nil {
			return req, err
		}
		if w != nil {
			if err := set(inc.EndParam, streams.FormatBound(w.End, inc.Format)); err != nil {
				return req, err
			}
		}
	}
	return req, nil
}

// walk follows one stream's pages from first, handling every record.
func (e *engine) walk(ctx context.Context, n *node, first streams.Request, parentKey any) error {
	p, err := streams.NewPaginator(n.def)
	if err != nil {
		return err
	}
	err = streams.Walk(ctx, n.def, p, first, e.fetcher(n), func(resp *streams.Response) error {
		n.pages.Add(1)
		extracted := e.now()
		for _, rec := range resp.Records {
			if err := e.handle(ctx, n, rec, extracted, parentKey); err != nil {
				return err
			}
		}
		// Records of a sorted stream arrive in key order, so once a page
		// is written the largest key on it is safe to checkpoint.
		if n.def.IsSorted && n.def.Parent == nil && n.maxSeen != nil {
			if err := e.commit(n); err != nil {
				return err
			}
			return e.checkpoint(n)
		}
		return nil
	})
	if errors.Is(err, errIgnored) {
		n.ignored.Add(1)
		return nil
	}
	return err
}

// fetcher sends a page request through the client; the body is decoded
// and its records extracted inside the client's retry loop, so a body cut
// short or a 200 carrying an error is retried like a 503.
func (e *engine) fetcher(n *node) streams.Fetch {
	d := n.def
	return func(ctx context.Context, req streams.Request) (*streams.Response, error) {
		var body any
		var records []any
		resp, err := e.client.Do(ctx, client.Request{
			Stream: d.Name, Method: req.Method, URL: req.URL, Query: req.Query, Body: req.Body,
			IgnoreStatuses: d.IgnoreStatuses,
			Check: func(b []byte) error {
				v, err := streams.DecodeJSON(b)
				if err != nil {
					return client.Transient(fmt.Errorf("response body is not JSON: %w", err))
				}
				recs, err := d.Extract(v)
				var apiErr *streams.APIError
				if errors.As(err, &apiErr) {
					return client.Transient(err)
				}
				if err != nil {
					return err
				}
				body, records = v, recs
				return nil
			},
		})
		if err != nil {
			return nil, err
		}
		if resp.Ignored {
			return nil, errIgnored
		}
		return &streams.Response{URL: resp.URL, Header: resp.Header, Body: body, Records: records}, nil
	}
}

// handle takes one record through dedupe, validation, the bookmark, the
// writer and the record's children.
func (e *engine) handle(ctx context.Context, n *node, rec any, extracted time.Time, parentKey any) error {
	d := n.def
	m, ok := rec.(map[string]any)
	if !ok {
		return fmt.Errorf("stream %q: a record is not a JSON object (got %s); check records_path", d.Name, jsonType(rec))
	}
	if d.Parent != nil && d.Parent.As != "" {
		m[d.Parent.As] = parentKey
	}
	if n.seen != nil {
		k := primaryKeyString(m, d.PrimaryKey)
		if _, dup := n.seen[k]; dup {
			n.dupes.Add(1)
			return nil
		}
		n.seen[k] = struct{}{}
	}
	if n.selected {
		if err := e.emit(n, m, extracted); err != nil {
			return err
		}
	}
	// A parent that failed its schema still exists upstream: its
	// children are walked all the same.
	for _, c := range n.children {
		if err := e.walkChild(ctx, c, m); err != nil {
			return err
		}
	}
	return nil
}

// emit validates a record and writes it, moving the stream's high-water
// mark; a record sent to the dead letters is not emitted and does not
// move it.
func (e *engine) emit(n *node, m map[string]any, extracted time.Time) error {
	d := n.def
	ok, err := e.validate(n, m, extracted)
	if err != nil || !ok {
		return err
	}
	if rk := d.ReplicationKey; rk != "" {
		if v := m[rk]; v == nil {
			n.nullKeys.Add(1)
		} else if max, err := streams.MaxKey(n.maxSeen, v); err != nil {
			// A value that cannot be ordered with the others (a malformed
			// time let through by on_schema_violation: emit) is written
			// but never becomes the bookmark.
			if n.badKeys.Add(1) == 1 {
				e.log.Warn("replication key value cannot be compared; the record is emitted but does not move the bookmark",
					"stream", d.Name, "replication_key", rk, "error", e.dead.redact.text(err.Error()))
			}
		} else {
			n.maxSeen = max
		}
	}
	b, err := n.encode(m)
	if err != nil {
		return fmt.Errorf("stream %q: %w", d.Name, err)
	}
	if err := e.schema(n); err != nil {
		return err
	}
	if err := e.out.Record(d.Name, b, extracted, n.version); err != nil {
		return err
	}
	n.records.Add(1)
	return nil
}

// walkChild walks a child stream once for one parent record, its path
// placeholders filled from the parent's key.
func (e *engine) walkChild(ctx context.Context, c *node, parent map[string]any) error {
	if !c.needed() {
		return nil
	}
	p := c.def.Parent
	key := parent[p.Key]
	if key == nil {
		return fmt.Errorf("stream %q: a record of parent stream %q has no %q to fill the path", c.def.Name, p.Stream, p.Key)
	}
	text := fmt.Sprint(key)
	vars := map[string]string{p.Key: text}
	if p.As != "" {
		vars[p.As] = text
	}
	lower, err := e.lowerBound(c)
	if err != nil {
		return err
	}
	req, err := e.firstRequest(c, vars, lower, nil)
	if err != nil {
		return err
	}
	return e.walk(ctx, c, req, key)
}

// encode renders the selected properties of a record, leaving the record
// itself whole for the children that read it.
func (n *node) encode(m map[string]any) ([]byte, error) {
	if len(n.dropped) > 0 {
		kept := make(map[string]any, len(m))
		for k, v := range m {
			if !n.dropped[k] {
				kept[k] = v
			}
		}
		m = kept
	}
	var err error
	n.buf, err = appendRecord(n.buf[:0], m, &n.keys)
	return n.buf, err
}

// commit moves a stream's bookmark to the largest value emitted, if that
// is ahead of it. Callers checkpoint after the records it covers.
func (e *engine) commit(n *node) error {
	if n.maxSeen == nil {
		return nil
	}
	d := n.def
	if old := e.state.Value(d.Name); old != nil {
		c, err := streams.CompareKeys(n.maxSeen, old)
		if err != nil {
			return fmt.Errorf("stream %q: cannot compare replication key %v with the bookmark in state: %w", d.Name, n.maxSeen, err)
		}
		if c <= 0 {
			n.maxSeen = nil
			return nil
		}
	}
	e.state.SetValue(d.Name, d.ReplicationKey, n.maxSeen)
	n.maxSeen = nil
	return nil
}

// checkpoint writes STATE. Dead letters are written to their file as they
// happen (unbuffered), so none can be lost behind a bookmark that moved
// past it.
func (e *engine) checkpoint(n *node) error {
	if err := e.schema(n); err != nil {
		return err
	}
	return e.out.State(n.def.Name, e.state, n.records.Load())
}

// schema writes a stream's SCHEMA before its first message. Sending it
// lazily keeps stdout empty when a run fails before any data arrives.
func (e *engine) schema(n *node) error {
	if n.schemaSent {
		return nil
	}
	n.schemaSent = true
	return e.out.Schema(n.def.Name, n.outputSchema(e.cfg.Schemas[n.def.Name]), n.def.PrimaryKey, bookmarkKeys(n.def))
}

func (e *engine) activateVersion(n *node) error {
	if err := e.schema(n); err != nil {
		return err
	}
	return e.out.ActivateVersion(n.def.Name, n.version)
}

func (n *node) outputSchema(schema map[string]any) map[string]any {
	if len(n.dropped) == 0 {
		return schema
	}
	out := make(map[string]any, len(schema))
	for k, v := range schema {
		out[k] = v
	}
	props := map[string]any{}
	for k, v := range schema["properties"].(map[string]any) {
		if !n.dropped[k] {
			props[k] = v
		}
	}
	out["properties"] = props
	if req, ok := schema["required"].([]any); ok {
		var kept []any
		for _, r := range req {
			if s, _ := r.(string); !n.dropped[s] {
				kept = append(kept, r)
			}
		}
		out["required"] = kept
		if kept == nil {
			delete(out, "required")
		}
	}
	return out
}

func bookmarkKeys(d *streams.Definition) []string {
	if d.ReplicationKey == "" {
		return nil
	}
	return []string{d.ReplicationKey}
}

func primaryKeyString(m map[string]any, keys []string) string {
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(0)
		}
		fmt.Fprint(&b, m[k])
	}
	return b.String()
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// endStream notes a stream's record count in its bookmark and warns when a
// stream that had records last time returned none: an API that silently
// changed shape or filter looks exactly like that.
func (e *engine) endStream(n *node) {
	records := n.records.Load()
	if last, ok := e.state.LastRecords(n.def.Name); ok && last > 0 && records == 0 {
		e.log.Warn("stream returned zero records where its last run returned some; check the API, the records_path and the filter",
			"stream", n.def.Name, "last_run_records", last)
	}
	e.state.SetLastRecords(n.def.Name, records)
}

func (e *engine) logStreamEnd(n *node) {
	attrs := []any{"stream", n.def.Name, "records", n.records.Load(), "pages", n.pages.Load()}
	if d := n.dupes.Load(); d > 0 {
		attrs = append(attrs, "duplicates_dropped", d)
	}
	if c := n.nullKeys.Load(); c > 0 {
		attrs = append(attrs, "null_replication_keys", c)
	}
	if c := n.badKeys.Load(); c > 0 {
		attrs = append(attrs, "uncomparable_replication_keys", c)
	}
	if c := n.ignored.Load(); c > 0 {
		attrs = append(attrs, "ignored_requests", c)
	}
	e.log.Info("stream done", attrs...)
	e.metric("counter", "record_count", n.records.Load(), map[string]any{"endpoint": n.def.Name})
}

// metric logs a Singer metric line ("METRIC: {...}").
func (e *engine) metric(kind, name string, value any, tags map[string]any) {
	b, _ := marshal(map[string]any{"type": kind, "metric": name, "value": value, "tags": tags})
	e.log.Info("METRIC: " + string(b))
}
