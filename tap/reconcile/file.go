package reconcile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tap-dev/tap/inputfile"
)

// A keys file is one header line, then the keys in ascending order, each
// once:
//
//	tap-keys 1 int runs=3\n    then the first key as a zig-zag varint and
//	                           each next one as the uvarint of its distance
//	                           from the one before (1-3 bytes for dense ids)
//	tap-keys 1 text runs=3\n   then one key a line, \ and newline escaped
//	                           as \\ and \n
//
// runs counts the runs since the last reconcile. The spilled runs of a
// Sorter are the same body without the header.
const magic = "tap-keys 1"

// header is a keys file's first line.
type header struct {
	kind Kind
	runs int
}

func (h header) line() string { return fmt.Sprintf("%s %s runs=%d\n", magic, h.kind, h.runs) }

func parseHeader(line string) (header, error) {
	f := strings.Fields(line)
	if len(f) != 4 || f[0]+" "+f[1] != magic || !strings.HasPrefix(f[3], "runs=") {
		return header{}, fmt.Errorf("not a keys file (its first line is not %q)", magic+" int|text runs=N")
	}
	var h header
	switch f[2] {
	case "int":
		h.kind = Int
	case "text":
		h.kind = Text
	default:
		return header{}, fmt.Errorf("unknown key kind %q (expected int or text)", f[2])
	}
	n, err := strconv.Atoi(strings.TrimPrefix(f[3], "runs="))
	if err != nil || n < 0 {
		return header{}, fmt.Errorf("runs: expected a count, got %q", f[3])
	}
	h.runs = n
	return h, nil
}

// encoder writes a body of ascending keys.
type encoder struct {
	w     *bufio.Writer
	kind  Kind
	prev  Key
	count int64
	buf   []byte
}

func newEncoder(w io.Writer, kind Kind) *encoder {
	return &encoder{w: bufio.NewWriterSize(w, 64<<10), kind: kind}
}

// add writes k, which must be above every key written before.
func (e *encoder) add(k Key) error {
	if e.count > 0 && compare(k, e.prev) <= 0 {
		return fmt.Errorf("keys out of order: %s after %s", k, e.prev)
	}
	if e.kind == Int {
		if e.count == 0 {
			e.buf = binary.AppendVarint(e.buf[:0], k.n)
		} else {
			e.buf = binary.AppendUvarint(e.buf[:0], uint64(k.n-e.prev.n))
		}
	} else {
		e.buf = appendEscaped(e.buf[:0], k.s)
	}
	e.prev = k
	e.count++
	_, err := e.w.Write(e.buf)
	return err
}

func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		default:
			b = append(b, c)
		}
	}
	return append(b, '\n')
}

// decoder reads a body of keys written by an encoder.
type decoder struct {
	r     *bufio.Reader
	kind  Kind
	prev  int64
	count int64
	name  string // for errors
}

func (d *decoder) Next() (Key, bool, error) {
	if d.kind == Int {
		var v int64
		var err error
		if d.count == 0 {
			v, err = binary.ReadVarint(d.r)
		} else {
			var delta uint64
			delta, err = binary.ReadUvarint(d.r)
			v = d.prev + int64(delta)
		}
		if err == io.EOF {
			return Key{}, false, nil
		}
		if err != nil {
			return Key{}, false, fmt.Errorf("%s: key %d: %w", d.name, d.count+1, err)
		}
		d.prev = v
		d.count++
		return IntKey(v), true, nil
	}
	line, err := d.r.ReadString('\n')
	if err == io.EOF && line == "" {
		return Key{}, false, nil
	}
	if err != nil {
		return Key{}, false, fmt.Errorf("%s: key %d: cut short: %w", d.name, d.count+1, err)
	}
	d.count++
	line = line[:len(line)-1]
	if !strings.Contains(line, `\`) {
		return TextKey(line), true, nil
	}
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		if line[i] == '\\' && i+1 < len(line) {
			i++
			if line[i] == 'n' {
				b.WriteByte('\n')
				continue
			}
		}
		b.WriteByte(line[i])
	}
	return TextKey(b.String()), true, nil
}

// File is a keys file open for reading, a sorted stream of its keys.
type File struct {
	f *os.File
	decoder
	h header
}

// openFile opens the keys file at path; a file that is not there is
// (nil, nil).
func openFile(path string) (*File, error) {
	f, err := inputfile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("keys file %s: %w", path, err)
	}
	r := bufio.NewReaderSize(f, 64<<10)
	line, err := r.ReadString('\n')
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("keys file %s: %w", path, errors.Join(errors.New("no header line"), err))
	}
	h, err := parseHeader(line)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("keys file %s: %w", path, err)
	}
	return &File{f: f, decoder: decoder{r: r, kind: h.kind, name: "keys file " + path}, h: h}, nil
}

func (f *File) Close() error { return f.f.Close() }

// writer writes a keys file atomically: to a temporary file beside it,
// renamed over it on commit, so that a run killed at any point leaves
// the old file or the new one, whole.
type writer struct {
	path string
	tmp  *os.File
	*encoder
}

func createFile(path string, h header) (*writer, error) {
	// A keys file that is a link (to a volume, say) is replaced where it
	// points, as the config rewrite does: renamed over the link, the new
	// keys would sit beside it and the link's target keep stale ones.
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("keys file: %w", err)
	}
	w := &writer{path: path, tmp: tmp, encoder: newEncoder(tmp, h.kind)}
	if _, err := w.w.WriteString(h.line()); err != nil {
		w.abort()
		return nil, err
	}
	return w, nil
}

func (w *writer) commit() error {
	err := w.w.Flush()
	if err == nil {
		err = w.tmp.Sync()
	}
	if cerr := w.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(w.tmp.Name(), w.path)
	}
	if err != nil {
		os.Remove(w.tmp.Name())
		return fmt.Errorf("keys file %s: %w", w.path, err)
	}
	return nil
}

func (w *writer) abort() {
	w.tmp.Close()
	os.Remove(w.tmp.Name())
}
