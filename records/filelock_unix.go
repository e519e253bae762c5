//go:build unix

package records

import (
	"os"
	"syscall"
)

// LockFile takes an advisory lock on f, waiting for it: shared for the
// runs that append to a dead-letter file, exclusive for the replay that
// replaces it.
func LockFile(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// UnlockFile releases LockFile's lock.
func UnlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
