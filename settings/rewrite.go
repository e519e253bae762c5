package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tap-dev/tap/codec"
)

// ErrNotLiteral is the error of SetString when the value at the path is
// not a string written in the file, such as an {"env": "NAME"} reference:
// there is nothing in the file to replace.
var ErrNotLiteral = errors.New("the value is not a string written in the file")

// SetString returns the JSON document raw with the string at the dotted
// path (auth.refresh_token) replaced by value. Every other byte is kept:
// the keys, their order, the spacing. A key given twice is replaced
// twice, since a decoder may read either. raw must hold the path.
func SetString(raw []byte, path, value string) ([]byte, error) {
	want := strings.Split(path, ".")
	type frame struct {
		obj, wantKey bool
		key          string
	}
	var stack []frame
	at := func() bool { // the value about to be read is at path
		if len(stack) != len(want) {
			return false
		}
		for i, f := range stack {
			if !f.obj || f.key != want[i] {
				return false
			}
		}
		return true
	}
	type span struct{ from, to int }
	var spans []span
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for first := true; first || len(stack) > 0; first = false {
		start := int(dec.InputOffset())
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
			tok, err := dec.Token()
			if err != nil {
				return nil, err
			}
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:n-1]
				if len(stack) > 0 {
					stack[len(stack)-1].wantKey = true
				}
				continue
			}
			stack[n-1].key, _ = tok.(string)
			stack[n-1].wantKey = false
			continue
		}
		target := at()
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if target {
			if _, ok := tok.(string); !ok {
				return nil, fmt.Errorf("%s: %w", path, ErrNotLiteral)
			}
			// start is where the previous token ended: the string starts
			// after the ':' and the spaces.
			end := int(dec.InputOffset())
			from := bytes.IndexByte(raw[start:end], '"')
			spans = append(spans, span{start + from, end})
			stack[len(stack)-1].wantKey = true
			continue
		}
		switch d, _ := tok.(json.Delim); d {
		case '{':
			stack = append(stack, frame{obj: true, wantKey: true})
			continue
		case '[':
			stack = append(stack, frame{})
			continue
		case ']':
			stack = stack[:len(stack)-1]
		}
		if n := len(stack); n > 0 && stack[n-1].obj {
			stack[n-1].wantKey = true
		}
	}
	if len(spans) == 0 {
		return nil, fmt.Errorf("%s: not in the file", path)
	}
	v, err := codec.Marshal(value)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(raw)+len(spans)*len(v))
	prev := 0
	for _, sp := range spans {
		out = append(out, raw[prev:sp.from]...)
		out = append(out, v...)
		prev = sp.to
	}
	return append(out, raw[prev:]...), nil
}

// WriteFileAtomic replaces the file at path (a symbolic link is followed)
// with data: written to a temporary file in the same directory, with the
// same permissions, synced, then renamed over it. A crash leaves the old
// file or the new one, never a mix.
func WriteFileAtomic(path string, data []byte) error {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return CreateFileAtomic(path, data, fi.Mode().Perm())
}

// CreateFileAtomic writes data to the file at path, made or replaced
// with permissions perm, as WriteFileAtomic does.
func CreateFileAtomic(path string, data []byte, perm os.FileMode) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	// The rename is durable once the directory is synced.
	if d, derr := os.Open(filepath.Dir(path)); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
