//go:build linux

package main

import (
	"os"
	"syscall"
)

// fSetPipeSize is F_SETPIPE_SZ (F_LINUX_SPECIFIC_BASE + 7), which package
// syscall does not name.
const fSetPipeSize = 1024 + 7

// pipeSize is what the tap asks of a stdout pipe: the default limit an
// unprivileged process may set (/proc/sys/fs/pipe-max-size).
const pipeSize = 1 << 20

// enlargePipe asks for a larger stdout pipe, best effort: a target that
// reads in bursts then stalls the tap less often. Not a pipe, or a limit
// lower than asked: nothing changes.
func enlargePipe(f *os.File) {
	syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), fSetPipeSize, pipeSize)
}
