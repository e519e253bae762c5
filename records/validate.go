// Package records checks the records of a stream on their way out: it
// validates them against the stream's JSON Schema (a fast path in front
// of the library), applies on_schema_violation, writes dead letters and
// collects how the records drift from their schema.
package records

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	neturl "net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/tap-dev/tap/codec"
)

// Policy is what on_schema_violation says to do with a record that fails
// its schema.
type Policy string

// The values of on_schema_violation.
const (
	Fail       Policy = "fail"        // stop the run
	DeadLetter Policy = "dead_letter" // write the record to the dead letters, go on
	Emit       Policy = "emit"        // write the record anyway, with a warning
)

// Compile compiles a stream's schema; format "date-time" is asserted,
// not just annotated, whatever the draft.
func Compile(stream string, schema map[string]any) (*jsonschema.Schema, error) {
	c, url, err := newCompiler(stream, schema)
	if err != nil {
		return nil, err
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "jsonschema: "))
	}
	return s, nil
}

// newCompiler holds a stream's schema at the returned URL.
func newCompiler(stream string, schema map[string]any) (*jsonschema.Compiler, string, error) {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, "", err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat = true
	c.Draft = draftFor(b)
	// The stream's name is a path segment of the schema's URL: escaped,
	// so that a name with a space, # or ? names the resource added.
	url := "tap:///" + neturl.PathEscape(stream) + ".json"
	if err := c.AddResource(url, bytes.NewReader(b)); err != nil {
		return nil, "", err
	}
	return c, url, nil
}

// keywords2020 are the keywords whose meaning differs between drafts
// 2019-09 and 2020-12 (as written by encoding/json: no space after the
// colon).
var keywords2020 = [][]byte{
	[]byte(`"prefixItems":`), []byte(`"items":[`), []byte(`"additionalItems":`),
	[]byte(`"$dynamicRef":`), []byte(`"$dynamicAnchor":`),
	[]byte(`"$recursiveRef":`), []byte(`"$recursiveAnchor":`),
}

// draftFor is the draft a schema without "$schema" is read as: 2020-12,
// the library's default, unless the schema uses nothing in which 2019-09
// differs from it. Then 2019-09, which validates the same records and
// compiles in time linear in the schema's size: for 2020-12 the library
// lists every subschema of the document once per subschema it compiles,
// looking for $dynamicAnchor (a config written from Stripe's document
// spent 11 of its 14 CPU-seconds of --discover there).
func draftFor(schema []byte) *jsonschema.Draft {
	for _, k := range keywords2020 {
		if bytes.Contains(schema, k) {
			return jsonschema.Draft2020
		}
	}
	return jsonschema.Draft2019
}

// Redactor removes secrets from text and from every string of a decoded
// value.
type Redactor interface {
	Redact(string) string
	Value(any) any
}

// noSecrets is the Redactor when there is no secret to remove.
type noSecrets struct{}

func (noSecrets) Redact(s string) string { return s }
func (noSecrets) Value(v any) any        { return v }

// Options configure the Validator of one stream.
type Options struct {
	Stream     string
	PrimaryKey []string
	Schema     map[string]any // decoded with numbers as json.Number
	Policy     Policy
	// Redactor removes secrets from the dead letters, errors, logs and
	// drift: records and the library's messages about them may echo a
	// credential. nil: nothing to remove.
	Redactor Redactor
	// DeadLetters receives the records that fail under DeadLetter.
	DeadLetters *DeadLetters
	// Log receives the warnings of Emit.
	Log *slog.Logger
}

// Validator checks the records of one stream against its schema, applies
// the stream's policy and collects what drifted.
type Validator struct {
	stream string
	schema *jsonschema.Schema
	raw    map[string]any // the decoded schema, to read its required lists
	fast   *fastPath      // nil: every record goes to the library
	redact Redactor
	policy Policy
	pk     []string
	known  map[string]bool // the schema's top-level properties
	drift  *Drift
	dead   *DeadLetters
	log    *slog.Logger
	// emitted counts the records that failed their schema and were
	// emitted anyway (policy Emit): each of the first emitWarnings is a
	// WARN, the count is the run's last word on them (Emitted).
	emitted atomic.Int64
}

// emitWarnings is how many records failing their schema a stream logs
// one by one under policy Emit; the rest are counted.
const emitWarnings = 5

// New compiles o.Schema; the error names the stream.
func New(o Options) (*Validator, error) {
	s, err := Compile(o.Stream, o.Schema)
	if err != nil {
		return nil, fmt.Errorf("stream %q: schema: not a valid JSON Schema: %w", o.Stream, err)
	}
	props, _ := o.Schema["properties"].(map[string]any)
	known := make(map[string]bool, len(props))
	for k := range props {
		known[k] = true
	}
	redact := o.Redactor
	if redact == nil {
		redact = noSecrets{}
	}
	v := &Validator{stream: o.Stream, schema: s, raw: o.Schema, redact: redact, policy: o.Policy, pk: o.PrimaryKey,
		known: known, drift: newDrift(o.Stream, redact), dead: o.DeadLetters, log: o.Log}
	if f, ok := buildFastPath(o.Schema); ok {
		v.fast = f
	}
	return v, nil
}

// Drift is what the records validated so far departed from the schema.
func (v *Validator) Drift() *Drift { return v.drift }

// Violation is one reason a record failed its schema.
type Violation struct {
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

// Violations validates a record and returns the leaf errors, each with
// the JSON pointer of the offending value; nil when the record is valid.
func (v *Validator) Violations(m map[string]any) []Violation {
	if p, ok := codec.TakeCollision(m); ok {
		// Two property names became one (codec.DecodeRecords): whatever
		// the schema says, the record as decoded lacks a value.
		const msg = "property names collide once their invalid UTF-8 is replaced by U+FFFD: one of their values is lost"
		v.drift.violation("propertyNames", p, msg)
		return []Violation{{Pointer: p, Message: msg}}
	}
	for k, val := range m {
		if !v.known[k] {
			v.drift.unknown(k, val)
		}
	}
	if v.fast != nil && v.fast.valid(m) {
		return nil
	}
	err := v.validate(m)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		var ue *unreadableNumber
		if errors.As(err, &ue) {
			return []Violation{{Pointer: ue.pointer, Message: ue.Error()}}
		}
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
			msg := shorten(v.redact.Redact(e.Message), 200)
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

// validate runs the library. It panics on a number math/big will not
// read (1e10000000 against "integer"): that is a record to reject, not a
// reason to stop the run.
func (v *Validator) validate(rec any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if p, found := findUnreadableNumber(rec, ""); found {
				err = &unreadableNumber{p}
			} else {
				err = fmt.Errorf("the JSON Schema library failed on this record: %v", r)
			}
		}
	}()
	return v.schema.Validate(rec)
}

// unreadableNumber is a number whose exponent is out of math/big's range.
type unreadableNumber struct{ pointer string }

func (e *unreadableNumber) Error() string {
	return "number out of range: its exponent is too large to check"
}

// findUnreadableNumber returns the pointer of the first number in v that
// math/big cannot read.
func findUnreadableNumber(v any, pointer string) (string, bool) {
	switch v := v.(type) {
	case json.Number:
		if _, ok := new(big.Rat).SetString(string(v)); !ok {
			return pointer, true
		}
	case map[string]any:
		for k, e := range v {
			if p, found := findUnreadableNumber(e, pointer+"/"+escapePointer(k)); found {
				return p, true
			}
		}
	case []any:
		for i, e := range v {
			if p, found := findUnreadableNumber(e, pointer+"/"+strconv.Itoa(i)); found {
				return p, true
			}
		}
	}
	return "", false
}

// Emitted is how many records failed their schema and were emitted
// anyway (policy Emit).
func (v *Validator) Emitted() int64 { return v.emitted.Load() }

// Check validates one record and applies the policy: it says whether to
// emit the record, or fails the run. extracted is when the record was
// read, for its dead letter.
func (v *Validator) Check(m map[string]any, extracted time.Time) (bool, error) {
	bad := v.Violations(m)
	if bad == nil {
		return true, nil
	}
	pk := primaryKeyValues(m, v.pk)
	first := bad[0].Message
	switch v.policy {
	case Fail:
		return false, fmt.Errorf("stream %q: record %s fails its schema at %q: %s (on_schema_violation is fail)", v.stream, v.pkText(pk), pointerText(bad[0].Pointer), first)
	case Emit:
		if v.emitted.Add(1) <= emitWarnings {
			v.log.Warn("record fails its schema; emitted anyway", "stream", v.stream, "primary_key", v.pkText(pk), "pointer", pointerText(bad[0].Pointer), "error", first)
		}
		return true, nil
	}
	return false, v.dead.write(letter{Stream: v.stream, PrimaryKey: pk, Record: m, Errors: bad, TimeExtracted: extracted.UTC().Format(time.RFC3339Nano)})
}

func primaryKeyValues(m map[string]any, keys []string) map[string]any {
	out := make(map[string]any, len(keys))
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}

// pkText is a primary key as JSON, secrets removed from its values
// before encoding, where escaping cannot hide them.
func (v *Validator) pkText(pk map[string]any) string {
	b, _ := codec.Marshal(v.redact.Value(pk))
	return v.redact.Redact(string(b))
}

func pointerText(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// missingRequired lists the properties a "required" keyword found absent:
// the keyword's list, read from the schema at keywordLoc, minus the keys of
// the object at instanceLoc. ok is false when either cannot be resolved
// (a $ref in between, say); the library's message is used then.
func missingRequired(schema map[string]any, record any, keywordLoc, instanceLoc string) (names []string, ok bool) {
	req, found := codec.Pointer(schema, strings.TrimSuffix(keywordLoc, "/required")+"/required")
	list, isList := req.([]any)
	obj, _ := codec.Pointer(record, instanceLoc)
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

func escapePointer(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}
