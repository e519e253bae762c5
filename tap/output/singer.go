// Package output writes the tap's protocol messages: Singer or Airbyte
// lines, each written whole and batched into few writes, and the log
// handlers that turn the run's log into Singer stderr lines or Airbyte LOG
// messages. The engine is the same for both protocols; only the Writer
// differs.
package output

import (
	"bytes"
	"io"
	"strconv"
	"time"

	"github.com/tap-dev/tap/codec"
)

// Writer turns the engine's events into protocol messages. The engine is
// the same for Singer and Airbyte; only the writer differs. A Writer is
// safe for concurrent use, and every message is written as one whole line.
type Writer interface {
	Schema(stream string, schema map[string]any, keys []string, bookmarkKeys []string) error
	// Record writes one record; rec is the record's JSON object.
	Record(stream string, rec []byte, extracted time.Time, version int64) error
	// State writes a checkpoint after a change to stream's bookmark;
	// recordCount is the engine's count of the stream's records so far.
	State(stream string, st State, recordCount int64) error
	ActivateVersion(stream string, version int64) error
	// StreamStatus reports a stream's life cycle (Airbyte TRACE); Singer
	// has no such message.
	StreamStatus(stream, status string) error
	Flush() error
}

// State is the run's state as the writers read it: Singer writes it
// whole, Airbyte one stream's part.
type State interface {
	AppendJSON(b []byte) ([]byte, error)
	StreamJSON(stream string) ([]byte, error)
}

// backMover is a State that tells whether a bookmark of stream ("" for
// any) moved back since its last snapshot: the last STATE written would
// then skip rows not yet read, so the next one is never held back.
type backMover interface {
	MovedBack(stream string) bool
}

// stateSlack is the size of STATE always written. Every STATE is the
// whole state, so one per page of a state that grows with the pages (a
// bookmark per parent record) or that came in large makes the output
// grow with their product: a larger STATE is written again only once the
// lines written since it outweigh it, which keeps the STATE written
// within the size of the records plus stateSlack a checkpoint. A STATE
// held back is written at Flush, and one that moves a bookmark back is
// never held back; a kill in between costs a re-read, never a row.
const stateSlack = 4 << 10

// stateBudget is what a writer knows of the last STATE it wrote.
type stateBudget struct {
	size int   // its length
	at   int64 // lineWriter.total after it
}

// hold reports whether a STATE may wait, total bytes of lines having been
// taken so far.
func (b stateBudget) hold(total int64, st State, stream string) bool {
	if bm, ok := st.(backMover); ok && bm.MovedBack(stream) {
		return false
	}
	return b.size > stateSlack && total-b.at+stateSlack < int64(b.size)
}

// Stream statuses.
const (
	StatusStarted    = "STARTED"
	StatusRunning    = "RUNNING"
	StatusComplete   = "COMPLETE"
	StatusIncomplete = "INCOMPLETE"
)

// Singer writes Singer messages.
type Singer struct {
	*lineWriter
	// A STATE equal to the last one, with no record in between, says
	// nothing new.
	lastState    []byte
	spareState   []byte // the buffer the next STATE is written to, then swapped with lastState
	recordsSince bool
	budget       stateBudget
	held         State // a STATE held back, written at Flush
}

// NewSinger writes Singer messages to w.
func NewSinger(w io.Writer) *Singer { return &Singer{lineWriter: newLineWriter(w)} }

func (s *Singer) Schema(stream string, schema map[string]any, keys, bookmarkKeys []string) error {
	msg := map[string]any{"type": "SCHEMA", "stream": stream, "schema": schema, "key_properties": nonNil(keys)}
	if len(bookmarkKeys) > 0 {
		msg["bookmark_properties"] = bookmarkKeys
	}
	return s.writeJSON(false, msg)
}

func (s *Singer) Record(stream string, rec []byte, extracted time.Time, version int64) error {
	return s.write(false, func(b []byte) []byte {
		s.recordsSince = true
		return appendSingerSuffix(append(appendSingerPrefix(b, stream), rec...), extracted, version)
	})
}

func (s *Singer) recordFrame(f *recordFrame, stream string, extracted time.Time, version int64) error {
	f.prefix = appendSingerPrefix(f.prefix[:0], stream)
	f.suffix = appendSingerSuffix(f.suffix[:0], extracted, version)
	return nil
}

func (s *Singer) writeLines(lines []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recordsSince = true
	return s.writeLinesLocked(lines)
}

// A Singer RECORD is prefix, record, suffix.
func appendSingerPrefix(b []byte, stream string) []byte {
	b = append(b, `{"type":"RECORD","stream":`...)
	b = codec.AppendString(b, stream)
	return append(b, `,"record":`...)
}

func appendSingerSuffix(b []byte, extracted time.Time, version int64) []byte {
	if version != 0 {
		b = append(b, `,"version":`...)
		b = strconv.AppendInt(b, version, 10)
	}
	b = append(b, `,"time_extracted":"`...)
	b = extracted.UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, `"}`...)
}

// State writes the whole state. The snapshot is taken under the writer's
// lock, so parallel streams can never write an older snapshot after a
// newer one.
func (s *Singer) State(_ string, st State, _ int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.budget.hold(s.total, st, "") {
		s.held = st
		return nil
	}
	return s.stateLocked(st)
}

func (s *Singer) stateLocked(st State) error {
	s.held = nil
	value, err := st.AppendJSON(s.spareState[:0])
	if err != nil || (!s.recordsSince && bytes.Equal(value, s.lastState)) {
		s.spareState = value
		return err
	}
	s.lastState, s.spareState, s.recordsSince = value, s.lastState, false
	err = s.writeLocked(true, func(b []byte) []byte {
		return append(append(append(b, `{"type":"STATE","value":`...), value...), '}')
	})
	s.budget = stateBudget{size: len(value), at: s.total}
	return err
}

// LastState is the value of the last STATE written, nil before the
// first: what --state-out keeps.
func (s *Singer) LastState() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.lastState)
}

// Flush writes the STATE held back, if any, then the lines not yet
// written.
func (s *Singer) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held != nil {
		if err := s.stateLocked(s.held); err != nil {
			return err
		}
	}
	return s.flushLocked()
}

func (s *Singer) ActivateVersion(stream string, version int64) error {
	return s.writeJSON(false, map[string]any{"type": "ACTIVATE_VERSION", "stream": stream, "version": version})
}

func (s *Singer) StreamStatus(string, string) error { return nil }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
