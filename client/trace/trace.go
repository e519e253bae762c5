// Package trace writes a run's request trace (tap --trace FILE, setting
// trace_path): one JSON line per HTTP attempt, in the order the attempts
// end, with what the client knows of it (client.Trace) and never a header
// or a body. Its lines add up to the run summary's requests.
package trace

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"sync"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/codec"
)

// Writer is a trace file open for a run. Its Attempt is safe for
// concurrent use, as the client calls it from each stream's goroutine.
type Writer struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	line []byte
	err  error // the first write error: the rest of the trace is dropped
}

// Create truncates or creates the file at path.
func Create(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("trace_path: %w", err)
	}
	return &Writer{f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

// Attempt writes one attempt's line.
func (w *Writer) Attempt(t client.Trace) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	w.line = append(w.line[:0], `{"time":`...)
	w.line = codec.AppendString(w.line, t.Time.UTC().Format(time.RFC3339Nano))
	w.line = append(w.line, `,"stream":`...)
	w.line = codec.AppendString(w.line, t.Stream)
	if t.Method != "" {
		w.line = append(w.line, `,"method":`...)
		w.line = codec.AppendString(w.line, t.Method)
	}
	w.line = append(w.line, `,"url":`...)
	w.line = codec.AppendString(w.line, t.URL)
	w.line = fmt.Appendf(w.line, `,"status":%d`, t.Status)
	if t.Error != "" {
		w.line = append(w.line, `,"error":`...)
		w.line = codec.AppendString(w.line, t.Error)
	}
	w.line = fmt.Appendf(w.line, `,"bytes":%d,"ms":%s,"attempt":%d`, t.Bytes, ms(t.Duration), t.Attempt)
	if len(t.Waits) > 0 {
		var total time.Duration
		w.line = append(w.line, `,"wait":{`...)
		first := true
		for _, reason := range []string{"slot", "bucket", "retry_after", "backoff", "breaker"} {
			d, ok := t.Waits[reason]
			if !ok {
				continue
			}
			if !first {
				w.line = append(w.line, ',')
			}
			first = false
			w.line = fmt.Appendf(w.line, `"%s_ms":%s`, reason, ms(d))
			total += d
		}
		w.line = fmt.Appendf(w.line, `},"wait_ms":%s`, ms(total))
	}
	w.line = append(w.line, "}\n"...)
	if _, err := w.w.Write(w.line); err != nil {
		w.err = err
	}
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) string {
	v := math.Round(float64(d)/float64(time.Microsecond)) / 1000
	return fmt.Sprint(v)
}

// Close writes what is buffered and closes the file; the error is the
// first write's, or the close's.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.w.Flush(); err != nil && w.err == nil {
		w.err = err
	}
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = err
	}
	if w.err != nil {
		return fmt.Errorf("trace: %w", w.err)
	}
	return nil
}
