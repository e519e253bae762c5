// Package metrics is what a run counts and how it reports it. Each
// stream of a run has a Stream: atomic counters its goroutine adds to
// while the progress reporter reads them. A Run holds the streams by
// name, so that the client's hook after each attempt counts it for its
// stream, and writes what they hold: Singer's METRIC lines (a JSON object
// after "METRIC: ", at the level the config chooses), a progress line per
// running stream every period, a line when a stream ends, and at the end
// of the run a key=value summary for machines and a table for a person.
// The client's waits and totals come in as client.Stats; the engine says
// when a stream starts and ends.
package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/codec"
)

// Reporter writes a run's metric and summary lines to Log. Level is the
// level of the aggregate METRIC lines (the config's metrics_log_level);
// a request's timer is always at debug, as one line per request would
// flood stderr at info.
type Reporter struct {
	Log   *slog.Logger
	Level slog.Level
	// Watch, if set, is told each selected stream's records as the run
	// goes and the summary's rows at its end: a run's report.
	Watch Watcher
}

// Watcher is what a run's report needs of its counts (tap/runreport).
type Watcher interface {
	Records(now time.Time, stream string, n int64)
	Summary(rows []Row, st client.Stats)
}

// Counter writes a counter METRIC line at the reporter's level.
func (r Reporter) Counter(name string, value any, tags map[string]any) {
	Log(r.Log, r.Level, "counter", name, value, tags)
}

// Request writes Singer's http_request_duration timer for an attempt of
// stream, at debug level. Status 0 is an attempt without a response.
func (r Reporter) Request(stream string, status int, d time.Duration) {
	if !r.Log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	result := "succeeded"
	if status == 0 || status >= 400 {
		result = "failed"
	}
	Log(r.Log, slog.LevelDebug, "timer", "http_request_duration", d.Seconds(), map[string]any{
		"endpoint": stream, "http_status_code": status, "status": result,
	})
}

// Log writes a Singer metric line ("METRIC: {...}") of kind (counter,
// timer) to log at level.
func Log(log *slog.Logger, level slog.Level, kind, name string, value any, tags map[string]any) {
	if !log.Enabled(context.Background(), level) {
		return
	}
	b, _ := codec.Marshal(map[string]any{"type": kind, "metric": name, "value": value, "tags": tags})
	log.Log(context.Background(), level, "METRIC: "+string(b))
}

// Seconds is a duration as the summaries write it: seconds, one decimal.
func Seconds(d time.Duration) string { return fmt.Sprintf("%.1f", d.Seconds()) }
