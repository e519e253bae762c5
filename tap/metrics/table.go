package metrics

import (
	"strconv"
	"strings"

	"github.com/tap-dev/tap/client"
)

// Row is what one stream did, for the summary table.
type Row struct {
	Stream                   string
	Records, Pages, Requests int64
	ByClass                  [6]int64 // attempts by status class (StatusClass)
	Retries                  int
	Waits                    client.Waits
	DeadLetters              int64
	Drift                    int // findings of the drift report
	// Feed marks a feed stream's row, with its counters: gaps,
	// silences, reconnects, backfilled records.
	Feed                                   bool
	Gaps, Silences, Reconnects, Backfilled int64
}

// Table renders rows as a table a person reads: a column per
// count, right-aligned; the attempts by status class only for the classes
// seen; the waits in seconds; a total row when there are several streams;
// no column (but records) that is zero for every stream.
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
	feeds := false // a run without feeds shows no feed columns
	for _, r := range rows {
		feeds = feeds || r.Feed
	}
	if feeds {
		header = append(header, "feed_gaps", "feed_silences", "feed_reconnects", "feed_backfilled")
	}
	cells := [][]string{header}
	var total Row
	total.Stream = "total"
	for _, r := range rows {
		cells = append(cells, r.cells(seen, feeds))
		total.Gaps += r.Gaps
		total.Silences += r.Silences
		total.Reconnects += r.Reconnects
		total.Backfilled += r.Backfilled
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
		cells = append(cells, total.cells(seen, feeds))
	}
	cells = dropZeroColumns(cells)
	width := make([]int, len(cells[0]))
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

// dropZeroColumns leaves out the columns after stream and records that
// are zero for every stream: a person reads what happened, not the many
// things that did not.
func dropZeroColumns(cells [][]string) [][]string {
	keep := []int{0, 1}
	for i := 2; i < len(cells[0]); i++ {
		for _, row := range cells[1:] {
			if strings.Trim(row[i], "0.") != "" {
				keep = append(keep, i)
				break
			}
		}
	}
	out := make([][]string, len(cells))
	for j, row := range cells {
		for _, i := range keep {
			out[j] = append(out[j], row[i])
		}
	}
	return out
}

func (r Row) cells(classes []int, feeds bool) []string {
	out := []string{r.Stream, itoa(r.Records), itoa(r.Pages), itoa(r.Requests)}
	for _, i := range classes {
		out = append(out, itoa(r.ByClass[i]))
	}
	out = append(out, itoa(int64(r.Retries)),
		Seconds(r.Waits.WaitSlot), Seconds(r.Waits.WaitBucket), Seconds(r.Waits.WaitRetryAfter),
		Seconds(r.Waits.WaitBackoff), Seconds(r.Waits.WaitBreaker),
		itoa(r.DeadLetters), itoa(int64(r.Drift)))
	if feeds {
		out = append(out, itoa(r.Gaps), itoa(r.Silences), itoa(r.Reconnects), itoa(r.Backfilled))
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
