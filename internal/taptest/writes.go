package taptest

import (
	"bytes"
	"sync"
	"testing"
)

// Writes keeps every Write call apart, so a test can check where the
// output was cut.
type Writes struct {
	mu    sync.Mutex
	calls [][]byte
}

func (w *Writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, bytes.Clone(p))
	return len(p), nil
}

// Calls returns what each Write call was given, in order.
func (w *Writes) Calls() [][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.calls
}

// Bytes returns everything written, joined.
func (w *Writes) Bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Join(w.calls, nil)
}

// CheckWholeLines checks that every Write call held whole lines, at most
// batch bytes of them unless it was a single line, and that together they
// are want.
func CheckWholeLines(t testing.TB, w *Writes, batch int, want string) {
	t.Helper()
	for i, c := range w.Calls() {
		if len(c) == 0 || c[len(c)-1] != '\n' {
			t.Fatalf("write %d does not end a line: %.40q…", i, c)
		}
		if len(c) > batch && bytes.Count(c, []byte{'\n'}) > 1 {
			t.Fatalf("write %d is %d bytes of several lines, more than the batch of %d", i, len(c), batch)
		}
	}
	if all := w.Bytes(); string(all) != want {
		t.Fatalf("the writes add up to %d bytes, want %d", len(all), len(want))
	}
}
