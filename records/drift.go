package records

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/tap-dev/tap/codec"
)

// Drift collects how a stream's records depart from its schema. What it
// reports at WARN names properties, types and counts only: a record's
// values may be personal data, so they appear at debug level alone.
//
// It tracks at most maxDriftFields properties and pointers (of every
// kind together), the first found: records of distinct keys (an API
// keyed by ids, hostile ones) would otherwise grow it, and its report, a
// line or two each, without end. The findings beyond are counted, and
// the report says how many were not tracked.
type Drift struct {
	mu        sync.Mutex
	stream    string
	extra     map[string]*extraProp // properties not in the schema
	missing   map[string]int        // required properties absent, by pointer
	types     map[string]*finding   // pointer → records whose value has another type
	other     map[string]*finding   // other violations by pointer
	fields    int                   // the keys of the four maps
	untracked int                   // findings on fields beyond maxDriftFields
	redact    Redactor
}

// maxDriftFields bounds the fields a stream's drift tracks.
const maxDriftFields = 100

// room is whether a field not tracked yet may be; it counts the finding
// as untracked when not.
func (d *Drift) room() bool {
	if d.fields < maxDriftFields {
		d.fields++
		return true
	}
	d.untracked++
	return false
}

type extraProp struct {
	count   int
	types   map[string]int // JSON type → records
	example string
}

type finding struct {
	count   int
	keyword string // the schema keyword that failed
	message string // the library's, which may quote the value
}

func newDrift(stream string, redact Redactor) *Drift {
	return &Drift{stream: stream, extra: map[string]*extraProp{}, missing: map[string]int{},
		types: map[string]*finding{}, other: map[string]*finding{}, redact: redact}
}

// missingProperty counts a required property absent at pointer.
func (d *Drift) missingProperty(pointer string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.missing[pointer]; ok || d.room() {
		d.missing[pointer]++
	}
}

func (d *Drift) unknown(prop string, val any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.extra[prop]
	if p == nil {
		if !d.room() {
			return
		}
		// Secrets go before encoding, where escaping cannot hide them.
		b, _ := codec.Marshal(d.redact.Value(val))
		p = &extraProp{types: map[string]int{}, example: shorten(d.redact.Redact(string(b)), 80)}
		d.extra[prop] = p
	}
	p.count++
	p.types[jsonType(val)]++
}

func (d *Drift) violation(keyword, pointer, msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	kw := keyword[strings.LastIndexByte(keyword, '/')+1:]
	into := d.other
	if kw == "type" {
		into = d.types
	}
	f := into[pointer]
	if f == nil {
		if !d.room() {
			return
		}
		f = &finding{}
		into[pointer] = f
	}
	f.count++
	f.keyword, f.message = kw, msg
}

// Entry is one finding of the drift report.
type Entry struct {
	Kind  string // extra_property, missing_required, type_change, violation, untracked
	Field string // property name or JSON pointer
	Count int
	// Text holds names, types and counts, never a value of a record.
	Text string
	// Example is a value seen, or a message quoting one: "" when the
	// finding has none. It is redacted but may be personal data.
	Example string
}

// Entries lists how the stream drifted, in a stable order (none when
// clean).
func (d *Drift) Entries() []Entry {
	d.mu.Lock()
	defer d.mu.Unlock()
	stream := d.stream
	var out []Entry
	for _, k := range slices.Sorted(maps.Keys(d.extra)) {
		p := d.extra[k]
		out = append(out, Entry{"extra_property", k, p.count,
			fmt.Sprintf("stream %q: property %q is not in the schema: seen in %d records (%s)", stream, k, p.count, typeCounts(p.types)),
			p.example})
	}
	for _, k := range slices.Sorted(maps.Keys(d.missing)) {
		out = append(out, Entry{"missing_required", k, d.missing[k],
			fmt.Sprintf("stream %q: required property %s missing in %d records", stream, k, d.missing[k]), ""})
	}
	for _, k := range slices.Sorted(maps.Keys(d.types)) {
		// The library's type message names two types and no value.
		f := d.types[k]
		out = append(out, Entry{"type_change", pointerText(k), f.count,
			fmt.Sprintf("stream %q: %s changed type in %d records (%s)", stream, pointerText(k), f.count, f.message), ""})
	}
	for _, k := range slices.Sorted(maps.Keys(d.other)) {
		f := d.other[k]
		out = append(out, Entry{"violation", pointerText(k), f.count,
			fmt.Sprintf("stream %q: %s fails %q in %d records", stream, pointerText(k), f.keyword, f.count), f.message})
	}
	if d.untracked > 0 {
		out = append(out, Entry{"untracked", "", d.untracked,
			fmt.Sprintf("stream %q: %d more findings not tracked: drift tracks the first %d properties and pointers", stream, d.untracked, maxDriftFields), ""})
	}
	return out
}

// Report logs every entry as a WARN line, and its example, if any, at
// debug level; it returns the entries.
func (d *Drift) Report(log *slog.Logger) []Entry {
	entries := d.Entries()
	for _, e := range entries {
		log.Warn("schema drift: " + e.Text)
		if e.Example != "" {
			log.Debug("schema drift example", "stream", d.stream, "kind", e.Kind, "field", e.Field, "example", e.Example)
		}
	}
	return entries
}

// typeCounts renders {"string": 2, "null": 1} as "null: 1, string: 2".
func typeCounts(types map[string]int) string {
	var b strings.Builder
	for i, t := range slices.Sorted(maps.Keys(types)) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %d", t, types[t])
	}
	return b.String()
}

// jsonType names the JSON Schema type of a decoded value.
func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if strings.ContainsAny(string(v), ".eE") {
			return "number"
		}
		return "integer"
	case float64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// shorten cuts s to at most n bytes on a character boundary.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
