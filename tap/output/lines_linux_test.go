package output

import (
	"bytes"
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
