package tap

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
)

const ordersTestSchema = `{
  "type": "object",
  "required": ["id", "amount"],
  "properties": {
    "id": {"type": "integer"},
    "amount": {"type": "number"},
    "updated_at": {"type": ["null", "string"], "format": "date-time"},
    "note": {"type": ["null", "string"]},
    "address": {"type": ["null", "object"], "required": ["zip"], "properties": {"zip": {"type": "string"}}}
  }
}`

var ordersTestDef = streams.Definition{Name: "orders", PrimaryKey: []string{"id"}}

func testValidator(t testing.TB, policy string) *validator {
	t.Helper()
	s, err := settings.DecodeJSON([]byte(ordersTestSchema))
	if err != nil {
		t.Fatal(err)
	}
	d := ordersTestDef
	v, err := newValidator(&d, s.(map[string]any), policy)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// record decodes a record as the engine gets it (numbers as json.Number).
func record(t testing.TB, s string) map[string]any {
	t.Helper()
	v, err := streams.DecodeJSON([]byte(s))
	if err != nil {
		t.Fatalf("record %s: %v", s, err)
	}
	return v.(map[string]any)
}

// The records of the table tests: one per kind of fault.
var (
	recValid       = `{"id":1,"amount":2.5,"updated_at":"2026-01-02T03:04:05Z","note":null,"address":{"zip":"75001"}}`
	recWrongType   = `{"id":2,"amount":"2.50"}`
	recMissing     = `{"id":3}`
	recExtra       = `{"id":4,"amount":1,"coupon":"SAVE10"}`
	recBadDateTime = `{"id":5,"amount":1,"updated_at":"2026-13-01T00:00:00Z"}`
	recBigInt      = `{"id":12345678901234567890,"amount":1}`
)

func TestViolations(t *testing.T) {
	for _, c := range []struct {
		name, record string
		want         []Violation
	}{
		{"valid", recValid, nil},
		{"wrong type", recWrongType, []Violation{{"/amount", "expected number, but got string"}}},
		// A missing property is reported at the object that lacks it.
		{"missing required", recMissing, []Violation{{"/amount", "required property is missing"}}},
		{"extra field is allowed", recExtra, nil},
		{"malformed date-time", recBadDateTime, []Violation{{"/updated_at", "'2026-13-01T00:00:00Z' is not valid 'date-time'"}}},
		{"20-digit integer", recBigInt, nil},
		{"integer with a zero fraction is an integer", `{"id":2.0,"amount":1}`, nil},
		{"fraction is not an integer", `{"id":1.5,"amount":1}`, []Violation{{"/id", "expected integer, but got number"}}},
		{"nested missing required", `{"id":6,"amount":1,"address":{}}`, []Violation{{"/address/zip", "required property is missing"}}},
		{"null where not allowed", `{"id":7,"amount":null}`, []Violation{{"/amount", "expected number, but got null"}}},
		{"several at once", `{"id":"8","amount":1,"updated_at":"yesterday","address":{"zip":75001}}`, []Violation{
			{"/address/zip", "expected string, but got number"},
			{"/id", "expected integer, but got string"},
			{"/updated_at", "'yesterday' is not valid 'date-time'"},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := testValidator(t, ViolationDeadLetter)
			got := v.violations(record(t, c.record))
			slices.SortFunc(got, func(a, b Violation) int { return strings.Compare(a.Pointer, b.Pointer) })
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("violations (-want +got):\n%s", d)
			}
		})
	}
}

// TestBigIntegerKeepsItsText: a 20-digit id validates as an integer and
// is written back with every digit, in the record and in a dead letter.
func TestBigIntegerKeepsItsText(t *testing.T) {
	v := testValidator(t, ViolationDeadLetter)
	m := record(t, recBigInt)
	if bad := v.violations(m); bad != nil {
		t.Fatalf("violations: %v", bad)
	}
	n := &node{def: &ordersTestDef, check: v}
	b, err := n.encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"amount":1,"id":12345678901234567890}`; string(b) != want {
		t.Errorf("encoded %s, want %s", b, want)
	}
	lines, _ := runValidate(t, ViolationDeadLetter, nil, `{"id":12345678901234567890,"amount":"x"}`)
	if len(lines) != 1 || !strings.Contains(lines[0], `"primary_key":{"id":12345678901234567890}`) ||
		!strings.Contains(lines[0], `"record":{"amount":"x","id":12345678901234567890}`) {
		t.Errorf("dead letter lost digits: %q", lines)
	}
}

var testExtracted = time.Date(2026, 8, 18, 9, 0, 0, 123456789, time.FixedZone("X", 2*3600))

// runValidate passes records through engine.validate under policy and
// returns the dead-letter lines and the log.
func runValidate(t *testing.T, policy string, secrets []string, records ...string) (lines []string, logs string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dead.jsonl")
	var logBuf bytes.Buffer
	e := &engine{log: NewStderrLogger(&logBuf, slog.LevelInfo), dead: newDeadLetters(path, secrets)}
	n := &node{def: &ordersTestDef, check: testValidator(t, policy)}
	for _, r := range records {
		if _, err := e.validate(n, record(t, r), testExtracted); err != nil {
			t.Fatalf("validate %s: %v", r, err)
		}
	}
	if err := e.dead.Close(); err != nil {
		t.Fatal(err)
	}
	return readLines(t, path), logBuf.String()
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

func TestValidatePolicies(t *testing.T) {
	type outcome struct {
		emit bool
		err  string // substring; "" = no error
	}
	records := []struct {
		name, record string
		bad          bool
		pointer      string // of the first violation
		message      string
	}{
		{"valid", recValid, false, "", ""},
		{"wrong type", recWrongType, true, "/amount", "expected number, but got string"},
		{"missing required", recMissing, true, "/amount", "required property is missing"},
		{"extra field", recExtra, false, "", ""},
		{"malformed date-time", recBadDateTime, true, "/updated_at", "'2026-13-01T00:00:00Z' is not valid 'date-time'"},
		{"20-digit integer", recBigInt, false, "", ""},
	}
	for _, policy := range []string{ViolationFail, ViolationEmit, ViolationDeadLetter} {
		for _, r := range records {
			t.Run(policy+"/"+r.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "dead.jsonl")
				var logs bytes.Buffer
				e := &engine{log: NewStderrLogger(&logs, slog.LevelInfo), dead: newDeadLetters(path, nil)}
				n := &node{def: &ordersTestDef, check: testValidator(t, policy)}
				m := record(t, r.record)
				emit, err := e.validate(n, m, testExtracted)
				e.dead.Close()

				want := outcome{emit: true}
				pk := fmt.Sprintf(`{"id":%s}`, m["id"])
				if r.bad {
					switch policy {
					case ViolationFail:
						want = outcome{false, fmt.Sprintf(`stream "orders": record %s fails its schema at %q: %s (on_schema_violation is fail)`, pk, r.pointer, r.message)}
					case ViolationDeadLetter:
						want = outcome{emit: false}
					}
				}
				got := outcome{emit: emit}
				if err != nil {
					got.err = err.Error()
				}
				if got != want {
					t.Errorf("validate = %+v, want %+v", got, want)
				}

				lines := readLines(t, path)
				if r.bad && policy == ViolationDeadLetter {
					if len(lines) != 1 {
						t.Fatalf("dead letters: %q, want 1 line", lines)
					}
				} else if lines != nil {
					t.Errorf("dead letters written under %s: %q", policy, lines)
				}
				warned := strings.Contains(logs.String(), "record fails its schema; emitted anyway")
				if wantWarn := r.bad && policy == ViolationEmit; warned != wantWarn {
					t.Errorf("warning logged = %v, want %v:\n%s", warned, wantWarn, logs.String())
				}
				if r.bad && policy == ViolationEmit {
					for _, s := range []string{"stream=orders", "primary_key=" + fmt.Sprintf("%q", pk), "pointer=" + r.pointer} {
						if !strings.Contains(logs.String(), s) {
							t.Errorf("warning lacks %q:\n%s", s, logs.String())
						}
					}
				}
			})
		}
	}
}

// TestDeadLetterLine checks the whole line: stream, primary key, the
// record as it came, every error with the pointer of the bad field, and
// the extraction time in UTC.
func TestDeadLetterLine(t *testing.T) {
	lines, _ := runValidate(t, ViolationDeadLetter, nil,
		recValid,
		`{"id":2,"amount":"2.50","updated_at":"2026-13-01T00:00:00Z","coupon":"SAVE10"}`,
		recMissing,
	)
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	type errLine struct {
		Pointer string `json:"pointer"`
		Message string `json:"message"`
	}
	type line struct {
		Stream        string         `json:"stream"`
		PrimaryKey    map[string]any `json:"primary_key"`
		Record        map[string]any `json:"record"`
		Errors        []errLine      `json:"errors"`
		TimeExtracted string         `json:"time_extracted"`
	}
	decode := func(s string) line {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		dec.DisallowUnknownFields()
		var l line
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("line %s: %v", s, err)
		}
		slices.SortFunc(l.Errors, func(a, b errLine) int { return strings.Compare(a.Pointer, b.Pointer) })
		return l
	}
	want := []line{{
		Stream:     "orders",
		PrimaryKey: map[string]any{"id": json.Number("2")},
		Record: map[string]any{"id": json.Number("2"), "amount": "2.50", "updated_at": "2026-13-01T00:00:00Z",
			"coupon": "SAVE10"},
		Errors: []errLine{
			{"/amount", "expected number, but got string"},
			{"/updated_at", "'2026-13-01T00:00:00Z' is not valid 'date-time'"},
		},
		TimeExtracted: "2026-08-18T07:00:00.123456789Z",
	}, {
		Stream:        "orders",
		PrimaryKey:    map[string]any{"id": json.Number("3")},
		Record:        map[string]any{"id": json.Number("3")},
		Errors:        []errLine{{"/amount", "required property is missing"}},
		TimeExtracted: "2026-08-18T07:00:00.123456789Z",
	}}
	for i := range want {
		if d := cmp.Diff(want[i], decode(lines[i])); d != "" {
			t.Errorf("line %d (-want +got):\n%s", i+1, d)
		}
	}
	// Key order of a line is fixed, so files diff well.
	if !strings.HasPrefix(lines[0], `{"stream":"orders","primary_key":{"id":2},"record":{`) {
		t.Errorf("line 1 starts %q", lines[0][:min(60, len(lines[0]))])
	}
}

func TestDeadLetterRedactsSecrets(t *testing.T) {
	const secret = "s3cr3t-token-Zq9"
	lines, _ := runValidate(t, ViolationDeadLetter, []string{secret, "hunter2"},
		// The record echoes the token in a field, in an unknown field, and
		// in a value whose error message quotes it.
		`{"id":1,"amount":"x","note":"Authorization: Bearer s3cr3t-token-Zq9","debug":{"auth":"s3cr3t-token-Zq9"}}`,
		`{"id":2,"amount":1,"updated_at":"hunter2"}`,
	)
	if len(lines) != 2 {
		t.Fatalf("lines: %q", lines)
	}
	all := strings.Join(lines, "\n")
	for _, s := range []string{secret, "hunter2"} {
		if strings.Contains(all, s) {
			t.Errorf("secret %q in the dead-letter file:\n%s", s, all)
		}
	}
	for _, want := range []string{`"note":"Authorization: Bearer REDACTED"`, `"auth":"REDACTED"`, `"'REDACTED' is not valid 'date-time'"`, `"updated_at":"REDACTED"`} {
		if !strings.Contains(all, want) {
			t.Errorf("dead letters lack %s:\n%s", want, all)
		}
	}
	for i, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("line %d is not JSON after redaction: %s", i+1, l)
		}
	}
}

// Secrets must not reach the dead letters, errors or logs, even when a
// record echoes one back.
func TestSecretsDoNotLeak(t *testing.T) {
	t.Run("secret with a character JSON escapes reaches the dead-letter file", func(t *testing.T) {
		const secret = `pa"ss\word`
		lines, _ := runValidate(t, ViolationDeadLetter, []string{secret}, `{"id":1,"amount":"x","note":"pa\"ss\\word"}`)
		var rec struct {
			Record map[string]any `json:"record"`
		}
		json.Unmarshal([]byte(lines[0]), &rec)
		if strings.Contains(fmt.Sprint(rec.Record), secret) {
			t.Errorf("secret leaked: %s", lines[0])
		}
	})
	t.Run("a value quoted by a format error reaches errors and logs", func(t *testing.T) {
		var logs bytes.Buffer
		e := &engine{log: NewStderrLogger(&logs, slog.LevelInfo), dead: newDeadLetters(filepath.Join(t.TempDir(), "d"), []string{"hunter2"})}
		n := &node{def: &ordersTestDef, check: testValidator(t, ViolationFail)}
		_, err := e.validate(n, record(t, `{"id":1,"amount":1,"updated_at":"hunter2"}`), testExtracted)
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error: %v", err)
		}
	})
}

func TestDriftDoesNotLeakSecrets(t *testing.T) {
	s, err := settings.DecodeJSON([]byte(ordersTestSchema))
	if err != nil {
		t.Fatal(err)
	}
	d := ordersTestDef
	v, err := newValidator(&d, s.(map[string]any), ViolationDeadLetter, "hunter2")
	if err != nil {
		t.Fatal(err)
	}
	v.violations(record(t, `{"id":1,"amount":1,"echo":"hunter2","updated_at":"hunter2"}`))
	for _, e := range v.drift.entries("orders") {
		if strings.Contains(e.text, "hunter2") {
			t.Errorf("drift line carries a record value that may be a secret: %s", e.text)
		}
	}
}

func TestDeadLettersConcurrentAndAppending(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dead.jsonl")
	if err := os.WriteFile(path, []byte(`{"from":"an earlier run"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := newDeadLetters(path, nil)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				rec := map[string]any{"id": json.Number(fmt.Sprint(g*1000 + i)), "pad": strings.Repeat("x", 5000)}
				if err := d.Write(deadLetter{Stream: "s", PrimaryKey: map[string]any{"id": rec["id"]}, Record: rec, Errors: []Violation{{"/pad", "too long"}}}); err != nil {
					t.Error(err)
				}
			}
		}(g)
	}
	wg.Wait()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, path)
	if len(lines) != 401 || d.count != 400 {
		t.Fatalf("%d lines, count %d; want 401 lines (1 earlier + 400), count 400", len(lines), d.count)
	}
	seen := map[string]bool{}
	for _, l := range lines[1:] {
		var dl struct {
			PrimaryKey map[string]json.Number `json:"primary_key"`
		}
		if err := json.Unmarshal([]byte(l), &dl); err != nil {
			t.Fatalf("interleaved or broken line: %v", err)
		}
		seen[dl.PrimaryKey["id"].String()] = true
	}
	if len(seen) != 400 {
		t.Errorf("%d distinct records, want 400", len(seen))
	}
}

func TestDeadLettersOpenLazily(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dead.jsonl")
	d := newDeadLetters(path, nil)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("file created with no dead letter: %v", err)
	}
	bad := newDeadLetters(filepath.Join(t.TempDir(), "no", "such", "dir", "d.jsonl"), nil)
	err := bad.Write(deadLetter{Stream: "s"})
	if err == nil || !strings.Contains(err.Error(), "dead_letter_path: cannot open") {
		t.Errorf("error %v", err)
	}
}

func TestDriftReport(t *testing.T) {
	v := testValidator(t, ViolationDeadLetter)
	long := strings.Repeat("y", 200)
	for _, r := range []string{
		recValid,
		`{"id":2,"amount":"2.50","coupon":"SAVE10"}`,
		`{"id":3,"amount":"1","coupon":"SAVE20","blob":"` + long + `"}`,
		recMissing,
		`{"id":4,"address":{}}`,
		recBadDateTime,
		`{"id":"6","amount":1}`,
	} {
		v.violations(record(t, r))
	}
	type entry struct {
		Kind, Field string
		Count       int
		Text        string
	}
	var got []entry
	for _, e := range v.drift.entries("orders") {
		got = append(got, entry{e.kind, e.field, e.count, e.text})
	}
	want := []entry{
		{"extra_property", "blob", 1, `stream "orders": property "blob" is not in the schema: seen in 1 records, e.g. "` + strings.Repeat("y", 76) + `...`},
		{"extra_property", "coupon", 2, `stream "orders": property "coupon" is not in the schema: seen in 2 records, e.g. "SAVE10"`},
		// A missing property is counted by its pointer, so same-named
		// properties at different levels stay apart.
		{"missing_required", "/address/zip", 1, `stream "orders": required property /address/zip missing in 1 records`},
		{"missing_required", "/amount", 2, `stream "orders": required property /amount missing in 2 records`},
		{"type_change", "/amount", 2, `stream "orders": /amount changed type in 2 records (expected number, but got string)`},
		{"type_change", "/id", 1, `stream "orders": /id changed type in 1 records (expected integer, but got string)`},
		{"violation", "/updated_at", 1, `stream "orders": /updated_at fails its schema in 1 records ('2026-13-01T00:00:00Z' is not valid 'date-time')`},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("drift (-want +got):\n%s", d)
	}

	clean := testValidator(t, ViolationDeadLetter)
	clean.violations(record(t, recValid))
	clean.violations(record(t, recBigInt))
	if e := clean.drift.entries("orders"); len(e) != 0 {
		t.Errorf("drift of clean records: %+v", e)
	}
}
