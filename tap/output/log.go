package output

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/tap-dev/tap/settings"
)

// lineHandler is a slog.Handler that renders "LEVEL message key=value" —
// the line format of singer-python, which Meltano parses for METRIC lines —
// and hands each line to emit.
type lineHandler struct {
	mu     *sync.Mutex
	emit   func(level slog.Level, line string)
	attrs  string
	level  slog.Level         // lines below it are dropped
	redact *settings.Redactor // masks secrets in every line; nil masks none
}

// NewStderrLogger logs Singer-style lines of level and above to w, with
// the secrets red knows masked.
func NewStderrLogger(w io.Writer, level slog.Level, red *settings.Redactor) *slog.Logger {
	return slog.New(&lineHandler{mu: &sync.Mutex{}, level: level, redact: red, emit: func(l slog.Level, line string) {
		// Each line of a message of several (the summary table) carries
		// the level, so that every line of stderr reads as singer-python's.
		for _, part := range strings.Split(line, "\n") {
			fmt.Fprintf(w, "%s %s\n", levelName(l), part)
		}
	}})
}

func levelName(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "ERROR"
	case l >= slog.LevelWarn:
		return "WARN"
	case l >= slog.LevelInfo:
		return "INFO"
	}
	return "DEBUG"
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(h.redact.Redact(r.Message))
	b.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		h.writeAttr(&b, a)
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.emit(r.Level, b.String())
	return nil
}

// writeAttr writes " key=value", masking secrets before quoting, which
// would hide a secret holding a quote from the redactor.
func (h *lineHandler) writeAttr(b *strings.Builder, a slog.Attr) {
	v := h.redact.Redact(a.Value.Resolve().String())
	if strings.ContainsAny(v, " \"=") {
		v = fmt.Sprintf("%q", v)
	}
	fmt.Fprintf(b, " %s=%s", a.Key, v)
}

func (h *lineHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.attrs)
	for _, a := range attrs {
		h.writeAttr(&b, a)
	}
	h2 := *h
	h2.attrs = b.String()
	return &h2
}

func (h *lineHandler) WithGroup(string) slog.Handler { return h }
