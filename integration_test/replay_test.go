package integration_test

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// replayAPI serves users 1-3 and their orders; while broken is set, the
// orders of user 2 answer 500 (echoing the credential, which no letter may
// keep), or status when it is set.
type replayAPI struct {
	broken atomic.Bool
	status atomic.Int32
	// While hang is set, arrived gets a value as the orders of user 2 are
	// asked for, and the answer waits until the request's context ends.
	hang    atomic.Bool
	arrived chan struct{}
}

func (a *replayAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/users":
		fmt.Fprint(w, `{"data":[{"id":1},{"id":2},{"id":3}]}`)
	case strings.HasPrefix(r.URL.Path, "/users/") && strings.HasSuffix(r.URL.Path, "/orders"):
		id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/users/"), "/orders")
		if id == "2" && a.hang.Load() {
			a.arrived <- struct{}{}
			<-r.Context().Done() // the client went away
			return
		}
		if id == "2" && a.broken.Load() {
			w.WriteHeader(cmp.Or(int(a.status.Load()), http.StatusInternalServerError))
			fmt.Fprintf(w, `{"error":"orders of user 2 are down (key %s)"}`, r.URL.Query().Get("key"))
			return
		}
		fmt.Fprintf(w, `{"data":[{"id":%s1,"amount":"12.50"},{"id":%s2,"amount":"3.00"}]}`, id, id)
	default:
		http.NotFound(w, r)
	}
}

func replayConfig(base string, amountType string) map[string]any {
	cfg := tapConfig(base, []any{
		map[string]any{"name": "users", "path": "/users", "records_path": "data", "primary_key": []string{"id"},
			"pagination": map[string]any{"type": "none"},
			"schema":     map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}}}},
		map[string]any{"name": "orders", "path": "/users/{id}/orders", "records_path": "data", "primary_key": []string{"id"},
			"parent": map[string]any{"stream": "users", "key": "id", "as": "user_id"}, "pagination": map[string]any{"type": "none"},
			"on_request_failure": "dead_letter",
			"schema": map[string]any{"type": "object", "properties": map[string]any{
				"id": map[string]any{"type": "integer"}, "user_id": map[string]any{"type": "integer"}, "amount": map[string]any{"type": amountType}}}},
	})
	cfg["auth"] = map[string]any{"type": "api_key", "name": "key", "value": sentinel, "in": "query"}
	cfg["retry"] = map[string]any{"max_attempts": 2, "base_delay_ms": 1, "max_delay_ms": 2}
	return cfg
}

// letters reads the dead-letter file of d, one decoded object a line.
func letters(t *testing.T, d *tapDir) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d.dir, "dead_letter.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(sentinel)) {
		t.Errorf("the credential is in the dead letters:\n%s", b)
	}
	var out []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte{'\n'}) {
		if len(l) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("dead letter %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// recordIDs lists the stream and id of each RECORD line, and checks that
// SCHEMA comes before a stream's records and a STATE comes last.
func recordIDs(t *testing.T, stdout []byte) []string {
	t.Helper()
	var ids []string
	schema := map[string]bool{}
	last := ""
	for _, l := range bytes.Split(bytes.TrimSpace(stdout), []byte{'\n'}) {
		var m struct {
			Type   string         `json:"type"`
			Stream string         `json:"stream"`
			Record map[string]any `json:"record"`
		}
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("stdout line %q: %v", l, err)
		}
		last = m.Type
		switch m.Type {
		case "SCHEMA":
			schema[m.Stream] = true
		case "RECORD":
			if !schema[m.Stream] {
				t.Errorf("RECORD of %s before its SCHEMA", m.Stream)
			}
			ids = append(ids, fmt.Sprint(m.Stream, ":", m.Record["id"]))
		}
	}
	if last != "STATE" {
		t.Errorf("the last message is %s, want STATE", last)
	}
	slices.Sort(ids)
	return ids
}

func TestReplayRequestLetter(t *testing.T) {
	api := &replayAPI{}
	api.broken.Store(true)
	d := newTapDir(t, replayConfig(serve(t, api), "string"))
	r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
	d.checkSecrets(r)
	if r.code != 0 {
		t.Fatalf("run exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	if got, want := recordIDs(t, r.stdout), []string{"orders:11", "orders:12", "orders:31", "orders:32", "users:1", "users:2", "users:3"}; !slices.Equal(got, want) {
		t.Errorf("run records %v, want %v", got, want)
	}
	ls := letters(t, d)
	if len(ls) != 1 {
		t.Fatalf("%d letters, want 1: %v", len(ls), ls)
	}
	l := ls[0]
	req, _ := l["request"].(map[string]any)
	resp, _ := l["response"].(map[string]any)
	if l["kind"] != "request" || l["stream"] != "orders" || l["error_type"] != "transient" || l["attempts"] != 2.0 ||
		fmt.Sprint(l["context"]) != "map[user_id:2]" || resp["status"] != 500.0 ||
		!strings.Contains(fmt.Sprint(req["url"]), "/users/2/orders") || !strings.Contains(fmt.Sprint(resp["body"]), "are down") {
		t.Errorf("letter %v", l)
	}
	if summaryTable(t, r.stderr)["orders"]["dead_letters"] != "1" {
		t.Errorf("the summary table's orders row lacks the dead letter; stderr:\n%s", r.stderr)
	}
	if !bytes.Contains(r.stderr, []byte(`{"metric":"dead_letters","tags":{"endpoint":"orders","kind":"request"},"type":"counter","value":1}`)) {
		t.Errorf("no dead_letters METRIC line; stderr:\n%s", r.stderr)
	}

	// Still broken: the letter stays (a new one in its place).
	rr := runTap(t, d.dir, time.Minute, nil, "replay", "--config", "config.json", "--dead-letters", "dead_letter.jsonl")
	d.checkSecrets(rr)
	if rr.code != 0 {
		t.Fatalf("replay exit %d; stderr:\n%s", rr.code, rr.stderr)
	}
	if got := recordIDs(t, rr.stdout); len(got) != 0 {
		t.Errorf("replay of a still-broken endpoint wrote %v", got)
	}
	if ls := letters(t, d); len(ls) != 1 || ls[0]["kind"] != "request" {
		t.Errorf("letters after a failed replay: %v", ls)
	}
	replaySummary(t, rr.stderr, "letters=1 emitted=0 records=0 still_failing=1 left=1",
		`{"metric":"replayed_dead_letters","tags":{"endpoint":"orders","kind":"request","result":"still_failing"},"type":"counter","value":1}`)

	api.broken.Store(false)
	rr = runTap(t, d.dir, time.Minute, nil, "replay", "--config", "config.json", "--dead-letters", "dead_letter.jsonl")
	d.checkSecrets(rr)
	if rr.code != 0 {
		t.Fatalf("replay exit %d; stderr:\n%s", rr.code, rr.stderr)
	}
	if got, want := recordIDs(t, rr.stdout), []string{"orders:21", "orders:22"}; !slices.Equal(got, want) {
		t.Errorf("replay records %v, want %v", got, want)
	}
	if ls := letters(t, d); len(ls) != 0 {
		t.Errorf("letters left after a replay that passed: %v", ls)
	}
	replaySummary(t, rr.stderr, "letters=1 emitted=1 records=2 still_failing=0 left=0",
		`{"metric":"replayed_dead_letters","tags":{"endpoint":"orders","kind":"request","result":"emitted"},"type":"counter","value":1}`,
		`{"metric":"record_count","tags":{"endpoint":"orders"},"type":"counter","value":2}`)
}

// replaySummary checks a replay's summary line and METRIC lines.
func replaySummary(t *testing.T, stderr []byte, counts string, metrics ...string) {
	t.Helper()
	if !bytes.Contains(stderr, []byte("INFO replay summary "+counts+" ")) {
		t.Errorf("no summary line %q; stderr:\n%s", counts, stderr)
	}
	for _, m := range metrics {
		if !bytes.Contains(stderr, []byte("METRIC: "+m)) {
			t.Errorf("no METRIC line %s; stderr:\n%s", m, stderr)
		}
	}
}

// An on_status rule dead_letter makes a letter of that status only, with
// no on_request_failure.
func TestOnStatusDeadLetter(t *testing.T) {
	api := &replayAPI{}
	api.status.Store(http.StatusNotFound)
	api.broken.Store(true)
	cfg := replayConfig(serve(t, api), "string")
	orders := cfg["streams"].([]any)[1].(map[string]any)
	delete(orders, "on_request_failure")
	orders["on_status"] = map[string]any{"404": "dead_letter"}
	d := newTapDir(t, cfg)
	r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
	d.checkSecrets(r)
	if r.code != 0 {
		t.Fatalf("run exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	ls := letters(t, d)
	if len(ls) != 1 || ls[0]["error_type"] != "permanent" || ls[0]["attempts"] != 1.0 {
		t.Errorf("letters %v, want one permanent after 1 attempt", ls)
	}

	api.status.Store(http.StatusBadRequest) // not dead_letter: the run fails
	os.Remove(filepath.Join(d.dir, "dead_letter.jsonl"))
	r = runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
	if r.code != 1 {
		t.Errorf("a 400 without a dead_letter rule: exit %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
}

func TestReplayRecordLetters(t *testing.T) {
	api := &replayAPI{}
	d := newTapDir(t, replayConfig(serve(t, api), "number")) // amount is a string: every order fails
	r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
	if r.code != 0 {
		t.Fatalf("run exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if ls := letters(t, d); len(ls) != 6 || ls[0]["kind"] != "record" {
		t.Fatalf("letters %v, want 6 record letters", ls)
	}
	// The schema unchanged: they fail again and stay.
	rr := runTap(t, d.dir, time.Minute, nil, "replay", "--config", "config.json", "--dead-letters", "dead_letter.jsonl")
	if got := recordIDs(t, rr.stdout); rr.code != 0 || len(got) != 0 || len(letters(t, d)) != 6 {
		t.Fatalf("replay with the old schema: exit %d, records %v, stderr:\n%s", rr.code, got, rr.stderr)
	}
	d.writeConfig(replayConfig(serve(t, api), "string")) // the user fixes the schema
	rr = runTap(t, d.dir, time.Minute, nil, "replay", "--config", "config.json", "--dead-letters", "dead_letter.jsonl")
	d.checkSecrets(rr)
	want := []string{"orders:11", "orders:12", "orders:21", "orders:22", "orders:31", "orders:32"}
	if got := recordIDs(t, rr.stdout); rr.code != 0 || !slices.Equal(got, want) {
		t.Errorf("replay with the fixed schema: exit %d, records %v, want %v; stderr:\n%s", rr.code, got, want, rr.stderr)
	}
	replaySummary(t, rr.stderr, "letters=6 emitted=6 records=6 still_failing=0 left=0",
		`{"metric":"replayed_dead_letters","tags":{"endpoint":"orders","kind":"record","result":"emitted"},"type":"counter","value":6}`)
	if ls := letters(t, d); len(ls) != 0 {
		t.Errorf("letters left: %v", ls)
	}
}

// TestReplayKilledMidRequest kills a replay (SIGKILL) while it waits for
// the answer to the request of its letter: the file is the old one, whole.
func TestReplayKilledMidRequest(t *testing.T) {
	api := &replayAPI{arrived: make(chan struct{}, 1)}
	api.broken.Store(true)
	d := newTapDir(t, replayConfig(serve(t, api), "string"))
	if r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json"); r.code != 0 {
		t.Fatalf("run exit %d; stderr:\n%s", r.code, r.stderr)
	}
	path := filepath.Join(d.dir, "dead_letter.jsonl")
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	api.hang.Store(true)
	cmd := exec.Command(tapBin, "replay", "--config", "config.json", "--dead-letters", "dead_letter.jsonl")
	cmd.Dir = d.dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-api.arrived:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the replay never sent the letter's request")
	}
	cmd.Process.Kill()
	cmd.Wait()
	now, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(now, old) {
		t.Errorf("after a kill midway the file changed:\nwas %s\nis  %s", old, now)
	}
}

// TestReplayKilled kills replays at every point they reach (SIGKILL as soon
// as they have written N lines): the file is always the old one or the new
// one, whole.
func TestReplayKilled(t *testing.T) {
	api := &replayAPI{}
	d := newTapDir(t, replayConfig(serve(t, api), "number"))
	if r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json"); r.code != 0 {
		t.Fatalf("run exit %d; stderr:\n%s", r.code, r.stderr)
	}
	path := filepath.Join(d.dir, "dead_letter.jsonl")
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d.writeConfig(replayConfig(serve(t, api), "string"))
	for killAfter := 1; killAfter <= 4; killAfter++ {
		cmd := exec.Command(tapBin, "replay", "--config", "config.json", "--dead-letters", "dead_letter.jsonl")
		cmd.Dir = d.dir
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		for n := 0; n < killAfter && sc.Scan(); n++ {
		}
		cmd.Process.Kill()
		cmd.Wait()
		now, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("after a kill at line %d: %v", killAfter, err)
		}
		if !bytes.Equal(now, old) && len(bytes.TrimSpace(now)) != 0 {
			t.Fatalf("after a kill at line %d the file is neither the old one nor the new one:\n%s", killAfter, now)
		}
		if len(now) == 0 {
			return // this replay finished before the kill
		}
	}
}
