package output

import (
	"bytes"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// fGetPipeSize is F_GETPIPE_SZ (F_LINUX_SPECIFIC_BASE + 8), which package
// syscall does not name.
const fGetPipeSize = 1024 + 8

// pipeSize is the capacity of f when it is a pipe, else 0.
func pipeSize(f *os.File) int {
	n, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), fGetPipeSize, 0)
	if errno != 0 {
		return 0
	}
	return int(n)
}

// pipeBuf is PIPE_BUF on Linux: a write of at most this many bytes to a
// pipe is atomic, copied whole once there is room for all of it.
const pipeBuf = 4096

// wholeLines writes batches of lines into a pipe so that a kill (SIGKILL,
// which no handler sees) never leaves part of a line in it. A kill lands
// only where a write waits for the reader, and a write of at most
// PIPE_BUF bytes never waits with part of it copied: the kernel copies it
// whole once there is room. So into a pipe that holds anything, a write
// is whole lines of at most PIPE_BUF bytes. Into an empty pipe (FIONREAD
// 0: every page of it free) a write of up to its size is copied without
// waiting at all: while the target keeps up, batches go in one write. A
// line longer than PIPE_BUF waits until the pipe is empty; one longer
// than the pipe itself cannot be whole, and is written alone.
type wholeLines struct {
	f    *os.File
	fd   uintptr
	size int
}

func newWholeLines(f *os.File, size int) *wholeLines {
	return &wholeLines{f: f, fd: f.Fd(), size: size}
}

func (p *wholeLines) Write(b []byte) (int, error) {
	written := 0
	for len(b) > 0 {
		line := bytes.IndexByte(b, '\n') + 1
		if line == 0 {
			line = len(b) // not a line: no one to cut
		}
		var n int
		switch {
		case p.unread() == 0:
			n = max(linesWithin(b, p.size), line)
		case line <= pipeBuf:
			n = linesWithin(b, pipeBuf)
		case line > p.size || p.readerGone():
			n = line // a reader gone: the write says so (EPIPE)
		default:
			continue // readerGone waited a moment for the pipe to empty
		}
		k, err := p.f.Write(b[:n])
		written += k
		if err != nil {
			return written, err
		}
		b = b[n:]
	}
	return written, nil
}

// unread is the bytes in the pipe its reader has not taken; the pipe's
// size when it cannot be told.
func (p *wholeLines) unread() int {
	var n int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, p.fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); errno != 0 {
		return p.size
	}
	return int(n)
}

// readerGone waits a moment (1 ms) for the reader to take more, and
// reports whether the pipe has no reader left.
func (p *wholeLines) readerGone() bool {
	const pollOut, pollErr, pollHup = 0x4, 0x8, 0x10
	pfd := struct {
		fd              int32
		events, revents int16
	}{fd: int32(p.fd), events: pollOut}
	ts := syscall.Timespec{Nsec: int64(time.Millisecond)}
	_, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	if errno == 0 && pfd.revents&(pollErr|pollHup) != 0 {
		return true
	}
	// ppoll says a pipe is writable with a page free, less than the
	// line needs: sleep out the rest of the moment.
	if errno == 0 && pfd.revents&pollOut != 0 {
		time.Sleep(time.Millisecond)
	}
	return false
}

// linesWithin is the length of the whole lines b begins with that fit in
// max bytes.
func linesWithin(b []byte, max int) int {
	if max >= len(b) {
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return i + 1
		}
		return 0
	}
	return bytes.LastIndexByte(b[:max], '\n') + 1
}
