package runreport

import (
	"bytes"
	"fmt"
	"html"
	"slices"
	"strings"
	"time"

	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/tap/metrics"
)

// Run is what the report says of the run itself.
type Run struct {
	Version, Config, Mode string
	Start, End            time.Time
	Exit                  int
	Error                 string // "" when the run succeeded
}

// HTML renders the report of run, its secrets masked by red.
func (r *Recorder) HTML(run Run, red *settings.Redactor) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	run.Error = red.Redact(run.Error)
	v := view{Run: run, Duration: run.End.Sub(run.Start).Round(time.Millisecond).String(), Rows: r.rows,
		MoreMarks: r.moreMark, MoreWarnings: r.moreWarn}
	for _, w := range r.warnings {
		v.Warnings = append(v.Warnings, red.Redact(w))
	}
	v.Outcomes = r.outcomes
	for _, row := range r.rows {
		v.Feeds = v.Feeds || row.Feed
	}
	for _, row := range r.rows {
		v.Total.Records += row.Records
		v.Total.Requests += row.Requests
		v.Total.DeadLetters += row.DeadLetters
	}
	st := r.stats
	v.Before, v.After = r.before, r.after
	v.Time = []timeRow{
		{"in requests (sent to answered)", r.reqTime.Seconds()},
		{"waiting for an in-flight slot", st.WaitSlot.Seconds()}, {"waiting on the rate limit (bucket)", st.WaitBucket.Seconds()},
		{"honouring Retry-After", st.WaitRetryAfter.Seconds()}, {"backing off before retries", st.WaitBackoff.Seconds()},
		{"waiting on the circuit breaker", st.WaitBreaker.Seconds()},
	}
	v.Records = r.lineChart()
	v.Requests = r.barChart()
	var b bytes.Buffer
	render(&b, v)
	return b.Bytes(), nil
}

type view struct {
	Run          Run
	Duration     string
	Rows         []metrics.Row
	Total        struct{ Records, Requests, DeadLetters int64 }
	Time         []timeRow
	Records      string // inline SVG
	Requests     string
	Warnings     []string
	Outcomes     []string          // backfill windows, reconciles, a replay
	Before       map[string]string // bookmarks by stream
	After        map[string]string
	Feeds        bool // a feed stream ran: its columns are shown
	MoreMarks    int
	MoreWarnings int
}

type timeRow struct {
	What    string
	Seconds float64
}

const chartW, chartH, pad = 720.0, 200.0, 40.0

var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#d62728"}

// lineChart is records written so far, a line per stream.
func (r *Recorder) lineChart() string {
	s := r.records
	streams := sortedKeys(s.rows)
	top := 1.0
	for _, k := range streams {
		for _, v := range s.values(k) {
			top = max(top, v)
		}
	}
	var b strings.Builder
	openSVG(&b, "Records written over the run, by stream")
	axes(&b, s, top)
	for i, k := range streams {
		vals := s.values(k)
		var pts []string
		for j, v := range vals {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(j, s.last), y(v, top)))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"><title>%s: %d records</title></polyline>`,
			palette[i%len(palette)], strings.Join(pts, " "), html.EscapeString(k), int64(vals[len(vals)-1]))
	}
	legend(&b, streams, func(i int) string { return palette[i%len(palette)] })
	b.WriteString("</svg>")
	return b.String()
}

// barChart is attempts by status class, stacked per slot, each 429
// marked with a red tick.
func (r *Recorder) barChart() string {
	s := r.requests
	classes := []string{"2xx", "3xx", "1xx", "4xx", "5xx", "no_response"}
	top := 1.0
	for j := 0; j <= s.last; j++ {
		sum := 0.0
		for _, c := range classes {
			sum += s.values(c)[j]
		}
		top = max(top, sum)
	}
	var b strings.Builder
	openSVG(&b, "HTTP attempts over the run, by status class; each 429 marked")
	axes(&b, s, top)
	colors := map[string]string{"2xx": "#2ca02c", "3xx": "#17becf", "1xx": "#7f7f7f", "4xx": "#ff7f0e", "5xx": "#d62728", "no_response": "#000000"}
	bw := (chartW - 2*pad) / float64(s.last+1)
	for j := 0; j <= s.last; j++ {
		base := 0.0
		for _, c := range classes {
			v := s.values(c)[j]
			if v == 0 {
				continue
			}
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %d</title></rect>`,
				pad+float64(j)*bw, y(base+v, top), max(bw-1, 0.5), y(base, top)-y(base+v, top), colors[c], c, int64(v))
			base += v
		}
	}
	for _, m := range r.marks {
		xm := pad + m.at.Seconds()/s.width.Seconds()*bw
		fmt.Fprintf(&b, `<line class="throttle" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#d62728" stroke-width="2"><title>429 at %s (%s), waited %s</title></line>`,
			xm, xm, pad-10, chartH-pad, m.at.Round(time.Millisecond), html.EscapeString(m.stream), m.wait.Round(time.Millisecond))
	}
	legend(&b, classes, func(i int) string { return colors[classes[i]] })
	b.WriteString("</svg>")
	return b.String()
}

func openSVG(b *strings.Builder, title string) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img"><title>%s</title>`,
		chartW, chartH+40, chartW, chartH+40, title)
}

func axes(b *strings.Builder, s *series, top float64) {
	fmt.Fprintf(b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#888"/><line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#888"/>`,
		pad, chartH-pad, chartW-pad, chartH-pad, pad, pad-10, pad, chartH-pad)
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" font-size="11">%s</text>`, 2.0, pad-2, short(top))
	end := s.width * time.Duration(s.last+1)
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" font-size="11" text-anchor="end">%s</text>`, chartW-pad, chartH-pad+14, end)
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" font-size="11">0s</text>`, pad, chartH-pad+14)
}

func legend(b *strings.Builder, names []string, color func(i int) string) {
	for i, n := range names {
		fmt.Fprintf(b, `<rect x="%.0f" y="%.0f" width="10" height="10" fill="%s"/><text x="%.0f" y="%.0f" font-size="11">%s</text>`,
			pad+float64(i%6)*110, chartH-pad+22+float64(i/6)*14, color(i), pad+float64(i%6)*110+14, chartH-pad+31+float64(i/6)*14, html.EscapeString(n))
	}
}

func x(j, last int) float64 {
	if last == 0 {
		return pad
	}
	return pad + float64(j)/float64(last)*(chartW-2*pad)
}

func y(v, top float64) float64 { return chartH - pad - v/top*(chartH-2*pad) }

func short(v float64) string { return fmt.Sprintf("%.0f", v) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// render writes the page of v. Every text that comes from the run (a
// stream's name, an error, a warning, a bookmark) goes through
// html.EscapeString; the charts are SVG built here from numbers and
// escaped names. (html/template would do the same and cost every run
// 1.6 MB of memory at start, report or not.)
func render(b *bytes.Buffer, v view) {
	e := html.EscapeString
	status := "ok"
	if v.Run.Error != "" {
		status = "failed"
	}
	fmt.Fprintf(b, `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>tap run report: %s %s</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}
td:first-child,th:first-child{text-align:left}.failed{color:#b00}.ok{color:#070}
</style></head><body>
<h1>tap run report</h1>
<table id="run">
<tr><th>version</th><td>%s</td></tr>
<tr><th>config</th><td>%s</td></tr>
<tr><th>mode</th><td>%s</td></tr>
<tr><th>start</th><td>%s</td></tr>
<tr><th>end</th><td>%s (%s)</td></tr>
<tr><th>exit status</th><td id="exit" class="%s">%d</td></tr>
`, e(v.Run.Mode), utc(v.Run.Start), e(v.Run.Version), e(v.Run.Config), e(v.Run.Mode), utc(v.Run.Start), utc(v.Run.End), v.Duration, status, v.Run.Exit)
	if v.Run.Error != "" {
		fmt.Fprintf(b, "<tr><th>error</th><td id=\"error\">%s</td></tr>\n", e(v.Run.Error))
	}
	b.WriteString("</table>\n<h2>Streams</h2>\n<table id=\"streams\">\n<tr><th>stream</th><th>records</th><th>pages</th><th>requests</th><th>2xx</th><th>4xx</th><th>5xx</th><th>no response</th><th>retries</th><th>dead letters</th><th>drift</th><th>bookmark before</th><th>bookmark after</th>")
	if v.Feeds {
		b.WriteString("<th>feed gaps</th><th>silences</th><th>reconnects</th><th>backfilled</th>")
	}
	b.WriteString("</tr>\n")
	for _, r := range v.Rows {
		fmt.Fprintf(b, `<tr data-stream="%s"><td>%s</td><td class="records">%d</td><td>%d</td><td class="requests">%d</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td class="dead">%d</td><td>%d</td><td class="before">%s</td><td class="after">%s</td>`,
			e(r.Stream), e(r.Stream), r.Records, r.Pages, r.Requests, r.ByClass[2], r.ByClass[4], r.ByClass[5], r.ByClass[0], r.Retries, r.DeadLetters, r.Drift,
			e(v.Before[r.Stream]), e(v.After[r.Stream]))
		if v.Feeds {
			fmt.Fprintf(b, `<td class="gaps">%d</td><td>%d</td><td class="reconnects">%d</td><td>%d</td>`, r.Gaps, r.Silences, r.Reconnects, r.Backfilled)
		}
		b.WriteString("</tr>\n")
	}
	fmt.Fprintf(b, `<tr id="total"><th>total</th><th class="records">%d</th><th></th><th class="requests">%d</th><th></th><th></th><th></th><th></th><th></th><th class="dead">%d</th><th></th><th></th><th></th>`,
		v.Total.Records, v.Total.Requests, v.Total.DeadLetters)
	if v.Feeds {
		b.WriteString("<th></th><th></th><th></th><th></th>")
	}
	fmt.Fprintf(b, "</tr>\n</table>\n<h2>Records over the run</h2>\n%s\n<h2>Requests over the run</h2>\n%s\n", v.Records, v.Requests)
	if v.MoreMarks > 0 {
		fmt.Fprintf(b, "<p>%d more 429s not marked.</p>\n", v.MoreMarks)
	}
	b.WriteString("<h2>Where the time went</h2>\n<table id=\"time\"><tr><th>time</th><th>seconds (summed over streams)</th></tr>\n")
	for _, t := range v.Time {
		fmt.Fprintf(b, "<tr><td>%s</td><td>%.1f</td></tr>\n", e(t.What), t.Seconds)
	}
	b.WriteString("</table>\n<h2>Backfill windows, reconciles, replays</h2>\n")
	list(b, "outcomes", v.Outcomes, "None in this run.")
	b.WriteString("<h2>Warnings</h2>\n")
	list(b, "warnings", v.Warnings, "None.")
	if v.MoreWarnings > 0 {
		fmt.Fprintf(b, "<p>%d more warnings not shown.</p>\n", v.MoreWarnings)
	}
	b.WriteString("</body></html>\n")
}

func list(b *bytes.Buffer, id string, items []string, none string) {
	if len(items) == 0 {
		fmt.Fprintf(b, "<p id=\"%s\">%s</p>\n", id, none)
		return
	}
	fmt.Fprintf(b, "<ul id=\"%s\">", id)
	for _, it := range items {
		fmt.Fprintf(b, "<li>%s</li>", html.EscapeString(it))
	}
	b.WriteString("</ul>\n")
}

func utc(t time.Time) string { return t.UTC().Format(time.RFC3339) }
