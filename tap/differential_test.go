package tap

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tap-dev/tap/internal/taptest"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/tap/catalog"
	"github.com/tap-dev/tap/tap/output"
	"github.com/tap-dev/tap/tap/state"
)

// rawRecorder keeps each RECORD's bytes as the engine wrote them.
type rawRecorder struct {
	recorder
	mu  sync.Mutex
	raw map[string][][]byte
}

func (r *rawRecorder) Record(stream string, rec []byte, t time.Time, v int64) error {
	r.mu.Lock()
	r.raw[stream] = append(r.raw[stream], append([]byte(nil), rec...))
	r.mu.Unlock()
	return r.recorder.Record(stream, rec, t, v)
}

// TestSpliceAgainstTree runs the demo streams twice, spliced and through
// the tree path only: the same records (values), in the same order, the
// same states; and the streams that can splice did.
func TestSpliceAgainstTree(t *testing.T) {
	run := func(tree bool) *rawRecorder {
		_, path := demoConfig(t, func(cfg map[string]any) {
			cfg["demo"].(map[string]any)["events_growth"] = 0
			cfg["max_parallel_streams"] = 1
		})
		cfg, err := settings.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		w := &rawRecorder{raw: map[string][][]byte{}}
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		if err := syncTree(context.Background(), Options{Config: cfg, Writer: w, Log: log}, tree); err != nil {
			t.Fatal(err)
		}
		return w
	}
	tree, spliced := run(true), run(false)
	for _, w := range []*rawRecorder{tree, spliced} {
		for i, m := range w.msgs {
			w.msgs[i].Version = 0
			bm, _ := m.State["bookmarks"].(map[string]any)
			for _, b := range bm {
				// The version and the window's end are the run's clock.
				delete(b.(map[string]any), "version")
				delete(b.(map[string]any), "window")
				if r, ok := b.(map[string]any)["resume"].(map[string]any); ok {
					delete(r, "version")
				}
			}
		}
	}
	if d := cmp.Diff(tree.msgs, spliced.msgs, cmp.AllowUnexported(message{})); d != "" {
		t.Fatalf("messages differ (-tree +spliced):\n%s", d)
	}
	// A spliced record keeps the API's key order; the tree path sorts.
	for _, stream := range []string{"events", "customers", "tickets", "bars", "orders", "order_items"} {
		n := 0
		for i, b := range spliced.raw[stream] {
			if !bytes.Equal(b, tree.raw[stream][i]) {
				n++
			}
		}
		if n == 0 {
			t.Errorf("%s: no record spliced of %d", stream, len(spliced.raw[stream]))
		}
		t.Logf("%s: %d of %d records spliced", stream, n, len(spliced.raw[stream]))
	}
	var total int
	for _, m := range tree.msgs {
		if m.Type == "RECORD" {
			total++
		}
	}
	if total == 0 {
		t.Fatal("no records")
	}
}

// BenchmarkSpliceEvents syncs the demo's events stream (the demo API runs
// in the same process: read the profile for the tap's share).
func BenchmarkSpliceEvents(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		_, path := demoConfigB(b)
		cfg, err := settings.Load(path)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		if err := Sync(context.Background(), Options{Config: cfg, Writer: output.NewSinger(io.Discard), Log: log}); err != nil {
			b.Fatal(err)
		}
	}
}

func demoConfigB(b *testing.B) (map[string]any, string) {
	raw, err := os.ReadFile("../sample_config.json")
	if err != nil {
		b.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		b.Fatal(err)
	}
	cfg["demo"] = map[string]any{"seed": 7, "token": "demo-token", "events": 200000, "max_page_size": 1000}
	cfg["rate_limit"] = map[string]any{"requests_per_second": 0, "max_in_flight": 1}
	dir := b.TempDir()
	cfg["dead_letter_path"] = filepath.Join(dir, "dead_letter.jsonl")
	var events []any
	for _, s := range cfg["streams"].([]any) {
		if s.(map[string]any)["name"] == "events" {
			s.(map[string]any)["pagination"].(map[string]any)["page_size"] = 1000
			events = append(events, s)
		}
	}
	cfg["streams"] = events
	out, _ := json.Marshal(cfg)
	p := filepath.Join(dir, "config.json")
	if err := os.WriteFile(p, out, 0o600); err != nil {
		b.Fatal(err)
	}
	return cfg, p
}

// pageRun is what a sync of one page of events wrote.
type pageRun struct {
	msgs []message
	dead []map[string]any
	err  string   // the sync's error, if any
	raw  [][]byte // each RECORD's bytes as written
}

// syncEventsPage syncs an events stream whose API answers page, on the
// tree path or not, with the stream maps given (nil: none).
func syncEventsPage(t *testing.T, page string, tree bool, maps map[string]any) pageRun {
	t.Helper()
	schema, err := os.ReadFile("../schemas/events.json")
	if err != nil {
		t.Fatal(err)
	}
	return syncPage(t, page, schema, tree, maps)
}

// syncPage is syncEventsPage with the stream's schema given.
func syncPage(t *testing.T, page string, schema []byte, tree bool, maps map[string]any) pageRun {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, page)
	}))
	defer srv.Close()
	dir := t.TempDir()
	def := map[string]any{"name": "events", "path": "/events", "primary_key": []any{"id"}, "replication_key": "id",
		"records_path": "events", "schema": json.RawMessage(schema), "pagination": map[string]any{"type": "none"}}
	config := map[string]any{"base_url": srv.URL, "rate_limit": map[string]any{"requests_per_second": 0},
		"retry": map[string]any{"max_attempts": 1}, "dead_letter_path": filepath.Join(dir, "dead.jsonl"), "streams": []any{def}}
	if maps != nil {
		config["stream_maps"] = maps
	}
	cfg, err := settings.Load(writeConfig(t, dir, "config.json", config))
	if err != nil {
		t.Fatal(err)
	}
	w := &rawRecorder{raw: map[string][][]byte{}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var res pageRun
	if err := syncTree(context.Background(), Options{Config: cfg, Writer: w, Log: log}, tree); err != nil {
		res.err = err.Error()
	}
	res.dead = readDeadLetters(t, filepath.Join(dir, "dead.jsonl"), "")
	res.msgs, res.raw = w.msgs, w.raw["events"]
	return res
}

// readDeadLetters reads the dead letters at path without their clock
// fields, a request's URL without base.
func readDeadLetters(t *testing.T, path, base string) []map[string]any {
	t.Helper()
	b, _ := os.ReadFile(path)
	var dead []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"run_id", "run_started_at", "time_extracted", "time"} {
			delete(m, k)
		}
		if u, ok := m["url"].(string); ok && base != "" {
			m["url"] = strings.TrimPrefix(u, base)
		}
		dead = append(dead, m)
	}
	return dead
}

// TestSpliceMixedPage holds a page of records the walker is sure of and
// records it is not to the tree path: the same records written, the same
// dead letters, the same bookmark.
func TestSpliceMixedPage(t *testing.T) {
	page := "{\"events\":[" + strings.Join([]string{
		`{"id":1,"type":"login","occurred_at":"2026-01-01T00:00:00Z"}`,
		`{"id":2,"type":"x","type":"last wins"}`,        // duplicate key
		`{"id":3,"type":"caf` + "\xff" + `"}`,           // invalid UTF-8
		`{"id":4,"type":"a","surprise":{"b":[1,2]}}`,    // drift
		"{\"id\":5,\n\"type\":\"line break\"}",          // a line break
		`{"id":"6","type":"wrong type"}`,                // a dead letter
		`{"id":7,"occurred_at":"2026-02-30T00:00:00Z"}`, // not a date: a dead letter
		`{"id":8,"actor_id":1e2}`,                       // an exponent
		`{"\u0069d":9}`,                                 // an escaped key
		`{"id":10,"payload":{"ok":true,"path":"\ud83d\ude00/\u00e9"}}`,
	}, ",") + "]}"
	tree, spliced := syncEventsPage(t, page, true, nil), syncEventsPage(t, page, false, nil)
	if tree.err != "" || spliced.err != "" {
		t.Fatalf("sync: tree %q, spliced %q", tree.err, spliced.err)
	}
	// Records 1 and 10 are spliced: the API's key order, not sorted.
	if want := `{"id":1,"type":"login","occurred_at":"2026-01-01T00:00:00Z"}`; string(spliced.raw[0]) != want {
		t.Errorf("record 1 written as %s, want it spliced as %s", spliced.raw[0], want)
	}
	tree.raw, spliced.raw = nil, nil
	if d := cmp.Diff(tree, spliced, cmp.AllowUnexported(message{}, pageRun{})); d != "" {
		t.Errorf("(-tree +spliced):\n%s", d)
	}
	if len(tree.dead) != 2 {
		t.Errorf("%d dead letters, want 2", len(tree.dead))
	}
	var records int
	for _, m := range tree.msgs {
		if m.Type == "RECORD" {
			records++
		}
	}
	if records != 8 {
		t.Errorf("%d records, want 8", records)
	}
}

// TestPageLines runs the demo streams through the real writers three
// ways — each record through Writer.Record on the tree path, and a page's
// lines gathered on the tree path and spliced — and gets the same
// messages in the same order, in writes of whole lines.
func TestPageLines(t *testing.T) {
	writers := map[string]func(io.Writer) output.Writer{
		"singer":  func(w io.Writer) output.Writer { return output.NewSinger(w) },
		"airbyte": func(w io.Writer) output.Writer { return output.NewAirbyte(w) },
	}
	for name, newWriter := range writers {
		t.Run(name, func(t *testing.T) {
			run := func(tree, gather bool) []map[string]any {
				_, path := demoConfig(t, func(cfg map[string]any) {
					cfg["demo"].(map[string]any)["events_growth"] = 0
					cfg["max_parallel_streams"] = 1
				})
				cfg, err := settings.Load(path)
				if err != nil {
					t.Fatal(err)
				}
				rec := &taptest.Writes{}
				w := newWriter(rec)
				if !gather {
					w = struct{ output.Writer }{w} // hides recordFramer
				}
				log := slog.New(slog.NewTextHandler(io.Discard, nil))
				if err := syncTree(context.Background(), Options{Config: cfg, Writer: w, Log: log}, tree); err != nil {
					t.Fatal(err)
				}
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
				all := rec.Bytes()
				// 64 KiB: output's batch of lines into its buffer.
				taptest.CheckWholeLines(t, rec, 64<<10, string(all))
				var msgs []map[string]any
				for _, line := range bytes.Split(bytes.TrimSuffix(all, []byte("\n")), []byte("\n")) {
					var m map[string]any
					if err := json.Unmarshal(line, &m); err != nil {
						t.Fatalf("%v: %s", err, line)
					}
					msgs = append(msgs, withoutClock(m))
				}
				return msgs
			}
			want := run(true, false)
			for _, tt := range []struct {
				name         string
				tree, gather bool
			}{{"tree, gathered", true, true}, {"spliced, gathered", false, true}} {
				if d := cmp.Diff(want, run(tt.tree, tt.gather)); d != "" {
					t.Errorf("%s: messages differ from one Record call each (-want +got):\n%s", tt.name, d)
				}
			}
			records := 0
			for _, m := range want {
				if m["type"] == "RECORD" {
					records++
				}
			}
			if records < 1000 {
				t.Fatalf("%d records", records)
			}
		})
	}
}

// withoutClock drops what the run's clock decides from a message.
func withoutClock(m map[string]any) map[string]any {
	var drop func(v any)
	drop = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range []string{"time_extracted", "emitted_at", "version", "window"} {
				delete(x, k)
			}
			for _, e := range x {
				drop(e)
			}
		case []any:
			for _, e := range x {
				drop(e)
			}
		}
	}
	if m["type"] == "RECORD" {
		// Only the message's own clock fields: a record keeps its data.
		delete(m, "time_extracted")
		delete(m, "version")
		if r, ok := m["record"].(map[string]any); ok && m["stream"] == nil {
			delete(r, "emitted_at")
		}
		return m
	}
	drop(m)
	return m
}

// familyAPI serves orders (cursor pages of 4) and, per order, its items
// (cursor pages of 2, filtered by updated_since), its notes (one page;
// 404 for order 9) and, per item, its parts, each record's keys out of
// sorted order so that a spliced record's bytes differ from the tree's.
// Orders 5 and 6 break their schema (6 with an id its items' order_id
// does not accept) and order 7 has no id; item 2 of order 3 breaks its
// schema, and item 1 of order 4 has an order_id of its own.
type familyAPI struct {
	mu  sync.Mutex
	log []string
}

func (a *familyAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.log = append(a.log, r.URL.RequestURI())
	a.mu.Unlock()
	q := r.URL.Query()
	num := func(k string) int { n, _ := strconv.Atoi(q.Get(k)); return n }
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/") // v1 orders [id items|notes]
	w.Header().Set("Content-Type", "application/json")
	var recs []string
	switch {
	case len(parts) == 2:
		end := min(num("cursor")+4, 10)
		for id := num("cursor") + 1; id <= end; id++ {
			switch id {
			case 5:
				recs = append(recs, `{"status":7,"id":5,"updated_at":"2026-01-05T00:00:00Z"}`)
			case 6:
				recs = append(recs, `{"status":"open","id":"6","updated_at":"2026-01-06T00:00:00Z"}`)
			case 7:
				recs = append(recs, `{"status":"open","id":null,"updated_at":"2026-01-07T00:00:00Z"}`)
			default:
				recs = append(recs, fmt.Sprintf(`{"status":"open","id":%d,"updated_at":"2026-01-%02dT00:00:00Z"}`, id, id))
			}
		}
		next := "null"
		if end < 10 {
			next = strconv.Quote(strconv.Itoa(end))
		}
		fmt.Fprintf(w, `{"orders":[%s],"next":%s}`, strings.Join(recs, ","), next)
	case len(parts) == 4 && parts[3] == "items":
		order, _ := strconv.Atoi(parts[2])
		since, _ := time.Parse(time.RFC3339, q.Get("updated_since"))
		from := num("cursor")
		n := from
		for i := from + 1; i <= 3 && len(recs) < 2; i++ {
			n = i
			at := time.Date(2026, 2, order, i, 0, 0, 0, time.UTC)
			if at.Before(since) {
				continue
			}
			sku := fmt.Sprintf("%q", fmt.Sprintf("s%d", i))
			switch {
			case order == 3 && i == 2:
				sku = "5"
			case order == 4 && i == 1:
				sku += `,"order_id":999` // the tree path overwrites it
			}
			recs = append(recs, fmt.Sprintf(`{"sku":%s,"id":"%d-%d","updated_at":%q}`, sku, order, i, at.Format(time.RFC3339)))
		}
		next := "null"
		if n < 3 {
			next = strconv.Quote(strconv.Itoa(n))
		}
		fmt.Fprintf(w, `{"items":[%s],"next":%s}`, strings.Join(recs, ","), next)
	case len(parts) == 4 && parts[3] == "parts":
		fmt.Fprintf(w, `{"parts":[{"n":1,"id":"%s-p"}]}`, parts[2])
	case len(parts) == 4 && parts[3] == "notes":
		if parts[2] == "9" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, `[{"text":"note of %s","id":%s}]`, parts[2], parts[2])
	default:
		http.NotFound(w, r)
	}
}

// familyStreams are the streams of familyAPI: orders, its items (the
// order's id injected as order_id, a bookmark per order), the items'
// parts (their injected order_id in the path, injected as item_order)
// and the orders' notes (the id only in the path).
func familyStreams() []any {
	str, integer := map[string]any{"type": "string"}, map[string]any{"type": "integer"}
	at := map[string]any{"type": "string", "format": "date-time"}
	object := func(required []any, props map[string]any) map[string]any {
		return map[string]any{"type": "object", "required": required, "properties": props}
	}
	return []any{
		map[string]any{"name": "orders", "path": "/v1/orders", "records_path": "orders", "primary_key": []any{"id"},
			"pagination": map[string]any{"type": "cursor", "cursor_param": "cursor", "next_cursor_path": "next"},
			"schema":     object([]any{"id"}, map[string]any{"id": integer, "status": str, "updated_at": at})},
		map[string]any{"name": "items", "path": "/v1/orders/{id}/items", "records_path": "items", "primary_key": []any{"order_id", "id"},
			"parent":          map[string]any{"stream": "orders", "key": "id", "as": "order_id"},
			"replication_key": "updated_at", "incremental": map[string]any{"param": "updated_since", "format": "rfc3339"},
			"pagination": map[string]any{"type": "cursor", "cursor_param": "cursor", "next_cursor_path": "next"},
			"schema":     object([]any{"id", "order_id"}, map[string]any{"id": str, "order_id": integer, "sku": str, "updated_at": at})},
		map[string]any{"name": "parts", "path": "/v1/orders/{order_id}/parts", "records_path": "parts", "primary_key": []any{"id"},
			"parent":     map[string]any{"stream": "items", "key": "order_id", "as": "item_order"},
			"pagination": map[string]any{"type": "none"},
			"schema":     object([]any{"id"}, map[string]any{"id": str, "n": integer, "item_order": integer})},
		map[string]any{"name": "notes", "path": "/v1/orders/{id}/notes", "primary_key": []any{"id"},
			"parent": map[string]any{"stream": "orders", "key": "id"}, "ignore_statuses": []any{404},
			"pagination": map[string]any{"type": "none"},
			"schema":     object([]any{"id"}, map[string]any{"id": integer, "text": str})},
	}
}

// syncFamily syncs familyAPI's streams as selected (nil: all), from
// state (nil: none), as a test run of limit records a stream (0: a sync),
// spliced or on the tree path only: what it wrote,
// its dead letters, and the requests the API saw, sorted (a parent's
// next page may be fetched while its children are walked).
func syncFamily(t *testing.T, selected []string, st map[string]any, limit int64, tree bool) (pageRun, map[string][][]byte, []string) {
	t.Helper()
	api := &familyAPI{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	dir := t.TempDir()
	config := map[string]any{"base_url": srv.URL, "rate_limit": map[string]any{"requests_per_second": 0},
		"retry": map[string]any{"max_attempts": 1}, "start_date": "2026-01-01T00:00:00Z", "max_parallel_streams": 1,
		"on_schema_violation": "dead_letter", "dead_letter_path": filepath.Join(dir, "dead.jsonl"), "streams": familyStreams()}
	cfg, err := settings.Load(writeConfig(t, dir, "config.json", config))
	if err != nil {
		t.Fatal(err)
	}
	var sel *catalog.Selection
	if selected != nil {
		var cat []any
		for _, s := range selected {
			cat = append(cat, map[string]any{"tap_stream_id": s, "metadata": []any{map[string]any{"breadcrumb": []any{}, "metadata": map[string]any{"selected": true}}}})
		}
		b, _ := json.Marshal(map[string]any{"streams": cat})
		if sel, err = catalog.Parse(b, cfg, nil); err != nil {
			t.Fatal(err)
		}
	}
	s := state.New()
	if st != nil {
		b, _ := json.Marshal(st)
		if s, err = state.Parse(b); err != nil {
			t.Fatal(err)
		}
	}
	w := &rawRecorder{raw: map[string][][]byte{}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var res pageRun
	if err := syncTree(context.Background(), Options{Config: cfg, Selection: sel, State: s, Writer: w, Log: log, RecordLimit: limit}, tree); err != nil {
		res.err = err.Error()
	}
	res.dead = readDeadLetters(t, filepath.Join(dir, "dead.jsonl"), srv.URL)
	for i, m := range w.msgs {
		w.msgs[i].Version = 0
		bm, _ := m.State["bookmarks"].(map[string]any)
		for _, b := range bm {
			delete(b.(map[string]any), "version")
			if r, ok := b.(map[string]any)["resume"].(map[string]any); ok {
				delete(r, "version")
			}
		}
	}
	res.msgs = w.msgs
	slices.Sort(api.log)
	return res, w.raw, api.log
}

// TestSpliceFamilyAgainstTree syncs a parent and its two children
// spliced and on the tree path only: the same records (values), in the
// same order, the same states (a bookmark per parent record, the
// parent's resume), the same dead letters (a parent record that breaks
// its schema still has its children walked; one without a key has
// none), the same requests; and the parent records the walker is sure
// of are spliced whether the parent is written or read only for its
// children.
func TestSpliceFamilyAgainstTree(t *testing.T) {
	tests := []struct {
		name     string
		selected []string // nil: all
		state    map[string]any
		spliced  []string // streams with records written from their bytes
		limit    int64    // a test run's records a stream (0: a sync)
	}{
		{"parent and children", nil, nil, []string{"orders", "items", "parts", "notes"}, 0},
		{"children only", []string{"items", "notes"}, nil, []string{"items", "notes"}, 0},
		{"grandchildren only", []string{"parts"}, nil, []string{"parts"}, 0},
		{"one child", []string{"orders", "items"}, nil, []string{"orders", "items"}, 0},
		{"from per-parent bookmarks", nil, map[string]any{"bookmarks": map[string]any{
			"items": map[string]any{"partitions": []any{
				map[string]any{"context": map[string]any{"order_id": 2}, "replication_key_value": "2026-02-02T02:00:00Z"},
				map[string]any{"context": map[string]any{"order_id": 4}, "replication_key_value": "2026-02-04T03:00:00Z"},
			}},
		}}, []string{"orders", "items", "parts", "notes"}, 0},
		{"a test run", nil, nil, []string{"orders", "items", "parts", "notes"}, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree, treeRaw, treeReqs := syncFamily(t, tt.selected, tt.state, tt.limit, true)
			spliced, splicedRaw, splicedReqs := syncFamily(t, tt.selected, tt.state, tt.limit, false)
			if d := cmp.Diff(tree, spliced, cmp.AllowUnexported(message{}, pageRun{})); d != "" {
				t.Fatalf("(-tree +spliced):\n%s", d)
			}
			if d := cmp.Diff(treeReqs, splicedReqs); d != "" {
				t.Fatalf("requests differ (-tree +spliced):\n%s", d)
			}
			if tree.err != "" {
				t.Fatalf("sync: %s", tree.err)
			}
			if len(tree.dead) == 0 {
				t.Error("no dead letters: the API's bad records were not met")
			}
			counts := map[string]int{}
			for _, m := range tree.msgs {
				if m.Type == "RECORD" {
					counts[m.Stream]++
				}
			}
			want := tt.selected
			if want == nil {
				want = []string{"orders", "items", "parts", "notes"}
			}
			for _, s := range want {
				if counts[s] == 0 {
					t.Errorf("%s: no records", s)
				}
			}
			for stream, raw := range splicedRaw {
				n := 0
				for i, b := range raw {
					if !bytes.Equal(b, treeRaw[stream][i]) {
						n++
					}
				}
				if want := slices.Contains(tt.spliced, stream); (n > 0) != want {
					t.Errorf("%s: %d of %d records spliced, want spliced: %v", stream, n, len(raw), want)
				}
			}
		})
	}
}
