package records

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/tap-dev/tap/codec"
)

// Run marks the dead letters of one run: the file grows across runs, and
// a reader tells them apart by these.
type Run struct {
	ID        string
	StartedAt time.Time
}

// NewRun makes the marker of a run that started at started. The id is a
// ULID (48 bits of milliseconds, 80 random bits, Crockford base32), so
// ids sort in the order the runs started.
func NewRun(started time.Time) (Run, error) {
	var b [16]byte
	ms := uint64(started.UnixMilli())
	for i := 0; i < 6; i++ {
		b[i] = byte(ms >> (40 - 8*i))
	}
	if _, err := rand.Read(b[6:]); err != nil {
		return Run{}, fmt.Errorf("run id: %w", err)
	}
	return Run{ID: ulid(b), StartedAt: started}, nil
}

// ulid writes 128 bits as 26 Crockford base32 digits, the first carrying
// the top 3 bits.
func ulid(b [16]byte) string {
	const digits = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	var out [26]byte
	for i := 25; i >= 0; i-- {
		// Take the low 5 bits, then shift the 128-bit number right by 5.
		out[i] = digits[b[15]&31]
		var carry byte
		for j := 0; j < 16; j++ {
			next := b[j] << 3
			b[j] = b[j]>>5 | carry
			carry = next
		}
	}
	return string(out[:])
}

// letter is one line of the dead-letter file.
type letter struct {
	Kind          string         `json:"kind"` // "record"; a request's letter is a requestLetter
	RunID         string         `json:"run_id"`
	RunStartedAt  string         `json:"run_started_at"`
	Stream        string         `json:"stream"`
	PrimaryKey    map[string]any `json:"primary_key"`
	Record        map[string]any `json:"record"`
	Errors        []Violation    `json:"errors"`
	TimeExtracted string         `json:"time_extracted"`
}

// DeadLetters appends failed records to a JSON-lines file, opened on the
// first one. Each line goes to the file as it is written (no user-space
// buffer), so none can be lost behind a STATE, even on SIGKILL.
type DeadLetters struct {
	mu     sync.Mutex
	path   string
	run    Run
	redact Redactor
	f      *os.File
	count  int
	depth  map[Depth]int
}

// NewDeadLetters writes to path, marking each line with run; redact
// removes secrets from every string of a line (nil: there are none).
func NewDeadLetters(path string, run Run, redact Redactor) *DeadLetters {
	if redact == nil {
		redact = noSecrets{}
	}
	return &DeadLetters{path: path, run: run, redact: redact}
}

func (d *DeadLetters) write(l letter) error {
	l.Kind = "record"
	l.RunID = d.run.ID
	l.RunStartedAt = d.run.StartedAt.UTC().Format(time.RFC3339Nano)
	// A record that echoes a credential must not carry it into the file;
	// values are scrubbed before encoding, where escaping cannot hide them.
	l.Record, _ = d.redact.Value(l.Record).(map[string]any)
	l.PrimaryKey, _ = d.redact.Value(l.PrimaryKey).(map[string]any)
	for i := range l.Errors {
		l.Errors[i].Message = d.redact.Redact(l.Errors[i].Message)
	}
	return d.append(l.Stream, l.Kind, l)
}

// append writes one line, opening the file on the first.
func (d *DeadLetters) append(stream, kind string, l any) error {
	b, err := codec.Marshal(l)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.lockCurrent(); err != nil {
		return err
	}
	_, err = d.f.Write(append(b, '\n'))
	UnlockFile(d.f)
	if err != nil {
		return fmt.Errorf("dead_letter_path: writing %s: %w", d.path, err)
	}
	d.count++
	if d.depth == nil {
		d.depth = map[Depth]int{}
	}
	d.depth[Depth{Stream: stream, Kind: kind}]++
	return nil
}

// lockCurrent opens the file (on the first line) and takes its shared
// lock, so that a replay rewriting it waits for the line; a file a replay
// has replaced meanwhile is opened again, so the line goes to the file
// the path names, not to the one the replay took its lines from.
func (d *DeadLetters) lockCurrent() error {
	for range 3 { // a replay replaces the file once
		if d.f == nil {
			f, err := os.OpenFile(d.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
			if err != nil {
				var pe *fs.PathError
				if errors.As(err, &pe) {
					err = pe.Err // the path is in the message already
				}
				return fmt.Errorf("dead_letter_path: cannot open %s: %v", d.path, err)
			}
			d.f = f
		}
		if err := LockFile(d.f, false); err != nil {
			return fmt.Errorf("dead_letter_path: locking %s: %w", d.path, err)
		}
		if Current(d.f, d.path) {
			return nil
		}
		UnlockFile(d.f)
		d.f.Close()
		d.f = nil
	}
	return fmt.Errorf("dead_letter_path: %s keeps being replaced", d.path)
}

// Current reports whether f is still the file path names.
func Current(f *os.File, path string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Stat(path)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// Count is the number of lines written so far.
func (d *DeadLetters) Count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.count
}

// Close closes the file, if a line opened it.
func (d *DeadLetters) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.f == nil {
		return nil
	}
	return d.f.Close()
}
