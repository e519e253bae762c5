package output

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/settings"
)

// lineHandler is a slog.Handler that renders "LEVEL message key=value" —
// the line format of singer-python, which Meltano parses for METRIC lines —
// and hands each line to emit.
type lineHandler struct {
	mu     *sync.Mutex
	emit   func(level slog.Level, msg string, attrs []slog.Attr)
	attrs  []slog.Attr
	level  slog.Level         // lines below it are dropped
	redact *settings.Redactor // masks secrets in every line; nil masks none
}

// NewStderrLogger logs Singer-style lines of level and above to w, with
// the secrets red knows masked: "LEVEL message key=value", no time (what
// the tests read).
func NewStderrLogger(w io.Writer, level slog.Level, red *settings.Redactor) *slog.Logger {
	return NewLogger(w, LogOptions{Level: level, Redactor: red})
}

// Log formats of --log-format.
const (
	LogText = "text" // "TIME LEVEL message key=value", singer-python's line with the time before it
	LogJSON = "json" // one JSON object a line, for log shippers
)

// LogOptions are how a run logs to stderr.
type LogOptions struct {
	Level    slog.Level
	Redactor *settings.Redactor
	Format   string           // LogText (and "") or LogJSON
	Now      func() time.Time // the time on each line; nil: none (tests)
}

// NewLogger logs lines of o.Level and above to w, in o.Format, with the
// secrets o.Redactor knows masked.
func NewLogger(w io.Writer, o LogOptions) *slog.Logger {
	h := &lineHandler{mu: &sync.Mutex{}, level: o.Level, redact: o.Redactor}
	var stamp []byte
	h.emit = func(l slog.Level, line string, attrs []slog.Attr) {
		if o.Format == LogJSON {
			stamp = stamp[:0]
			stamp = append(stamp, '{')
			if o.Now != nil {
				stamp = append(stamp, `"time":`...)
				stamp = codec.AppendString(stamp, o.Now().UTC().Format(time.RFC3339Nano))
				stamp = append(stamp, ',')
			}
			stamp = append(stamp, `"level":`...)
			stamp = codec.AppendString(stamp, levelName(l))
			stamp = append(stamp, `,"msg":`...)
			stamp = codec.AppendString(stamp, line)
			for _, a := range attrs {
				stamp = append(stamp, ',')
				stamp = codec.AppendString(stamp, a.Key)
				stamp = append(stamp, ':')
				stamp = codec.AppendString(stamp, h.redact.Redact(a.Value.Resolve().String()))
			}
			stamp = append(stamp, "}\n"...)
			w.Write(stamp)
			return
		}
		prefix := ""
		if o.Now != nil {
			prefix = o.Now().UTC().Format("2006-01-02T15:04:05.000Z") + " "
		}
		var b strings.Builder
		for _, a := range attrs {
			h.writeAttr(&b, a)
		}
		// Each line of a message of several (the summary table) carries
		// the time and the level, so that every line of stderr reads as
		// singer-python's with a time.
		parts := strings.Split(line, "\n")
		parts[len(parts)-1] += b.String()
		for _, part := range parts {
			fmt.Fprintf(w, "%s%s %s\n", prefix, levelName(l), part)
		}
	}
	return slog.New(h)
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
	// The message's line breaks make lines of their own (the summary
	// table); any other control character is escaped.
	lines := strings.Split(h.redact.Redact(r.Message), "\n")
	for i, l := range lines {
		lines[i] = Printable(l)
	}
	attrs := make([]slog.Attr, 0, len(h.attrs)+r.NumAttrs())
	attrs = append(attrs, h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, a)
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.emit(r.Level, strings.Join(lines, "\n"), attrs)
	return nil
}

// withAttrs is msg with " key=value" for each of attrs.
func (h *lineHandler) withAttrs(msg string, attrs []slog.Attr) string {
	var b strings.Builder
	b.WriteString(msg)
	for _, a := range attrs {
		h.writeAttr(&b, a)
	}
	return b.String()
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
	h2 := *h
	h2.attrs = append(slices.Clip(h.attrs), attrs...)
	return &h2
}

func (h *lineHandler) WithGroup(string) slog.Handler { return h }
