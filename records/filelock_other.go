//go:build !unix

package records

import "os"

// LockFile does nothing where there is no flock: a replay and a run
// appending to the same file must not overlap there.
func LockFile(*os.File, bool) error { return nil }

// UnlockFile releases LockFile's lock.
func UnlockFile(*os.File) error { return nil }
