package tap

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/settings"
)

// requestMetric logs Singer's http_request_duration timer for an attempt
// at debug level (one line per request would flood stderr at info), and
// counts the attempt for its stream's aggregates.
func (e *engine) requestMetric(stream, method, path string, status int, d time.Duration) {
	if n := e.byName[stream]; n != nil {
		n.requests.Add(1)
		n.byClass[statusClass(status)].Add(1)
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
						"wait_slot_s", seconds(w.WaitSlot), "wait_bucket_s", seconds(w.WaitBucket))
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

func seconds(d time.Duration) string { return fmt.Sprintf("%.1f", d.Seconds()) }

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
		"wait_slot_s", seconds(st.WaitSlot), "wait_bucket_s", seconds(st.WaitBucket),
		"wait_retry_after_s", seconds(st.WaitRetryAfter), "wait_backoff_s", seconds(st.WaitBackoff),
		"wait_breaker_s", seconds(st.WaitBreaker),
		"dead_letters", e.dead.Count())
	var rows []streamRow
	for _, n := range e.nodes {
		if !n.selected {
			continue
		}
		drift := n.check.Drift().Report(e.log)
		for _, d := range drift {
			e.metric(e.metricsLevel(), "counter", "schema_drift", d.Count, map[string]any{"endpoint": n.def.Name, "kind": d.Kind, "field": d.Field})
		}
		r := streamRow{stream: n.def.Name, records: n.records.Load(), pages: n.pages.Load(), requests: n.requests.Load(),
			retries: st.RetriesByStream[n.def.Name], waits: st.ByStream[n.def.Name], deadLetters: n.deadLetters.Load(), drift: len(drift)}
		for i := range r.byClass {
			r.byClass[i] = n.byClass[i].Load()
		}
		rows = append(rows, r)
	}
	// One message: Singer's stderr writes it a line each, Airbyte one LOG.
	e.log.Info("run summary by stream:\n" + summaryTable(rows))
	e.backfillSummary()
}

// statusClass is the index of a status in node.byClass: 2 for 2xx, 0 for
// no response (a transport error).
func statusClass(status int) int {
	if status < 100 || status > 599 {
		return 0
	}
	return status / 100
}

// streamRow is what one stream did, for the summary table.
type streamRow struct {
	stream                   string
	records, pages, requests int64
	byClass                  [6]int64 // attempts by status class, as node.byClass
	retries                  int
	waits                    client.Waits
	deadLetters              int64
	drift                    int // findings of the drift report
}

// summaryTable renders rows as a table a person reads: a column per
// count, right-aligned; the attempts by status class only for the classes
// seen; the waits in seconds; a total row when there are several streams.
func summaryTable(rows []streamRow) string {
	classes := []string{"no_response", "1xx", "2xx", "3xx", "4xx", "5xx"}
	var seen []int
	for i := range classes {
		for _, r := range rows {
			if r.byClass[i] > 0 {
				seen = append(seen, i)
				break
			}
		}
	}
	header := []string{"stream", "records", "pages", "requests"}
	for _, i := range seen {
		header = append(header, classes[i])
	}
	header = append(header, "retries", "slot_s", "bucket_s", "retry_after_s", "backoff_s", "breaker_s", "dead_letters", "drift")
	cells := [][]string{header}
	var total streamRow
	total.stream = "total"
	for _, r := range rows {
		cells = append(cells, r.cells(seen))
		total.records += r.records
		total.pages += r.pages
		total.requests += r.requests
		for i, c := range r.byClass {
			total.byClass[i] += c
		}
		total.retries += r.retries
		total.waits.WaitSlot += r.waits.WaitSlot
		total.waits.WaitBucket += r.waits.WaitBucket
		total.waits.WaitRetryAfter += r.waits.WaitRetryAfter
		total.waits.WaitBackoff += r.waits.WaitBackoff
		total.waits.WaitBreaker += r.waits.WaitBreaker
		total.deadLetters += r.deadLetters
		total.drift += r.drift
	}
	if len(rows) > 1 {
		cells = append(cells, total.cells(seen))
	}
	width := make([]int, len(header))
	for _, row := range cells {
		for i, c := range row {
			width[i] = max(width[i], len(c))
		}
	}
	var b strings.Builder
	for j, row := range cells {
		if j > 0 {
			b.WriteByte('\n')
		}
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-len(c))
			switch {
			case i == 0:
				b.WriteString(c + pad) // names left, numbers right
			default:
				b.WriteString("  " + pad + c)
			}
		}
	}
	return b.String()
}

func (r streamRow) cells(classes []int) []string {
	out := []string{r.stream, itoa(r.records), itoa(r.pages), itoa(r.requests)}
	for _, i := range classes {
		out = append(out, itoa(r.byClass[i]))
	}
	return append(out, itoa(int64(r.retries)),
		seconds(r.waits.WaitSlot), seconds(r.waits.WaitBucket), seconds(r.waits.WaitRetryAfter),
		seconds(r.waits.WaitBackoff), seconds(r.waits.WaitBreaker),
		itoa(r.deadLetters), itoa(int64(r.drift)))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

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
		"wait_slot_s", seconds(w.WaitSlot), "wait_bucket_s", seconds(w.WaitBucket),
		"wait_retry_after_s", seconds(w.WaitRetryAfter), "wait_backoff_s", seconds(w.WaitBackoff))
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

// metric logs a Singer metric line ("METRIC: {...}") at level.
func (e *engine) metric(level slog.Level, kind, name string, value any, tags map[string]any) {
	if !e.log.Enabled(context.Background(), level) {
		return
	}
	b, _ := codec.Marshal(map[string]any{"type": kind, "metric": name, "value": value, "tags": tags})
	e.log.Log(context.Background(), level, "METRIC: "+string(b))
}
