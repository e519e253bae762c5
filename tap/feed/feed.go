// Package feed reads a stream's message feed — a websocket, server-sent
// events or one long response of JSON lines — with the guarantees of a
// page walk: every record written once and in sequence order, a gap
// never written past, a silent connection found and reconnected from the
// last good seq, and a batch run that ends by its rules with its place
// (the last seq written) checkpointed. The run gives it a Sink (the
// record pipeline and the STATE) and the client's streaming connection;
// the feed knows its protocol and its sequence, not the run.
package feed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams"
)

// Sink is where a feed's records go: the run's record pipeline and its
// STATE.
type Sink interface {
	// Record takes one record, numbered seq and read at now, through the
	// pipeline.
	Record(rec map[string]any, seq int64, now time.Time) error
	// Checkpoint says every record up to seq is written.
	Checkpoint(seq int64) error
	// Backfill reads the records of seqs from..to (both included) from
	// the REST stream of feed.backfill, handing each to each.
	Backfill(ctx context.Context, from, to int64, each func(rec any) error) error
	// Scan reads messages from their bytes, when the run writes the
	// stream's records so (tap/splice); ok is false when they are to be
	// decoded (the tree path).
	Scan(msgs [][]byte) (s Scanned, ok bool)
}

// Scanned are messages the run read from their bytes: what the feed
// reads of them, and the records written from their bytes, without a
// tree.
type Scanned interface {
	// Spliced reports whether message i was read so; if not, it is
	// decoded.
	Spliced(i int) bool
	// Field is the JSON text of spliced message i's top-level property
	// name.
	Field(i int, name string) (text string, ok bool)
	// Write writes spliced message i as a record, read at now.
	Write(i int, now time.Time) error
	// Release ends the use of the messages' bytes, and writes what their
	// records left gathered.
	Release() error
}

// Clock is the feed's time: the tests give one that needs no sleep.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type wallClock struct{}

func (wallClock) Now() time.Time                         { return time.Now() }
func (wallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Counts are the counters a feed adds to, the run's.
type Counts struct {
	Received, Records, Dupes   *atomic.Int64
	Gaps, Silences, Reconnects *atomic.Int64
	Backfilled                 *atomic.Int64
}

// Config is a feed compiled for a run.
type Config struct {
	Stream string
	Def    *streams.Feed
	// URL is the feed's absolute http(s) URL (a websocket's too), with
	// the stream's params; the resume parameter is added per connection.
	URL *url.URL
	// HTTP sends the connections: the run's client, streaming.
	HTTP *http.Client
	// Scrub masks the configured secrets in what is logged.
	Scrub func(string) string

	Idle                time.Duration // no message for this long: a dead connection
	MaxReconnects       int
	BaseDelay, MaxDelay time.Duration // of the reconnects' backoff
	// CheckpointEvery bounds the time between two checkpoints while
	// records arrive [1s]; Batch, the records [1000].
	CheckpointEvery time.Duration
	Batch           int64

	Sink   Sink
	Counts Counts
	Log    *slog.Logger
	Clock  Clock          // [the wall clock]
	Rand   func() float64 // uniform in [0, 1), for the backoff's jitter
}

// Runner reads one feed. It is used by one goroutine.
type Runner struct {
	cfg   Config
	types map[string]kind
	seq   sequencer
	watch *watch

	pending int64     // records written since the last checkpoint
	lastCP  time.Time // of the last checkpoint
	written int64     // records written in this run
}

type kind int

const (
	other kind = iota
	record
	heartbeat
	end
)

// New checks nothing (the definition was checked at load) and compiles
// the message types.
func New(cfg Config) *Runner {
	if cfg.Clock == nil {
		cfg.Clock = wallClock{}
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 1000
	}
	if cfg.CheckpointEvery <= 0 {
		cfg.CheckpointEvery = time.Second
	}
	r := &Runner{cfg: cfg, types: map[string]kind{}}
	for _, t := range cfg.Def.RecordTypes {
		r.types[t] = record
	}
	for _, t := range cfg.Def.HeartbeatTypes {
		r.types[t] = heartbeat
	}
	for _, t := range cfg.Def.EndTypes {
		r.types[t] = end
	}
	return r
}

// Error is a feed that failed: the stream, and why. Its place is the
// last seq written, checkpointed.
type Error struct {
	Stream string
	Err    error
}

func (e *Error) Error() string {
	named := fmt.Sprintf("stream %q: ", e.Stream)
	if msg := e.Err.Error(); strings.HasPrefix(msg, named) {
		return msg // the record pipeline's own error names the stream
	}
	return named + "feed: " + e.Err.Error()
}
func (e *Error) Unwrap() error { return e.Err }

// outcome is how one connection ended.
type outcome int

const (
	reconnect outcome = iota // lost, silent or a gap: connect again from the next seq
	finished                 // a stop rule or an end message: the run's batch is done
)

// Run reads the feed from the seq after last until a stop rule or an end
// message (nil), ctx's end (its error), or a failure (*Error). Every
// return checkpoints the last seq written first.
func (r *Runner) Run(ctx context.Context, last int64) error {
	c := r.cfg
	r.seq = sequencer{last: last}
	now := c.Clock.Now()
	r.watch = newWatch(c.Idle, seconds(c.Def.Stop.AfterS), seconds(c.Def.Stop.IdleS), now)
	r.lastCP = now
	reconnects, failures := 0, 0
	for {
		out, heard, err := r.connection(ctx)
		if err == nil && out == finished {
			return r.checkpoint()
		}
		if ctx.Err() != nil {
			return errors.Join(r.checkpoint(), ctx.Err())
		}
		if cerr := r.checkpoint(); cerr != nil {
			return cerr
		}
		if err != nil && (final(err) || errors.As(err, new(*Error))) {
			return r.fail(err)
		}
		if heard {
			failures = 0
		} else {
			failures++
		}
		if reconnects >= c.MaxReconnects {
			why := "the connection ended"
			if err != nil {
				why = c.Scrub(err.Error())
			}
			return r.fail(fmt.Errorf("gave up after %d reconnects (feed.max_reconnects); STATE holds seq %d; last: %s", reconnects, r.seq.last, why))
		}
		reconnects++
		c.Counts.Reconnects.Add(1)
		wait := backoff(failures, c.BaseDelay, c.MaxDelay, r.rand())
		c.Log.Info("reconnecting to the feed", "stream", c.Stream, "from_seq", r.seq.next(), "reconnect", reconnects, "wait_s", fmt.Sprintf("%.3f", wait.Seconds()))
		select {
		case <-ctx.Done():
			return errors.Join(r.checkpoint(), ctx.Err())
		case <-c.Clock.After(wait):
		}
	}
}

func (r *Runner) rand() float64 {
	if r.cfg.Rand == nil {
		return 0.5
	}
	return r.cfg.Rand()
}

func (r *Runner) fail(err error) error {
	var fe *Error
	if errors.As(err, &fe) {
		return err
	}
	return &Error{Stream: r.cfg.Stream, Err: err}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// frame is what a connection's reader hands on: the messages read at
// once (a nil one only kept the connection alive), copied into buf, and
// the error that ended the connection after them. Frames are reused: the
// run gives one back once it has handled its messages.
type frame struct {
	msgs [][]byte
	buf  []byte
	ends []int // of each message in buf; -1: a keep-alive
	size int64 // their share of maxReadAhead
	err  error
}

// read reads messages from conn into f until one would wait, or f is
// full: maxBatch messages or, past its first, maxBatchBytes. A read's
// bytes are valid until the next read: they are copied into f.buf.
func (f *frame) read(conn conn) {
	f.msgs, f.buf, f.ends, f.err = f.msgs[:0], f.buf[:0], f.ends[:0], nil
	for len(f.ends) < maxBatch && len(f.buf) < maxBatchBytes {
		b, err := conn.read()
		if err != nil {
			f.err = err
			break
		}
		if b == nil {
			f.ends = append(f.ends, -1)
		} else {
			f.buf = append(f.buf, b...)
			f.ends = append(f.ends, len(f.buf))
		}
		if !conn.ready() {
			break
		}
	}
	from := 0
	for _, end := range f.ends {
		if end < 0 {
			f.msgs = append(f.msgs, nil)
			continue
		}
		f.msgs = append(f.msgs, f.buf[from:end:end])
		from = end
	}
	f.size = min(int64(len(f.buf)), maxReadAhead)
}

// A frame holds at most maxBatch messages and, past its first,
// maxBatchBytes: a feed delivering faster than the run handles it is
// read a batch at a time, one hand-off between the goroutines and one
// clock reading for all of it, as a page is.
const (
	maxBatch      = 1024
	maxBatchBytes = 256 << 10
	framesAhead   = 4
)

// maxReadAhead bounds the bytes of the messages read from a connection
// and not yet handled: two messages of the largest size, so that reading
// never waits on a message's own size.
const maxReadAhead = 2 * maxMessage

// connection reads one connection from the next seq until it ends;
// heard says it delivered a message.
func (r *Runner) connection(ctx context.Context) (out outcome, heard bool, err error) {
	c := r.cfg
	from := r.seq.next()
	conn, err := r.open(ctx, from)
	if err != nil {
		c.Log.Warn("cannot connect to the feed", "stream", c.Stream, "from_seq", from, "error", c.Scrub(err.Error()))
		return reconnect, false, err
	}
	// The messages read and not yet handled are bounded in bytes, not in
	// count: with a stalled stdout, 256 messages of 16 MiB would be 4 GiB.
	// A few frames ahead keep the reader busy while the run writes; the
	// frames handled come back (free) for the next reads.
	frames := make(chan *frame, framesAhead)
	free := make(chan *frame, framesAhead+2)
	ahead := semaphore.NewWeighted(maxReadAhead)
	rctx, stop := context.WithCancel(ctx)
	defer func() {
		stop()
		conn.close()
	}()
	go func() {
		for {
			var f *frame
			select {
			case f = <-free:
			default:
				f = new(frame)
			}
			f.read(conn)
			if ahead.Acquire(rctx, f.size) != nil {
				return
			}
			select {
			case frames <- f:
			case <-rctx.Done():
				return
			}
			if f.err != nil {
				return
			}
		}
	}()
	r.watch.connected(c.Clock.Now())
	at, _ := r.watch.next()
	timer := r.arm(at)
	for {
		select {
		case <-ctx.Done():
			return reconnect, heard, ctx.Err()
		case <-timer:
			now := c.Clock.Now()
			switch r.watch.due(now) {
			case silent:
				c.Counts.Silences.Add(1)
				c.Log.Warn("the feed went silent: no message, not even a heartbeat, within the idle timeout; reconnecting", "stream", c.Stream,
					"last_seq", r.seq.last, "idle_timeout_s", c.Idle.Seconds())
				return reconnect, heard, errors.New("the feed went silent")
			case stopAfter:
				c.Log.Info("the feed's run ends: stop.after_s", "stream", c.Stream, "last_seq", r.seq.last)
				return finished, heard, nil
			case stopIdle:
				c.Log.Info("the feed's run ends: no record within stop.idle_s", "stream", c.Stream, "last_seq", r.seq.last)
				return finished, heard, nil
			}
			if r.pending > 0 && now.Sub(r.lastCP) >= c.CheckpointEvery {
				if err := r.checkpoint(); err != nil {
					return reconnect, heard, r.fail(err)
				}
			}
			at, _ := r.watch.next()
			timer = r.arm(at)
		case f := <-frames:
			ahead.Release(f.size) // f's messages are handled before the next frame is taken
			if len(f.msgs) > 0 {
				heard = true
				now := c.Clock.Now()
				r.watch.message(now)
				if out, done, err := r.frame(ctx, f.msgs, now); err != nil || done {
					return out, heard, err
				}
			}
			ferr := f.err
			if cap(f.buf) <= 2*maxBatchBytes { // not one kept for a message of 16 MiB
				select {
				case free <- f: // handled: its bytes are no one's
				default:
				}
			}
			if ferr != nil {
				c.Log.Warn("the feed's connection ended; reconnecting", "stream", c.Stream, "last_seq", r.seq.last, "error", c.Scrub(ferr.Error()))
				return reconnect, heard, ferr
			}
		}
	}
}

// frame handles the messages of a frame in order (a nil one only kept
// the connection alive), read from their bytes when the run can.
func (r *Runner) frame(ctx context.Context, msgs [][]byte, now time.Time) (out outcome, done bool, err error) {
	sc, ok := r.cfg.Sink.Scan(msgs)
	if ok {
		defer func() {
			if rerr := sc.Release(); err == nil && rerr != nil {
				out, done, err = reconnect, true, r.fail(rerr)
			}
		}()
	} else {
		sc = nil
	}
	for i, b := range msgs {
		if b == nil {
			continue
		}
		if out, done, err := r.message(ctx, b, sc, i, now); err != nil || done {
			return out, done, err
		}
	}
	return reconnect, false, nil
}

// arm is a timer for at; re-armed only when it fires, not per message.
func (r *Runner) arm(at time.Time) <-chan time.Time {
	if at.IsZero() {
		return nil
	}
	d := at.Sub(r.cfg.Clock.Now())
	if d > r.cfg.CheckpointEvery {
		d = r.cfg.CheckpointEvery // checkpoints of a slow feed come on time
	}
	return r.cfg.Clock.After(d)
}

// A message is one message of the feed as read: its kind and, for a
// record, its seq and the record, as its tree or spliced (message i of
// scanned).
type message struct {
	kind    kind
	seq     int64
	tree    map[string]any
	scanned Scanned
	i       int
}

// read reads message i of a frame, b: from its bytes when the run
// scanned it, else decoded. A scanned message whose type or seq is not
// plain text is decoded too, so that both paths judge it alike.
func (r *Runner) read(b []byte, sc Scanned, i int) (message, error) {
	if sc != nil && sc.Spliced(i) {
		if m, ok := r.scanned(sc, i); ok {
			return m, nil
		}
	}
	return r.decoded(b)
}

// scanned reads spliced message i's type and seq from their text.
func (r *Runner) scanned(sc Scanned, i int) (message, bool) {
	d := r.cfg.Def
	m := message{kind: record, scanned: sc, i: i}
	if d.TypePath != "" {
		text, ok := sc.Field(i, d.TypePath)
		if !ok {
			return m, false
		}
		t, number, ok := codec.Scalar(text)
		if !ok || number {
			return m, false // the tree path names what it is
		}
		m.kind = r.kindOf(t)
	}
	if m.kind != record {
		return m, true
	}
	text, ok := sc.Field(i, d.SeqPath)
	if !ok {
		return m, false
	}
	seq, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return m, false // not an integer: the tree path's error
	}
	m.seq = seq
	return m, true
}

// decoded reads a message from its tree.
func (r *Runner) decoded(b []byte) (message, error) {
	d := r.cfg.Def
	v, err := codec.DecodeRecords(b)
	if err != nil {
		return message{}, fmt.Errorf("a message is not JSON: %w", err)
	}
	m := message{kind: record}
	if d.TypePath != "" {
		t, _ := streams.Lookup(v, d.TypePath)
		m.kind = r.kindOf(fmt.Sprint(t))
	}
	if m.kind != record {
		return m, nil
	}
	tree, ok := v.(map[string]any)
	if !ok {
		return m, fmt.Errorf("a record message is not a JSON object (got a JSON %s)", codec.TypeName(v))
	}
	if m.seq, err = seqOf(tree, d.SeqPath); err != nil {
		return m, err
	}
	m.tree = tree
	return m, nil
}

// kindOf is the kind of a message of type t.
func (r *Runner) kindOf(t string) kind {
	if k, ok := r.types[t]; ok {
		return k
	}
	if len(r.cfg.Def.RecordTypes) > 0 {
		return other
	}
	return record
}

// message handles one message; done says the connection is to end, with
// out.
func (r *Runner) message(ctx context.Context, b []byte, sc Scanned, i int, now time.Time) (out outcome, done bool, err error) {
	c := r.cfg
	d := c.Def
	m, err := r.read(b, sc, i)
	if err != nil {
		if m.kind == record { // a record message, malformed
			c.Counts.Received.Add(1)
		}
		return reconnect, true, r.fail(err)
	}
	switch m.kind {
	case heartbeat:
		if r.pending > 0 {
			return reconnect, false, r.checkpoint() // the feed is caught up
		}
		return reconnect, false, nil
	case end:
		c.Log.Info("the feed's run ends: an end message", "stream", c.Stream, "last_seq", r.seq.last)
		return finished, true, nil
	case other:
		return reconnect, false, nil
	}
	c.Counts.Received.Add(1)
	seq := m.seq
	switch r.seq.judge(seq) {
	case dupe:
		c.Counts.Dupes.Add(1)
		return reconnect, false, nil
	case gap:
		c.Counts.Gaps.Add(1)
		c.Log.Warn("a gap in the feed: seqs are missing", "stream", c.Stream, "expected", r.seq.next(), "got", seq, "on_gap", d.GapRule())
		switch d.GapRule() {
		case streams.GapFail:
			return reconnect, true, r.fail(fmt.Errorf("a gap: expected seq %d, got %d (feed.on_gap fail); STATE holds seq %d", r.seq.next(), seq, r.seq.last))
		case streams.GapReconnect:
			return reconnect, true, nil
		}
		if err := r.backfill(ctx, seq-1); err != nil {
			return reconnect, true, err
		}
		if r.seq.judge(seq) != write {
			c.Log.Warn("the backfill left seqs missing; reconnecting from the first", "stream", c.Stream, "from_seq", r.seq.next())
			return reconnect, true, nil
		}
	}
	if err := r.write(m, now); err != nil {
		return reconnect, true, err
	}
	if max := d.Stop.MaxRecords; max > 0 && r.written >= max {
		c.Log.Info("the feed's run ends: stop.max_records", "stream", c.Stream, "last_seq", r.seq.last)
		return finished, true, nil
	}
	if r.pending >= c.Batch || now.Sub(r.lastCP) >= c.CheckpointEvery {
		if err := r.checkpoint(); err != nil {
			return reconnect, true, err
		}
	}
	return reconnect, false, nil
}

// write writes record message m.
func (r *Runner) write(m message, now time.Time) error {
	var err error
	if m.scanned != nil {
		err = m.scanned.Write(m.i, now)
	} else {
		err = r.cfg.Sink.Record(m.tree, m.seq, now)
	}
	if err != nil {
		return r.fail(err)
	}
	r.seq.wrote(m.seq)
	r.pending++
	r.written++
	r.watch.record(now)
	return nil
}

// backfill reads the seqs from the next one to to from the REST stream
// and writes those it got in order, up to the first still missing.
func (r *Runner) backfill(ctx context.Context, to int64) error {
	c := r.cfg
	from := r.seq.next()
	got := map[int64]map[string]any{}
	err := c.Sink.Backfill(ctx, from, to, func(rec any) error {
		m, ok := rec.(map[string]any)
		if !ok {
			return fmt.Errorf("a record of backfill stream %q is not a JSON object", c.Def.Backfill.Stream)
		}
		seq, err := seqOf(m, c.Def.SeqPath)
		if err != nil {
			return fmt.Errorf("backfill stream %q: %w", c.Def.Backfill.Stream, err)
		}
		if seq >= from && seq <= to {
			got[seq] = m
		}
		return nil
	})
	if err != nil {
		return r.fail(fmt.Errorf("backfilling seqs %d to %d: %w", from, to, err))
	}
	now := c.Clock.Now()
	for s := from; s <= to; s++ {
		m, ok := got[s]
		if !ok {
			break
		}
		if err := r.write(message{kind: record, seq: s, tree: m}, now); err != nil {
			return err
		}
		c.Counts.Backfilled.Add(1)
	}
	c.Log.Info("backfilled a gap of the feed", "stream", c.Stream, "from", from, "to", to, "records", r.seq.last-from+1)
	return nil
}

func (r *Runner) checkpoint() error {
	r.lastCP = r.cfg.Clock.Now()
	if r.pending == 0 {
		return nil
	}
	r.pending = 0
	return r.cfg.Sink.Checkpoint(r.seq.last)
}

// seqOf reads a message's sequence number: an integer at path.
func seqOf(m map[string]any, path string) (int64, error) {
	v, ok := streams.Lookup(m, path)
	if n, isNum := v.(json.Number); ok && isNum {
		if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
			return i, nil
		}
	}
	return 0, fmt.Errorf("a record message has no integer at seq_path %q (got %s)", path, codec.TypeName(v))
}

// open connects asking for the feed from seq from.
func (r *Runner) open(ctx context.Context, from int64) (conn, error) {
	c := r.cfg
	u := *c.URL
	header := http.Header{}
	if p := c.Def.ResumeParam; p != "" {
		q := u.Query()
		q.Set(p, strconv.FormatInt(from, 10))
		u.RawQuery = q.Encode()
	}
	switch c.Def.Protocol {
	case streams.FeedWebSocket:
		sub, err := subscribe(c.Def.Subscribe, from)
		if err != nil {
			return nil, err
		}
		return openWS(ctx, c.HTTP, u.String(), header, sub, c.Idle, c.Scrub)
	case streams.FeedSSE:
		header.Set("Accept", "text/event-stream")
		header.Set("Cache-Control", "no-cache")
		if from > 1 {
			header.Set("Last-Event-ID", strconv.FormatInt(from-1, 10))
		}
	default:
		header.Set("Accept", "application/x-ndjson")
	}
	return openHTTP(ctx, c.HTTP, u.String(), header, c.Def.Protocol, c.Scrub)
}

// subscribe is the websocket's subscribe message with {from_seq} filled:
// a string that is only the placeholder becomes the number.
func subscribe(raw json.RawMessage, from int64) ([]byte, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	v, err := codec.Decode(raw)
	if err != nil {
		return nil, err
	}
	n := strconv.FormatInt(from, 10)
	var fill func(any) any
	fill = func(v any) any {
		switch x := v.(type) {
		case string:
			if x == streams.FromSeqVar {
				return json.Number(n)
			}
			return strings.ReplaceAll(x, streams.FromSeqVar, n)
		case map[string]any:
			for k, e := range x {
				x[k] = fill(e)
			}
		case []any:
			for i, e := range x {
				x[i] = fill(e)
			}
		}
		return v
	}
	return json.Marshal(fill(v))
}
