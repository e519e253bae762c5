package integration_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/demoapi"
)

// TestIncrementalOverlap runs the demo twice, moving its clock between the
// runs: the second run asks for bookmark − overlap_s, which brings back the
// rows that committed late; the union of the runs is the source, and no
// STATE ever moves a bookmark beyond what was emitted before it (the
// loader checks every STATE).
func TestIncrementalOverlap(t *testing.T) {
	t.Parallel()
	testLateRows(t, func(t *testing.T, l *loader, state1 json.RawMessage, log *reqLog) {
		bms := bookmarkValues(state1)
		reqs := log.all()
		first := func(path string) *loggedReq {
			for i := range reqs {
				if reqs[i].Path == path {
					return &reqs[i]
				}
			}
			t.Fatalf("the second run sent no request to %s", path)
			return nil
		}
		sinceOf := func(stream string) string {
			v, ok := bms[stream].(string)
			if !ok {
				t.Fatalf("state after the first run has no time bookmark for %q: %s", stream, state1)
			}
			bm, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				t.Fatalf("bookmark of %q: %v", stream, err)
			}
			return bm.Add(-300 * time.Second).UTC().Format(time.RFC3339)
		}
		for _, c := range []struct{ stream, path string }{{"customers", "/v1/customers"}, {"orders", "/v1/orders"}} {
			want := sinceOf(c.stream)
			t.Logf("%s: bookmark %v, second run updated_since=%s", c.stream, bms[c.stream], first(c.path).Query.Get("updated_since"))
			if got := first(c.path).Query.Get("updated_since"); got != want {
				t.Errorf("%s: the second run asked for updated_since=%q, want bookmark − 300 s = %q", c.stream, got, want)
			}
		}
		var body struct {
			Variables map[string]any `json:"variables"`
		}
		if err := json.Unmarshal(first("/graphql").Body, &body); err != nil {
			t.Fatalf("graphql body: %v", err)
		}
		if got, want := body.Variables["since"], sinceOf("issues"); got != want {
			t.Errorf("issues: the second run sent since=%v, want bookmark − 300 s = %q", got, want)
		}
		// Every request of the second run carries the token.
		for _, r := range reqs {
			if r.Auth != "Bearer "+sentinel {
				t.Errorf("%s %s: Authorization %q", r.Method, r.Path, r.Auth)
				break
			}
		}
	})
}

// TestIncrementalMixedOffsets: replication-key values with different UTC
// offsets are compared as instants, so the bookmark is the latest instant,
// not the largest string, and the next run starts from it.
func TestIncrementalMixedOffsets(t *testing.T) {
	t.Parallel()
	// Ascending by instant, so the sorted variant is honest too.
	rows := []map[string]any{
		{"id": json.Number("3"), "updated_at": "2026-08-18T10:15:00+02:00"}, // 08:15Z
		{"id": json.Number("4"), "updated_at": "2026-08-18T05:45:00-03:00"}, // 08:45Z
		{"id": json.Number("1"), "updated_at": "2026-08-18T11:00:00+02:00"}, // 09:00Z, the largest string
		{"id": json.Number("2"), "updated_at": "2026-08-18T09:30:00Z"},      // 09:30Z, the latest instant
	}
	var mu sync.Mutex
	var since []string
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := r.URL.Query().Get("updated_since")
		mu.Lock()
		since = append(since, s)
		mu.Unlock()
		lo, err := time.Parse(time.RFC3339, s)
		if err != nil {
			http.Error(w, `{"error":"bad updated_since"}`, http.StatusBadRequest)
			return
		}
		var out []map[string]any
		for _, row := range rows {
			u, _ := time.Parse(time.RFC3339, row["updated_at"].(string))
			if !u.Before(lo) {
				out = append(out, row)
			}
		}
		writeJSONBody(w, map[string]any{"items": out})
	}))
	for _, sorted := range []bool{false, true} {
		name := "unsorted"
		if sorted {
			name = "sorted"
		}
		t.Run(name, func(t *testing.T) {
			stream := map[string]any{
				"name": "mixed", "path": "/mixed", "records_path": "items", "primary_key": []string{"id"},
				"replication_key": "updated_at", "is_sorted": sorted,
				"incremental": map[string]any{"param": "updated_since", "overlap_s": 300},
				"pagination":  map[string]any{"type": "none"},
				"schema": map[string]any{"type": "object", "properties": map[string]any{
					"id": map[string]any{"type": "integer"}, "updated_at": map[string]any{"type": "string", "format": "date-time"},
				}},
			}
			cfg := tapConfig(base, []any{stream})
			cfg["start_date"] = "2026-08-01T00:00:00Z"
			d := newTapDir(t, cfg)
			l := newLoader(t)
			if r := d.sync(l, time.Minute); r.code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
			}
			assertTable(t, l, "mixed", []string{"id"}, rows)
			bm := bookmarkValues(l.state)["mixed"]
			bmT, err := time.Parse(time.RFC3339, bm.(string))
			if err != nil || !bmT.Equal(time.Date(2026, 8, 18, 9, 30, 0, 0, time.UTC)) {
				t.Errorf("bookmark %v, want the latest instant 2026-08-18T09:30:00Z", bm)
			}
			mu.Lock()
			since = nil
			mu.Unlock()
			if r := d.sync(l, time.Minute); r.code != 0 {
				t.Fatalf("second run: exit %d; stderr:\n%s", r.code, r.stderr)
			}
			mu.Lock()
			got := slices.Clone(since)
			mu.Unlock()
			if want := []string{"2026-08-18T09:25:00Z"}; !slices.Equal(got, want) {
				t.Errorf("second run asked for updated_since %q, want %q", got, want)
			}
		})
	}
}

// TestIncrementalChunkResume kills a chunked bars backfill once it has
// recorded its third window in STATE, then checks that the next run starts
// at that window (and not before it) and that the backfill ends complete.
func TestIncrementalChunkResume(t *testing.T) {
	t.Parallel()
	dc := demoBase()
	dc.BarsDays, dc.LatencyMS = 8, 10
	srv, err := demoapi.New(dc)
	if err != nil {
		t.Fatal(err)
	}
	log := &reqLog{run: 1}
	base := serve(t, log.wrap(srv))
	defs := demoStreams(t, map[string]int{"bars": 100}, "bars")
	defs[0].(map[string]any)["incremental"].(map[string]any)["chunk_days"] = 1
	cfg := tapConfig(base, defs)
	start := today.AddDate(0, 0, -8)
	cfg["start_date"] = start.Format(time.RFC3339)
	d := newTapDir(t, cfg)
	l := newLoader(t)

	third := start.AddDate(0, 0, 2).Format(time.RFC3339)
	r := d.syncKill(l, nil, 0, time.Minute, func(line []byte) bool {
		return strings.Contains(string(line), `"type":"STATE"`) && strings.Contains(string(line), `"start":"`+third+`"`)
	})
	if !r.killed {
		t.Fatalf("the run was not killed (exit %d); stderr:\n%s", r.code, r.stderr)
	}
	bm := l.stateBookmark("bars")
	w, _ := bm["window"].(map[string]any)
	if w == nil {
		t.Fatalf("the last STATE has no bars window: %s", l.state)
	}
	wStart, _ := w["start"].(string)
	if ws, err := time.Parse(time.RFC3339, wStart); err != nil || ws.Before(start.AddDate(0, 0, 2)) {
		t.Fatalf("the last STATE's window starts at %q, want the third window or later", wStart)
	}

	log.setRun(2)
	r2 := d.sync(l, time.Minute)
	if r2.code != 0 {
		t.Fatalf("second run: exit %d; stderr:\n%s", r2.code, r2.stderr)
	}
	barsResumeCheck(t, 2, bm, cfg["start_date"].(string), log.all())
	for _, q := range log.all() {
		if q.Run == 2 && q.Path == "/v1/bars" {
			t.Logf("killed at window %v; the second run's first bars request: from=%s to=%s", w, q.Query.Get("from"), q.Query.Get("to"))
			break
		}
	}
	ws, _ := time.Parse(time.RFC3339, wStart)
	for _, q := range log.all() {
		if q.Run != 2 || q.Path != "/v1/bars" {
			continue
		}
		if from, err := time.Parse(time.RFC3339, q.Query.Get("from")); err == nil && from.Before(ws) {
			t.Errorf("the second run re-read window from=%s, before the window %s it resumed at", q.Query.Get("from"), wStart)
		}
	}
	if w := l.stateBookmark("bars")["window"]; w != nil {
		t.Errorf("the window is still in the state after the backfill ended: %v", w)
	}
	assertTable(t, l, "bars", demoKeys["bars"], source(t, srv, "bars"))
}

// TestIncrementalStateInStateOut: the bookmarks of streams this run does
// not sync, and keys of the state the tap does not know, are in every
// STATE it writes, unchanged.
func TestIncrementalStateInStateOut(t *testing.T) {
	t.Parallel()
	_, base := startDemo(t, demoBase())
	d := newTapDir(t, tapConfig(base, demoStreams(t, nil, "customers")))
	l := newLoader(t)
	l.state = json.RawMessage(`{"bookmarks":{"orders":{"replication_key":"updated_at","replication_key_value":"2026-01-02T03:04:05Z","extra":[1,2]},` +
		`"retired_stream":{"replication_key":"id","replication_key_value":42}},"meltano_run":{"id":"abc"}}`)
	if r := d.sync(l, time.Minute); r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if len(l.states) == 0 {
		t.Fatal("no STATE written")
	}
	for i, st := range l.states {
		v, err := decodeObject(st)
		if err != nil {
			t.Fatal(err)
		}
		bms, _ := v["bookmarks"].(map[string]any)
		want := map[string]any{
			"orders":         map[string]any{"replication_key": "updated_at", "replication_key_value": "2026-01-02T03:04:05Z", "extra": []any{json.Number("1"), json.Number("2")}},
			"retired_stream": map[string]any{"replication_key": "id", "replication_key_value": json.Number("42")},
		}
		for name, w := range want {
			if diff := cmp.Diff(w, bms[name]); diff != "" {
				t.Errorf("STATE %d: bookmarks.%s changed (-in +out):\n%s", i+1, name, diff)
			}
		}
		if diff := cmp.Diff(map[string]any{"id": "abc"}, v["meltano_run"]); diff != "" {
			t.Errorf("STATE %d: meltano_run changed:\n%s", i+1, diff)
		}
		if bms["customers"] == nil {
			t.Errorf("STATE %d has no customers bookmark", i+1)
		}
	}
}

// TestIncrementalLateRowOnSortedStream: a row that arrives late, with a
// key below the bookmark of the run before, on a stream declared
// is_sorted, fails the run; its last STATE goes back to the late row's
// key, so that once is_sorted is fixed the next run reads the row.
func TestIncrementalLateRowOnSortedStream(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	pages := [][]map[string]any{{
		{"id": json.Number("1"), "updated_at": "2026-01-10T00:00:00Z"},
		{"id": json.Number("2"), "updated_at": "2026-01-11T00:00:00Z"},
	}}
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		page := []map[string]any{}
		if n, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && n >= 1 && n <= len(pages) {
			page = pages[n-1]
		}
		writeJSONBody(w, map[string]any{"items": page})
	}))
	stream := map[string]any{
		"name": "s", "path": "/s", "records_path": "items", "primary_key": []string{"id"},
		"replication_key": "updated_at", "is_sorted": true,
		"incremental": map[string]any{"param": "updated_since"},
		"pagination":  map[string]any{"type": "page_number", "page_param": "page"},
		"schema": map[string]any{"type": "object", "properties": map[string]any{
			"id": map[string]any{"type": "integer"}, "updated_at": map[string]any{"type": "string", "format": "date-time"},
		}},
	}
	cfg := tapConfig(base, []any{stream})
	cfg["start_date"] = "2026-01-01T00:00:00Z"
	d := newTapDir(t, cfg)
	l := newLoader(t)
	if r := d.sync(l, time.Minute); r.code != 0 {
		t.Fatalf("first run: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if bm := bookmarkValues(l.state)["s"]; bm != "2026-01-11T00:00:00Z" {
		t.Fatalf("first run's bookmark %v, want 2026-01-11T00:00:00Z", bm)
	}

	mu.Lock()
	late := map[string]any{"id": json.Number("3"), "updated_at": "2026-01-05T00:00:00Z"}
	pages = append(pages, []map[string]any{late})
	mu.Unlock()
	r := d.sync(l, time.Minute)
	if r.code != 1 || !strings.Contains(string(r.stderr), `went down from "2026-01-11T00:00:00Z" to "2026-01-05T00:00:00Z"`) {
		t.Fatalf("second run: exit %d, want 1 and the error naming both keys; stderr:\n%s", r.code, r.stderr)
	}
	bm, _ := bookmarkValues(l.state)["s"].(string)
	if bm == "" || bm > "2026-01-05T00:00:00Z" {
		t.Fatalf("second run's last STATE has bookmark %q, past the unread row of 2026-01-05: %s", bm, l.state)
	}

	stream["is_sorted"] = false
	d.writeConfig(cfg)
	if r := d.sync(l, time.Minute); r.code != 0 {
		t.Fatalf("third run: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	assertTable(t, l, "s", []string{"id"}, append(slices.Clone(pages[0]), late))
}

// TestIncrementalClientSide runs a stream that has a replication_key but no
// incremental block twice over the same data. Nothing in its requests asks
// for changes only, so the second run reads every record again; it writes
// only those at or above the first run's bookmark, and says once, at
// start, that the stream is filtered here.
func TestIncrementalClientSide(t *testing.T) {
	t.Parallel()
	srv, base := startDemo(t, demoBase())
	defs := demoStreams(t, nil, "customers")
	delete(defs[0].(map[string]any), "incremental")
	d := newTapDir(t, tapConfig(base, defs))
	l := newLoader(t)
	const warn = "WARN replication_key without an incremental block"
	for run := 1; run <= 2; run++ {
		r := d.sync(l, time.Minute)
		if r.code != 0 {
			t.Fatalf("run %d: exit %d; stderr:\n%s", run, r.code, r.stderr)
		}
		if n := strings.Count(string(r.stderr), warn); n != 1 || !strings.Contains(string(r.stderr), "stream=customers") {
			t.Errorf("run %d: %d lines %q naming stream=customers, want 1; stderr:\n%s", run, n, warn, r.stderr)
		}
	}
	src := source(t, srv, "customers")
	assertTable(t, l, "customers", demoKeys["customers"], src)
	bm, _ := l.stateBookmark("customers")["replication_key_value"].(string)
	high, err := time.Parse(time.RFC3339Nano, bm)
	if err != nil {
		t.Fatalf("bookmark %q: %v", bm, err)
	}
	atOrAbove := 0
	for _, row := range src {
		u, err := time.Parse(time.RFC3339Nano, row["updated_at"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if !u.Before(high) {
			atOrAbove++
		}
	}
	if atOrAbove == 0 || atOrAbove == len(src) {
		t.Fatalf("%d of %d rows at or above the bookmark %s: the data set does not test the filter", atOrAbove, len(src), bm)
	}
	if got := l.received["customers"]; got != atOrAbove {
		t.Errorf("the second run wrote %d customers, want the %d at or above the bookmark %s (of %d)", got, atOrAbove, bm, len(src))
	}
}
