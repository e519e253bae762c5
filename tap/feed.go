package tap

import (
	"context"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/pages"
	"github.com/tap-dev/tap/tap/feed"
	"github.com/tap-dev/tap/tap/metrics"
)

// syncFeed reads a feed stream (tap/feed) from the seq after its STATE's,
// its records through the pipeline, its place checkpointed as
// bookmarks.<stream>.seq.
func (e *engine) syncFeed(ctx context.Context, n *node) error {
	d := n.def
	f := *d.Feed
	if e.policy.testRun() {
		f.Stop.MaxRecords = e.policy.recordLimit // a test run
	}
	raw := f.URL
	if raw != "" {
		// ws(s):// is http(s):// upgraded: the client's origin rules and
		// credentials apply to it as to base_url.
		raw = strings.Replace(strings.Replace(raw, "wss://", "https://", 1), "ws://", "http://", 1)
	} else {
		raw = f.Path
	}
	var q url.Values
	for k, v := range f.Params {
		if q == nil {
			q = url.Values{}
		}
		q.Set(k, v)
	}
	u, err := e.client.Resolve(raw, q)
	if err != nil {
		return &InputError{File: e.cfg.Path, Err: err}
	}
	idle := time.Duration(e.cfg.Feed.IdleTimeoutS * float64(time.Second))
	if f.IdleTimeoutS != nil {
		idle = time.Duration(*f.IdleTimeoutS * float64(time.Second))
	}
	maxReconnects := e.cfg.Feed.MaxReconnects
	if f.MaxReconnects != nil {
		maxReconnects = *f.MaxReconnects
	}
	last := f.FirstSeq() - 1
	if seq, ok := e.state.Seq(d.Name); ok && !e.policy.replay() {
		last = seq
	}
	sink := &feedSink{e: e, n: n}
	if b := f.Backfill; b != nil {
		sink.back = &node{def: e.byName[b.Stream].def, model: &model{}, counts: metrics.Stream{Name: b.Stream}}
	}
	c := &n.counts
	r := feed.New(feed.Config{
		Stream: d.Name, Def: &f, URL: u, HTTP: e.client.Streaming(),
		Scrub: e.client.Scrub,
		Idle:  idle, MaxReconnects: maxReconnects,
		BaseDelay: time.Duration(e.cfg.Retry.BaseDelayMS) * time.Millisecond,
		MaxDelay:  time.Duration(e.cfg.Retry.MaxDelayMS) * time.Millisecond,
		Sink:      sink, Log: e.log, Rand: rand.Float64,
		Counts: feed.Counts{Received: &c.Received, Dupes: &c.Dupes, Gaps: &c.FeedGaps,
			Silences: &c.FeedSilences, Reconnects: &c.FeedReconnects, Backfilled: &c.FeedBackfilled},
	})
	shown := e.client.Shown(u)
	if f.Protocol == streams.FeedWebSocket {
		shown = "ws" + strings.TrimPrefix(shown, "http") // as the user wrote it
	}
	e.log.Info("reading the feed", "stream", d.Name, "protocol", f.Protocol, "url", shown, "from_seq", last+1)
	if err := r.Run(client.WithStream(ctx, d.Name), last); err != nil {
		return err
	}
	e.state.SetSyncing(d.Name, false)
	return e.checkpoint(n)
}

// feedSink is the run's side of a feed: the record pipeline, the STATE
// and the backfill stream's pages.
type feedSink struct {
	e    *engine
	n    *node
	back *node // the backfill stream, read apart from its own sync
}

func (s *feedSink) Record(rec map[string]any, _ int64) error {
	return s.e.emit(s.n, rec, s.e.now(), streams.Partition{})
}

func (s *feedSink) Checkpoint(seq int64) error {
	s.e.state.SetSeq(s.n.def.Name, seq)
	if !s.n.selected {
		return nil
	}
	return s.e.checkpoint(s.n)
}

// Backfill walks the backfill stream's pages for [from, to], in order.
func (s *feedSink) Backfill(ctx context.Context, from, to int64, each func(rec any) error) error {
	e, b := s.e, s.back
	pager, err := e.pager(b)
	if err != nil {
		return err
	}
	plan, err := streams.NewPlan(b.def, streams.Bounds{FullTable: true, Now: e.now()})
	if err != nil {
		return err
	}
	req, err := plan.Request(streams.Partition{}, nil)
	if err != nil {
		return err
	}
	fb := s.n.def.Feed.Backfill
	req = req.WithParams(fb.FromParam, strconv.FormatInt(from, 10), fb.ToParam, strconv.FormatInt(to, 10))
	return pages.WalkInOrder(ctx, b.def, pager, req, e.fetchOf(b), func(resp *streams.Page) error {
		for _, rec := range resp.Records {
			if err := each(rec); err != nil {
				return err
			}
		}
		return nil
	})
}
