package inputfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.json")
	if err := os.WriteFile(file, []byte(`{"a": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path  string
		limit int64
		want  string // the content, or the error's text
		is    error
	}{
		{file, 100, `{"a": 1}`, nil},
		{file, 8, `{"a": 1}`, nil}, // exactly the limit
		{file, 7, "larger than 7 bytes, the limit of such a file", nil},
		{filepath.Join(dir, "link.json"), 100, `{"a": 1}`, nil}, // a symlink is followed
		{filepath.Join(dir, "missing.json"), 100, "", fs.ErrNotExist},
		{dir, 100, "not a regular file (a directory)", ErrNotRegular},
		{filepath.Join(dir, "fifo"), 100, "not a regular file (a FIFO)", ErrNotRegular}, // no writer: the open must not wait
		{"/dev/zero", 1 << 20, "not a regular file (a character device)", ErrNotRegular},
	}
	for _, tt := range tests {
		b, err := Read(tt.path, tt.limit)
		got := string(b)
		if err != nil {
			got = err.Error()
		}
		if tt.is != nil && !errors.Is(err, tt.is) {
			t.Errorf("Read(%s): err %v, want one that is %v", tt.path, err, tt.is)
		}
		if tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("Read(%s, %d) = %q, want %q", tt.path, tt.limit, got, tt.want)
		}
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{256 << 20: "256 MiB", 1 << 30: "1 GiB", 64 << 10: "64 KiB", 1000: "1000 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
