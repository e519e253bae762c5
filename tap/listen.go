package tap

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/pages"
	"github.com/tap-dev/tap/tap/feed"
	"github.com/tap-dev/tap/tap/splice"
)

// listen reads a feed stream (tap/feed) from the seq after its STATE's,
// its records through the pipeline, its place checkpointed as
// bookmarks.<stream>.seq.
func (n *node) listen(ctx context.Context) error {
	e := n.e
	d := n.def
	s := n.model.feedStream()
	if e.policy.testRun() {
		s.Def.Stop.MaxRecords = e.policy.recordLimit
	}
	if seq, ok := e.state.Seq(d.Name); ok && !e.policy.replay() {
		s.Last = seq
	}
	if b := d.Feed.Backfill; b != nil {
		s.Back = e.byName[b.Stream].def
	}
	s.Run = &listener{e: e, n: n, spliced: n.model.splicer()}
	c := &n.counts
	s.Counts = feed.Counts{Received: &c.Received, Dupes: &c.Dupes, Gaps: &c.FeedGaps,
		Silences: &c.FeedSilences, Reconnects: &c.FeedReconnects, Backfilled: &c.FeedBackfilled}
	err := feed.Read(client.WithStream(ctx, d.Name), s)
	if ue := (*feed.URLError)(nil); errors.As(err, &ue) {
		return &InputError{File: e.cfg.Path, Err: ue.Err}
	}
	if err != nil {
		return err
	}
	e.state.SetSyncing(d.Name, false)
	return n.out.checkpoint()
}

// feedStream is n's feed as the config sets it, from its first seq.
func (m *model) feedStream() feed.Stream {
	n := m.n
	e := n.e
	d := n.def
	return feed.Stream{Name: d.Name, Def: *d.Feed, Last: d.Feed.FirstSeq() - 1,
		Idle: time.Duration(e.cfg.Feed.IdleTimeoutS * float64(time.Second)), MaxReconnects: e.cfg.Feed.MaxReconnects,
		BaseDelay: time.Duration(e.cfg.Retry.BaseDelayMS) * time.Millisecond,
		MaxDelay:  time.Duration(e.cfg.Retry.MaxDelayMS) * time.Millisecond,
		Client:    e.client, Run: &listener{e: e, n: n}, Log: e.log, Now: e.now, Rand: rand.Float64}
}

// probeFeed connects to n's feed once, as `tap check` asks (feed.Probe):
// heard says its first message came within the idle timeout.
func (n *node) probeFeed(ctx context.Context) (heard bool, err error) {
	e := n.e
	heard, err = feed.Probe(client.WithStream(ctx, n.def.Name), n.model.feedStream())
	if ue := (*feed.URLError)(nil); errors.As(err, &ue) {
		return false, &InputError{File: e.cfg.Path, Err: ue.Err}
	}
	if err != nil {
		return false, fmt.Errorf("stream %q: feed: %w", n.def.Name, err)
	}
	return heard, nil
}

// listener is the run's side of a feed (feed.Run).
type listener struct {
	e    *engine
	n    *node
	back *node // the backfill stream, read apart from its own sync
	// spliced reads the messages from their bytes, as a page's records
	// are read (tap/splice); nil: every message is decoded.
	spliced *splice.Reader
	lines   messageLines // the frame being handled, reused
	msgs    scanned
}

// Scan reads the messages of a frame as a page of lines, a record a
// line: a record the stream's schema is sure of is written from its
// bytes.
func (l *listener) Scan(msgs [][]byte) (feed.Scanned, bool) {
	if l.spliced == nil {
		return nil, false
	}
	p := l.spliced.Take()
	l.lines = msgs
	if !p.ScanLines(&l.lines) {
		p.Release() // a line is not one JSON text: each is decoded
		return nil, false
	}
	l.msgs = scanned{l: l, p: p}
	if n := l.n; len(n.children) == 0 && len(n.out.selectedOutputs()) == 1 {
		// The frame's RECORD lines go out together, as a page's do.
		n.out.writer.StartPage(l.e.out)
		l.msgs.gathered = true
	}
	return &l.msgs, true
}

// scanned are a frame's messages read from their bytes (feed.Scanned).
type scanned struct {
	l        *listener
	p        *splice.Page
	gathered bool // the node's page writer gathers the frame's lines
}

// Spliced: the walker is sure of the record (else it is the tree path's,
// decoded again by the feed: a heartbeat, an end, a record to check).
func (s *scanned) Spliced(i int) bool {
	_, tree := s.p.Records()[i].(map[string]any)
	return !tree
}

func (s *scanned) Field(i int, name string) (string, bool) { return s.p.Field(i, name) }

func (s *scanned) Write(i int, now time.Time) error {
	n := s.l.n
	raw, ok, err := s.p.Raw(i)
	if err != nil {
		return err
	}
	if !ok { // the stream's maps are not sure of it: its tree
		return s.l.Record(s.p.Records()[i].(map[string]any), now)
	}
	return n.out.emitSpliced(s.p, i, raw, now, streams.Partition{})
}

func (s *scanned) Release() error {
	var err error
	if s.gathered {
		s.gathered = false
		err = s.l.n.out.writer.EndPage()
	}
	s.p.Release()
	return err
}

// messageLines are a frame's messages as a page of lines (splice.Lines).
type messageLines [][]byte

func (l *messageLines) Len() int             { return len(*l) }
func (l *messageLines) Line(i int) []byte    { return (*l)[i] }
func (l *messageLines) Tree(int) (any, bool) { return nil, false }

func (l *listener) Record(rec map[string]any, now time.Time) error {
	return l.n.out.write(rec, now, streams.Partition{}, fromWalk)
}

func (l *listener) Checkpoint(seq int64) error {
	if l.msgs.gathered {
		if err := l.n.out.writer.Flush(); err != nil {
			return err // the records before it go out before its STATE
		}
	}
	l.e.state.SetSeq(l.n.def.Name, seq)
	if !l.n.model.selected {
		return nil
	}
	return l.n.out.checkpoint()
}

func (l *listener) Walk(ctx context.Context, d *streams.Definition, first streams.Request, each func(rec any) error) error {
	if l.back == nil {
		l.back = l.e.looseNode(d)
	}
	pager, err := l.back.model.paginator()
	if err != nil {
		return err
	}
	return pages.WalkInOrder(ctx, d, pager, first, l.back.model.fetchOf(), func(resp *streams.Page) error {
		for _, rec := range resp.Records {
			if err := each(rec); err != nil {
				return err
			}
		}
		return nil
	})
}
