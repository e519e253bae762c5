package tap

import (
	"log/slog"
	"testing"
)

// The log of serve-demo names the address the server is bound to: a
// wildcard is reported as such, not as the loopback URL a client uses.
func TestBoundAddr(t *testing.T) {
	for _, c := range []struct{ host, base, want string }{
		{"127.0.0.1", "http://127.0.0.1:8765", "http://127.0.0.1:8765"},
		{"localhost", "http://127.0.0.1:41234", "http://127.0.0.1:41234"},
		{"0.0.0.0", "http://127.0.0.1:8765", "0.0.0.0:8765 (every interface)"},
		{"::", "http://127.0.0.1:8765", "[::]:8765 (every interface)"},
		{"", "http://127.0.0.1:41234", ":41234 (every interface)"},
	} {
		if got := boundAddr(c.host, c.base); got != c.want {
			t.Errorf("boundAddr(%q, %q) = %q, want %q", c.host, c.base, got, c.want)
		}
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
