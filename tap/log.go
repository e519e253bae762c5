package tap

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// lineHandler is a slog.Handler that renders "LEVEL message key=value" —
// the line format of singer-python, which Meltano parses for METRIC lines —
// and hands each line to emit.
type lineHandler struct {
	mu    *sync.Mutex
	emit  func(level slog.Level, line string)
	attrs string
	level slog.Level
}

// NewStderrLogger logs Singer-style lines to w.
func NewStderrLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(&lineHandler{mu: &sync.Mutex{}, level: level, emit: func(l slog.Level, line string) {
		fmt.Fprintf(w, "%s %s\n", levelName(l), line)
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
	b.WriteString(r.Message)
	b.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		writeAttr(&b, a)
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.emit(r.Level, b.String())
	return nil
}

func writeAttr(b *strings.Builder, a slog.Attr) {
	v := a.Value.Resolve().String()
	if strings.ContainsAny(v, " \"=") {
		v = fmt.Sprintf("%q", v)
	}
	fmt.Fprintf(b, " %s=%s", a.Key, v)
}

func (h *lineHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.attrs)
	for _, a := range attrs {
		writeAttr(&b, a)
	}
	h2 := *h
	h2.attrs = b.String()
	return &h2
}

func (h *lineHandler) WithGroup(string) slog.Handler { return h }
