package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/settings"
)

// Airbyte writes Airbyte protocol messages (protocol v0.5): RECORD,
// per-stream STATE, STREAM_STATUS and ERROR traces, LOG, and the replies
// of spec, check and discover. It is the Writer the engine uses in `tap
// read`; SCHEMA and ACTIVATE_VERSION have no Airbyte counterpart and
// write nothing.
type Airbyte struct {
	*lineWriter
	now func() time.Time

	// streams is touched only inside lineWriter.write's build callback,
	// so lineWriter.mu guards it.
	streams map[string]*abStream

	// stateMu guards states; it is taken before lineWriter.mu, never
	// after.
	stateMu sync.Mutex
	states  map[string]*abState

	redact *settings.Redactor // masks secrets in LOG and error messages; set before the writer is shared
	// namespace gives a stream's namespace in the configured catalog ("":
	// none); set before the writer is shared. nil: no stream has one.
	namespace func(stream string) string
}

// abStream caches a stream's quoted name for the RECORD hot path: the
// name, then its "namespace" member when it has one, as RECORD's stream
// and a stream_descriptor's name are both followed by it.
type abStream struct {
	quoted  []byte
	running bool // RUNNING was written
}

// abState is the last STATE written for a stream.
type abState struct {
	blob    []byte // stream_state
	counted int64  // the engine's record count at that STATE
	budget  stateBudget
	// held is a STATE held back (see stateSlack), with its record count;
	// Flush writes it.
	held      State
	heldCount int64
}

// NewAirbyte writes Airbyte messages to w.
func NewAirbyte(w io.Writer) *Airbyte {
	return &Airbyte{
		lineWriter: newLineWriter(w),
		now:        time.Now,
		streams:    map[string]*abStream{},
		states:     map[string]*abState{},
	}
}

// stream returns the cached entry of a stream; call it under lineWriter.mu.
func (a *Airbyte) stream(name string) *abStream {
	s := a.streams[name]
	if s == nil {
		s = &abStream{quoted: codec.AppendString(nil, name)}
		if ns := a.namespaceOf(name); ns != "" {
			s.quoted = codec.AppendString(append(s.quoted, `,"namespace":`...), ns)
		}
		a.streams[name] = s
	}
	return s
}

// SetNamespaces makes each stream's messages carry its namespace of the
// configured catalog, as Airbyte matches a state (and records) to the
// stream by name and namespace: a state written without it would not be
// the stream's next run. Call it before the writer is shared.
func (a *Airbyte) SetNamespaces(ns func(stream string) string) { a.namespace = ns }

func (a *Airbyte) namespaceOf(stream string) string {
	if a.namespace == nil {
		return ""
	}
	return a.namespace(stream)
}

// Schema writes nothing: the catalog carries the schema in Airbyte.
func (a *Airbyte) Schema(string, map[string]any, []string, []string) error { return nil }

// ActivateVersion writes nothing: Airbyte has no table versions.
func (a *Airbyte) ActivateVersion(string, int64) error { return nil }

// Record writes a RECORD, preceded by the stream's RUNNING status when it
// is the stream's first.
func (a *Airbyte) Record(stream string, rec []byte, extracted time.Time, _ int64) error {
	ms := extracted.UnixMilli()
	if extracted.IsZero() {
		ms = a.now().UnixMilli()
	}
	return a.write(false, func(b []byte) []byte {
		s := a.stream(stream)
		if !s.running {
			s.running = true
			b = appendStreamStatus(b, s.quoted, StatusRunning, a.now().UnixMilli())
			b = append(b, '\n')
		}
		b = append(append(b, `{"type":"RECORD","record":{"stream":`...), s.quoted...)
		b = append(append(b, `,"data":`...), rec...)
		return appendAirbyteSuffix(b, ms)
	})
}

// recordFrame writes the stream's RUNNING status first when its first
// record is about to follow.
func (a *Airbyte) recordFrame(f *recordFrame, stream string, extracted time.Time, _ int64) error {
	ms := extracted.UnixMilli()
	if extracted.IsZero() {
		ms = a.now().UnixMilli()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.stream(stream)
	f.prefix = append(append(append(f.prefix[:0], `{"type":"RECORD","record":{"stream":`...), s.quoted...), `,"data":`...)
	f.suffix = appendAirbyteSuffix(f.suffix[:0], ms)
	if s.running {
		return nil
	}
	s.running = true
	return a.writeLocked(false, func(b []byte) []byte {
		return appendStreamStatus(b, s.quoted, StatusRunning, a.now().UnixMilli())
	})
}

func appendAirbyteSuffix(b []byte, ms int64) []byte {
	b = append(b, `,"emitted_at":`...)
	b = strconv.AppendInt(b, ms, 10)
	return append(b, "}}"...)
}

// State writes the stream's bookmark as a per-stream STATE, with the
// number of the stream's records since its previous STATE, and flushes.
// A STATE that would repeat the previous one of the stream exactly (same
// stream_state, no record since) is skipped; a STATE whose blob did not
// change but that covers new records is written, so every record is
// followed by a STATE that covers it.
func (a *Airbyte) State(stream string, st State, recordCount int64) error {
	a.stateMu.Lock()
	defer a.stateMu.Unlock()
	prev := a.states[stream]
	if prev != nil {
		a.mu.Lock()
		total := a.total
		a.mu.Unlock()
		if prev.budget.hold(total, st, stream) {
			prev.held, prev.heldCount = st, recordCount
			return nil
		}
	}
	return a.stateLocked(stream, st, recordCount)
}

// stateLocked writes stream's STATE; the caller holds stateMu.
func (a *Airbyte) stateLocked(stream string, st State, recordCount int64) error {
	blob, err := st.StreamJSON(stream)
	if err != nil {
		return err
	}
	prev := a.states[stream]
	since := recordCount
	if prev != nil {
		prev.held = nil
		since = recordCount - prev.counted
		if since == 0 && bytes.Equal(prev.blob, blob) {
			return nil
		}
	}
	err = a.write(true, func(b []byte) []byte {
		b = append(b, `{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":`...)
		b = append(b, a.stream(stream).quoted...)
		b = append(b, `},"stream_state":`...)
		b = append(b, blob...)
		b = append(b, `},"sourceStats":{"recordCount":`...)
		// The protocol defines recordCount as a double "with a decimal
		// point"; 'f' with one digit writes 12.0.
		b = strconv.AppendFloat(b, float64(since), 'f', 1, 64)
		return append(b, "}}}"...)
	})
	if err != nil {
		return err
	}
	a.mu.Lock()
	at := a.total
	a.mu.Unlock()
	a.states[stream] = &abState{blob: blob, counted: recordCount, budget: stateBudget{size: len(blob), at: at}}
	return nil
}

// Flush writes the STATEs held back, by stream name, then the lines not
// yet written.
func (a *Airbyte) Flush() error {
	a.stateMu.Lock()
	names := make([]string, 0, len(a.states))
	for name, s := range a.states {
		if s.held != nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var err error
	for _, name := range names {
		s := a.states[name]
		err = errors.Join(err, a.stateLocked(name, s.held, s.heldCount))
	}
	a.stateMu.Unlock()
	return errors.Join(err, a.lineWriter.Flush())
}

// StreamStatus writes a STREAM_STATUS trace.
func (a *Airbyte) StreamStatus(stream, status string) error {
	return a.write(false, func(b []byte) []byte {
		s := a.stream(stream)
		if status == StatusRunning {
			s.running = true
		}
		return appendStreamStatus(b, s.quoted, status, a.now().UnixMilli())
	})
}

func appendStreamStatus(b, quotedStream []byte, status string, ms int64) []byte {
	b = append(b, `{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":`...)
	b = strconv.AppendInt(b, ms, 10)
	b = append(b, `,"stream_status":{"stream_descriptor":{"name":`...)
	b = append(b, quotedStream...)
	b = append(b, `},"status":`...)
	b = codec.AppendString(b, status)
	return append(b, "}}}"...)
}

// Log writes a LOG message.
func (a *Airbyte) Log(level slog.Level, msg string) error {
	msg = a.redact.Redact(msg)
	return a.write(false, func(b []byte) []byte {
		b = append(b, `{"type":"LOG","log":{"level":"`...)
		b = append(b, levelName(level)...) // ERROR, WARN, INFO, DEBUG: all Airbyte levels
		b = append(b, `","message":`...)
		b = codec.AppendString(b, msg)
		return append(b, "}}"...)
	})
}

// Logger returns a logger whose lines are LOG messages of this writer, in
// the same "message key=value" form as the Singer mode's stderr lines.
// Singer METRIC lines (one per HTTP request) mean nothing to Airbyte: they
// are written only at level DEBUG.
func (a *Airbyte) Logger(level slog.Level) *slog.Logger {
	h := &lineHandler{mu: &sync.Mutex{}, level: level, redact: a.redact}
	h.emit = func(l slog.Level, msg string, attrs []slog.Attr) {
		if level > slog.LevelDebug && strings.HasPrefix(msg, "METRIC: ") {
			return
		}
		_ = a.Log(l, h.withAttrs(msg, attrs))
	}
	return slog.New(h)
}

// Failure types of an Airbyte error trace; the command that failed says
// which.
const (
	FailureConfig    = "config_error"
	FailureTransient = "transient_error"
	FailureSystem    = "system_error"
)

// SetRedactor masks red's secrets in LOG messages and error traces. Call
// it before the writer is shared.
func (a *Airbyte) SetRedactor(red *settings.Redactor) { a.redact = red }

// Error writes the ERROR trace of err, the error that ends the command, a
// failure of type failure (FailureConfig, …) naming stream unless it is
// empty, and flushes. The messages are scrubbed of the config's secrets.
func (a *Airbyte) Error(err error, failure, stream string) error {
	msg := a.redact.Redact(err.Error())
	e := map[string]any{
		"message":          msg,
		"internal_message": fmt.Sprintf("%T: %s", err, msg),
		"failure_type":     failure,
		"stack_trace":      "",
	}
	if stream != "" {
		d := map[string]any{"name": stream}
		if ns := a.namespaceOf(stream); ns != "" {
			d["namespace"] = ns
		}
		e["stream_descriptor"] = d
	}
	return a.writeJSON(true, airbyteMessage{
		Type:  "TRACE",
		Trace: &airbyteTrace{Type: "ERROR", EmittedAt: a.now().UnixMilli(), Error: e},
	})
}

// ConnectorConfig writes a CONTROL message of type CONNECTOR_CONFIG with
// config, the whole updated config, and flushes it: the platform stores
// it for the next run. It holds the config's secrets by design, so it is
// not scrubbed.
func (a *Airbyte) ConnectorConfig(config []byte) error {
	if !json.Valid(config) {
		return errors.New("the updated config is not JSON")
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, config); err != nil {
		return err
	}
	return a.writeJSON(true, airbyteMessage{Type: "CONTROL", Control: &airbyteControl{
		Type: "CONNECTOR_CONFIG", EmittedAt: a.now().UnixMilli(),
		ConnectorConfig: map[string]json.RawMessage{"config": compact.Bytes()},
	}})
}

// Spec writes the SPEC message of `tap spec`.
func (a *Airbyte) Spec(spec map[string]any) error {
	return a.writeJSON(true, airbyteMessage{Type: "SPEC", Spec: spec})
}

// ConnectionStatus writes the CONNECTION_STATUS message of `tap check`.
func (a *Airbyte) ConnectionStatus(status map[string]any) error {
	return a.writeJSON(true, airbyteMessage{Type: "CONNECTION_STATUS", ConnectionStatus: status})
}

// Catalog writes the CATALOG message of `tap discover`; catalog is an
// AirbyteCatalog, as encoding/json marshals it.
func (a *Airbyte) Catalog(catalog any) error {
	return a.writeJSON(true, airbyteMessage{Type: "CATALOG", Catalog: catalog})
}

type airbyteControl struct {
	Type            string                     `json:"type"`
	EmittedAt       int64                      `json:"emitted_at"`
	ConnectorConfig map[string]json.RawMessage `json:"connectorConfig"`
}

// airbyteMessage is an AirbyteMessage of the kinds written whole with
// writeJSON (the hot kinds are built by hand); "type" comes first.
type airbyteMessage struct {
	Type             string          `json:"type"`
	Spec             map[string]any  `json:"spec,omitempty"`
	ConnectionStatus map[string]any  `json:"connectionStatus,omitempty"`
	Catalog          any             `json:"catalog,omitempty"`
	Trace            *airbyteTrace   `json:"trace,omitempty"`
	Control          *airbyteControl `json:"control,omitempty"`
}

type airbyteTrace struct {
	Type      string         `json:"type"`
	EmittedAt int64          `json:"emitted_at"`
	Error     map[string]any `json:"error,omitempty"`
}

// Discard is a Writer that writes nothing (for `check`, which uses the
// engine's request building but syncs nothing).
var Discard Writer = discard{}

type discard struct{}

func (discard) Schema(string, map[string]any, []string, []string) error { return nil }
func (discard) Record(string, []byte, time.Time, int64) error           { return nil }
func (discard) State(string, State, int64) error                        { return nil }
func (discard) ActivateVersion(string, int64) error                     { return nil }
func (discard) StreamStatus(string, string) error                       { return nil }
func (discard) Flush() error                                            { return nil }
