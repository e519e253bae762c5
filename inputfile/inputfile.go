// Package inputfile reads the files a user names (the config, the streams
// file, schema files, the state, the catalogs, the keys files, the dead
// letters, an OpenAPI document or a manifest) as one rule: a regular file
// (a symlink is followed), of a bounded size.
//
// Why: such a path may name /dev/zero (which grows without end), a FIFO
// (whose open waits for a writer that never comes) or a directory, and
// os.ReadFile reads each as if it were a file. The open here does not
// wait (O_NONBLOCK), the kind is checked on the opened file itself (no
// gap between a check and the read), and a read stops one byte past its
// limit.
package inputfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// The limits of the files read whole. Each is far above a real file of
// its kind (a config made from Stripe's OpenAPI document, 141 streams, is
// about 13 MB) and far below what would strain the machine.
const (
	MaxConfig  = 256 << 20 // --config, streams_file, schema files, an OpenAPI document, a manifest
	MaxState   = 256 << 20 // --state (a partitioned bookmark per parent can be large)
	MaxCatalog = 64 << 20  // --catalog, the configured catalog
	MaxLetters = 1 << 30   // replay --dead-letters
)

// ErrNotRegular is the error of a path that names something other than a
// regular file: a directory, a FIFO, a device, a socket.
var ErrNotRegular = errors.New("not a regular file")

// Open opens the regular file at path for reading, following a symlink,
// without waiting on a FIFO. Its errors name no path (the caller does):
// fs.ErrNotExist for a missing file, ErrNotRegular for another kind.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, pe.Err
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w (%s)", ErrNotRegular, kind(fi.Mode()))
	}
	// A regular file never blocks; blocking mode back lets the runtime
	// read it as an ordinary file.
	if err := syscall.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// TooLargeError is the error of a file over its limit.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("larger than %s, the limit of such a file", Size(e.Limit))
}

// Read reads the whole regular file at path, at most limit bytes: a
// larger one is a *TooLargeError, read no further.
func Read(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var size int64
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	if size > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	// The size may have changed since the stat: read one byte past the
	// limit to know.
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	return b, nil
}

// Size writes n bytes as people read it: "256 MiB".
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}
