// Package runreport makes a run's HTML report (tap --report FILE, setting
// report_path): one self-contained file — inline CSS and SVG, no script,
// no font or image from anywhere — written at the end of every run, also
// one that fails or is interrupted. It shows the run, a row per stream,
// records and requests over the run's time with each 429 marked, where
// the time went, and the warnings.
//
// The Recorder is fed as the run goes (each HTTP attempt, the records
// written so far, the warnings) in fixed memory: the series keep 120
// points whatever the run's length, and the lists are capped.
package runreport

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/tap/metrics"
)

// Caps on the lists a report keeps; past them only a count.
const (
	maxMarks    = 500 // 429s marked on the chart
	maxWarnings = 200
)

// Recorder gathers what a run's report shows. Its methods are safe for
// concurrent use.
type Recorder struct {
	mu       sync.Mutex
	start    time.Time
	requests *series // attempts by status class
	records  *series // records written so far, by stream
	waits    *series // seconds waited before attempts, by reason
	marks    []mark  // the 429s
	moreMark int
	warnings []string
	moreWarn int
	outcomes []string
	rows     []metrics.Row
	stats    client.Stats
	reqTime  time.Duration     // the attempts' own durations, summed
	before   map[string]string // bookmarks at the start, by stream
	after    map[string]string // and at the end
}

// mark is a 429 and the wait before the attempt that followed it.
type mark struct {
	at     time.Duration
	stream string
	wait   time.Duration // the Retry-After waited before the next attempt
}

// New starts a recorder of a run that starts at start.
func New(start time.Time) *Recorder {
	return &Recorder{start: start, requests: newSeries(false), records: newSeries(true), waits: newSeries(false)}
}

// Attempt records one HTTP attempt (the client's OnTrace).
func (r *Recorder) Attempt(t client.Trace) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at := t.Time.Sub(r.start)
	r.requests.add(statusClass(t.Status), at, 1)
	r.reqTime += t.Duration
	for reason, d := range t.Waits {
		r.waits.add(reason, at, d.Seconds())
	}
	if ra := t.Waits["retry_after"]; ra > 0 {
		// The wait the 429 before it asked for: its stream's last mark.
		for i := len(r.marks) - 1; i >= 0; i-- {
			if r.marks[i].stream == t.Stream {
				if r.marks[i].wait == 0 {
					r.marks[i].wait = ra
				}
				break
			}
		}
	}
	if t.Status == 429 {
		if len(r.marks) < maxMarks {
			r.marks = append(r.marks, mark{at: at, stream: t.Stream})
		} else {
			r.moreMark++
		}
	}
}

// Records records that stream has written n records by now.
func (r *Recorder) Records(now time.Time, stream string, n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records.add(stream, now.Sub(r.start), float64(n))
}

// Warn records a warning line, its secrets masked already.
func (r *Recorder) Warn(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.warnings) < maxWarnings {
		r.warnings = append(r.warnings, line)
	} else {
		r.moreWarn++
	}
}

// Outcome records a line of what became of a part of the run (a
// backfill's windows, a reconcile), its secrets masked already.
func (r *Recorder) Outcome(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.outcomes) < maxWarnings {
		r.outcomes = append(r.outcomes, line)
	}
}

// Summary records the run summary's rows and the client's totals.
func (r *Recorder) Summary(rows []metrics.Row, st client.Stats) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows, r.stats = rows, st
}

func statusClass(status int) string {
	if status < 100 || status > 599 {
		return "no_response"
	}
	return string(rune('0'+status/100)) + "xx"
}

// Start begins the report of a run of cfg in mode when report_path or
// summary_json_path is set: the recorder to hand the engine (nil without
// either), log with the report's lines kept, and finish, which writes the
// files at the run's end given its exit status and error (a no-op
// without them). bookmark gives a stream's bookmark, read at the start
// and at the end.
func Start(cfg *settings.Config, mode string, log *slog.Logger, bookmark func(stream string) any) (*Recorder, *slog.Logger, func(exit int, runErr error) error) {
	if cfg.ReportPath == "" && cfg.SummaryJSONPath == "" {
		return nil, log, func(int, error) error { return nil }
	}
	start := time.Now()
	r := New(start)
	before := bookmarks(cfg, bookmark)
	log = slog.New(warnTee{Handler: log.Handler(), r: r, red: cfg.Redactor})
	return r, log, func(exit int, runErr error) error {
		run := Run{Version: settings.Version, Config: cfg.Path, Mode: mode, Start: start, End: time.Now(), Exit: exit}
		if runErr != nil {
			run.Error = runErr.Error()
		}
		r.mu.Lock()
		r.before, r.after = before, bookmarks(cfg, bookmark)
		r.mu.Unlock()
		var errs []error
		if cfg.ReportPath != "" {
			page, err := r.HTML(run, cfg.Redactor)
			if err == nil {
				err = writeFile(cfg.ReportPath, page)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("report_path: %w", err))
			} else {
				log.Info("report: the run's report is in " + cfg.ReportPath)
			}
		}
		if cfg.SummaryJSONPath != "" {
			doc, err := r.JSON(run, cfg.Redactor, cfg.DeadLetterPath)
			if err == nil {
				err = writeFile(cfg.SummaryJSONPath, doc)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("summary_json_path: %w", err))
			}
		}
		return errors.Join(errs...)
	}
}

// bookmarks is each stream's bookmark as text ("" for none).
func bookmarks(cfg *settings.Config, bookmark func(stream string) any) map[string]string {
	out := map[string]string{}
	for _, d := range cfg.Streams {
		if v := bookmark(d.Name); v != nil {
			out[d.Name] = fmt.Sprint(v)
		}
	}
	return out
}

// writeFile writes data to path atomically: a reader sees the old file or
// the new one, whole.
func writeFile(path string, data []byte) error {
	write := settings.WriteFileAtomic // keeps the file's mode, follows a link
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		write = func(path string, data []byte) error { return settings.CreateFileAtomic(path, data, 0o644) }
	}
	if err := write(path, data); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}

// outcomes are the INFO lines whose message says what became of a part of
// the run: a backfill's windows, a reconcile, a replay.
var outcomes = []string{"windows", "reconcile", "replay summary"}

type warnTee struct {
	slog.Handler
	r     *Recorder
	red   *settings.Redactor
	attrs []slog.Attr
}

func (t warnTee) Handle(ctx context.Context, rec slog.Record) error {
	if rec.Level >= slog.LevelWarn || slices.Contains(outcomes, rec.Message) {
		var b strings.Builder
		b.WriteString(rec.Message)
		write := func(a slog.Attr) bool {
			fmt.Fprintf(&b, " %s=%s", a.Key, a.Value.Resolve().String())
			return true
		}
		for _, a := range t.attrs {
			write(a)
		}
		rec.Attrs(write)
		if rec.Level >= slog.LevelWarn {
			t.r.Warn(t.red.Redact(b.String()))
		} else {
			t.r.Outcome(t.red.Redact(b.String()))
		}
	}
	return t.Handler.Handle(ctx, rec)
}

func (t warnTee) WithAttrs(attrs []slog.Attr) slog.Handler {
	return warnTee{Handler: t.Handler.WithAttrs(attrs), r: t.r, red: t.red, attrs: append(slices.Clip(t.attrs), attrs...)}
}

func (t warnTee) WithGroup(name string) slog.Handler {
	return warnTee{Handler: t.Handler.WithGroup(name), r: t.r, red: t.red, attrs: t.attrs}
}
