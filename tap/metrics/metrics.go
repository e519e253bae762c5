// Package metrics is how a run reports what it did: Singer's METRIC
// lines (a JSON object after "METRIC: ", at a level the config chooses)
// and the summary table a person reads at the end of a run. The engine
// counts; this package only formats and writes what it is given.
package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/codec"
)

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

// StatusClass is the index of a status in Row.ByClass: 2 for 2xx, 0 for
// no response (a transport error).
func StatusClass(status int) int {
	if status < 100 || status > 599 {
		return 0
	}
	return status / 100
}

// Row is what one stream did, for the summary table.
type Row struct {
	Stream                   string
	Records, Pages, Requests int64
	ByClass                  [6]int64 // attempts by status class (StatusClass)
	Retries                  int
	Waits                    client.Waits
	DeadLetters              int64
	Drift                    int // findings of the drift report
}

// Table renders rows as a table a person reads: a column per
// count, right-aligned; the attempts by status class only for the classes
// seen; the waits in seconds; a total row when there are several streams.
func Table(rows []Row) string {
	classes := []string{"no_response", "1xx", "2xx", "3xx", "4xx", "5xx"}
	var seen []int
	for i := range classes {
		for _, r := range rows {
			if r.ByClass[i] > 0 {
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
	var total Row
	total.Stream = "total"
	for _, r := range rows {
		cells = append(cells, r.cells(seen))
		total.Records += r.Records
		total.Pages += r.Pages
		total.Requests += r.Requests
		for i, c := range r.ByClass {
			total.ByClass[i] += c
		}
		total.Retries += r.Retries
		total.Waits.WaitSlot += r.Waits.WaitSlot
		total.Waits.WaitBucket += r.Waits.WaitBucket
		total.Waits.WaitRetryAfter += r.Waits.WaitRetryAfter
		total.Waits.WaitBackoff += r.Waits.WaitBackoff
		total.Waits.WaitBreaker += r.Waits.WaitBreaker
		total.DeadLetters += r.DeadLetters
		total.Drift += r.Drift
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

func (r Row) cells(classes []int) []string {
	out := []string{r.Stream, itoa(r.Records), itoa(r.Pages), itoa(r.Requests)}
	for _, i := range classes {
		out = append(out, itoa(r.ByClass[i]))
	}
	return append(out, itoa(int64(r.Retries)),
		Seconds(r.Waits.WaitSlot), Seconds(r.Waits.WaitBucket), Seconds(r.Waits.WaitRetryAfter),
		Seconds(r.Waits.WaitBackoff), Seconds(r.Waits.WaitBreaker),
		itoa(r.DeadLetters), itoa(int64(r.Drift)))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
