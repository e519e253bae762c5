package records

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

	"github.com/tap-dev/tap/codec"
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

// testValidator checks orders records under policy; dead letters and
// logs go to dead and log, which may be nil when policy needs neither.
func testValidator(t testing.TB, policy Policy, dead *DeadLetters, log *slog.Logger, secrets ...string) *Validator {
	t.Helper()
	v, err := New(Options{Stream: "orders", PrimaryKey: []string{"id"}, Schema: record(t, ordersTestSchema),
		Policy: policy, Redactor: redactor(secrets), DeadLetters: dead, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// redactor replaces each secret by REDACTED, as the tap's does.
type redactor []string

func (r redactor) Redact(s string) string {
	for _, secret := range r {
		s = strings.ReplaceAll(s, secret, "REDACTED")
	}
	return s
}

func (r redactor) Value(v any) any { return codec.MapStrings(v, r.Redact) }

// record decodes a record as the engine gets it (numbers as json.Number).
func record(t testing.TB, s string) map[string]any {
	t.Helper()
	v, err := codec.Decode([]byte(s))
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
		// math/big will not read it; the library panicked on it.
		{"integer with an exponent out of range", `{"id":1e10000000,"amount":1}`, []Violation{{"/id", "number out of range: its exponent is too large to check"}}},
		{"number with an exponent out of range", `{"id":1,"amount":1e10000000}`, nil},
		{"null where not allowed", `{"id":7,"amount":null}`, []Violation{{"/amount", "expected number, but got null"}}},
		{"several at once", `{"id":"8","amount":1,"updated_at":"yesterday","address":{"zip":75001}}`, []Violation{
			{"/address/zip", "expected string, but got number"},
			{"/id", "expected integer, but got string"},
			{"/updated_at", "'yesterday' is not valid 'date-time'"},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := testValidator(t, DeadLetter, nil, nil)
			got := v.Violations(record(t, c.record))
			slices.SortFunc(got, func(a, b Violation) int { return strings.Compare(a.Pointer, b.Pointer) })
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("violations (-want +got):\n%s", d)
			}
		})
	}
}

// TestBigIntegerKeepsItsText: a 20-digit id validates as an integer and
// is written back with every digit in a dead letter.
func TestBigIntegerKeepsItsText(t *testing.T) {
	v := testValidator(t, DeadLetter, nil, nil)
	if bad := v.Violations(record(t, recBigInt)); bad != nil {
		t.Fatalf("violations: %v", bad)
	}
	lines, _ := runValidate(t, DeadLetter, nil, `{"id":12345678901234567890,"amount":"x"}`)
	if len(lines) != 1 || !strings.Contains(lines[0], `"primary_key":{"id":12345678901234567890}`) ||
		!strings.Contains(lines[0], `"record":{"amount":"x","id":12345678901234567890}`) {
		t.Errorf("dead letter lost digits: %q", lines)
	}
}

var testExtracted = time.Date(2026, 8, 18, 9, 0, 0, 123456789, time.FixedZone("X", 2*3600))

var testRun = Run{ID: "01KB0000000000000000000000", StartedAt: time.Date(2026, 8, 18, 8, 59, 0, 0, time.FixedZone("X", 2*3600))}

// testLogger logs text lines at level or above into b, without times.
func testLogger(b *bytes.Buffer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: level, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
}

// runValidate passes records through Check under policy and returns the
// dead-letter lines and the log.
func runValidate(t *testing.T, policy Policy, secrets []string, records ...string) (lines []string, logs string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dead.jsonl")
	var logBuf bytes.Buffer
	dead := NewDeadLetters(path, testRun, redactor(secrets))
	v := testValidator(t, policy, dead, testLogger(&logBuf, slog.LevelInfo), secrets...)
	for _, r := range records {
		if _, err := v.Check(record(t, r), testExtracted); err != nil {
			t.Fatalf("check %s: %v", r, err)
		}
	}
	if err := dead.Close(); err != nil {
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
	for _, policy := range []Policy{Fail, Emit, DeadLetter} {
		for _, r := range records {
			t.Run(string(policy)+"/"+r.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "dead.jsonl")
				var logs bytes.Buffer
				dead := NewDeadLetters(path, testRun, nil)
				v := testValidator(t, policy, dead, testLogger(&logs, slog.LevelInfo))
				m := record(t, r.record)
				emit, err := v.Check(m, testExtracted)
				dead.Close()

				want := outcome{emit: true}
				pk := fmt.Sprintf(`{"id":%s}`, m["id"])
				if r.bad {
					switch policy {
					case Fail:
						want = outcome{false, fmt.Sprintf(`stream "orders": record %s fails its schema at %q: %s (on_schema_violation is fail)`, pk, r.pointer, r.message)}
					case DeadLetter:
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
				if r.bad && policy == DeadLetter {
					if len(lines) != 1 {
						t.Fatalf("dead letters: %q, want 1 line", lines)
					}
				} else if lines != nil {
					t.Errorf("dead letters written under %s: %q", policy, lines)
				}
				warned := strings.Contains(logs.String(), "record fails its schema; emitted anyway")
				if wantWarn := r.bad && policy == Emit; warned != wantWarn {
					t.Errorf("warning logged = %v, want %v:\n%s", warned, wantWarn, logs.String())
				}
				if r.bad && policy == Emit {
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

// TestDeadLetterLine checks the whole line: its kind, the run that wrote
// it, stream, primary key, the record as it came, every error with the
// pointer of the bad field, and the extraction time in UTC.
func TestDeadLetterLine(t *testing.T) {
	lines, _ := runValidate(t, DeadLetter, nil,
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
		Kind          string         `json:"kind"`
		RunID         string         `json:"run_id"`
		RunStartedAt  string         `json:"run_started_at"`
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
		Kind:         "record",
		RunID:        testRun.ID,
		RunStartedAt: "2026-08-18T06:59:00Z",
		Stream:       "orders",
		PrimaryKey:   map[string]any{"id": json.Number("2")},
		Record: map[string]any{"id": json.Number("2"), "amount": "2.50", "updated_at": "2026-13-01T00:00:00Z",
			"coupon": "SAVE10"},
		Errors: []errLine{
			{"/amount", "expected number, but got string"},
			{"/updated_at", "'2026-13-01T00:00:00Z' is not valid 'date-time'"},
		},
		TimeExtracted: "2026-08-18T07:00:00.123456789Z",
	}, {
		Kind:          "record",
		RunID:         testRun.ID,
		RunStartedAt:  "2026-08-18T06:59:00Z",
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
	if want := `{"kind":"record","run_id":"01KB0000000000000000000000","run_started_at":"2026-08-18T06:59:00Z","stream":"orders","primary_key":{"id":2},"record":{`; !strings.HasPrefix(lines[0], want) {
		t.Errorf("line 1 starts %q, want %q", lines[0][:min(len(want), len(lines[0]))], want)
	}
}

func TestDeadLetterRedactsSecrets(t *testing.T) {
	const secret = "s3cr3t-token-Zq9"
	lines, _ := runValidate(t, DeadLetter, []string{secret, "hunter2"},
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
		lines, _ := runValidate(t, DeadLetter, []string{secret}, `{"id":1,"amount":"x","note":"pa\"ss\\word"}`)
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
		for _, policy := range []Policy{Fail, Emit} {
			v := testValidator(t, policy, nil, testLogger(&logs, slog.LevelDebug), "hunter2")
			_, err := v.Check(record(t, `{"id":1,"amount":1,"updated_at":"hunter2"}`), testExtracted)
			if (policy == Fail) != (err != nil) || err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("%s: error: %v", policy, err)
			}
		}
		if !strings.Contains(logs.String(), "REDACTED") || strings.Contains(logs.String(), "hunter2") {
			t.Errorf("log:\n%s", logs.String())
		}
	})
	t.Run("a primary key holding a secret JSON escapes reaches the error", func(t *testing.T) {
		v := testValidator(t, Fail, nil, nil, `pa"ss`)
		_, err := v.Check(record(t, `{"id":"pa\"ss","amount":1}`), testExtracted)
		if want := `stream "orders": record {"id":"REDACTED"} fails its schema at "/id": expected integer, but got string (on_schema_violation is fail)`; err == nil || err.Error() != want {
			t.Errorf("error %v, want %s", err, want)
		}
	})
}

// The drift report must carry no secret, at any level, even one with a
// character JSON escapes.
func TestDriftDoesNotLeakSecrets(t *testing.T) {
	v := testValidator(t, DeadLetter, nil, nil, "hunter2", `pa"ss`)
	v.Violations(record(t, `{"id":1,"amount":1,"echo":"hunter2","quoted":{"k":"pa\"ss"},"updated_at":"hunter2"}`))
	var examples []string
	for _, e := range v.Drift().Entries() {
		examples = append(examples, e.Text, e.Example)
	}
	got := strings.Join(examples, "\n")
	for _, want := range []string{`"REDACTED"`, `{"k":"REDACTED"}`, "'REDACTED' is not valid 'date-time'"} {
		if !strings.Contains(got, want) {
			t.Errorf("drift lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "hunter2") || strings.Contains(got, `pa\"ss`) {
		t.Errorf("drift carries a secret:\n%s", got)
	}
}

func TestDeadLettersConcurrentAndAppending(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dead.jsonl")
	if err := os.WriteFile(path, []byte(`{"from":"an earlier run"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := NewDeadLetters(path, testRun, nil)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				rec := map[string]any{"id": json.Number(fmt.Sprint(g*1000 + i)), "pad": strings.Repeat("x", 5000)}
				if err := d.write(letter{Stream: "s", PrimaryKey: map[string]any{"id": rec["id"]}, Record: rec, Errors: []Violation{{"/pad", "too long"}}}); err != nil {
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
	if len(lines) != 401 || d.Count() != 400 {
		t.Fatalf("%d lines, count %d; want 401 lines (1 earlier + 400), count 400", len(lines), d.Count())
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
	d := NewDeadLetters(path, testRun, nil)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("file created with no dead letter: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "no", "such", "dir", "d.jsonl")
	err := NewDeadLetters(missing, testRun, nil).write(letter{Stream: "s"})
	if want := "dead_letter_path: cannot open " + missing + ": no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// Two runs appending to one file are told apart by their run ids, which
// sort as the runs started.
func TestDeadLettersOfTwoRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dead.jsonl")
	start := time.Date(2026, 8, 18, 9, 0, 0, 0, time.UTC)
	var runs []Run
	for i, at := range []time.Time{start, start.Add(time.Millisecond)} {
		run, err := NewRun(at)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run)
		d := NewDeadLetters(path, run, nil)
		for j := 0; j < 2; j++ {
			if err := d.write(letter{Stream: "s", PrimaryKey: map[string]any{"id": i*10 + j}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	type marker struct {
		Kind         string `json:"kind"`
		RunID        string `json:"run_id"`
		RunStartedAt string `json:"run_started_at"`
	}
	var got []marker
	for _, l := range readLines(t, path) {
		var m marker
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	first := marker{"record", runs[0].ID, "2026-08-18T09:00:00Z"}
	second := marker{"record", runs[1].ID, "2026-08-18T09:00:00.001Z"}
	if d := cmp.Diff([]marker{first, first, second, second}, got); d != "" {
		t.Errorf("markers (-want +got):\n%s", d)
	}
	if runs[0].ID >= runs[1].ID {
		t.Errorf("run ids %s, %s do not sort in start order", runs[0].ID, runs[1].ID)
	}
}

func TestNewRun(t *testing.T) {
	at := time.Date(2026, 8, 18, 9, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		run, err := NewRun(at)
		if err != nil {
			t.Fatal(err)
		}
		if len(run.ID) != 26 || strings.Trim(run.ID, "0123456789ABCDEFGHJKMNPQRSTVWXYZ") != "" {
			t.Fatalf("id %q: want 26 Crockford base32 digits", run.ID)
		}
		// The first 10 digits are the milliseconds: the same for one time.
		if want := "01M0A1JNM0"; run.ID[:10] != want {
			t.Fatalf("id %q: time part %s, want %s", run.ID, run.ID[:10], want)
		}
		if seen[run.ID] {
			t.Fatalf("id %q repeated: the random part is not random", run.ID)
		}
		seen[run.ID] = true
		if !run.StartedAt.Equal(at) {
			t.Errorf("started at %v", run.StartedAt)
		}
	}
}

func TestULIDEncoding(t *testing.T) {
	for _, c := range []struct {
		in   [16]byte
		want string
	}{
		{[16]byte{}, "00000000000000000000000000"},
		{[16]byte{15: 1}, "00000000000000000000000001"},
		{[16]byte{15: 32}, "00000000000000000000000010"},
		{[16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"},
		{[16]byte{0x80}, "40000000000000000000000000"},
	} {
		if got := ulid(c.in); got != c.want {
			t.Errorf("ulid(%x) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestDriftReport(t *testing.T) {
	v := testValidator(t, DeadLetter, nil, nil)
	long := strings.Repeat("y", 200)
	for _, r := range []string{
		recValid,
		`{"id":2,"amount":"2.50","coupon":"SAVE10"}`,
		`{"id":3,"amount":"1","coupon":null,"blob":"` + long + `"}`,
		recMissing,
		`{"id":4,"address":{}}`,
		recBadDateTime,
		`{"id":"6","amount":1,"coupon":7}`,
	} {
		v.Violations(record(t, r))
	}
	want := []Entry{
		{"extra_property", "blob", 1, `stream "orders": property "blob" is not in the schema: seen in 1 records (string: 1)`, `"` + strings.Repeat("y", 76) + `...`},
		{"extra_property", "coupon", 3, `stream "orders": property "coupon" is not in the schema: seen in 3 records (integer: 1, null: 1, string: 1)`, `"SAVE10"`},
		// A missing property is counted by its pointer, so same-named
		// properties at different levels stay apart.
		{"missing_required", "/address/zip", 1, `stream "orders": required property /address/zip missing in 1 records`, ""},
		{"missing_required", "/amount", 2, `stream "orders": required property /amount missing in 2 records`, ""},
		{"type_change", "/amount", 2, `stream "orders": /amount changed type in 2 records (expected number, but got string)`, ""},
		{"type_change", "/id", 1, `stream "orders": /id changed type in 1 records (expected integer, but got string)`, ""},
		{"violation", "/updated_at", 1, `stream "orders": /updated_at fails "format" in 1 records`, `'2026-13-01T00:00:00Z' is not valid 'date-time'`},
	}
	if d := cmp.Diff(want, v.Drift().Entries()); d != "" {
		t.Errorf("drift (-want +got):\n%s", d)
	}

	clean := testValidator(t, DeadLetter, nil, nil)
	clean.Violations(record(t, recValid))
	clean.Violations(record(t, recBigInt))
	if e := clean.Drift().Entries(); len(e) != 0 {
		t.Errorf("drift of clean records: %+v", e)
	}
}

// The drift report names properties, types and counts at WARN; a record's
// values may be personal data and appear only at debug level.
func TestDriftReportValuesOnlyAtDebug(t *testing.T) {
	const email = "jane.doe@example.com"
	records := []string{
		`{"id":1,"amount":1,"contact":"` + email + `"}`,
		`{"id":2,"amount":1,"updated_at":"` + email + `"}`,
	}
	for _, c := range []struct {
		level     slog.Level
		wantValue bool
	}{{slog.LevelInfo, false}, {slog.LevelWarn, false}, {slog.LevelDebug, true}} {
		t.Run(c.level.String(), func(t *testing.T) {
			v := testValidator(t, DeadLetter, nil, nil)
			for _, r := range records {
				v.Violations(record(t, r))
			}
			var logs bytes.Buffer
			entries := v.Drift().Report(testLogger(&logs, c.level))
			if len(entries) != 2 {
				t.Fatalf("entries: %+v", entries)
			}
			out := logs.String()
			for _, want := range []string{
				`level=WARN msg="schema drift: stream \"orders\": property \"contact\" is not in the schema: seen in 1 records (string: 1)"`,
				`level=WARN msg="schema drift: stream \"orders\": /updated_at fails \"format\" in 1 records"`,
			} {
				if !strings.Contains(out, want) {
					t.Errorf("report lacks %s:\n%s", want, out)
				}
			}
			if got := strings.Contains(out, email); got != c.wantValue {
				t.Errorf("at %s the value is in the report: %v, want %v:\n%s", c.level, got, c.wantValue, out)
			}
			if c.wantValue {
				for _, want := range []string{
					`level=DEBUG msg="schema drift example" stream=orders kind=extra_property field=contact example="\"jane.doe@example.com\""`,
					`level=DEBUG msg="schema drift example" stream=orders kind=violation field=/updated_at example="'jane.doe@example.com' is not valid 'date-time'"`,
				} {
					if !strings.Contains(out, want) {
						t.Errorf("report lacks %s:\n%s", want, out)
					}
				}
			}
		})
	}
}

// Drift tracks the first maxDriftFields fields, and counts the findings
// beyond: records of distinct keys once grew it (500,000 keys: 404 MB)
// and its report (a WARN and a METRIC line each) without end.
func TestDriftTracksBoundedFields(t *testing.T) {
	v := testValidator(t, DeadLetter, nil, nil)
	const n = 5000
	for i := range n {
		v.Violations(record(t, fmt.Sprintf(`{"id":%d,"amount":1,"k%d":true}`, i, i)))
	}
	v.Violations(record(t, `{"id":1,"amount":1,"k0":1}`)) // a tracked field is still counted
	var logs bytes.Buffer
	entries := v.Drift().Report(testLogger(&logs, slog.LevelInfo))
	if len(entries) != maxDriftFields+1 {
		t.Fatalf("%d entries, want %d and the untracked count", len(entries), maxDriftFields)
	}
	if e := entries[0]; e.Field != "k0" || e.Count != 2 {
		t.Errorf("first entry %+v, want k0 in 2 records", e)
	}
	want := Entry{"untracked", "", n - maxDriftFields,
		fmt.Sprintf(`stream "orders": %d more findings not tracked: drift tracks the first 100 properties and pointers`, n-maxDriftFields), ""}
	if d := cmp.Diff(want, entries[len(entries)-1]); d != "" {
		t.Errorf("last entry (-want +got):\n%s", d)
	}
	if lines := strings.Count(logs.String(), "\n"); lines != maxDriftFields+1 {
		t.Errorf("the report is %d lines, want %d", lines, maxDriftFields+1)
	}
}

// A stream's name is any text: one with a space, #, ? or % compiles and
// validates as any other ("no Loader found for tap:///csv%20field.json"
// before).
func TestCompileAnyStreamName(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}}}
	for _, name := range []string{"csv field", "a#b", "what?", "100%", "ünï/cödé"} {
		s, err := Compile(name, schema)
		if err != nil {
			t.Errorf("Compile(%q): %v", name, err)
			continue
		}
		if err := s.Validate(map[string]any{"id": "x"}); err == nil {
			t.Errorf("Compile(%q): the schema takes a string id", name)
		}
	}
}
