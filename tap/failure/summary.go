package failure

import (
	"log/slog"
	"path/filepath"

	"github.com/tap-dev/tap/records"
	"github.com/tap-dev/tap/tap/metrics"
)

// Summary logs a run's dead letters by stream and kind, each as a line
// and as a METRIC line at level, then one WARN naming their count and the
// file's absolute path (saying so when there are more than alert,
// dead_letter_alert). path is the dead-letter file.
func Summary(log *slog.Logger, level slog.Level, depths []records.Depth, alert int, path string) {
	total := 0
	for _, d := range depths {
		total += d.N
		log.Info("dead letters", "stream", d.Stream, "kind", d.Kind, "count", d.N, "path", path)
		metrics.Log(log, level, "counter", "dead_letters", d.N, map[string]any{"endpoint": d.Stream, "kind": d.Kind})
	}
	if total == 0 {
		return
	}
	// One WARN at the end of every run that set anything aside, with the
	// file's absolute path: a relative one may be relative to a folder
	// the user never sees (Meltano's temporary config folder).
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if total > alert {
		log.Warn("dead letters pass dead_letter_alert: set aside this run; fix the cause, then tap replay --dead-letters the file", "count", total, "dead_letter_alert", alert, "path", path)
		return
	}
	log.Warn("dead letters: set aside this run; fix the cause, then tap replay --dead-letters the file", "count", total, "path", path)
}
