package tap

import (
	"log/slog"
	"testing"
)

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
	if got := (Files{}).Level(cfg); got != slog.LevelWarn {
		t.Errorf("config log_level: %v", got)
	}
	if got := (Files{LogLevel: "debug"}).Level(cfg); got != slog.LevelDebug {
		t.Errorf("--log-level does not override log_level: %v", got)
	}
}
