package output

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

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
			log := NewStderrLogger(&out, tt.level, settings.NewRedactor("hunter2-pw", `pa"ss-word`))
			log.Debug("page", "url", "/v1/x?key=hunter2-pw")
			log.Info("token hunter2-pw refused")
			log.Warn("slow")
			log.Error("failed", "error", "Bearer hunter2-pw")
			log.With("token", `pa"ss-word`).Error(`quoted pa"ss-word`)
			got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// Control characters an API put in a message or a value are escaped on
// stderr, line breaks of a message aside (issue 29).
func TestStderrLoggerEscapesControls(t *testing.T) {
	var out bytes.Buffer
	log := NewStderrLogger(&out, slog.LevelInfo, nil)
	log.Error("API said \x1b[2J\x1b]0;pwned\a", "error", "bad\x1b[31m red")
	log.Info("two\nlines\r")
	want := "ERROR API said \\x1b[2J\\x1b]0;pwned\\a error=\"bad\\x1b[31m red\"\nINFO two\nINFO lines\\r\n"
	if out.String() != want {
		t.Errorf("stderr\n%q\nwant\n%q", out.String(), want)
	}
}

// A run's log has a time on every line, the summary table's lines too;
// --log-format json writes one object a line; secrets are masked in both.
func TestLoggerFormats(t *testing.T) {
	at := time.Date(2026, 12, 5, 4, 55, 6, 883000000, time.UTC)
	red := settings.NewRedactor("s3cret-token-1")
	for _, tt := range []struct{ format, want string }{
		{LogText, "2026-12-05T04:55:06.883Z INFO run summary by stream:\n2026-12-05T04:55:06.883Z INFO stream  records run=7 url=\"https://a.example/?k=REDACTED\"\n"},
		{LogJSON, `{"time":"2026-12-05T04:55:06.883Z","level":"INFO","msg":"run summary by stream:\nstream  records","run":"7","url":"https://a.example/?k=REDACTED"}` + "\n"},
	} {
		var b strings.Builder
		log := NewLogger(&b, LogOptions{Level: slog.LevelInfo, Redactor: red, Format: tt.format, Now: func() time.Time { return at }})
		log.With("run", 7).Info("run summary by stream:\nstream  records", "url", "https://a.example/?k=s3cret-token-1")
		if b.String() != tt.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.format, b.String(), tt.want)
		}
	}
}
