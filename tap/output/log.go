package output

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"unicode"

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

// Printable is a line with its control characters escaped as Go does
// (\x1b, \r, \n): text from an API (an error message) must not drive the
// terminal reading stderr, or break a line where it wants.
func Printable(line string) string {
	if !strings.ContainsFunc(line, unicode.IsControl) {
		return line
	}
	q := strconv.Quote(line)
	return q[1 : len(q)-1]
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
	// The message's line breaks make lines of their own (the summary
	// table); any other control character is escaped.
	lines := strings.Split(h.redact.Redact(r.Message), "\n")
	for i, l := range lines {
		lines[i] = Printable(l)
	}
	b.WriteString(strings.Join(lines, "\n"))
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
	if strings.ContainsAny(v, " \"=") || strings.ContainsFunc(v, unicode.IsControl) {
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
