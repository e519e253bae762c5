package feed

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tap-dev/tap/streams"
)

// Client is what a feed stream needs of the run's API client: its origin
// rules and credentials (Resolve), the connection it streams through, and
// its masks for what is logged.
type Client interface {
	Resolve(raw string, q url.Values) (*url.URL, error)
	Streaming() *http.Client
	Shown(u *url.URL) string
	Scrub(s string) string
}

// Run is the run's side of a feed stream: its record pipeline, its STATE
// and the walk of a REST stream's pages.
type Run interface {
	// Record takes one record, read at now, through the pipeline.
	Record(rec map[string]any, now time.Time) error
	// Checkpoint writes STATE with seq as the feed's place.
	Checkpoint(seq int64) error
	// Walk reads d's pages from first, in order, handing each record to
	// each.
	Walk(ctx context.Context, d *streams.Definition, first streams.Request, each func(rec any) error) error
	// Scan reads messages from their bytes (Sink.Scan).
	Scan(msgs [][]byte) (Scanned, bool)
}

// Stream is one feed stream as a run reads it.
type Stream struct {
	Name string
	Def  streams.Feed // its Stop as the run says (a test run's record limit)
	// Last is the last seq written: the STATE's, or Def.FirstSeq()-1.
	Last int64
	// Back is the REST stream of Def.Backfill, nil without one.
	Back *streams.Definition
	// Idle and MaxReconnects are the config's feed defaults, which the
	// stream's own idle_timeout_s and max_reconnects override; BaseDelay
	// and MaxDelay, the retry's.
	Idle                time.Duration
	MaxReconnects       int
	BaseDelay, MaxDelay time.Duration

	Client Client
	Run    Run
	Counts Counts
	Log    *slog.Logger
	Now    func() time.Time
	Rand   func() float64 // uniform in [0, 1), for the backoff's jitter
}

// URLError is a feed URL the client refuses: a fault of the config.
type URLError struct{ Err error }

func (e *URLError) Error() string { return e.Err.Error() }
func (e *URLError) Unwrap() error { return e.Err }

// Read reads the feed of s from the seq after s.Last until its stop
// rules end it, each record through s.Run, its place checkpointed.
func Read(ctx context.Context, s Stream) error {
	r, shown, err := s.runner()
	if err != nil {
		return err
	}
	s.Log.Info("reading the feed", "stream", s.Name, "protocol", s.Def.Protocol, "url", shown, "from_seq", s.Last+1)
	return r.Run(ctx, s.Last)
}

// Probe connects to the feed of s once, asking from the seq after s.Last,
// and waits for its first message at most the idle timeout: what `tap
// check` asks of a feed. heard says a message came; a connection refused
// or cut before the wait ends is the error (no reconnect). Nothing is
// written.
func Probe(ctx context.Context, s Stream) (heard bool, err error) {
	r, _, err := s.runner()
	if err != nil {
		return false, err
	}
	c, err := r.open(ctx, s.Last+1)
	if err != nil {
		return false, err
	}
	first := make(chan error, 1)
	go func() {
		for {
			b, err := c.read()
			if err != nil || b != nil {
				first <- err
				return
			}
		}
	}()
	defer func() {
		c.close()
		if !heard && err == nil {
			<-first // the close ended the read
		}
	}()
	select {
	case err := <-first:
		return err == nil, err
	case <-time.After(r.cfg.Idle):
		return false, nil // connected; a quiet feed says nothing yet
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// runner is the feed's Runner, and its URL as logs show it.
func (s Stream) runner() (*Runner, string, error) {
	f := &s.Def
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
	u, err := s.Client.Resolve(raw, q)
	if err != nil {
		return nil, "", &URLError{Err: err}
	}
	idle := s.Idle
	if f.IdleTimeoutS != nil {
		idle = time.Duration(*f.IdleTimeoutS * float64(time.Second))
	}
	maxReconnects := s.MaxReconnects
	if f.MaxReconnects != nil {
		maxReconnects = *f.MaxReconnects
	}
	r := New(Config{
		Stream: s.Name, Def: f, URL: u, HTTP: s.Client.Streaming(),
		Scrub: s.Client.Scrub,
		Idle:  idle, MaxReconnects: maxReconnects,
		BaseDelay: s.BaseDelay, MaxDelay: s.MaxDelay,
		Sink: sink{s}, Log: s.Log, Rand: s.Rand, Counts: s.Counts, Clock: runClock(s.Now),
	})
	shown := s.Client.Shown(u)
	if f.Protocol == streams.FeedWebSocket {
		shown = "ws" + strings.TrimPrefix(shown, "http") // as the user wrote it
	}
	return r, shown, nil
}

// sink is the Sink of a Stream: its Run, and the backfill stream's walk.
type sink struct{ s Stream }

func (k sink) Record(rec map[string]any, _ int64, now time.Time) error {
	return k.s.Run.Record(rec, now)
}

func (k sink) Checkpoint(seq int64) error { return k.s.Run.Checkpoint(seq) }

func (k sink) Scan(msgs [][]byte) (Scanned, bool) { return k.s.Run.Scan(msgs) }

// Backfill walks the backfill stream's pages for [from, to], in order.
func (k sink) Backfill(ctx context.Context, from, to int64, each func(rec any) error) error {
	b := k.s.Back
	plan, err := streams.NewPlan(b, streams.Bounds{FullTable: true, Now: k.s.Now()})
	if err != nil {
		return err
	}
	req, err := plan.Request(streams.Partition{}, nil)
	if err != nil {
		return err
	}
	fb := k.s.Def.Backfill
	req = req.WithParams(fb.FromParam, strconv.FormatInt(from, 10), fb.ToParam, strconv.FormatInt(to, 10))
	return k.s.Run.Walk(ctx, b, req, each)
}

// runClock is the run's clock (what records are stamped with) with the
// wall clock's timers.
type runClock func() time.Time

func (c runClock) Now() time.Time                       { return c() }
func (runClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
