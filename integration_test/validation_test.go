package integration_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// validationRecords are served by a small API: good records, and one of
// each way a record can drift from its schema.
const validationRecords = `[
 {"id": 1, "amount": 10.5, "updated_at": "2026-01-01T00:00:00Z", "note": "good"},
 {"id": 2, "amount": "12.30", "updated_at": "2026-01-02T00:00:00Z", "note": "wrong type"},
 {"id": 3, "updated_at": "2026-01-03T00:00:00Z", "note": "missing required"},
 {"id": 4, "amount": 1, "updated_at": "2026-01-04T00:00:00Z", "note": "extra field", "coupon": "SAVE10"},
 {"id": 5, "amount": 2, "updated_at": "2026-13-05T99:00:00Z", "note": "malformed date-time"},
 {"id": 6, "amount": 3, "updated_at": "2026-01-06T00:00:00Z", "note": "20-digit integer", "big": 12345678901234567890},
 {"id": 7, "amount": 4, "updated_at": "2026-01-07T00:00:00Z", "note": "echoes SENTINEL-SECRET-7f3a", "big": "not a number", "echo": {"auth": "SENTINEL-SECRET-7f3a"}}
]`

var validationSchema = map[string]any{
	"type":     "object",
	"required": []any{"id", "amount", "updated_at"},
	"properties": map[string]any{
		"id":         map[string]any{"type": "integer"},
		"amount":     map[string]any{"type": "number"},
		"updated_at": map[string]any{"type": "string", "format": "date-time"},
		"note":       map[string]any{"type": "string"},
		"big":        map[string]any{"type": "integer"},
	},
}

// runValidationMode syncs the stream under mode, runs times in one folder,
// with extra command-line arguments, and returns the last run's result
// and the dead-letter file.
func runValidationMode(t *testing.T, mode string, runs int, args ...string) (result, string) {
	t.Helper()
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(validationRecords))
	}))
	dir := t.TempDir()
	cfg := map[string]any{
		"base_url":            base,
		"auth":                map[string]any{"type": "bearer", "token": sentinel},
		"rate_limit":          map[string]any{"requests_per_second": 0},
		"on_schema_violation": mode,
		"dead_letter_path":    "dead.jsonl",
		"streams": []any{map[string]any{
			"name": "orders", "path": "/orders", "records_path": "", "primary_key": []any{"id"},
			"replication_key": "updated_at", "schema": validationSchema,
		}},
	}
	b, _ := json.Marshal(cfg)
	writeFile(t, filepath.Join(dir, "config.json"), b)
	var r result
	for i := 0; i < runs; i++ {
		r = runTap(t, dir, time.Minute, nil, append([]string{"--config", "config.json"}, args...)...)
	}
	dead, _ := os.ReadFile(filepath.Join(dir, "dead.jsonl"))
	// A RECORD is the API's data, kept as it came; logs, errors, STATE and
	// dead letters must not carry the secret it echoes.
	outs := [][]byte{r.stderr, dead}
	for _, m := range parseSinger(t, r.stdout) {
		outs = append(outs, m.Value)
	}
	for _, out := range outs {
		if bytes.Contains(out, []byte(sentinel)) {
			t.Errorf("the secret leaked:\n%s", out)
		}
	}
	return r, string(dead)
}

func emittedIDs(t *testing.T, out []byte) []string {
	var ids []string
	for _, m := range parseSinger(t, out) {
		if m.Type == "RECORD" {
			var rec map[string]json.RawMessage
			json.Unmarshal(m.Record, &rec)
			ids = append(ids, string(rec["id"]))
		}
	}
	return ids
}

func TestSchemaViolationModes(t *testing.T) {
	t.Run("dead_letter", func(t *testing.T) {
		r, dead := runValidationMode(t, "dead_letter", 2)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if diff := cmp.Diff([]string{"1", "4", "6"}, emittedIDs(t, r.stdout)); diff != "" {
			t.Errorf("emitted ids (-want +got):\n%s", diff)
		}
		if !bytes.Contains(r.stdout, []byte(`"big":12345678901234567890`)) {
			t.Errorf("the 20-digit integer lost digits:\n%s", r.stdout)
		}
		type letter struct {
			Kind         string         `json:"kind"`
			RunID        string         `json:"run_id"`
			RunStartedAt string         `json:"run_started_at"`
			Stream       string         `json:"stream"`
			PrimaryKey   map[string]any `json:"primary_key"`
			Record       map[string]any `json:"record"`
			Errors       []struct {
				Pointer string `json:"pointer"`
				Message string `json:"message"`
			} `json:"errors"`
			TimeExtracted string `json:"time_extracted"`
		}
		// Two runs appended to the file; each line names its run.
		lines := strings.Split(strings.TrimSpace(dead), "\n")
		if len(lines) != 8 {
			t.Fatalf("%d dead letters, want 4 per run:\n%s", len(lines), dead)
		}
		ulid := regexp.MustCompile(`^[0-9A-HJKMNP-TV-Z]{26}$`)
		var runIDs []string
		for run := 0; run < 2; run++ {
			pointers := map[string][]string{}
			for _, line := range lines[run*4 : run*4+4] {
				var l letter
				if err := json.Unmarshal([]byte(line), &l); err != nil {
					t.Fatalf("dead letter %q: %v", line, err)
				}
				if l.Kind != "record" || l.Stream != "orders" || l.Record == nil || l.TimeExtracted == "" {
					t.Errorf("incomplete dead letter: %s", line)
				}
				if !ulid.MatchString(l.RunID) {
					t.Errorf("run_id %q is not a ULID: %s", l.RunID, line)
				}
				started, err := time.Parse(time.RFC3339Nano, l.RunStartedAt)
				extracted, err2 := time.Parse(time.RFC3339Nano, l.TimeExtracted)
				if err != nil || err2 != nil || extracted.Before(started) {
					t.Errorf("run_started_at %q, time_extracted %q: want two times, the run's start first", l.RunStartedAt, l.TimeExtracted)
				}
				if len(runIDs) == run {
					runIDs = append(runIDs, l.RunID)
				} else if l.RunID != runIDs[run] {
					t.Errorf("run %d wrote run ids %s and %s", run+1, runIDs[run], l.RunID)
				}
				id := l.PrimaryKey["id"].(float64)
				for _, e := range l.Errors {
					pointers[string(rune('0'+int(id)))] = append(pointers[string(rune('0'+int(id)))], e.Pointer)
				}
			}
			want := map[string][]string{"2": {"/amount"}, "3": {"/amount"}, "5": {"/updated_at"}, "7": {"/big"}}
			if diff := cmp.Diff(want, pointers); diff != "" {
				t.Errorf("run %d: dead letters by id → pointers (-want +got):\n%s", run+1, diff)
			}
		}
		if len(runIDs) == 2 && runIDs[0] == runIDs[1] {
			t.Errorf("two runs wrote the same run_id %s", runIDs[0])
		}
		if !strings.Contains(dead, "REDACTED") {
			t.Errorf("the echoed secret was not redacted in the dead letters:\n%s", dead)
		}
		for _, want := range []string{
			`WARN schema drift: stream "orders": property "coupon" is not in the schema: seen in 1 records (string: 1)`,
			"WARN schema drift: stream \"orders\": required property /amount missing in 1 records",
			"WARN schema drift: stream \"orders\": /amount changed type in 1 records (expected number, but got string)",
			`WARN schema drift: stream "orders": /updated_at fails "format" in 1 records`,
		} {
			if !bytes.Contains(r.stderr, []byte(want)) {
				t.Errorf("drift report lacks %q:\n%s", want, r.stderr)
			}
		}
		// Values may be personal data: at the default log level the drift
		// report names fields, types and counts, never what a record held.
		for _, value := range []string{"SAVE10", "2026-13-05T99:00:00Z"} {
			if bytes.Contains(r.stderr, []byte(value)) {
				t.Errorf("a record's value %q reached the log:\n%s", value, r.stderr)
			}
		}
		// The bookmark covers emitted records only.
		msgs := parseSinger(t, r.stdout)
		if last := msgs[len(msgs)-1]; last.Type != "STATE" || !bytes.Contains(last.Value, []byte(`"replication_key_value":"2026-01-06T00:00:00Z"`)) {
			t.Errorf("final state: %s", last.Value)
		}
	})
	// At debug level the drift report adds an example value of each
	// finding, secrets removed.
	t.Run("dead_letter at debug level", func(t *testing.T) {
		r, _ := runValidationMode(t, "dead_letter", 1, "--log-level", "debug")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		for _, want := range []string{
			`DEBUG schema drift example stream=orders kind=extra_property field=coupon example="\"SAVE10\""`,
			`DEBUG schema drift example stream=orders kind=extra_property field=echo example="{\"auth\":\"REDACTED\"}"`,
			`DEBUG schema drift example stream=orders kind=violation field=/updated_at example="'2026-13-05T99:00:00Z' is not valid 'date-time'"`,
		} {
			if !bytes.Contains(r.stderr, []byte(want)) {
				t.Errorf("stderr lacks %s:\n%s", want, r.stderr)
			}
		}
	})
	t.Run("fail", func(t *testing.T) {
		r, dead := runValidationMode(t, "fail", 1)
		if r.code != 1 {
			t.Fatalf("exit %d, want 1: %s", r.code, r.stderr)
		}
		if want := `tap: stream "orders": record {"id":2} fails its schema at "/amount": expected number, but got string (on_schema_violation is fail)`; !bytes.Contains(r.stderr, []byte(want)) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
		if dead != "" {
			t.Errorf("fail mode wrote dead letters: %s", dead)
		}
		for _, m := range parseSinger(t, r.stdout) {
			if m.Type == "STATE" && bytes.Contains(m.Value, []byte("replication_key_value")) {
				t.Errorf("a STATE moved the bookmark of a stream that failed: %s", m.Value)
			}
		}
	})
	t.Run("emit", func(t *testing.T) {
		r, dead := runValidationMode(t, "emit", 1)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if diff := cmp.Diff([]string{"1", "2", "3", "4", "5", "6", "7"}, emittedIDs(t, r.stdout)); diff != "" {
			t.Errorf("emitted ids (-want +got):\n%s", diff)
		}
		if dead != "" {
			t.Errorf("emit mode wrote dead letters: %s", dead)
		}
		if n := bytes.Count(r.stderr, []byte("record fails its schema; emitted anyway")); n != 4 {
			t.Errorf("%d violations logged, want 4:\n%s", n, r.stderr)
		}
	})
}
