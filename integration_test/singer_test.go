package integration_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sampleConfig is sample_config.json with the demo made small and fast:
// no faults, no rate limit.
func sampleConfig(t *testing.T, dir string) string {
	t.Helper()
	raw, err := os.ReadFile("../sample_config.json")
	if err != nil {
		t.Fatal(err)
	}
	patch := `{"rate_limit": {"requests_per_second": 0},
	  "dead_letter_path": "dead.jsonl",
	  "demo": {"requests_per_second": 0, "fail_rate": 0, "latency_ms": 0,
	           "customers": 60, "orders": 12, "events": 700, "invoices": 50, "tickets": 60, "issues": 70, "bars_days": 20}}`
	path := filepath.Join(dir, "config.json")
	writeFile(t, path, mergePatch(t, raw, []byte(patch)))
	return path
}

func TestDiscoverEqualsCatalogJSON(t *testing.T) {
	r := runTap(t, "..", time.Minute, nil, "--config", "sample_config.json", "--discover")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	want, err := os.ReadFile("../catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(r.stdout)); diff != "" {
		t.Errorf("--discover differs from catalog.json (regenerate it with: go run . --config sample_config.json --discover > catalog.json):\n%s", diff)
	}
	var cat struct {
		Streams []struct {
			TapStreamID string `json:"tap_stream_id"`
			Metadata    []struct {
				Breadcrumb []string       `json:"breadcrumb"`
				Metadata   map[string]any `json:"metadata"`
			} `json:"metadata"`
		} `json:"streams"`
	}
	if err := json.Unmarshal(r.stdout, &cat); err != nil {
		t.Fatal(err)
	}
	inclusion := map[string]string{}
	method := map[string]any{}
	for _, s := range cat.Streams {
		for _, m := range s.Metadata {
			if len(m.Breadcrumb) == 0 {
				method[s.TapStreamID] = m.Metadata["forced-replication-method"]
				for _, k := range []string{"table-key-properties", "valid-replication-keys", "selected-by-default"} {
					if _, ok := m.Metadata[k]; !ok {
						t.Errorf("%s: stream metadata lacks %s", s.TapStreamID, k)
					}
				}
				continue
			}
			inclusion[s.TapStreamID+"."+m.Breadcrumb[1]] = m.Metadata["inclusion"].(string)
		}
	}
	for key, want := range map[string]string{
		"orders.id": "automatic", "orders.updated_at": "automatic", "orders.amount": "available",
		"order_items.order_id": "automatic", "bars.symbol": "automatic", "bars.t": "automatic",
	} {
		if inclusion[key] != want {
			t.Errorf("inclusion of %s = %q, want %q", key, inclusion[key], want)
		}
	}
	if method["orders"] != "INCREMENTAL" || method["tickets"] != "FULL_TABLE" {
		t.Errorf("forced-replication-method: orders %v, tickets %v", method["orders"], method["tickets"])
	}
}

// singerMessage is any Singer message, with the fields each type needs.
type singerMessage struct {
	Type          string          `json:"type"`
	Stream        string          `json:"stream"`
	Record        json.RawMessage `json:"record"`
	Schema        json.RawMessage `json:"schema"`
	KeyProperties []string        `json:"key_properties"`
	Value         json.RawMessage `json:"value"`
	TimeExtracted string          `json:"time_extracted"`
	Version       *int64          `json:"version"`
}

// parseSinger checks that every stdout line is one whole Singer message
// and returns them.
func parseSinger(t *testing.T, out []byte) []singerMessage {
	t.Helper()
	var msgs []singerMessage
	schemas := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var m singerMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d is not JSON: %v: %.200s", n, err, sc.Text())
		}
		switch m.Type {
		case "SCHEMA":
			if m.Stream == "" || m.Schema == nil || m.KeyProperties == nil {
				t.Fatalf("line %d: SCHEMA without stream, schema or key_properties: %s", n, sc.Text())
			}
			schemas[m.Stream] = true
		case "RECORD":
			if !schemas[m.Stream] {
				t.Fatalf("line %d: RECORD of %q before its SCHEMA", n, m.Stream)
			}
			if _, err := time.Parse(time.RFC3339, m.TimeExtracted); err != nil || !strings.HasSuffix(m.TimeExtracted, "Z") {
				t.Fatalf("line %d: time_extracted %q is not RFC 3339 UTC", n, m.TimeExtracted)
			}
			if len(m.Record) == 0 || m.Record[0] != '{' {
				t.Fatalf("line %d: record is not an object", n)
			}
		case "STATE":
			if len(m.Value) == 0 || m.Value[0] != '{' {
				t.Fatalf("line %d: STATE value is not an object", n)
			}
		case "ACTIVATE_VERSION":
			if m.Version == nil {
				t.Fatalf("line %d: ACTIVATE_VERSION without version", n)
			}
		default:
			t.Fatalf("line %d: unknown message type %q", n, m.Type)
		}
		msgs = append(msgs, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return msgs
}

func TestSingerRunOfEveryDemoStream(t *testing.T) {
	dir := t.TempDir()
	cfg := sampleConfig(t, dir)
	r := runTap(t, dir, 2*time.Minute, nil, "--config", cfg)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	counts := map[string]int{}
	for _, m := range parseSinger(t, r.stdout) {
		if m.Type == "RECORD" {
			counts[m.Stream]++
		}
	}
	for _, s := range []string{"customers", "orders", "order_items", "events", "invoices", "tickets", "bars", "issues"} {
		if counts[s] == 0 {
			t.Errorf("no records of %s", s)
		}
	}
	// account_number starts above 2^53: its digits must survive exactly.
	if !bytes.Contains(r.stdout, []byte(`"account_number":9007199254740993`)) {
		t.Errorf("the big integer 9007199254740993 did not survive")
	}
	// METRIC lines only when asked (metrics_log_level), a time on every line.
	if bytes.Contains(r.stderr, []byte("METRIC: {")) || !bytes.Contains(r.stderr, []byte("run summary")) ||
		!regexp.MustCompile(`\A(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (INFO|WARN) [^\n]*\n)+\z`).Match(r.stderr) {
		t.Errorf("stderr: want the run summary, a time on every line and no METRIC line (metrics_log_level is debug):\n%s", r.stderr)
	}
	// The table a person reads: a row per stream, counting what stdout carries.
	table := summaryTable(t, r.stderr)
	for s, n := range counts {
		if got := table[s]["records"]; got != strconv.Itoa(n) {
			t.Errorf("summary table: stream %s has records %q, stdout %d", s, got, n)
		}
	}
}

func TestCatalogSelectsStreamsAndProperties(t *testing.T) {
	dir := t.TempDir()
	cfg := sampleConfig(t, dir)
	disc := runTap(t, dir, time.Minute, nil, "--config", cfg, "--discover")
	var cat map[string]any
	if err := json.Unmarshal(disc.stdout, &cat); err != nil {
		t.Fatal(err)
	}
	// Select customers only, without its email; try to drop its primary
	// key too, which is automatic and must stay.
	for _, s := range cat["streams"].([]any) {
		s := s.(map[string]any)
		for _, m := range s["metadata"].([]any) {
			m := m.(map[string]any)
			md := m["metadata"].(map[string]any)
			bc := m["breadcrumb"].([]any)
			switch {
			case len(bc) == 0:
				md["selected"] = s["tap_stream_id"] == "customers"
			case bc[1] == "email" || bc[1] == "id":
				md["selected"] = false
			}
		}
	}
	b, _ := json.Marshal(cat)
	writeFile(t, filepath.Join(dir, "catalog.json"), b)
	r := runTap(t, dir, 2*time.Minute, nil, "--config", cfg, "--catalog", "catalog.json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	records := 0
	for _, m := range parseSinger(t, r.stdout) {
		if m.Stream != "" && m.Stream != "customers" {
			t.Fatalf("stream %s was not selected but sent %s", m.Stream, m.Type)
		}
		switch m.Type {
		case "SCHEMA":
			if bytes.Contains(m.Schema, []byte(`"email"`)) || !bytes.Contains(m.Schema, []byte(`"id"`)) {
				t.Errorf("SCHEMA should drop email and keep id: %s", m.Schema)
			}
		case "RECORD":
			records++
			var rec map[string]any
			json.Unmarshal(m.Record, &rec)
			if _, ok := rec["email"]; ok {
				t.Fatalf("RECORD kept the deselected email: %s", m.Record)
			}
			if _, ok := rec["id"]; !ok {
				t.Fatalf("RECORD lost the automatic id: %s", m.Record)
			}
		}
	}
	if records != 60 {
		t.Errorf("%d customers, want 60", records)
	}
}

// SIGTERM (and SIGINT) stop the run cleanly: the last line out is a STATE,
// and every record it covers has reached the target. The signal is sent
// when the first STATE after a RECORD is out, so the run is surely under
// way; the proof of coverage is a resumed run from the last STATE
// completing every table.
func TestSIGTERMEndsWithState(t *testing.T) {
	t.Parallel()
	setup := newCrashSetup(false)
	srv, base := startDemo(t, setup.demo)
	d := newTapDir(t, setup.config(t, base))
	l := newLoader(t)

	cmd := exec.Command(tapBin, d.args(l)...)
	cmd.Dir = d.dir
	var out, errb bytes.Buffer
	cmd.Stderr = &errb
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A tap that ignores the signal is killed, and the test fails below.
	var overLimit atomic.Bool
	hard := time.AfterFunc(2*time.Minute, func() { overLimit.Store(true); cmd.Process.Kill() })
	defer hard.Stop()
	br := bufio.NewReader(pipe)
	records, signalled := 0, false
	for {
		line, err := br.ReadBytes('\n')
		out.Write(line)
		if err != nil {
			break
		}
		if bytes.HasPrefix(line, []byte(`{"type":"RECORD"`)) {
			records++
		}
		if !signalled && records > 0 && bytes.HasPrefix(line, []byte(`{"type":"STATE"`)) {
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			signalled = true
		}
	}
	werr := cmd.Wait()
	if overLimit.Load() {
		t.Fatalf("tap did not stop within 2 minutes (signalled: %v); stderr:\n%s", signalled, errb.String())
	}
	if !signalled {
		t.Fatalf("the run wrote no STATE after a RECORD (%v); stderr:\n%s", werr, errb.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("exit code %d, want 1 (interrupted); stderr:\n%s", code, errb.String())
	}
	if !bytes.Contains(errb.Bytes(), []byte("tap: interrupted; the last STATE written is where the next run resumes")) {
		t.Errorf("stderr lacks the interruption message:\n%s", errb.String())
	}
	msgs := parseSinger(t, out.Bytes())
	if last := msgs[len(msgs)-1]; last.Type != "STATE" {
		t.Fatalf("the last message is a %s, not a STATE", last.Type)
	}
	l.feed(out.Bytes(), false)
	d.checkSecrets(result{stdout: out.Bytes(), stderr: errb.Bytes()})
	t.Logf("interrupted after %d messages, %d records; state %s", len(msgs), records, l.state)

	if r := d.sync(l, 3*time.Minute); r.code != 0 {
		t.Fatalf("resumed run: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	for _, name := range setup.streams {
		assertTable(t, l, name, demoKeys[name], source(t, srv, name))
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A child stream syncs whether or not its parent is selected: the parent
// is walked for its keys all the same, but none of its messages is sent.
func TestChildWithoutItsParentSelected(t *testing.T) {
	dir := t.TempDir()
	cfg := sampleConfig(t, dir)
	itemIDs := func(out []byte) map[string]string {
		ids := map[string]string{}
		for _, m := range parseSinger(t, out) {
			if m.Type != "RECORD" || m.Stream != "order_items" {
				continue
			}
			var rec struct {
				ID      string      `json:"id"`
				OrderID json.Number `json:"order_id"`
			}
			if err := json.Unmarshal(m.Record, &rec); err != nil {
				t.Fatal(err)
			}
			ids[rec.ID] = rec.OrderID.String()
		}
		return ids
	}
	all := runTap(t, dir, 2*time.Minute, nil, "--config", cfg)
	if all.code != 0 {
		t.Fatalf("exit %d: %s", all.code, all.stderr)
	}
	want := itemIDs(all.stdout)
	if len(want) == 0 {
		t.Fatal("no order_items in the full run")
	}
	writeFile(t, filepath.Join(dir, "catalog.json"), []byte(`{"streams": [
		{"tap_stream_id": "orders", "metadata": [{"breadcrumb": [], "metadata": {"selected": false}}]},
		{"tap_stream_id": "order_items", "metadata": [{"breadcrumb": [], "metadata": {"selected": true}}]}]}`))
	only := runTap(t, dir, 2*time.Minute, nil, "--config", cfg, "--catalog", "catalog.json")
	if only.code != 0 {
		t.Fatalf("exit %d: %s", only.code, only.stderr)
	}
	for _, m := range parseSinger(t, only.stdout) {
		if m.Stream != "" && m.Stream != "order_items" {
			t.Fatalf("unselected stream %s sent a %s", m.Stream, m.Type)
		}
	}
	got := itemIDs(only.stdout)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order_items (id → order_id) differ from the run with orders selected (-want +got):\n%s", diff)
	}
	for id, order := range got {
		if !strings.HasPrefix(id, order+"-") {
			t.Errorf("item %s carries order_id %s", id, order)
		}
	}
}
