package tap

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/tap-dev/tap/tap/output"
)

// METRIC lines are logged at metrics_log_level: hidden under a higher
// log level, shown at the level asked.
func TestMetricsLogLevel(t *testing.T) {
	tests := []struct {
		logLevel     slog.Level
		metricsLevel string
		want         string // "" = no line
	}{
		{slog.LevelInfo, "info", "INFO METRIC: "},
		{slog.LevelInfo, "debug", ""},
		{slog.LevelDebug, "debug", "DEBUG METRIC: "},
		{slog.LevelWarn, "info", ""},
		{slog.LevelWarn, "warn", "WARN METRIC: "},
	}
	for _, tt := range tests {
		t.Run(tt.logLevel.String()+"/"+tt.metricsLevel, func(t *testing.T) {
			var out bytes.Buffer
			e, err := newEngine(&Config{MetricsLogLevel: tt.metricsLevel}, run{log: output.NewStderrLogger(&out, tt.logLevel, nil)})
			if err != nil {
				t.Fatal(err)
			}
			e.report.Counter("record_count", 3, map[string]any{"endpoint": "s"})
			if tt.want == "" {
				if out.Len() > 0 {
					t.Errorf("want no line, got %q", out.String())
				}
				return
			}
			if !strings.HasPrefix(out.String(), tt.want) || !strings.Contains(out.String(), `"metric":"record_count"`) {
				t.Errorf("got %q, want a line starting %q", out.String(), tt.want)
			}
		})
	}
}
