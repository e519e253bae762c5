package tap

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/tap-dev/tap/streams"
)

// compileSchema compiles a stream's schema once; format "date-time" is
// asserted, not just annotated, whatever the draft.
func compileSchema(stream string, schema map[string]any) (*jsonschema.Schema, error) {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat = true
	url := "tap:///" + stream + ".json"
	if err := c.AddResource(url, bytes.NewReader(b)); err != nil {
		return nil, err
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "jsonschema: "))
	}
	return s, nil
}

// validator checks the records of one stream against its schema and
// collects what drifted.
type validator struct {
	stream string
	schema *jsonschema.Schema
	quick  *quickSchema // nil: every record goes to the library
	policy string
	pk     []string
	known  map[string]bool // the schema's top-level properties
	drift  *drift
}

func newValidator(d *streams.Definition, schema map[string]any, policy string) (*validator, error) {
	s, err := compileSchema(d.Name, schema)
	if err != nil {
		return nil, fmt.Errorf("stream %q: schema: %w", d.Name, err)
	}
	props, _ := schema["properties"].(map[string]any)
	known := make(map[string]bool, len(props))
	for k := range props {
		known[k] = true
	}
	v := &validator{stream: d.Name, schema: s, policy: policy, pk: d.PrimaryKey, known: known, drift: newDrift()}
	if q, ok := buildQuick(schema); ok {
		v.quick = q
	}
	return v, nil
}

// Violation is one reason a record failed its schema.
type Violation struct {
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

// violations validates a record and returns the leaf errors, each with
// the JSON pointer of the offending value.
func (v *validator) violations(m map[string]any) []Violation {
	for k, val := range m {
		if !v.known[k] {
			v.drift.unknown(k, val)
		}
	}
	if v.quick != nil && v.quick.valid(m) {
		return nil
	}
	err := v.schema.Validate(m)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Pointer: "", Message: err.Error()}}
	}
	var out []Violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, Violation{Pointer: e.InstanceLocation, Message: e.Message})
			v.drift.violation(e.KeywordLocation, e.InstanceLocation, e.Message)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return out
}

// validate applies on_schema_violation to one record: it says whether to
// emit the record, or fails the run.
func (e *engine) validate(n *node, m map[string]any, extracted time.Time) (bool, error) {
	v := n.check
	bad := v.violations(m)
	if bad == nil {
		return true, nil
	}
	pk := primaryKeyValues(m, v.pk)
	switch v.policy {
	case ViolationFail:
		return false, fmt.Errorf("stream %q: record %s fails its schema at %q: %s (on_schema_violation is fail)", v.stream, pkText(pk), pointerText(bad[0].Pointer), bad[0].Message)
	case ViolationEmit:
		e.log.Warn("record fails its schema; emitted anyway", "stream", v.stream, "primary_key", pkText(pk), "pointer", pointerText(bad[0].Pointer), "error", bad[0].Message)
		return true, nil
	}
	return false, e.dead.Write(deadLetter{Stream: v.stream, PrimaryKey: pk, Record: m, Errors: bad, TimeExtracted: extracted.UTC().Format(time.RFC3339Nano)})
}

func primaryKeyValues(m map[string]any, keys []string) map[string]any {
	out := make(map[string]any, len(keys))
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}

func pkText(pk map[string]any) string {
	b, _ := marshal(pk)
	return string(b)
}

func pointerText(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// deadLetter is one line of the dead-letter file.
type deadLetter struct {
	Stream        string         `json:"stream"`
	PrimaryKey    map[string]any `json:"primary_key"`
	Record        map[string]any `json:"record"`
	Errors        []Violation    `json:"errors"`
	TimeExtracted string         `json:"time_extracted"`
}

// deadLetters appends failed records to a JSON-lines file, opened on the
// first one. Each line goes to the file as it is written (no user-space
// buffer), so none can be lost behind a STATE, even on SIGKILL.
type deadLetters struct {
	mu      sync.Mutex
	path    string
	secrets []string
	f       *os.File
	count   int
}

func newDeadLetters(path string, secrets []string) *deadLetters {
	return &deadLetters{path: path, secrets: secrets}
}

func (d *deadLetters) Write(l deadLetter) error {
	b, err := marshal(l)
	if err != nil {
		return err
	}
	// A record that echoes a credential must not carry it into the file.
	for _, s := range d.secrets {
		b = bytes.ReplaceAll(b, []byte(s), []byte("REDACTED"))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.f == nil {
		f, err := os.OpenFile(d.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("dead_letter_path: cannot open %s: %v", d.path, unwrapPathError(err))
		}
		d.f = f
	}
	d.count++
	_, err = d.f.Write(append(b, '\n'))
	return err
}

// Flush is a no-op kept as the seam where a buffered writer would flush;
// the engine calls it before every STATE.
func (d *deadLetters) Flush() error { return nil }

func (d *deadLetters) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.f == nil {
		return nil
	}
	return d.f.Close()
}

// drift collects how a stream's records depart from its schema.
type drift struct {
	mu       sync.Mutex
	extra    map[string]*extraProp // properties not in the schema
	missing  map[string]int        // required properties absent
	types    map[string]int        // pointer → records whose value has another type
	other    map[string]int        // other violations by pointer
	examples map[string]string
}

type extraProp struct {
	count   int
	example string
}

func newDrift() *drift {
	return &drift{extra: map[string]*extraProp{}, missing: map[string]int{}, types: map[string]int{}, other: map[string]int{}, examples: map[string]string{}}
}

func (d *drift) unknown(prop string, val any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.extra[prop]
	if p == nil {
		b, _ := marshal(val)
		if len(b) > 80 {
			b = append(b[:77], "..."...)
		}
		p = &extraProp{example: string(b)}
		d.extra[prop] = p
	}
	p.count++
}

func (d *drift) violation(keyword, pointer, msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case strings.HasSuffix(keyword, "/required"):
		// "missing properties: 'amount'" names the property.
		_, props, _ := strings.Cut(msg, ": ")
		for _, p := range strings.Split(props, ", ") {
			d.missing[strings.Trim(p, "'")]++
		}
	case strings.HasSuffix(keyword, "/type"):
		d.types[pointer]++
		d.examples[pointer] = msg
	default:
		d.other[pointer]++
		d.examples[pointer] = msg
	}
}

// driftEntry is one finding of the drift report.
type driftEntry struct {
	kind  string // extra_property, missing_required, type_change, violation
	field string // property name or JSON pointer
	count int
	text  string
}

// entries lists how a stream drifted, in a stable order (none when clean).
func (d *drift) entries(stream string) []driftEntry {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []driftEntry
	for _, k := range sortedKeys(d.extra) {
		p := d.extra[k]
		out = append(out, driftEntry{"extra_property", k, p.count,
			fmt.Sprintf("stream %q: property %q is not in the schema: seen in %d records, e.g. %s", stream, k, p.count, p.example)})
	}
	for _, k := range sortedKeys(d.missing) {
		out = append(out, driftEntry{"missing_required", k, d.missing[k],
			fmt.Sprintf("stream %q: required property %q missing in %d records", stream, k, d.missing[k])})
	}
	for _, k := range sortedKeys(d.types) {
		out = append(out, driftEntry{"type_change", pointerText(k), d.types[k],
			fmt.Sprintf("stream %q: %s changed type in %d records (%s)", stream, pointerText(k), d.types[k], d.examples[k])})
	}
	for _, k := range sortedKeys(d.other) {
		out = append(out, driftEntry{"violation", pointerText(k), d.other[k],
			fmt.Sprintf("stream %q: %s fails its schema in %d records (%s)", stream, pointerText(k), d.other[k], d.examples[k])})
	}
	return out
}
