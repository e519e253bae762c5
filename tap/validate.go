package tap

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
)

// validator checks the records of one stream against its schema and
// collects what drifted.
type validator struct {
	stream string
	schema *jsonschema.Schema
	raw    map[string]any // the decoded schema, to read its required lists
	quick  *quickSchema   // nil: every record goes to the library
	redact redactor       // library messages quote record values
	policy string
	pk     []string
	known  map[string]bool // the schema's top-level properties
	drift  *drift
}

func newValidator(d *streams.Definition, schema map[string]any, policy string, secrets ...string) (*validator, error) {
	s, err := settings.CompileSchema(d.Name, schema)
	if err != nil {
		return nil, fmt.Errorf("stream %q: schema: %w", d.Name, err)
	}
	props, _ := schema["properties"].(map[string]any)
	known := make(map[string]bool, len(props))
	for k := range props {
		known[k] = true
	}
	v := &validator{stream: d.Name, schema: s, raw: schema, policy: policy, pk: d.PrimaryKey, known: known, drift: newDrift(secrets), redact: secrets}
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
			if strings.HasSuffix(e.KeywordLocation, "/required") {
				// Point at each missing property, not at its parent.
				if names, ok := missingRequired(v.raw, m, e.KeywordLocation, e.InstanceLocation); ok {
					for _, name := range names {
						p := e.InstanceLocation + "/" + escapePointer(name)
						out = append(out, Violation{Pointer: p, Message: "required property is missing"})
						v.drift.missingProperty(p)
					}
					return
				}
			}
			msg := shorten(v.redact.text(e.Message), 200)
			out = append(out, Violation{Pointer: e.InstanceLocation, Message: msg})
			v.drift.violation(e.KeywordLocation, e.InstanceLocation, msg)
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
	first := e.dead.redact.text(bad[0].Message)
	switch v.policy {
	case ViolationFail:
		return false, fmt.Errorf("stream %q: record %s fails its schema at %q: %s (on_schema_violation is fail)", v.stream, e.dead.redact.text(pkText(pk)), pointerText(bad[0].Pointer), first)
	case ViolationEmit:
		e.log.Warn("record fails its schema; emitted anyway", "stream", v.stream, "primary_key", e.dead.redact.text(pkText(pk)), "pointer", pointerText(bad[0].Pointer), "error", first)
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
	mu     sync.Mutex
	path   string
	redact redactor
	f      *os.File
	count  int
}

func newDeadLetters(path string, secrets []string) *deadLetters {
	return &deadLetters{path: path, redact: secrets}
}

func (d *deadLetters) Write(l deadLetter) error {
	// A record that echoes a credential must not carry it into the file;
	// values are scrubbed before encoding, where escaping cannot hide them.
	if len(d.redact) > 0 {
		l.Record, _ = d.redact.value(l.Record).(map[string]any)
		l.PrimaryKey, _ = d.redact.value(l.PrimaryKey).(map[string]any)
		for i := range l.Errors {
			l.Errors[i].Message = d.redact.text(l.Errors[i].Message)
		}
	}
	b, err := marshal(l)
	if err != nil {
		return err
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
	if _, err := d.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("dead_letter_path: writing %s: %w", d.path, err)
	}
	d.count++
	return nil
}

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
	redact   redactor
}

type extraProp struct {
	count   int
	example string
}

func newDrift(secrets redactor) *drift {
	return &drift{extra: map[string]*extraProp{}, missing: map[string]int{}, types: map[string]int{}, other: map[string]int{}, examples: map[string]string{}, redact: secrets}
}

// missingProperty counts a required property absent at pointer.
func (d *drift) missingProperty(pointer string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.missing[pointer]++
}

func (d *drift) unknown(prop string, val any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.extra[prop]
	if p == nil {
		b, _ := marshal(val)
		p = &extraProp{example: shorten(d.redact.text(string(b)), 80)}
		d.extra[prop] = p
	}
	p.count++
}

func (d *drift) violation(keyword, pointer, msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
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
			fmt.Sprintf("stream %q: required property %s missing in %d records", stream, k, d.missing[k])})
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

// missingRequired lists the properties a "required" keyword found absent:
// the keyword's list, read from the schema at keywordLoc, minus the keys of
// the object at instanceLoc. ok is false when either cannot be resolved
// (a $ref in between, say); the library's message is used then.
func missingRequired(schema map[string]any, record any, keywordLoc, instanceLoc string) (names []string, ok bool) {
	req, found := resolvePointer(schema, strings.TrimSuffix(keywordLoc, "/required")+"/required")
	list, isList := req.([]any)
	obj, _ := resolvePointer(record, instanceLoc)
	m, isObj := obj.(map[string]any)
	if !found || !isList || !isObj {
		return nil, false
	}
	for _, r := range list {
		if name, _ := r.(string); name != "" {
			if _, present := m[name]; !present {
				names = append(names, name)
			}
		}
	}
	return names, len(names) > 0
}

// resolvePointer follows an RFC 6901 JSON pointer into a decoded value.
func resolvePointer(v any, pointer string) (any, bool) {
	if pointer == "" {
		return v, true
	}
	for _, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = c[tok]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func escapePointer(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}
