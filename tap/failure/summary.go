package failure

import (
	"log/slog"

	"github.com/tap-dev/tap/records"
	"github.com/tap-dev/tap/tap/metrics"
)

// Summary logs a run's dead letters by stream and kind, each as a line
// and as a METRIC line at level, and warns when there are more than alert
// (dead_letter_alert) in all. path is the dead-letter file.
func Summary(log *slog.Logger, level slog.Level, depths []records.Depth, alert int, path string) {
	total := 0
	for _, d := range depths {
		total += d.N
		log.Info("dead letters", "stream", d.Stream, "kind", d.Kind, "count", d.N, "path", path)
		metrics.Log(log, level, "counter", "dead_letters", d.N, map[string]any{"endpoint": d.Stream, "kind": d.Kind})
	}
	if total > alert {
		log.Warn("dead letters pass dead_letter_alert", "count", total, "dead_letter_alert", alert, "path", path)
	}
}
