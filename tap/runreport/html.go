package runreport

import (
	"bytes"
	"fmt"
	"html/template"
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
	v.Time = []timeRow{
		{"waiting for an in-flight slot", st.WaitSlot.Seconds()}, {"waiting on the rate limit (bucket)", st.WaitBucket.Seconds()},
		{"honouring Retry-After", st.WaitRetryAfter.Seconds()}, {"backing off before retries", st.WaitBackoff.Seconds()},
		{"waiting on the circuit breaker", st.WaitBreaker.Seconds()},
	}
	v.Records = r.lineChart()
	v.Requests = r.barChart()
	var b bytes.Buffer
	if err := page.Execute(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

type view struct {
	Run          Run
	Duration     string
	Rows         []metrics.Row
	Total        struct{ Records, Requests, DeadLetters int64 }
	Time         []timeRow
	Records      template.HTML // inline SVG
	Requests     template.HTML
	Warnings     []string
	Outcomes     []string // backfill windows, reconciles, a replay
	Feeds        bool     // a feed stream ran: its columns are shown
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
func (r *Recorder) lineChart() template.HTML {
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
			palette[i%len(palette)], strings.Join(pts, " "), template.HTMLEscapeString(k), int64(vals[len(vals)-1]))
	}
	legend(&b, streams, func(i int) string { return palette[i%len(palette)] })
	b.WriteString("</svg>")
	return template.HTML(b.String())
}

// barChart is attempts by status class, stacked per slot, each 429
// marked with a red tick.
func (r *Recorder) barChart() template.HTML {
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
		fmt.Fprintf(&b, `<line class="throttle" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#d62728" stroke-width="2"><title>429 at %s (%s)</title></line>`,
			xm, xm, pad-10, chartH-pad, m.at.Round(time.Millisecond), template.HTMLEscapeString(m.stream))
	}
	legend(&b, classes, func(i int) string { return colors[classes[i]] })
	b.WriteString("</svg>")
	return template.HTML(b.String())
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
			pad+float64(i%6)*110, chartH-pad+22+float64(i/6)*14, color(i), pad+float64(i%6)*110+14, chartH-pad+31+float64(i/6)*14, template.HTMLEscapeString(n))
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

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"class": func(r metrics.Row, i int) int64 { return r.ByClass[i] },
	"secs":  func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"utc":   func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>tap run report: {{.Run.Mode}} {{utc .Run.Start}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}
td:first-child,th:first-child{text-align:left}.failed{color:#b00}.ok{color:#070}
</style></head><body>
<h1>tap run report</h1>
<table id="run">
<tr><th>version</th><td>{{.Run.Version}}</td></tr>
<tr><th>config</th><td>{{.Run.Config}}</td></tr>
<tr><th>mode</th><td>{{.Run.Mode}}</td></tr>
<tr><th>start</th><td>{{utc .Run.Start}}</td></tr>
<tr><th>end</th><td>{{utc .Run.End}} ({{.Duration}})</td></tr>
<tr><th>exit status</th><td id="exit" class="{{if .Run.Error}}failed{{else}}ok{{end}}">{{.Run.Exit}}</td></tr>
{{if .Run.Error}}<tr><th>error</th><td id="error">{{.Run.Error}}</td></tr>{{end}}
</table>
<h2>Streams</h2>
<table id="streams">
<tr><th>stream</th><th>records</th><th>pages</th><th>requests</th><th>2xx</th><th>4xx</th><th>5xx</th><th>no response</th><th>retries</th><th>dead letters</th><th>drift</th>{{if .Feeds}}<th>feed gaps</th><th>silences</th><th>reconnects</th><th>backfilled</th>{{end}}</tr>
{{range .Rows}}<tr data-stream="{{.Stream}}"><td>{{.Stream}}</td><td class="records">{{.Records}}</td><td>{{.Pages}}</td><td class="requests">{{.Requests}}</td><td>{{class . 2}}</td><td>{{class . 4}}</td><td>{{class . 5}}</td><td>{{class . 0}}</td><td>{{.Retries}}</td><td class="dead">{{.DeadLetters}}</td><td>{{.Drift}}</td>{{if $.Feeds}}<td class="gaps">{{.Gaps}}</td><td>{{.Silences}}</td><td class="reconnects">{{.Reconnects}}</td><td>{{.Backfilled}}</td>{{end}}</tr>
{{end}}<tr id="total"><th>total</th><th class="records">{{.Total.Records}}</th><th></th><th class="requests">{{.Total.Requests}}</th><th></th><th></th><th></th><th></th><th></th><th class="dead">{{.Total.DeadLetters}}</th><th></th>{{if .Feeds}}<th></th><th></th><th></th><th></th>{{end}}</tr>
</table>
<h2>Records over the run</h2>
{{.Records}}
<h2>Requests over the run</h2>
{{.Requests}}
{{if .MoreMarks}}<p>{{.MoreMarks}} more 429s not marked.</p>{{end}}
<h2>Where the time went</h2>
<table id="time"><tr><th>waiting</th><th>seconds (summed over streams)</th></tr>
{{range .Time}}<tr><td>{{.What}}</td><td>{{secs .Seconds}}</td></tr>{{end}}
</table>
<h2>Backfill windows, reconciles, replays</h2>
{{if .Outcomes}}<ul id="outcomes">{{range .Outcomes}}<li>{{.}}</li>{{end}}</ul>{{else}}<p id="outcomes">None in this run.</p>{{end}}
<h2>Warnings</h2>
{{if .Warnings}}<ul id="warnings">{{range .Warnings}}<li>{{.}}</li>{{end}}</ul>{{else}}<p id="warnings">None.</p>{{end}}
{{if .MoreWarnings}}<p>{{.MoreWarnings}} more warnings not shown.</p>{{end}}
</body></html>
`))
