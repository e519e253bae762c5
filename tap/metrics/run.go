package metrics

import (
	"fmt"
	"time"

	"github.com/tap-dev/tap/client"
)

// Run is what a run counts, stream by stream, and the reporter of its
// lines. Add every stream before the run starts: the client's hook
// (Attempt) and the progress reporter read the streams while they run.
type Run struct {
	Reporter
	selected []*Stream // in the order added
	byName   map[string]*Stream
}

// NewRun returns a run with no stream, reporting through r.
func NewRun(r Reporter) *Run { return &Run{Reporter: r, byName: map[string]*Stream{}} }

// Add counts s in the run under its name. A selected stream has progress
// lines while it runs and a row in the summary; every stream's requests
// are counted.
func (r *Run) Add(s *Stream, selected bool) {
	r.byName[s.Name] = s
	if selected {
		r.selected = append(r.selected, s)
	}
}

// Attempt is the client's hook after each attempt: it counts the attempt
// for its stream and writes its timer. The method and path are not
// reported: the stream names the endpoint.
func (r *Run) Attempt(stream, method, path string, status int, d time.Duration) {
	if s := r.byName[stream]; s != nil {
		s.Request(status)
	}
	r.Request(stream, status, d)
}

// Progress writes, every period until stopped, a line per running
// selected stream with its aggregate METRIC lines. waits gives the
// client's waits by stream at each tick. Once stop returns, no progress
// line is written: none can follow the run's summary.
func (r *Run) Progress(every time.Duration, waits func() map[string]client.Waits) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	ticker := time.NewTicker(every)
	go func() {
		defer close(exited)
		defer ticker.Stop()
		var samples <-chan time.Time // the report's records, four times a second
		if r.Watch != nil {
			t := time.NewTicker(250 * time.Millisecond)
			defer t.Stop()
			samples = t.C
			r.sample()
		}
		for {
			select {
			case <-done:
				if r.Watch != nil {
					r.sample() // the run's last counts
				}
				return
			case <-samples:
				r.sample()
			case <-ticker.C:
				w := waits()
				for _, s := range r.selected {
					if s.running.Load() {
						r.progress(s, w[s.Name])
					}
				}
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}

// sample tells the report each selected stream's records so far.
func (r *Run) sample() {
	now := time.Now()
	for _, s := range r.selected {
		r.Watch.Records(now, s.Name, s.Records.Load())
	}
}

func (r *Run) progress(s *Stream, w client.Waits) {
	recs := s.Records.Load()
	secs := time.Since(s.started).Seconds()
	pages := s.Pages.Load()
	args := []any{"stream", s.Name, "records", recs, "pages", pages,
		"records_per_s", fmt.Sprintf("%.0f", float64(recs)/max(secs, 0.001)),
		"requests", s.Requests.Load(),
		"wait_slot_s", Seconds(w.WaitSlot), "wait_bucket_s", Seconds(w.WaitBucket)}
	if pages == s.seenPages {
		// No page since the last line: say what the stream waits on.
		args = append(args, "waiting_on", waitingOn(s.seenWaits, w))
	}
	s.seenPages, s.seenWaits = pages, w
	r.Log.Info("progress", args...)
	r.counters(s)
}

// waitingOn names what a stream that made no page between two progress
// lines waited on: the wait that grew most (slot, bucket, retry_after,
// backoff, breaker), else the API (a request in flight).
func waitingOn(before, now client.Waits) string {
	grew := []struct {
		name string
		d    time.Duration
	}{
		{"slot", now.WaitSlot - before.WaitSlot}, {"bucket", now.WaitBucket - before.WaitBucket},
		{"retry_after", now.WaitRetryAfter - before.WaitRetryAfter}, {"backoff", now.WaitBackoff - before.WaitBackoff},
		{"breaker", now.WaitBreaker - before.WaitBreaker},
	}
	name, most := "api", time.Duration(0)
	for _, g := range grew {
		if g.d > most {
			name, most = g.name, g.d
		}
	}
	return name
}
