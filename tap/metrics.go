package tap

import (
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/records"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/tap/metrics"
)

// reporter writes the run's metric lines, the aggregate ones at the
// config's metrics_log_level.
func (e *engine) reporter() metrics.Reporter {
	r := metrics.Reporter{Log: e.log} // at info unless the config says
	if e.cfg != nil {
		r.Level, _ = settings.Level(e.cfg.MetricsLogLevel) // checked by the registry
	}
	return r
}

// requestMetric is the client's hook after each attempt: it counts the
// attempt for its stream and writes its timer.
func (e *engine) requestMetric(stream, _, _ string, status int, d time.Duration) {
	if n := e.byName[stream]; n != nil {
		n.counts.Request(status)
	}
	e.reporter().Request(stream, status, d)
}

// progress writes the running streams' progress every period until
// stopped.
func (e *engine) progress(every time.Duration) (stop func()) {
	return e.reporter().Progress(every, e.selectedCounts(), func() map[string]client.Waits { return e.client.Stats().ByStream })
}

// summary writes what the run did, then what became of its chunk windows.
func (e *engine) summary(elapsed time.Duration) {
	e.reporter().Summary(metrics.Summary{Elapsed: elapsed, Client: e.client.Stats(), DeadLetters: e.dead.Count(),
		Streams: e.selectedCounts(),
		Drift:   func(stream string) []records.Entry { return e.byName[stream].check.Drift().Report(e.log) }})
	e.backfillSummary()
}

// selectedCounts are the counters of the selected streams, in the
// config's order.
func (e *engine) selectedCounts() []*metrics.Stream {
	var out []*metrics.Stream
	for _, n := range e.nodes {
		if n.selected {
			out = append(out, &n.counts)
		}
	}
	return out
}
