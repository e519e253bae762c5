package metrics

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/tap-dev/tap/client"
)

// Stream counts what one stream of a run did. Its goroutine adds to the
// counters while the progress reporter reads them, hence atomics; the
// zero value, with a Name, is ready to use.
type Stream struct {
	Name string

	// Received counts the records the source returned, before dedupe and
	// validation; Records, those written.
	Received, Records atomic.Int64
	Pages             atomic.Int64
	// Requests counts the stream's attempts, ByClass the same attempts by
	// status class: [0] no response, [2] 2xx … [5] 5xx.
	Requests atomic.Int64
	ByClass  [6]atomic.Int64

	Dupes    atomic.Int64 // records dropped as seen before in the run
	NullKeys atomic.Int64 // records whose replication key is null or absent
	BadKeys  atomic.Int64 // replication keys that do not compare with the others
	Ignored  atomic.Int64 // walks ended by a status the stream ignores
	// DeadLetters counts the stream's records and requests written as
	// dead letters.
	DeadLetters atomic.Int64
	// Secrets counts the record fields a configured secret was masked
	// in (Secret).
	Secrets atomic.Int64

	// Feed is set for a feed stream: its counters are in its lines.
	Feed                                                   bool
	FeedGaps, FeedSilences, FeedReconnects, FeedBackfilled atomic.Int64

	mu            sync.Mutex
	secretsWarned map[string]bool // "stream\x00field" already warned of

	running atomic.Bool
	started time.Time // set before running, read after it

	// What the last progress line saw, for the next one to tell a stream
	// that made no page since (the progress goroutine's alone).
	seenPages int64
	seenWaits client.Waits
}

// Secret counts a record field of stream (the node's own, or a mapped
// one) a secret was masked in, and reports whether it is the first time
// for that field: the WARN is written once per field, the count is in
// the stream's done line.
func (s *Stream) Secret(stream, field string) (first bool) {
	s.Secrets.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	k := stream + "\x00" + field
	if s.secretsWarned[k] {
		return false
	}
	if s.secretsWarned == nil {
		s.secretsWarned = map[string]bool{}
	}
	s.secretsWarned[k] = true
	return true
}

// Request counts an attempt that ended with status (0: no response).
func (s *Stream) Request(status int) {
	s.Requests.Add(1)
	s.ByClass[StatusClass(status)].Add(1)
}

// StatusClass is the index of a status in Stream.ByClass and Row.ByClass:
// 2 for 2xx, 0 for no response (a transport error).
func StatusClass(status int) int {
	if status < 100 || status > 599 {
		return 0
	}
	return status / 100
}

// Start marks the stream running from now: Run.Progress writes its lines
// until Stop. A stream starts once in a run.
func (s *Stream) Start(now time.Time) {
	s.started = now
	s.running.Store(true) // publishes started to the reporter's goroutine
}

// Stop marks the stream no longer running.
func (s *Stream) Stop() { s.running.Store(false) }

// StreamDone writes the line of a stream that ended, with its waits w,
// then its aggregate METRIC lines. Counts of things that did not happen
// (duplicates, keys that could not be read, ignored requests) are left
// out.
func (r Reporter) StreamDone(s *Stream, w client.Waits) {
	attrs := []any{"stream", s.Name, "records", s.Records.Load(), "pages", s.Pages.Load()}
	if d := s.Dupes.Load(); d > 0 {
		attrs = append(attrs, "duplicates_dropped", d)
	}
	if c := s.NullKeys.Load(); c > 0 {
		attrs = append(attrs, "null_replication_keys", c)
	}
	if c := s.BadKeys.Load(); c > 0 {
		attrs = append(attrs, "uncomparable_replication_keys", c)
	}
	if c := s.Ignored.Load(); c > 0 {
		attrs = append(attrs, "ignored_requests", c)
	}
	if c := s.Secrets.Load(); c > 0 {
		attrs = append(attrs, "secrets_masked", c)
	}
	if s.Feed {
		attrs = append(attrs, "feed_gaps", s.FeedGaps.Load(), "feed_silences", s.FeedSilences.Load(),
			"feed_reconnects", s.FeedReconnects.Load(), "feed_backfilled", s.FeedBackfilled.Load())
	}
	attrs = append(attrs, "requests", s.Requests.Load(),
		"wait_slot_s", Seconds(w.WaitSlot), "wait_bucket_s", Seconds(w.WaitBucket),
		"wait_retry_after_s", Seconds(w.WaitRetryAfter), "wait_backoff_s", Seconds(w.WaitBackoff))
	r.Log.Info("stream done", attrs...)
	r.counters(s)
}

// counters writes a stream's aggregate Singer metrics.
func (r Reporter) counters(s *Stream) {
	tags := map[string]any{"endpoint": s.Name}
	r.Counter("record_count", s.Records.Load(), tags)
	r.Counter("http_request_count", s.Requests.Load(), tags)
	if s.Feed {
		r.Counter("feed_gaps", s.FeedGaps.Load(), tags)
		r.Counter("feed_silences", s.FeedSilences.Load(), tags)
		r.Counter("feed_reconnects", s.FeedReconnects.Load(), tags)
		r.Counter("feed_backfilled", s.FeedBackfilled.Load(), tags)
	}
}
