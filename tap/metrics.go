package tap

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/settings"
)

// requestMetric logs Singer's http_request_duration timer for an attempt.
func (e *engine) requestMetric(stream, method, path string, status int, d time.Duration) {
	result := "succeeded"
	if status == 0 || status >= 400 {
		result = "failed"
	}
	e.metric("timer", "http_request_duration", d.Seconds(), map[string]any{
		"endpoint": stream, "http_status_code": status, "status": result,
	})
}

// progress logs a line per running stream every period until stopped.
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
				wait := e.client.Stats().WaitBucket
				for _, n := range e.nodes {
					if !n.running.Load() {
						continue
					}
					recs := n.records.Load()
					secs := time.Since(n.started).Seconds()
					e.log.Info("progress", "stream", n.def.Name, "records", recs, "pages", n.pages.Load(),
						"records_per_s", fmt.Sprintf("%.0f", float64(recs)/max(secs, 0.001)),
						"quota_wait_s", fmt.Sprintf("%.1f", wait.Seconds()))
					e.metric("counter", "record_count", recs, map[string]any{"endpoint": n.def.Name})
				}
			}
		}
	}()
	return func() { close(done) }
}

// summary logs what the run did: per stream, the client's requests and
// waits, and the drift of every stream.
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
		"wait_bucket_s", fmt.Sprintf("%.1f", st.WaitBucket.Seconds()),
		"wait_retry_after_s", fmt.Sprintf("%.1f", st.WaitRetryAfter.Seconds()),
		"wait_backoff_s", fmt.Sprintf("%.1f", st.WaitBackoff.Seconds()),
		"dead_letters", e.dead.Count())
	for _, n := range e.nodes {
		if !n.selected {
			continue
		}
		for _, d := range n.check.Drift().Report(e.log) {
			e.metric("counter", "schema_drift", d.Count, map[string]any{"endpoint": n.def.Name, "kind": d.Kind, "field": d.Field})
		}
	}
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

// metric logs a Singer metric line ("METRIC: {...}") at the config's
// metrics_log_level.
func (e *engine) metric(kind, name string, value any, tags map[string]any) {
	level := slog.LevelInfo
	if e.cfg != nil {
		level, _ = settings.Level(e.cfg.MetricsLogLevel) // checked by the registry
	}
	if !e.log.Enabled(context.Background(), level) {
		return
	}
	b, _ := codec.Marshal(map[string]any{"type": kind, "metric": name, "value": value, "tags": tags})
	e.log.Log(context.Background(), level, "METRIC: "+string(b))
}
