package tap

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/tap/metrics"
)

// requestMetric logs Singer's http_request_duration timer for an attempt
// at debug level (one line per request would flood stderr at info), and
// counts the attempt for its stream's aggregates.
func (e *engine) requestMetric(stream, method, path string, status int, d time.Duration) {
	if n := e.byName[stream]; n != nil {
		n.requests.Add(1)
		n.byClass[metrics.StatusClass(status)].Add(1)
	}
	if !e.log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	result := "succeeded"
	if status == 0 || status >= 400 {
		result = "failed"
	}
	e.metric(slog.LevelDebug, "timer", "http_request_duration", d.Seconds(), map[string]any{
		"endpoint": stream, "http_status_code": status, "status": result,
	})
}

// progress logs, every period until stopped, a line per running stream
// and its aggregate metrics.
func (e *engine) progress(every time.Duration) (stop func()) {
	done := make(chan struct{})
	ticker := time.NewTicker(every)
	go func() {
		defer ticker.Stop()
		for {
			select {
			case <-done:
				return
			case <-ticker.C:
				waits := e.client.Stats().ByStream
				for _, n := range e.nodes {
					if !n.running.Load() {
						continue
					}
					recs := n.records.Load()
					secs := time.Since(n.started).Seconds()
					w := waits[n.def.Name]
					e.log.Info("progress", "stream", n.def.Name, "records", recs, "pages", n.pages.Load(),
						"records_per_s", fmt.Sprintf("%.0f", float64(recs)/max(secs, 0.001)),
						"requests", n.requests.Load(),
						"wait_slot_s", metrics.Seconds(w.WaitSlot), "wait_bucket_s", metrics.Seconds(w.WaitBucket))
					e.streamMetrics(n)
				}
			}
		}
	}()
	return func() { close(done) }
}

// streamMetrics logs a stream's aggregate Singer metrics.
func (e *engine) streamMetrics(n *node) {
	tags := map[string]any{"endpoint": n.def.Name}
	e.metric(e.metricsLevel(), "counter", "record_count", n.records.Load(), tags)
	e.metric(e.metricsLevel(), "counter", "http_request_count", n.requests.Load(), tags)
}

// summary logs what the run did: the client's requests and waits as one
// key=value line for machines, the drift of every stream, then a table
// per stream for a person. The line's waits are totals over the streams,
// which wait at the same time when they run in parallel; the table's are
// each stream's own.
func (e *engine) summary(elapsed time.Duration) {
	st := e.client.Stats()
	var total int64
	for _, n := range e.nodes {
		if n.selected {
			total += n.records.Load()
		}
	}
	statuses := make([]int, 0, len(st.ByStatus))
	for s := range st.ByStatus {
		statuses = append(statuses, s)
	}
	sort.Ints(statuses)
	var by strings.Builder
	for i, s := range statuses {
		if i > 0 {
			by.WriteByte(',')
		}
		fmt.Fprintf(&by, "%d:%d", s, st.ByStatus[s])
	}
	e.log.Info("run summary",
		"records", total, "seconds", fmt.Sprintf("%.1f", elapsed.Seconds()),
		"requests", st.Requests, "by_status", by.String(), "retries", st.Retries, "ignored", st.Ignored,
		"wait_slot_s", metrics.Seconds(st.WaitSlot), "wait_bucket_s", metrics.Seconds(st.WaitBucket),
		"wait_retry_after_s", metrics.Seconds(st.WaitRetryAfter), "wait_backoff_s", metrics.Seconds(st.WaitBackoff),
		"wait_breaker_s", metrics.Seconds(st.WaitBreaker),
		"dead_letters", e.dead.Count())
	var rows []metrics.Row
	for _, n := range e.nodes {
		if !n.selected {
			continue
		}
		drift := n.check.Drift().Report(e.log)
		for _, d := range drift {
			e.metric(e.metricsLevel(), "counter", "schema_drift", d.Count, map[string]any{"endpoint": n.def.Name, "kind": d.Kind, "field": d.Field})
		}
		r := metrics.Row{Stream: n.def.Name, Records: n.records.Load(), Pages: n.pages.Load(), Requests: n.requests.Load(),
			Retries: st.RetriesByStream[n.def.Name], Waits: st.ByStream[n.def.Name], DeadLetters: n.deadLetters.Load(), Drift: len(drift)}
		for i := range r.ByClass {
			r.ByClass[i] = n.byClass[i].Load()
		}
		rows = append(rows, r)
	}
	// One message: Singer's stderr writes it a line each, Airbyte one LOG.
	e.log.Info("run summary by stream:\n" + metrics.Table(rows))
	e.backfillSummary()
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
	w := e.client.Stats().ByStream[n.def.Name]
	attrs = append(attrs, "requests", n.requests.Load(),
		"wait_slot_s", metrics.Seconds(w.WaitSlot), "wait_bucket_s", metrics.Seconds(w.WaitBucket),
		"wait_retry_after_s", metrics.Seconds(w.WaitRetryAfter), "wait_backoff_s", metrics.Seconds(w.WaitBackoff))
	e.log.Info("stream done", attrs...)
	e.streamMetrics(n)
}

// metricsLevel is the level of the aggregate METRIC lines: the config's
// metrics_log_level.
func (e *engine) metricsLevel() slog.Level {
	level := slog.LevelInfo
	if e.cfg != nil {
		level, _ = settings.Level(e.cfg.MetricsLogLevel) // checked by the registry
	}
	return level
}

// metric logs a Singer metric line at level.
func (e *engine) metric(level slog.Level, kind, name string, value any, tags map[string]any) {
	metrics.Log(e.log, level, kind, name, value, tags)
}
