package output

import (
	"os"
	"syscall"
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
