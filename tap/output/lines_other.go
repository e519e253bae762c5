//go:build !linux

package output

import "os"

// pipeSize is Linux only (F_GETPIPE_SZ): elsewhere lines go in batches of
// lineBatch.
func pipeSize(*os.File) int { return 0 }

// wholeLines is Linux only: elsewhere batches are written as they are.
func newWholeLines(f *os.File, _ int) *os.File { return f }
