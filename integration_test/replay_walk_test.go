package integration_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// walkAPI serves users 1-3 with their orders (two each, updated on day
// 10·user and 10·user+1 of January) and six items in pages of two.
// While broken, the orders of user 2 and the second page of items answer
// 500.
type walkAPI struct{ broken atomic.Bool }

func (a *walkAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/users":
		fmt.Fprint(w, `{"data":[{"id":1},{"id":2},{"id":3}]}`)
	case strings.HasPrefix(r.URL.Path, "/users/") && strings.HasSuffix(r.URL.Path, "/orders"):
		id, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/users/"), "/orders"))
		if id == 2 && a.broken.Load() {
			http.Error(w, `{"error":"down"}`, http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, `{"data":[{"id":%d1,"updated_at":"2026-01-%02dT00:00:00Z"},{"id":%d2,"updated_at":"2026-01-%02dT00:00:00Z"}]}`,
			id, 10*id-9, id, 10*id-8)
	case r.URL.Path == "/items":
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if page == 2 && a.broken.Load() {
			http.Error(w, `{"error":"down"}`, http.StatusInternalServerError)
			return
		}
		var rows []string
		for id := 2*page - 1; id <= 2*page && id <= 6; id++ {
			rows = append(rows, fmt.Sprintf(`{"id":%d}`, id))
		}
		fmt.Fprintf(w, `{"data":[%s]}`, strings.Join(rows, ","))
	default:
		http.NotFound(w, r)
	}
}

func walkConfig(base string) map[string]any {
	obj := func(props ...string) map[string]any {
		p := map[string]any{}
		for _, name := range props {
			p[name] = map[string]any{"type": "integer"}
		}
		if slices.Contains(props, "user_id") {
			p["updated_at"] = map[string]any{"type": "string", "format": "date-time"}
		}
		return map[string]any{"type": "object", "properties": p}
	}
	cfg := tapConfig(base, []any{
		map[string]any{"name": "users", "path": "/users", "records_path": "data", "primary_key": []string{"id"},
			"pagination": map[string]any{"type": "none"}, "schema": obj("id")},
		map[string]any{"name": "orders", "path": "/users/{id}/orders", "records_path": "data", "primary_key": []string{"id"},
			"parent": map[string]any{"stream": "users", "key": "id", "as": "user_id"}, "pagination": map[string]any{"type": "none"},
			"replication_key": "updated_at", "incremental": map[string]any{"param": "since", "format": "rfc3339"},
			"on_request_failure": "dead_letter", "schema": obj("id", "user_id")},
		map[string]any{"name": "items", "path": "/items", "records_path": "data", "primary_key": []string{"id"},
			"pagination":         map[string]any{"type": "page_number", "page_param": "page", "page_size": 2},
			"on_request_failure": "dead_letter", "schema": obj("id")},
	})
	cfg["start_date"] = "2026-01-01T00:00:00Z"
	cfg["retry"] = map[string]any{"max_attempts": 2, "base_delay_ms": 1, "max_delay_ms": 2}
	return cfg
}

// partitionBookmarks reads the orders' bookmark per user from a state.
func partitionBookmarks(t *testing.T, state json.RawMessage) map[string]string {
	t.Helper()
	var st struct {
		Bookmarks map[string]struct {
			Partitions []struct {
				Context map[string]any `json:"context"`
				Value   string         `json:"replication_key_value"`
			} `json:"partitions"`
		} `json:"bookmarks"`
	}
	if err := json.Unmarshal(state, &st); err != nil {
		t.Fatalf("state %s: %v", state, err)
	}
	out := map[string]string{}
	for _, p := range st.Bookmarks["orders"].Partitions {
		out[fmt.Sprint(p.Context["user_id"])] = p.Value
	}
	return out
}

// A child fetch dead-lettered for user 2 holds user 2's partition bookmark
// while the others move on; a stream whose second page is dead-lettered is
// replayed from that page, so no record is written twice.
func TestRequestLetterHoldsItsPartition(t *testing.T) {
	t.Parallel()
	api := &walkAPI{}
	api.broken.Store(true)
	d := newTapDir(t, walkConfig(serve(t, api)))
	l := newLoader(t)
	l.state = json.RawMessage(`{"bookmarks":{"orders":{"replication_key":"updated_at","partitions":[` +
		`{"context":{"user_id":1},"replication_key_value":"2026-01-01T00:00:00Z"},` +
		`{"context":{"user_id":2},"replication_key_value":"2026-01-05T00:00:00Z"}]}}}`)
	r := d.sync(l, time.Minute)
	if r.code != 0 {
		t.Fatalf("run exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	want := map[string]string{"1": "2026-01-02T00:00:00Z", "2": "2026-01-05T00:00:00Z", "3": "2026-01-22T00:00:00Z"}
	if got := partitionBookmarks(t, l.state); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("partition bookmarks %v, want %v (user 2's held, the others moved)", got, want)
	}
	if got, want := recordIDs(t, r.stdout), []string{"items:1", "items:2", "orders:11", "orders:12", "orders:31", "orders:32", "users:1", "users:2", "users:3"}; !slices.Equal(got, want) {
		t.Errorf("run records %v, want %v", got, want)
	}
	ls := letters(t, d)
	if len(ls) != 2 {
		t.Fatalf("%d letters, want 2: %v", len(ls), ls)
	}
	for _, l := range ls {
		_, resume := l["resume"]
		if l["stream"] == "items" != resume {
			t.Errorf("letter %v: only the items letter (failed on its page 2) has a resume", l)
		}
	}

	// A second run while still broken: user 2's bookmark is still held,
	// and the same two requests are dead-lettered again.
	if r := d.sync(l, time.Minute); r.code != 0 {
		t.Fatalf("second run exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	if got := partitionBookmarks(t, l.state); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("partition bookmarks after the second run %v, want %v", got, want)
	}
	if ls := letters(t, d); len(ls) != 4 {
		t.Fatalf("%d letters after two runs, want 4", len(ls))
	}

	api.broken.Store(false)
	rr := runTap(t, d.dir, time.Minute, nil, "replay", "--config", "config.json", "--dead-letters", "dead_letter.jsonl")
	d.checkSecrets(rr)
	if rr.code != 0 {
		t.Fatalf("replay exit %d; stderr:\n%s", rr.code, rr.stderr)
	}
	if got, want := recordIDs(t, rr.stdout), []string{"items:3", "items:4", "items:5", "items:6", "orders:21", "orders:22"}; !slices.Equal(got, want) {
		t.Errorf("replay records %v, want %v: user 2's orders and the items from page 2 on", got, want)
	}
	if ls := letters(t, d); len(ls) != 0 {
		t.Errorf("letters left: %v", ls)
	}
	// Each of the two walks is read once, for both its letters.
	replaySummary(t, rr.stderr, "letters=4 emitted=4 records=6 still_failing=0 left=0")

	// The next sync reads user 2's orders from its held bookmark.
	r = d.sync(l, time.Minute)
	if r.code != 0 {
		t.Fatalf("rerun exit %d; stderr:\n%s", r.code, r.stderr)
	}
	want["2"] = "2026-01-12T00:00:00Z"
	if got := partitionBookmarks(t, l.state); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("partition bookmarks after the rerun %v, want %v", got, want)
	}
}

// A chunk window dead-lettered (on_request_failure dead_letter) is one
// letter whose context names the window; replay reads that window only.
func TestReplayWindowLetter(t *testing.T) {
	t.Parallel()
	var bad atomic.Int64
	bad.Store(3)
	base, log := backfillServer(t, &bad, http.StatusInternalServerError)
	cfg := backfillConfig(base)
	cfg["streams"].([]any)[0].(map[string]any)["on_request_failure"] = "dead_letter"
	d := newTapDir(t, cfg)
	l := newLoader(t)
	if r := d.sync(l, time.Minute); r.code != 0 {
		t.Fatalf("run exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	ls := letters(t, d)
	if len(ls) == 0 {
		t.Fatal("no letter for the failed window")
	}
	for _, l := range ls {
		ctx, _ := l["context"].(map[string]any)
		if w, _ := ctx["window"].(map[string]any); l["kind"] != "request" || w["start"] != backfillDay(3) || w["end"] != backfillDay(4) {
			t.Errorf("letter %v, want one for the window of day 3", l)
		}
	}

	bad.Store(-1)
	log.setRun(2)
	rr := runTap(t, d.dir, time.Minute, nil, "replay", "--config", "config.json", "--dead-letters", "dead_letter.jsonl")
	d.checkSecrets(rr)
	if rr.code != 0 {
		t.Fatalf("replay exit %d; stderr:\n%s", rr.code, rr.stderr)
	}
	if got, want := recordIDs(t, rr.stdout), []string{"ticks:30", "ticks:31", "ticks:32"}; !slices.Equal(got, want) {
		t.Errorf("replay records %v, want %v", got, want)
	}
	if byDay, pages := windowsAsked(log, 2); len(byDay) != 1 || byDay[3] != 2 {
		t.Errorf("replay asked for %v, want the two pages of day 3 only", pages)
	}
	if ls := letters(t, d); len(ls) != 0 {
		t.Errorf("letters left: %v", ls)
	}
}

// A parent record with a null or missing key cannot fill its child's
// path: by default (on_schema_violation dead_letter) it is a request
// letter of the child and the other parents' children are read; replay
// keeps the letter (the key is still missing); with fail it stops the
// run, as before.
func TestParentWithoutKey(t *testing.T) {
	t.Parallel()
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/users":
			fmt.Fprint(w, `{"data":[{"id":1,"team":1},{"id":2,"team":null},{"id":4},{"id":3,"team":3}]}`)
		case strings.HasPrefix(r.URL.Path, "/teams/"):
			fmt.Fprintf(w, `{"data":[{"id":%s1}]}`, strings.TrimPrefix(r.URL.Path, "/teams/"))
		default:
			http.NotFound(w, r)
		}
	})
	obj := func(props ...string) map[string]any {
		p := map[string]any{}
		for _, name := range props {
			p[name] = map[string]any{"type": []string{"integer", "null"}}
		}
		return map[string]any{"type": "object", "properties": p}
	}
	cfg := tapConfig(serve(t, api), []any{
		map[string]any{"name": "users", "path": "/users", "records_path": "data", "primary_key": []string{"id"},
			"pagination": map[string]any{"type": "none"}, "schema": obj("id", "team")},
		map[string]any{"name": "members", "path": "/teams/{team}", "records_path": "data", "primary_key": []string{"id"},
			"parent": map[string]any{"stream": "users", "key": "team", "as": "team_id"}, "pagination": map[string]any{"type": "none"},
			"schema": obj("id", "team_id")},
	})
	d := newTapDir(t, cfg)
	r := d.sync(newLoader(t), time.Minute)
	if r.code != 0 {
		t.Fatalf("run exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	if got, want := recordIDs(t, r.stdout), []string{"members:11", "members:31", "users:1", "users:2", "users:3", "users:4"}; !slices.Equal(got, want) {
		t.Errorf("records %v, want %v", got, want)
	}
	ls := letters(t, d)
	if len(ls) != 2 {
		t.Fatalf("%d letters, want 2 (one per parent without a key): %v", len(ls), ls)
	}
	for _, l := range ls {
		ctx, _ := l["context"].(map[string]any)
		v, has := ctx["team_id"]
		if l["kind"] != "request" || l["stream"] != "members" || !has || v != nil ||
			!strings.Contains(fmt.Sprint(l["error"]), `a record of parent stream "users" has no "team" to fill the path: it is null or missing`) {
			t.Errorf("letter %v, want a request letter of members with context {team_id: null} saying why", l)
		}
	}
	if want := `WARN a parent record has no key; its child records are not read, and a dead letter says so stream=members`; !strings.Contains(string(r.stderr), want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}

	rr := runTap(t, d.dir, time.Minute, nil, "replay", "--config", "config.json", "--dead-letters", "dead_letter.jsonl")
	if rr.code != 0 {
		t.Fatalf("replay exit %d; stderr:\n%s", rr.code, rr.stderr)
	}
	if ls := letters(t, d); len(ls) != 2 {
		t.Errorf("after replay %d letters, want both kept", len(ls))
	}

	cfg["on_schema_violation"] = "fail"
	d.writeConfig(cfg)
	r = runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
	if want := `stream "members": a record of parent stream "users" has no "team" to fill the path`; r.code != 1 || !strings.Contains(string(r.stderr), want) {
		t.Errorf("on_schema_violation fail: exit %d, want 1 and %q; stderr:\n%s", r.code, want, r.stderr)
	}
}

// An API whose next links echo our api_key: a walk dead-lettered on its
// page 2 keeps that page (the key left out of the letter), so replay
// reads from page 2 on and writes no record twice.
func TestReplayFromAnEchoedSecretPage(t *testing.T) {
	t.Parallel()
	var broken atomic.Bool
	broken.Store(true)
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("api_key") != sentinel {
			http.Error(w, `{"error":"no key"}`, http.StatusUnauthorized)
			return
		}
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		page = max(page, 1)
		if page == 2 && broken.Load() {
			http.Error(w, `{"error":"down"}`, http.StatusInternalServerError)
			return
		}
		if page < 3 {
			w.Header().Set("Link", fmt.Sprintf(`</items?page=%d&api_key=%s>; rel="next"`, page+1, sentinel))
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"data":[{"id":%d},{"id":%d}]}`, 2*page-1, 2*page)
	})
	cfg := tapConfig(serve(t, api), []any{
		map[string]any{"name": "items", "path": "/items", "records_path": "data", "primary_key": []string{"id"},
			"pagination":         map[string]any{"type": "link_header"},
			"on_request_failure": "dead_letter",
			"schema":             map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}}}},
	})
	cfg["auth"] = map[string]any{"type": "api_key", "name": "api_key", "value": sentinel, "in": "query"}
	cfg["retry"] = map[string]any{"max_attempts": 2, "base_delay_ms": 1, "max_delay_ms": 2}
	d := newTapDir(t, cfg)
	r := d.sync(newLoader(t), time.Minute)
	if r.code != 0 {
		t.Fatalf("run exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	if got, want := recordIDs(t, r.stdout), []string{"items:1", "items:2"}; !slices.Equal(got, want) {
		t.Errorf("run records %v, want %v", got, want)
	}
	ls := letters(t, d)
	if len(ls) != 1 {
		t.Fatalf("%d letters, want 1", len(ls))
	}
	resume, _ := ls[0]["resume"].(map[string]any)
	req, _ := resume["request"].(map[string]any)
	if req["url"] != "/items?page=2" {
		t.Errorf("letter's resume %v, want page 2 without the key", ls[0]["resume"])
	}

	broken.Store(false)
	rr := runTap(t, d.dir, time.Minute, nil, "replay", "--config", "config.json", "--dead-letters", "dead_letter.jsonl")
	d.checkSecrets(rr)
	if rr.code != 0 {
		t.Fatalf("replay exit %d; stderr:\n%s", rr.code, rr.stderr)
	}
	if got, want := recordIDs(t, rr.stdout), []string{"items:3", "items:4", "items:5", "items:6"}; !slices.Equal(got, want) {
		t.Errorf("replay records %v, want %v: from page 2 on, nothing the run wrote", got, want)
	}
	if ls := letters(t, d); len(ls) != 0 {
		t.Errorf("letters left: %v", ls)
	}
}

// A child stream with replication_key and no incremental block is
// filtered client-side per parent record: each partition's records below
// its own bookmark are dropped, a parent with none is read whole, and
// each partition's bookmark moves on.
func TestClientSideChildPerParent(t *testing.T) {
	t.Parallel()
	cfg := walkConfig(serve(t, &walkAPI{}))
	cfg["streams"] = cfg["streams"].([]any)[:2] // users and orders
	delete(cfg["streams"].([]any)[1].(map[string]any), "incremental")
	d := newTapDir(t, cfg)
	l := newLoader(t)
	l.state = json.RawMessage(`{"bookmarks":{"orders":{"replication_key":"updated_at","partitions":[` +
		`{"context":{"user_id":1},"replication_key_value":"2026-01-02T00:00:00Z"},` +
		`{"context":{"user_id":2},"replication_key_value":"2026-01-12T00:00:00Z"}]}}}`)
	r := d.sync(l, time.Minute)
	if r.code != 0 {
		t.Fatalf("run exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	if got, want := recordIDs(t, r.stdout), []string{"orders:12", "orders:22", "orders:31", "orders:32", "users:1", "users:2", "users:3"}; !slices.Equal(got, want) {
		t.Errorf("records %v, want %v: each user's orders from its own bookmark", got, want)
	}
	want := map[string]string{"1": "2026-01-02T00:00:00Z", "2": "2026-01-12T00:00:00Z", "3": "2026-01-22T00:00:00Z"}
	if got := partitionBookmarks(t, l.state); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("partition bookmarks %v, want %v", got, want)
	}
	if warn := "WARN replication_key without an incremental block"; strings.Count(string(r.stderr), warn) != 1 {
		t.Errorf("want one %q line; stderr:\n%s", warn, r.stderr)
	}
}
