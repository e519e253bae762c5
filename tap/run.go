package tap

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/records"
	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/tap/catalog"
	"github.com/tap-dev/tap/tap/failure"
	"github.com/tap-dev/tap/tap/output"
	"github.com/tap-dev/tap/tap/runreport"
	"github.com/tap-dev/tap/tap/state"
)

// Options of one run of the engine: a sync (Sync), or any mode (Open).
type Options struct {
	Config    *Config
	Selection *catalog.Selection // nil syncs every stream
	State     *state.State
	Writer    output.Writer
	Log       *slog.Logger
	// Shard reads one shard of the chunked streams' windows, and the
	// streams that are not chunked only in shard 0 (--shard I/N).
	Shard keys.Shard
	// ProgressEvery is the period of progress lines [10s].
	ProgressEvery time.Duration
	// RecordLimit > 0 stops each stream after that many records and
	// writes no STATE: a test run (--test) must not move a bookmark.
	RecordLimit int64
	// Reconcile reconciles every stream that has a reconcile block,
	// whether or not its every_runs are due (--reconcile).
	Reconcile bool
	// Report, if set, is fed the run's attempts, records and summary for
	// its HTML report (--report); the caller writes the file.
	Report *runreport.Recorder
}

// Sync runs one sync: every selected stream, records then STATE, through
// o.Writer. The last STATE written is valid whatever error it returns.
func Sync(ctx context.Context, o Options) error {
	e, every, err := openSync(o)
	if err != nil {
		return err
	}
	defer e.close()
	return e.sync(ctx, every)
}

// openSync opens the engine of Sync, with the period of its progress
// lines.
func openSync(o Options) (*engine, time.Duration, error) {
	if o.State == nil {
		o.State = state.New()
	}
	o.State.SetRedactor(o.Config.Redactor)
	if o.Log != nil {
		for _, line := range o.State.Ignored() {
			o.Log.Warn(line)
		}
	}
	mode := ModeSync
	if o.RecordLimit > 0 {
		mode = ModeTest
	}
	en, err := Open(mode, o)
	if err != nil {
		return nil, 0, err
	}
	every := o.ProgressEvery
	if every == 0 {
		every = 10 * time.Second
	}
	return en.e, every, nil
}

// sync runs the engine with progress lines every period, then checkpoints
// a paused run, logs the summary and flushes the writer.
func (e *engine) sync(ctx context.Context, every time.Duration) error {
	stopProgress := e.report.Progress(every, func() map[string]client.Waits { return e.client.Stats().ByStream })
	start := time.Now()
	err := e.run(ctx)
	stopProgress()
	var de *client.DeferError
	deferred := errors.As(err, &de)
	if deferred {
		e.log.Warn("deferring the rest of the run: "+de.Error(), "retry_at", de.RetryAt.UTC().Format(time.RFC3339))
	}
	if deferred || errors.Is(err, context.Canceled) {
		// A pause, not a failure: checkpoint every stream that started,
		// so the last line out is the STATE to resume from.
		for _, n := range e.nodes {
			if n.model.selected && n.out.writer.Started() {
				err = errors.Join(err, n.out.checkpoint())
			}
		}
	}
	if ctx.Err() != nil {
		err = errors.New("interrupted; the last STATE written is where the next run resumes")
	}
	e.report.Summary(time.Since(start), e.client.Stats(), e.dead.Count(),
		func(stream string) []records.Entry {
			if v := e.byName[stream].model.check; v != nil {
				return v.Drift().Report(e.log)
			}
			return nil // not walked
		})
	e.backfillSummary()
	e.reportDeadLetters()
	e.reportEmittedViolations()
	if ferr := e.out.Flush(); ferr != nil && err == nil {
		err = ferr
	}
	return err
}

// reportDeadLetters logs the run's dead letters by stream and kind.
func (e *engine) reportDeadLetters() {
	failure.Summary(e.log, e.report.Level, e.dead.Depths(), e.cfg.DeadLetterAlert, e.cfg.DeadLetterPath)
}

// reportEmittedViolations ends the run with one WARN per stream whose
// records failed their schema and were emitted anyway
// (on_schema_violation emit): nothing was set aside, but the destination
// holds records its schema does not describe.
func (e *engine) reportEmittedViolations() {
	for _, n := range e.nodes {
		if n.model.check == nil {
			continue
		}
		if k := n.model.check.Emitted(); k > 0 {
			e.log.Warn("records failed their schema and were emitted as they came (on_schema_violation emit)", "stream", n.def.Name, "count", k)
		}
	}
}

// breakerMetric is the client's OnBreaker in a sync: a metric line on
// each change of the breaker's state.
func (e *engine) breakerMetric(state string, openings int) {
	e.report.Counter("circuit_breaker_state", openings, map[string]any{"state": state})
}
