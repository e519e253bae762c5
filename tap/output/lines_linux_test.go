package output

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Into a pipe enlarged to 1 MiB lines go in batches of a quarter of it,
// whole lines each.
func TestLineWriterPipeBatch(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, w.Fd(), 1024+7, 1<<20); errno != 0 {
		t.Fatalf("F_SETPIPE_SZ: %v", errno) // 1 MiB is the unprivileged default limit
	}
	lw := newLineWriter(w)
	if lw.batchSize() != 256<<10 {
		t.Fatalf("batch %d in a 1 MiB pipe, want %d", lw.batchSize(), 256<<10)
	}
	if plain := newLineWriter(&bytes.Buffer{}); plain.batchSize() != lineBatch {
		t.Fatalf("batch %d for a buffer, want %d", plain.batchSize(), lineBatch)
	}
	read := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		read <- b
	}()
	var want strings.Builder
	sw := NewSinger(w)
	var p PageLines
	p.Start(sw)
	extracted := time.Date(2026, 11, 30, 21, 0, 0, 0, time.UTC)
	for i := range 3000 {
		rec := []byte(`{"id":` + strings.Repeat("7", 1+i%200) + `}`)
		if _, err := p.Add("s", rec, extracted, 0); err != nil {
			t.Fatal(err)
		}
		want.WriteString(string(append(append(append([]byte(nil), p.frame.prefix...), rec...), p.frame.suffix...)) + "\n")
	}
	if err := p.End(); err != nil {
		t.Fatal(err)
	}
	if err := sw.Flush(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if got := <-read; string(got) != want.String() {
		t.Fatalf("the pipe got %d bytes, want %d", len(got), want.Len())
	}
}

// Lines of every size go through a pipe whole and in order: short ones
// batched, ones longer than PIPE_BUF alone once the pipe is empty, one
// longer than the pipe itself written alone.
func TestWholeLinesIntoAPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	size := pipeSize(w)
	read := make(chan []byte)
	go func() {
		var out []byte
		buf := make([]byte, 1000)
		for {
			n, err := r.Read(buf) // a slow reader: the pipe fills
			out = append(out, buf[:n]...)
			if err != nil {
				read <- out
				return
			}
			if len(out)%50 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	lw := newLineWriter(w)
	var want bytes.Buffer
	for i := range 400 {
		n := 10 + (i*7919)%9000 // up to twice PIPE_BUF
		if i == 200 {
			n = size + 100 // longer than the pipe
		}
		line := strings.Repeat(string(rune('a'+i%26)), n)
		want.WriteString(line + "\n")
		if err := lw.write(false, func(b []byte) []byte { return append(b, line...) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if got := <-read; !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("the pipe got %d bytes, want %d, the same", len(got), want.Len())
	}
}

// A line that waits for the pipe to empty does not wait for a reader that
// is gone: the write fails (EPIPE) as a plain write would.
func TestWholeLinesReaderGone(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	wl := newWholeLines(w, pipeSize(w))
	if _, err := wl.Write([]byte("first\n")); err != nil {
		t.Fatal(err)
	}
	r.Close() // "first" stays unread: the pipe never empties
	done := make(chan error, 1)
	go func() {
		_, err := wl.Write([]byte(strings.Repeat("x", 3*pipeBuf) + "\n"))
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, syscall.EPIPE) {
			t.Fatalf("write after the reader left: %v, want EPIPE", err)
		}
	case <-time.After(time.Minute): // a bound, not a measure
		t.Fatal("a write waited for a pipe whose reader is gone")
	}
}

// BenchmarkPipeLines is the cost of writing whole lines into a pipe (kill
// safe) against plain batches, lines of 300 bytes, the pipe drained by a
// reader as fast as it can: the figure the bench asks to stay small.
func BenchmarkPipeLines(b *testing.B) {
	line := []byte(strings.Repeat("r", 299))
	for _, mode := range []string{"batches", "whole lines"} {
		b.Run(mode, func(b *testing.B) {
			r, w, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, w.Fd(), 1024+7, 1<<20); errno != 0 {
				b.Fatalf("F_SETPIPE_SZ: %v", errno)
			}
			go io.Copy(io.Discard, r)
			lw := newLineWriter(w)
			if mode == "batches" {
				lw.w = w
			}
			b.SetBytes(int64(len(line) + 1))
			b.ResetTimer()
			for range b.N {
				if err := lw.write(false, func(buf []byte) []byte { return append(buf, line...) }); err != nil {
					b.Fatal(err)
				}
			}
			lw.Flush()
			b.StopTimer()
			w.Close()
		})
	}
}
