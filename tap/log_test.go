package tap

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/tap-dev/tap/settings"
)

// The Singer stderr handler writes the lines at or above its level, with
// the secrets of the redactor masked.
func TestStderrLoggerLevelAndRedaction(t *testing.T) {
	tests := []struct {
		level slog.Level
		want  []string
	}{
		{slog.LevelDebug, []string{`DEBUG page url="/v1/x?key=REDACTED"`, "INFO token REDACTED refused", "WARN slow", "ERROR failed error=\"Bearer REDACTED\"", "ERROR quoted REDACTED token=REDACTED"}},
		{slog.LevelInfo, []string{"INFO token REDACTED refused", "WARN slow", "ERROR failed error=\"Bearer REDACTED\"", "ERROR quoted REDACTED token=REDACTED"}},
		{slog.LevelWarn, []string{"WARN slow", "ERROR failed error=\"Bearer REDACTED\"", "ERROR quoted REDACTED token=REDACTED"}},
		{slog.LevelError, []string{"ERROR failed error=\"Bearer REDACTED\"", "ERROR quoted REDACTED token=REDACTED"}},
	}
	for _, tt := range tests {
		t.Run(tt.level.String(), func(t *testing.T) {
			var out bytes.Buffer
			log := NewStderrLogger(&out, tt.level, settings.NewRedactor("hunter2", `pa"ss`))
			log.Debug("page", "url", "/v1/x?key=hunter2")
			log.Info("token hunter2 refused")
			log.Warn("slow")
			log.Error("failed", "error", "Bearer hunter2")
			log.With("token", `pa"ss`).Error(`quoted pa"ss`)
			got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

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
			e := &engine{cfg: &Config{MetricsLogLevel: tt.metricsLevel}, log: NewStderrLogger(&out, tt.logLevel, nil)}
			e.metric(e.metricsLevel(), "counter", "record_count", 3, map[string]any{"endpoint": "s"})
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

func TestCheckLogLevel(t *testing.T) {
	for name, ok := range map[string]bool{"": true, "debug": true, "info": true, "warn": true, "error": true, "INFO": false, "trace": false} {
		err := CheckLogLevel(name)
		if (err == nil) != ok {
			t.Errorf("CheckLogLevel(%q) = %v", name, err)
		}
		if err != nil && ExitCode(err) != ExitBadInput {
			t.Errorf("CheckLogLevel(%q): exit %d, want 2", name, ExitCode(err))
		}
	}
	cfg := &Config{LogLevel: "warn"}
	if got := (Files{}).logLevel(cfg); got != slog.LevelWarn {
		t.Errorf("config log_level: %v", got)
	}
	if got := (Files{LogLevel: "debug"}).logLevel(cfg); got != slog.LevelDebug {
		t.Errorf("--log-level does not override log_level: %v", got)
	}
}
