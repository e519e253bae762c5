package integration_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/tap-dev/tap/demoapi"
	"github.com/tap-dev/tap/internal/pgtest"
)

// deletesConfig is sample_deletes.json with the demo's accounts at
// generation gen.
func deletesConfig(t *testing.T, gen, listDelayMS int) map[string]any {
	t.Helper()
	var cfg map[string]any
	readJSON(t, filepath.Join("..", "sample_deletes.json"), &cfg)
	cfg["demo"] = map[string]any{"accounts": map[string]any{"count": 200, "generation": gen, "list_delay_ms": listDelayMS}}
	cfg["rate_limit"] = map[string]any{"requests_per_second": 0}
	cfg["metrics_log_level"] = "info" // the reconcile's METRIC lines are read
	if listDelayMS > 0 {
		// Pages of 20 keys: a listing of ten pages or more, each slow.
		s := cfg["streams"].([]any)[0].(map[string]any)
		r := s["reconcile"].(map[string]any)
		r["params"] = map[string]any{"fields": "id,deleted", "per_page": "20"}
		r["pagination"] = map[string]any{"type": "page_number", "page_param": "page", "page_size_param": "per_page", "page_size": 20}
	}
	return cfg
}

// accounts is the demo's accounts table at generation gen.
func accounts(t *testing.T, gen int) []demoapi.Account {
	t.Helper()
	rows, err := demoapi.AccountsTable(demoapi.Config{Accounts: &demoapi.Accounts{Count: 200, Generation: gen}})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// runDeletes runs the tap in dir with the loaders' state and feeds its
// stdout to every loader.
func runDeletes(t *testing.T, dir string, cfg map[string]any, extra []string, loaders ...*pgLoader) result {
	t.Helper()
	b, _ := json.Marshal(cfg)
	writeFile(t, filepath.Join(dir, "config.json"), b)
	args := []string{"--config", "config.json"}
	if st := loaders[0].state; st != nil {
		writeFile(t, filepath.Join(dir, "state.json"), st)
		args = append(args, "--state", "state.json")
	}
	r := runTap(t, dir, 2*time.Minute, nil, append(args, extra...)...)
	if r.code != 0 {
		t.Fatalf("tap %v exited %d:\n%s", args, r.code, r.stderr)
	}
	for _, l := range loaders {
		l.feed(r.stdout)
	}
	return r
}

var reconcileLine = regexp.MustCompile(`(?m)^\S+ INFO reconcile stream=accounts listed=(\d+) deleted=(\d+) missed=(\d+) fetched=(\d+)$`)

// reconciled reads the run's reconcile line: listed, deleted, missed,
// fetched.
func reconciled(t *testing.T, stderr []byte) [4]int {
	t.Helper()
	m := reconcileLine.FindSubmatch(stderr)
	if m == nil {
		t.Fatalf("no reconcile line in stderr:\n%s", stderr)
	}
	var out [4]int
	for i := range out {
		out[i], _ = strconv.Atoi(string(m[i+1]))
	}
	return out
}

// expected is what a table loaded from the tap holds of rows: with
// hard_delete the live rows only; without, every row, the deleted ones
// with _sdc_deleted_at set (to the soft delete's updated_at; for a hard
// delete, only its presence is known to the source: "set").
func expected(rows []demoapi.Account, hardDelete bool) []map[string]any {
	var out []map[string]any
	for _, r := range rows {
		if hardDelete && (r.Gone || r.Deleted) {
			continue
		}
		m := map[string]any{"id": strconv.FormatInt(r.ID, 10), "name": r.Name, "plan": r.Plan,
			"deleted": strconv.FormatBool(r.Deleted), "updated_at": r.UpdatedAt.UTC().Format(time.RFC3339), "_sdc_deleted_at": nil}
		switch {
		case r.Deleted:
			m["_sdc_deleted_at"] = m["updated_at"]
		case r.Gone:
			// A deletion record carries the key and _sdc_deleted_at only:
			// the target nulls the other columns.
			m = map[string]any{"id": m["id"], "name": nil, "plan": nil, "deleted": nil, "updated_at": nil, "_sdc_deleted_at": "set"}
		}
		out = append(out, m)
	}
	return out
}

var accountColumns = []string{"id", "name", "plan", "deleted", "updated_at", "_sdc_deleted_at"}

// loaded reads a loader's accounts, a hard delete's _sdc_deleted_at as
// "set" (its time is the event's, or the reconcile's clock).
func loaded(l *pgLoader, hardDeleted map[string]bool) []map[string]any {
	rows := l.rows("accounts", accountColumns...)
	for _, r := range rows {
		if id, _ := r["id"].(string); hardDeleted[id] && r["_sdc_deleted_at"] != nil {
			r["_sdc_deleted_at"] = "set"
		}
	}
	return rows
}

func goneIDs(rows []demoapi.Account) map[string]bool {
	m := map[string]bool{}
	for _, r := range rows {
		if r.Gone {
			m[strconv.FormatInt(r.ID, 10)] = true
		}
	}
	return m
}

// TestReconcileIntoPostgres runs the tap twice into a real PostgreSQL
// through a loader that acts as pipelinewise-target-postgres: between the
// runs rows are deleted upstream (some with a deletion event, some
// without) and rows are written late, below the bookmark; the second run
// reconciles. With hard_delete the table then equals the source exactly;
// without, every deleted row carries _sdc_deleted_at.
func TestReconcileIntoPostgres(t *testing.T) {
	pg := pgtest.ForTest(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	hard := newPGLoader(t, conn, "hard", true)
	soft := newPGLoader(t, conn, "soft", false)
	dir := t.TempDir()

	runDeletes(t, dir, deletesConfig(t, 1, 0), nil, hard, soft)
	one := accounts(t, 1)
	if diff := cmp.Diff(expected(one, true), loaded(hard, nil)); diff != "" {
		t.Fatalf("after run 1 the table differs from the source (-want +got):\n%s", diff)
	}

	two := accounts(t, 2)
	var gone, withEvent, late int
	for _, r := range two {
		switch {
		case r.Gone:
			gone++
			if r.Event {
				withEvent++
			}
		case r.ID > 200 && r.UpdatedAt.Before(one[0].UpdatedAt):
			late++
		}
	}
	if gone-withEvent == 0 || late == 0 {
		t.Fatalf("generation 2 deletes %d rows without an event and writes %d late: nothing for a reconcile to find", gone-withEvent, late)
	}

	r := runDeletes(t, dir, deletesConfig(t, 2, 0), []string{"--reconcile"}, hard, soft)
	got := reconciled(t, r.stderr)
	live := 0
	for _, a := range two {
		if !a.Gone && !a.Deleted {
			live++
		}
	}
	if want := [4]int{live, gone - withEvent, late, late}; got != want {
		t.Errorf("reconcile listed, deleted, missed, fetched = %v, want %v", got, want)
	}
	if diff := cmp.Diff(expected(two, true), loaded(hard, nil)); diff != "" {
		t.Errorf("with hard_delete, after the reconcile the table differs from the source (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(expected(two, false), loaded(soft, goneIDs(two))); diff != "" {
		t.Errorf("without hard_delete, the table differs (-want +got):\n%s", diff)
	}
	for _, m := range []string{"reconcile_listed", "reconcile_deleted", "reconcile_missed", "reconcile_fetched", "deleted_count"} {
		if !bytes.Contains(r.stderr, []byte(`INFO METRIC: {"metric":"`+m+`"`)) {
			t.Errorf("no %s METRIC line in stderr", m)
		}
	}

	// A run that does not reconcile leaves the late rows out: the table
	// would not equal the source without it.
	plain := newPGLoader(t, conn, "plain", true)
	pdir := t.TempDir()
	runDeletes(t, pdir, deletesConfig(t, 1, 0), nil, plain)
	runDeletes(t, pdir, deletesConfig(t, 2, 0), nil, plain)
	if len(loaded(plain, nil)) == len(expected(two, true)) {
		t.Errorf("without a reconcile the table has every live row: the test shows nothing")
	}
}

// TestReconcileKilledMidListing kills the tap while it lists the keys:
// nothing is deleted by it, and the next run's reconcile completes.
func TestReconcileKilledMidListing(t *testing.T) {
	pg := pgtest.ForTest(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	hard := newPGLoader(t, conn, "hard", true)
	dir := t.TempDir()
	runDeletes(t, dir, deletesConfig(t, 1, 0), nil, hard)
	keys := filepath.Join(dir, "accounts.keys")
	before, err := os.ReadFile(keys)
	if err != nil {
		t.Fatal(err)
	}

	// Run 2, killed once the listing has begun: the deletion events
	// have been written (their STATE is out) and its pages take 1 s each.
	cfg := deletesConfig(t, 2, 1000)
	b, _ := json.Marshal(cfg)
	writeFile(t, filepath.Join(dir, "config.json"), b)
	writeFile(t, filepath.Join(dir, "state.json"), hard.state)
	cmd := exec.Command(tapBin, "--config", "config.json", "--state", "state.json", "--reconcile")
	cmd.Dir = dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(pipe)
	sc.Buffer(nil, 16<<20)
	killed := false
	for sc.Scan() {
		out.Write(sc.Bytes())
		out.WriteByte('\n')
		if !killed && bytes.Contains(sc.Bytes(), []byte(`"type":"STATE"`)) && bytes.Contains(sc.Bytes(), []byte(`"deletes":`)) {
			time.Sleep(2500 * time.Millisecond) // two or three pages into the listing
			cmd.Process.Kill()
			killed = true
		}
	}
	cmd.Wait()
	if !killed {
		t.Fatalf("the run ended before its listing was killed:\n%s", errb.Bytes())
	}
	if reconcileLine.Match(errb.Bytes()) {
		t.Fatalf("the reconcile ended before the kill:\n%s", errb.Bytes())
	}
	events := 0
	for _, a := range accounts(t, 2) {
		if a.Event {
			events++
		}
	}
	if n := bytes.Count(out.Bytes(), []byte(`"_sdc_deleted_at"`)) - bytes.Count(out.Bytes(), []byte(`"deleted":true`)) - 1; n != events {
		t.Errorf("the killed run wrote %d deletion records; want only the %d of the deletion events (nothing of the reconcile)", n, events)
	}
	after, err := os.ReadFile(keys)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(after), "tap-keys 1 int runs=2\n") || bytes.Equal(before, after) {
		t.Errorf("keys file after the kill starts %q; want run 2's keys saved before the listing (runs=2)", after[:min(len(after), 24)])
	}
	hard.feed(out.Bytes())

	r := runDeletes(t, dir, deletesConfig(t, 2, 0), []string{"--reconcile"}, hard)
	got := reconciled(t, r.stderr)
	two := accounts(t, 2)
	if got[1] == 0 || got[3] == 0 {
		t.Errorf("the rerun's reconcile deleted %d and fetched %d rows; want the ones the killed run did not", got[1], got[3])
	}
	if diff := cmp.Diff(expected(two, true), loaded(hard, nil)); diff != "" {
		t.Errorf("after the rerun the table differs from the source (-want +got):\n%s", diff)
	}
	final, _ := os.ReadFile(keys)
	if !strings.HasPrefix(string(final), "tap-keys 1 int runs=0\n") {
		t.Errorf("keys file after the reconcile starts %q, want runs=0", final[:min(len(final), 24)])
	}
	if left, _ := filepath.Glob(keys + ".*"); len(left) > 0 {
		t.Errorf("files the killed run left beside the keys file are still there: %v", left)
	}
}

// TestReconcileRefusesAShortListing: a listing that misses more than
// max_delete_fraction of the known keys (here a filter left on it) deletes
// nothing, fails the run naming the stream, and leaves the keys file be.
func TestReconcileRefusesAShortListing(t *testing.T) {
	dir := t.TempDir()
	write := func(cfg map[string]any) {
		b, _ := json.Marshal(cfg)
		writeFile(t, filepath.Join(dir, "config.json"), b)
	}
	write(deletesConfig(t, 1, 0))
	if r := runTap(t, dir, time.Minute, nil, "--config", "config.json"); r.code != 0 {
		t.Fatalf("run 1 exited %d:\n%s", r.code, r.stderr)
	}
	keys := filepath.Join(dir, "accounts.keys")
	before, _ := os.ReadFile(keys)
	cfg := deletesConfig(t, 1, 0)
	s := cfg["streams"].([]any)[0].(map[string]any)
	delete(s, "deletes")
	s["reconcile"].(map[string]any)["params"] = map[string]any{"fields": "id,deleted", "per_page": "200", "updated_since": "2026-10-02T20:00:00Z"}
	write(cfg)
	r := runTap(t, dir, time.Minute, nil, "--config", "config.json", "--reconcile")
	if r.code != 1 || !bytes.Contains(r.stderr, []byte(`tap: stream "accounts": reconcile listed `)) || !bytes.Contains(r.stderr, []byte("nothing was deleted")) {
		t.Fatalf("a short listing: exit %d, want 1 with an error naming the stream:\n%s", r.code, r.stderr)
	}
	if n := bytes.Count(r.stdout, []byte(`"_sdc_deleted_at"`)); n != 1 { // the SCHEMA's property only
		t.Errorf("the refused reconcile wrote %d deletion records", n-1)
	}
	after, _ := os.ReadFile(keys)
	if !bytes.Equal(before[bytes.IndexByte(before, '\n'):], after[bytes.IndexByte(after, '\n'):]) {
		t.Errorf("the refused reconcile changed the keys it knows")
	}
}

// TestDeletionRecordsFollowStreamMaps: with a stream map that renames the
// stream, deletion records (of the events and of the reconcile) are
// written as the mapped stream, after its SCHEMA, never as the source.
func TestDeletionRecordsFollowStreamMaps(t *testing.T) {
	dir := t.TempDir()
	var state json.RawMessage
	for gen := 1; gen <= 2; gen++ {
		cfg := deletesConfig(t, gen, 0)
		cfg["stream_maps"] = map[string]any{"accounts": map[string]any{"__alias__": "clients"}}
		b, _ := json.Marshal(cfg)
		writeFile(t, filepath.Join(dir, "config.json"), b)
		args := []string{"--config", "config.json", "--reconcile"}
		if state != nil {
			writeFile(t, filepath.Join(dir, "state.json"), state)
			args = append(args, "--state", "state.json")
		}
		r := runTap(t, dir, time.Minute, nil, args...)
		if r.code != 0 {
			t.Fatalf("run %d exited %d:\n%s", gen, r.code, r.stderr)
		}
		deletions := 0
		schema := false
		for _, line := range bytes.Split(bytes.TrimSpace(r.stdout), []byte("\n")) {
			var msg struct {
				Type, Stream string
				Record       map[string]any
				Value        json.RawMessage
			}
			if err := json.Unmarshal(line, &msg); err != nil {
				t.Fatal(err)
			}
			switch msg.Type {
			case "SCHEMA":
				schema = schema || msg.Stream == "clients"
			case "RECORD":
				if msg.Stream != "clients" || !schema {
					t.Fatalf("run %d: a RECORD of %q (SCHEMA of clients before it: %v): %s", gen, msg.Stream, schema, line)
				}
				if len(msg.Record) == 2 && msg.Record["_sdc_deleted_at"] != nil {
					deletions++
				}
			case "STATE":
				state = msg.Value
			}
		}
		if gen == 2 && deletions == 0 {
			t.Errorf("run 2 wrote no deletion record")
		}
	}
}

// TestFailedRunKeepsItsKeys: a run that fails in the middle of a stream
// keeps, in the keys file, the keys of the records it wrote before.
func TestFailedRunKeepsItsKeys(t *testing.T) {
	dir := t.TempDir()
	cfg := deletesConfig(t, 1, 0)
	cfg["demo"].(map[string]any)["unauthorized_after"] = 2 // two pages of 50, then 401
	b, _ := json.Marshal(cfg)
	writeFile(t, filepath.Join(dir, "config.json"), b)
	r := runTap(t, dir, time.Minute, nil, "--config", "config.json")
	if r.code == 0 || bytes.Count(r.stdout, []byte(`"type":"RECORD"`)) != 100 {
		t.Fatalf("the run should fail after 100 records: exit %d, %d records:\n%s", r.code, bytes.Count(r.stdout, []byte(`"type":"RECORD"`)), r.stderr)
	}
	keys, err := os.ReadFile(filepath.Join(dir, "accounts.keys"))
	if err != nil {
		t.Fatalf("no keys file after the failed run: %v", err)
	}
	header, body, _ := bytes.Cut(keys, []byte("\n"))
	// Ids 1..100: the first as a varint, then 99 deltas of 1, a byte each.
	if string(header) != "tap-keys 1 int runs=1" || len(body) != 100 || body[0] != 2 || bytes.Count(body, []byte{1}) != 99 {
		t.Errorf("keys file %q with %d bytes of keys; want ids 1..100", header, len(body))
	}
}
