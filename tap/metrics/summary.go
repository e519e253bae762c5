package metrics

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/records"
)

// Summary writes the end of a run that took elapsed: the client's
// requests and waits (st) and the dead letters written as one key=value
// line for machines; the drift of every selected stream, which drift logs
// and returns (nil: none), with a METRIC line per finding; then a table
// with a row per selected stream for a person. The line's waits are
// totals over the streams, which wait at the same time when they run in
// parallel; the table's are each stream's own.
func (r *Run) Summary(elapsed time.Duration, st client.Stats, deadLetters int, drift func(stream string) []records.Entry) {
	var total int64
	for _, s := range r.selected {
		total += s.Records.Load()
	}
	r.Log.Info("run summary",
		"records", total, "seconds", fmt.Sprintf("%.1f", elapsed.Seconds()),
		"requests", st.Requests, "by_status", byStatus(st.ByStatus), "retries", st.Retries, "ignored", st.Ignored,
		"wait_slot_s", Seconds(st.WaitSlot), "wait_bucket_s", Seconds(st.WaitBucket),
		"wait_retry_after_s", Seconds(st.WaitRetryAfter), "wait_backoff_s", Seconds(st.WaitBackoff),
		"wait_breaker_s", Seconds(st.WaitBreaker),
		"dead_letters", deadLetters)
	rows := make([]Row, 0, len(r.selected))
	for _, s := range r.selected {
		var found []records.Entry
		if drift != nil {
			found = drift(s.Name)
		}
		for _, d := range found {
			r.Counter("schema_drift", d.Count, map[string]any{"endpoint": s.Name, "kind": d.Kind, "field": d.Field})
		}
		row := Row{Stream: s.Name, Records: s.Records.Load(), Pages: s.Pages.Load(), Requests: s.Requests.Load(),
			Retries: st.RetriesByStream[s.Name], Waits: st.ByStream[s.Name], DeadLetters: s.DeadLetters.Load(), Drift: len(found)}
		for i := range row.ByClass {
			row.ByClass[i] = s.ByClass[i].Load()
		}
		if s.Feed {
			row.Feed, row.Gaps, row.Silences = true, s.FeedGaps.Load(), s.FeedSilences.Load()
			row.Reconnects, row.Backfilled = s.FeedReconnects.Load(), s.FeedBackfilled.Load()
		}
		rows = append(rows, row)
	}
	// One message: Singer's stderr writes it a line each, Airbyte one LOG.
	r.Log.Info("run summary by stream:\n" + Table(rows))
	if r.Watch != nil {
		r.Watch.Summary(rows, st)
	}
}

// byStatus renders responses by status as "200:5,503:1", statuses in
// order.
func byStatus(counts map[int]int) string {
	statuses := make([]int, 0, len(counts))
	for s := range counts {
		statuses = append(statuses, s)
	}
	sort.Ints(statuses)
	var b strings.Builder
	for i, s := range statuses {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d:%d", s, counts[s])
	}
	return b.String()
}
