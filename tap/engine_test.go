package tap

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/tap/catalog"
	"github.com/tap-dev/tap/tap/connect"
	"github.com/tap-dev/tap/tap/output"
	"github.com/tap-dev/tap/tap/state"
)

// message is one message a recording writer got.
type message struct {
	Type    string // SCHEMA, RECORD, STATE, ACTIVATE_VERSION
	Stream  string
	Record  map[string]any
	State   map[string]any // the whole state, as written
	Version int64          // a RECORD's table version
}

// recorder is a Writer that keeps every message in order.
type recorder struct {
	mu   sync.Mutex
	msgs []message

	statuses []string // stream:status, in order
}

func (r *recorder) add(m message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, m)
	return nil
}

func (r *recorder) Schema(stream string, _ map[string]any, _, _ []string) error {
	return r.add(message{Type: "SCHEMA", Stream: stream})
}

func (r *recorder) Record(stream string, rec []byte, _ time.Time, version int64) error {
	var m map[string]any
	if err := json.Unmarshal(rec, &m); err != nil {
		return err
	}
	return r.add(message{Type: "RECORD", Stream: stream, Record: m, Version: version})
}

func (r *recorder) State(stream string, st output.State, _ int64) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	return r.add(message{Type: "STATE", Stream: stream, State: m})
}

func (r *recorder) ActivateVersion(stream string, _ int64) error {
	return r.add(message{Type: "ACTIVATE_VERSION", Stream: stream})
}

func (r *recorder) StreamStatus(stream, status string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.statuses = append(r.statuses, stream+":"+status)
	return nil
}

func (r *recorder) Flush() error { return nil }

// bookmark reads a stream's bookmark value out of a STATE message.
func (m message) bookmark(stream string) any {
	b, _ := m.State["bookmarks"].(map[string]any)[stream].(map[string]any)
	return b["replication_key_value"]
}

func (m message) window(stream string) string {
	b, _ := m.State["bookmarks"].(map[string]any)[stream].(map[string]any)
	w, _ := b["window"].(map[string]any)
	if w == nil {
		return ""
	}
	return fmt.Sprint(w["start"], "/", w["end"])
}

// source serves the pages of fake streams: rows[stream] filtered by the
// request's since/from/to parameters, in pages of pageSize.
type source struct {
	mu       sync.Mutex
	rows     map[string][]map[string]any
	pageSize int
	requests []string            // stream + "?" + query, in order
	fail     func(n int) error   // called with the request number (1-based); an error is returned instead of a page
	shift    map[string]struct{} // streams whose offset pages overlap by one row

	failReq func(req string) error // called with stream + "?" + query; an error is returned instead of a page
}

func (s *source) fetch(n *node) streams.Fetch {
	d := n.def
	return func(ctx context.Context, req streams.Request) (*streams.Page, error) {
		s.mu.Lock()
		s.requests = append(s.requests, d.Name+"?"+req.Query.Encode())
		count := len(s.requests)
		s.mu.Unlock()
		if s.fail != nil {
			if err := s.fail(count); err != nil {
				return nil, err
			}
		}
		if s.failReq != nil {
			if err := s.failReq(d.Name + "?" + req.Query.Encode()); err != nil {
				return nil, err
			}
		}
		var rows []any
		all, ok := s.rows[req.URL] // a child's rows, by its filled path
		if !ok {
			all = s.rows[d.Name]
		}
		for _, r := range all {
			if inRange(r, req.Query) {
				rows = append(rows, r)
			}
		}
		start, size := 0, len(rows)
		if req.Query.Has("page") || req.Query.Has("offset") {
			size = s.pageSize
		}
		if p := req.Query.Get("page"); p != "" {
			k, _ := strconv.Atoi(p)
			start = (k - 1) * s.pageSize
		}
		if o := req.Query.Get("offset"); o != "" {
			start, _ = strconv.Atoi(o)
			if _, ok := s.shift[d.Name]; ok && start > 0 {
				start-- // a row inserted upstream pushed the rest down by one
			}
		}
		page := []any{}
		if start < len(rows) {
			page = rows[start:min(start+size, len(rows))]
		}
		body := map[string]any{"data": page}
		recs, err := d.Extract(body)
		if err != nil {
			return nil, err
		}
		return &streams.Page{URL: &url.URL{Path: req.URL}, Values: streams.Decoded{Body: body}, Records: recs}, nil
	}
}

// inRange applies since (>=), from (>=) and to (<) to a row's updated_at.
func inRange(r map[string]any, q url.Values) bool {
	at, _ := time.Parse(time.RFC3339, r["updated_at"].(string))
	for _, p := range []string{"since", "from"} {
		if v := q.Get(p); v != "" {
			t, _ := time.Parse(time.RFC3339, v)
			if at.Before(t) {
				return false
			}
		}
	}
	if v := q.Get("to"); v != "" {
		t, _ := time.Parse(time.RFC3339, v)
		if !at.Before(t) {
			return false
		}
	}
	return true
}

func row(id int, day int) map[string]any {
	return map[string]any{"id": id, "updated_at": time.Date(2026, 1, day, 0, 0, 0, 0, time.UTC).Format(time.RFC3339)}
}

func key(day int) string { return time.Date(2026, 1, day, 0, 0, 0, 0, time.UTC).Format(time.RFC3339) }

// engineCase is one in-process run of the engine over a fake source.
type engineCase struct {
	name   string
	stream map[string]any // extra fields of the stream "s"
	rows   []map[string]any
	state  string // incoming state JSON ("" = none)
	// catalog is a Singer catalog to run with ("" = none).
	catalog string
	fail    func(ctx context.CancelFunc) func(n int) error
	shift   bool
	// more are other streams' definitions, and srcRows rows by stream name
	// or by a child's filled path.
	more    []map[string]any
	srcRows map[string][]map[string]any
	cfg     map[string]any // extra config keys
	now     time.Time      // the run's clock (zero: 2026-01-11)
	wantErr string
	check   func(t *testing.T, r *recorder, src *source, logs string)

	// failReq fails a request by what it asks: stream + "?" + query.
	failReq func(req string) error
	// wantExit, when set, is the exit code wantErr must map to.
	wantExit int
	// recordLimit, when set, stops each stream after that many records,
	// as --test does.
	recordLimit int64
}

func runEngineCase(t *testing.T, c engineCase) {
	t.Helper()
	def := map[string]any{
		"name": "s", "path": "/s", "records_path": "data", "primary_key": []string{"id"},
		"replication_key": "updated_at",
		"incremental":     map[string]any{"param": "since", "format": "rfc3339"},
		"pagination":      map[string]any{"type": "page_number", "page_param": "page", "page_size_param": "per_page", "page_size": 2},
		"schema": map[string]any{"type": "object", "properties": map[string]any{
			"id": map[string]any{"type": "integer"}, "updated_at": map[string]any{"type": "string", "format": "date-time"}}},
	}
	for k, v := range c.stream {
		if v == nil {
			delete(def, k)
		} else {
			def[k] = v
		}
	}
	defs := []any{def}
	for _, m := range c.more {
		defs = append(defs, m)
	}
	conf := map[string]any{
		"base_url": "http://127.0.0.1:9", "start_date": key(1),
		"streams": defs, "dead_letter_path": t.TempDir() + "/dead.jsonl",
	}
	for k, v := range c.cfg {
		conf[k] = v
	}
	path := writeConfig(t, t.TempDir(), "config.json", conf)
	cfg, err := settings.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	st := state.New()
	if c.state != "" {
		var err error
		if st, err = state.Parse([]byte(c.state)); err != nil {
			t.Fatal(err)
		}
	}
	var sel *catalog.Selection
	if c.catalog != "" {
		if sel, err = catalog.Parse([]byte(c.catalog), cfg, nil); err != nil {
			t.Fatal(err)
		}
	}
	var logs bytes.Buffer
	log := output.NewStderrLogger(&logs, slog.LevelInfo, nil)
	rec := &recorder{}
	p := policy{mode: ModeSync}
	if c.recordLimit > 0 {
		p = policy{mode: ModeTest, recordLimit: c.recordLimit}
	}
	e := testEngine(t, cfg, run{policy: p, sel: sel, state: st, out: rec, log: log})
	now := time.Date(2026, 1, 11, 0, 0, 0, 0, time.UTC)
	if !c.now.IsZero() {
		now = c.now
	}
	e.now = func() time.Time { return now }
	src := &source{rows: map[string][]map[string]any{"s": c.rows}, pageSize: 2}
	for k, v := range c.srcRows {
		src.rows[k] = v
	}
	if c.shift {
		src.shift = map[string]struct{}{"s": {}}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if c.fail != nil {
		src.fail = c.fail(cancel)
	}
	src.failReq = c.failReq
	e.fetch = src.fetch
	err = e.sync(ctx, time.Hour)
	switch {
	case c.wantErr == "" && err != nil:
		t.Fatalf("sync: %v\nlogs:\n%s", err, logs.String())
	case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
		t.Fatalf("sync: err = %v, want one containing %q", err, c.wantErr)
	case c.wantExit != 0 && ExitCode(err) != c.wantExit:
		t.Fatalf("sync: err = %v: exit %d, want %d", err, ExitCode(err), c.wantExit)
	}
	c.check(t, rec, src, logs.String())
}

// ids lists the ids of the RECORD messages.
func ids(r *recorder) []int {
	var out []int
	for _, m := range r.msgs {
		if m.Type == "RECORD" {
			n, _ := m.Record["id"].(float64)
			out = append(out, int(n))
		}
	}
	return out
}

// states lists the bookmark of each STATE message ("-" for none).
func states(r *recorder) []string {
	var out []string
	for _, m := range r.msgs {
		if m.Type == "STATE" {
			v := m.bookmark("s")
			if v == nil {
				out = append(out, "-")
			} else {
				out = append(out, fmt.Sprint(v))
			}
		}
	}
	return out
}

// noBookmarkPastUnread: after a STATE says bookmark v, no RECORD with a
// key below v follows: the next run, starting at v, would never read it.
func noBookmarkPastUnread(t *testing.T, r *recorder) {
	t.Helper()
	var bm string
	for i, m := range r.msgs {
		switch m.Type {
		case "STATE":
			if v, ok := m.bookmark("s").(string); ok {
				bm = v
			}
		case "RECORD":
			if k := m.Record["updated_at"].(string); bm != "" && k < bm {
				t.Errorf("message %d: RECORD %v after a STATE at %s", i, m.Record, bm)
			}
		}
	}
}

func lastIsState(t *testing.T, r *recorder) {
	t.Helper()
	if len(r.msgs) == 0 || r.msgs[len(r.msgs)-1].Type != "STATE" {
		t.Errorf("the last message is not a STATE: %+v", r.msgs)
	}
}

func equal[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func TestEngine(t *testing.T) {
	unsorted := []map[string]any{row(1, 5), row(2, 3), row(3, 7), row(4, 6), row(5, 4)}
	sortedRows := []map[string]any{row(1, 2), row(2, 3), row(3, 4), row(4, 5), row(5, 6)}
	outOfOrder := []map[string]any{row(1, 5), row(2, 6), row(3, 3), row(4, 7)}
	for _, c := range []engineCase{{
		name: "unsorted: the bookmark moves once, after every record; a STATE with the resume position after each page",
		rows: unsorted,
		check: func(t *testing.T, r *recorder, src *source, _ string) {
			equal(t, "ids", ids(r), []int{1, 2, 3, 4, 5})
			equal(t, "states", states(r), []string{"-", "-", key(7)})
			noBookmarkPastUnread(t, r)
			lastIsState(t, r)
		},
	}, {
		name:   "sorted: a STATE after each page",
		stream: map[string]any{"is_sorted": true},
		rows:   sortedRows,
		check: func(t *testing.T, r *recorder, _ *source, _ string) {
			equal(t, "ids", ids(r), []int{1, 2, 3, 4, 5})
			equal(t, "states", states(r), []string{key(3), key(5), key(6), key(6)})
			noBookmarkPastUnread(t, r)
		},
	}, {
		name:  "bookmark − overlap is the filter",
		state: `{"bookmarks":{"s":{"replication_key":"updated_at","replication_key_value":"` + key(5) + `"}}}`,
		rows:  unsorted, stream: map[string]any{"incremental": map[string]any{"param": "since", "format": "rfc3339", "overlap_s": 86400}},
		check: func(t *testing.T, r *recorder, src *source, _ string) {
			if !strings.Contains(src.requests[0], "since="+url.QueryEscape(key(4))) {
				t.Errorf("first request %s, want since=%s", src.requests[0], key(4))
			}
			equal(t, "ids", ids(r), []int{1, 3, 4, 5})
			equal(t, "states", states(r), []string{key(5), key(5), key(7)})
		},
	}, {
		name:  "no incremental block: every record is asked for, those below the bookmark are not written",
		state: `{"bookmarks":{"s":{"replication_key":"updated_at","replication_key_value":"` + key(5) + `"}}}`,
		rows:  unsorted, stream: map[string]any{"incremental": nil},
		check: func(t *testing.T, r *recorder, src *source, logs string) {
			for _, q := range src.requests {
				if strings.Contains(q, "since=") {
					t.Errorf("request %s asks for changes only; no incremental block gives no filter", q)
				}
			}
			equal(t, "ids", ids(r), []int{1, 3, 4}) // days 5, 7, 6; not 3 and 4
			equal(t, "states", states(r)[len(states(r))-1:], []string{key(7)})
			if n := strings.Count(logs, "WARN replication_key without an incremental block"); n != 1 || !strings.Contains(logs, "stream=s replication_key=updated_at") {
				t.Errorf("%d WARN lines naming the stream, want 1:\n%s", n, logs)
			}
		},
	}, {
		name: "chunk windows resume at the window in progress",
		stream: map[string]any{"incremental": map[string]any{"param": "from", "end_param": "to", "chunk_days": 3, "format": "rfc3339"},
			"pagination": map[string]any{"type": "none"}},
		state: `{"bookmarks":{"s":{"replication_key":"updated_at","replication_key_value":"` + key(4) + `",
			"window":{"start":"` + key(5) + `","end":"` + key(8) + `"}}}}`,
		rows: unsorted,
		check: func(t *testing.T, r *recorder, src *source, _ string) {
			want := []string{
				"s?from=" + url.QueryEscape(key(5)) + "&to=" + url.QueryEscape(key(8)),
				"s?from=" + url.QueryEscape(key(8)) + "&to=" + url.QueryEscape(key(11)),
			}
			equal(t, "requests", src.requests, want)
			equal(t, "ids", ids(r), []int{1, 3, 4})
			var windows []string
			for _, m := range r.msgs {
				if m.Type == "STATE" {
					windows = append(windows, m.window("s"))
				}
			}
			// Before each window, then at the end: the bookmark a window
			// earned goes out with the next checkpoint.
			equal(t, "windows", windows, []string{key(5) + "/" + key(8), key(8) + "/" + key(11), ""})
			equal(t, "states", states(r), []string{key(4), key(7), key(7)})
			noBookmarkPastUnread(t, r)
		},
	}, {
		name: "offset pages that shift: duplicates dropped by primary key",
		stream: map[string]any{"pagination": map[string]any{"type": "offset", "offset_param": "offset", "page_size_param": "limit", "page_size": 2},
			"replication_key": nil, "incremental": nil},
		rows: sortedRows, shift: true,
		check: func(t *testing.T, r *recorder, _ *source, logs string) {
			equal(t, "ids", ids(r), []int{1, 2, 3, 4, 5})
			if !strings.Contains(logs, "duplicates_dropped=") {
				t.Errorf("logs lack the duplicates count:\n%s", logs)
			}
		},
	}, {
		name: "offset pages: a key is told apart by type, a missing key from null and from the text <nil>",
		stream: map[string]any{"pagination": map[string]any{"type": "offset", "offset_param": "offset", "page_size_param": "limit", "page_size": 2},
			"replication_key": nil, "incremental": nil,
			"schema": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{}}}},
		rows: []map[string]any{
			{"id": "7", "updated_at": key(2)}, {"id": 7, "updated_at": key(2)}, {"id": "<nil>", "updated_at": key(2)},
			{"updated_at": key(2)}, {"id": nil, "updated_at": key(2)}, {"id": 7, "updated_at": key(3)},
		},
		check: func(t *testing.T, r *recorder, _ *source, logs string) {
			n := 0
			for _, m := range r.msgs {
				if m.Type == "RECORD" {
					n++
				}
			}
			if n != 5 || !strings.Contains(logs, "duplicates_dropped=1") {
				t.Errorf("%d records, want 5 (the second id 7 is the one duplicate); logs:\n%s", n, logs)
			}
		},
	}, {
		name:   "deferred: checkpointed, the last message is the STATE to resume from",
		stream: map[string]any{"is_sorted": true},
		rows:   sortedRows,
		fail: func(context.CancelFunc) func(int) error {
			return func(n int) error {
				if n == 2 {
					return &client.DeferError{Stream: "s", Reason: "quota", RetryAt: time.Now().Add(time.Hour)}
				}
				return nil
			}
		},
		wantErr: "deferred",
		check: func(t *testing.T, r *recorder, _ *source, _ string) {
			equal(t, "ids", ids(r), []int{1, 2})
			equal(t, "states", states(r), []string{key(3), key(3)})
			lastIsState(t, r)
		},
	}, {
		name: "canceled: checkpointed; an unsorted stream's bookmark does not move",
		rows: unsorted,
		fail: func(cancel context.CancelFunc) func(int) error {
			return func(n int) error {
				if n == 2 {
					cancel()
					return context.Canceled
				}
				return nil
			}
		},
		wantErr: "interrupted",
		check: func(t *testing.T, r *recorder, _ *source, _ string) {
			equal(t, "ids", ids(r), []int{1, 2})
			equal(t, "states", states(r), []string{"-", "-"})
			lastIsState(t, r)
		},
	}, {
		name:    "sorted but not: an error naming both values; the bookmark falls back",
		stream:  map[string]any{"is_sorted": true},
		rows:    outOfOrder,
		wantErr: `went down from "` + key(6) + `" to "` + key(3) + `"`,
		check: func(t *testing.T, r *recorder, _ *source, _ string) {
			equal(t, "ids", ids(r), []int{1, 2})
			equal(t, "states", states(r), []string{key(6), "-"})
			lastIsState(t, r)
		},
	}, {
		name:   "sorted but not, demoted: a WARN, no bookmark move until the end",
		stream: map[string]any{"is_sorted": true, "on_unsorted": "demote"},
		state:  `{"bookmarks":{"s":{"replication_key":"updated_at","replication_key_value":"` + key(2) + `"}}}`,
		rows:   outOfOrder,
		check: func(t *testing.T, r *recorder, _ *source, logs string) {
			equal(t, "ids", ids(r), []int{1, 2, 3, 4})
			equal(t, "states", states(r), []string{key(6), key(2), key(7)})
			if !strings.Contains(logs, "WARN") || !strings.Contains(logs, "reading it as unsorted") {
				t.Errorf("no WARN about the demotion:\n%s", logs)
			}
		},
	}, {
		name:    "catalog FULL_TABLE: no filter, the bookmark kept as it was",
		state:   `{"bookmarks":{"s":{"replication_key":"updated_at","replication_key_value":"` + key(5) + `"}}}`,
		rows:    unsorted,
		catalog: `{"streams": [{"tap_stream_id": "s", "metadata": [{"breadcrumb": [], "metadata": {"selected": true, "replication-method": "FULL_TABLE"}}]}]}`,
		check: func(t *testing.T, r *recorder, src *source, _ string) {
			if strings.Contains(src.requests[0], "since=") {
				t.Errorf("full table sent the filter: %s", src.requests[0])
			}
			equal(t, "ids", ids(r), []int{1, 2, 3, 4, 5})
			equal(t, "states", states(r), []string{key(5), key(5), key(5)})
		},
	}, {
		name:  "caught up with records re-read by the overlap: no zero-record warning",
		state: `{"bookmarks":{"s":{"replication_key":"updated_at","replication_key_value":"` + key(7) + `","last_run_records":5}}}`,
		rows:  unsorted,
		check: func(t *testing.T, _ *recorder, _ *source, logs string) {
			if strings.Contains(logs, "zero records") {
				t.Errorf("warned:\n%s", logs)
			}
		},
	}, {
		name:  "nothing at all from the source: the zero-record warning",
		state: `{"bookmarks":{"s":{"replication_key":"updated_at","replication_key_value":"` + key(7) + `","last_run_records":5}}}`,
		rows:  nil,
		check: func(t *testing.T, _ *recorder, _ *source, logs string) {
			if !strings.Contains(logs, "zero records") {
				t.Errorf("no warning:\n%s", logs)
			}
		},
	}} {
		t.Run(c.name, func(t *testing.T) { runEngineCase(t, c) })
	}
}

// childCase is a parent "s" read whole and a child "c" at /c/{id} with a
// replication key: one run over parents and children's rows by path.
func childCase(name, state string, parents []map[string]any, children map[string][]map[string]any, cfg map[string]any, check func(*testing.T, *recorder, *source, string)) engineCase {
	return engineCase{
		name:   name,
		stream: map[string]any{"replication_key": nil, "incremental": nil, "pagination": map[string]any{"type": "none"}},
		rows:   parents,
		more: []map[string]any{{
			"name": "c", "path": "/c/{id}", "records_path": "data", "primary_key": []string{"id"},
			"parent":          map[string]any{"stream": "s", "key": "id", "as": "order_id"},
			"replication_key": "updated_at",
			"incremental":     map[string]any{"param": "since", "format": "rfc3339", "overlap_s": 0},
			"pagination":      map[string]any{"type": "none"},
			"schema": map[string]any{"type": "object", "properties": map[string]any{
				"id": map[string]any{"type": "integer"}, "order_id": map[string]any{"type": "integer"},
				"updated_at": map[string]any{"type": "string", "format": "date-time"}}},
		}},
		srcRows: children, state: state, cfg: cfg, check: check,
	}
}

// lastState is the state of the last STATE message, as JSON.
func lastState(t *testing.T, r *recorder) string {
	t.Helper()
	for i := len(r.msgs) - 1; i >= 0; i-- {
		if r.msgs[i].Type == "STATE" {
			b, err := json.Marshal(r.msgs[i].State)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	t.Fatal("no STATE")
	return ""
}

func streamIDs(r *recorder, stream string) []int {
	var out []int
	for _, m := range r.msgs {
		if m.Type == "RECORD" && m.Stream == stream {
			n, _ := m.Record["id"].(float64)
			out = append(out, int(n))
		}
	}
	return out
}

// partitionsOf reads the child's partitions out of a state, as
// "context value" lines, and its floor.
func partitionsOf(t *testing.T, state string) (parts []string, floor any) {
	t.Helper()
	var st struct {
		Bookmarks map[string]struct {
			Partitions []struct {
				Context map[string]any `json:"context"`
				Key     string         `json:"replication_key"`
				Value   any            `json:"replication_key_value"`
			} `json:"partitions"`
			Floor any `json:"floor"`
		} `json:"bookmarks"`
	}
	if err := json.Unmarshal([]byte(state), &st); err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Bookmarks["c"].Partitions {
		parts = append(parts, fmt.Sprint(p.Context, " ", p.Key, " ", p.Value))
	}
	return parts, st.Bookmarks["c"].Floor
}

// The loss the per-parent bookmarks fix: parent 3 appears after parent 1's
// children were read up to day 8; parent 3's child, updated on day 5, is
// read, since parent 3 is filtered by its own (absent) bookmark.
func TestEnginePerPartitionBookmarks(t *testing.T) {
	child1 := map[string][]map[string]any{"/c/1": {row(10, 8)}}
	both := map[string][]map[string]any{"/c/1": {row(10, 8)}, "/c/3": {row(30, 5)}}
	var first string
	runEngineCase(t, childCase("first run: parent 1", "", []map[string]any{row(1, 2)}, child1, nil,
		func(t *testing.T, r *recorder, _ *source, _ string) {
			equal(t, "child ids", streamIDs(r, "c"), []int{10})
			first = lastState(t, r)
			parts, _ := partitionsOf(t, first)
			equal(t, "partitions", parts, []string{"map[order_id:1] updated_at " + key(8)})
		}))
	runEngineCase(t, childCase("second run: new parent 3 with an older child", first, []map[string]any{row(1, 2), row(3, 2)}, both, nil,
		func(t *testing.T, r *recorder, src *source, _ string) {
			equal(t, "child ids", streamIDs(r, "c"), []int{10, 30})
			equal(t, "requests", src.requests, []string{"s?", "c?since=" + url.QueryEscape(key(8)), "c?since=" + url.QueryEscape(key(1))})
			parts, floor := partitionsOf(t, lastState(t, r))
			equal(t, "partitions", parts, []string{"map[order_id:1] updated_at " + key(8), "map[order_id:3] updated_at " + key(5)})
			if floor != nil {
				t.Errorf("floor = %v, want none", floor)
			}
		}))
}

// Past max_partitions, the smallest bookmarks fold into the floor, which
// filters a parent with no entry.
func TestEngineMaxPartitionsFloor(t *testing.T) {
	children := map[string][]map[string]any{"/c/1": {row(10, 8)}, "/c/3": {row(30, 5)}, "/c/4": {row(40, 6), row(41, 4)}}
	var first string
	runEngineCase(t, childCase("two parents, room for one", "", []map[string]any{row(1, 2), row(3, 2)}, children, map[string]any{"max_partitions": 1},
		func(t *testing.T, r *recorder, _ *source, _ string) {
			first = lastState(t, r)
			parts, floor := partitionsOf(t, first)
			equal(t, "partitions", parts, []string{"map[order_id:1] updated_at " + key(8)})
			if floor != key(5) {
				t.Errorf("floor = %v, want %s", floor, key(5))
			}
		}))
	runEngineCase(t, childCase("a parent with no entry reads from the floor", first, []map[string]any{row(4, 2)}, children, map[string]any{"max_partitions": 1},
		func(t *testing.T, r *recorder, src *source, _ string) {
			equal(t, "requests", src.requests, []string{"s?", "c?since=" + url.QueryEscape(key(5))})
			equal(t, "child ids", streamIDs(r, "c"), []int{40})
		}))
}

// resumeOf reads the resume object of stream s out of a state.
func resumeOf(t *testing.T, state string) map[string]any {
	t.Helper()
	var st struct {
		Bookmarks map[string]map[string]any `json:"bookmarks"`
	}
	if err := json.Unmarshal([]byte(state), &st); err != nil {
		t.Fatal(err)
	}
	r, _ := st.Bookmarks["s"]["resume"].(map[string]any)
	return r
}

// cancelAt cancels the run when request n is sent, as a kill would stop it.
func cancelAt(n int) func(context.CancelFunc) func(int) error {
	return func(cancel context.CancelFunc) func(int) error {
		return func(k int) error {
			if k == n {
				cancel()
				return context.Canceled
			}
			return nil
		}
	}
}

// A run stopped on page 3 resumes on page 3 with the filter it began with;
// the unsorted stream's bookmark counts the largest key of pages 1 and 2.
func TestEngineResumeInsideAStream(t *testing.T) {
	rows := []map[string]any{row(1, 9), row(2, 3), row(3, 5), row(4, 6), row(5, 4), row(6, 2)}
	since := "since=" + url.QueryEscape(key(1))
	var first string
	runEngineCase(t, engineCase{name: "stopped on page 3", rows: rows, fail: cancelAt(3), wantErr: "interrupted",
		check: func(t *testing.T, r *recorder, src *source, _ string) {
			equal(t, "ids", ids(r), []int{1, 2, 3, 4})
			first = lastState(t, r)
			res := resumeOf(t, first)
			if res == nil {
				t.Fatalf("no resume in %s", first)
			}
			if fmt.Sprint(res["filter"]) != "map[since:"+key(1)+"]" || res["high"] != key(9) {
				t.Errorf("resume = %v", res)
			}
		}})
	runEngineCase(t, engineCase{name: "resumed", rows: rows, state: first,
		check: func(t *testing.T, r *recorder, src *source, logs string) {
			equal(t, "requests", src.requests, []string{"s?page=3&per_page=2&" + since, "s?page=4&per_page=2&" + since})
			equal(t, "ids", ids(r), []int{5, 6})
			last := lastState(t, r)
			if res := resumeOf(t, last); res != nil {
				t.Errorf("resume left after the walk ended: %v", res)
			}
			if got := r.msgs[len(r.msgs)-1].bookmark("s"); got != key(9) {
				t.Errorf("bookmark = %v, want %s (from a page before the resume)", got, key(9))
			}
			if !strings.Contains(logs, "resuming the stream inside its walk") {
				t.Errorf("no resume log:\n%s", logs)
			}
		}})
}

// A full-table stream with full_table_versioning resumes inside the same
// version.
func TestEngineResumeFullTableVersion(t *testing.T) {
	rows := []map[string]any{row(1, 9), row(2, 3), row(3, 5), row(4, 6), row(5, 4)}
	full := map[string]any{"replication_key": nil, "incremental": nil, "full_table_versioning": true}
	var first string
	var version float64
	runEngineCase(t, engineCase{name: "stopped on page 2", stream: full, rows: rows, fail: cancelAt(2), wantErr: "interrupted",
		check: func(t *testing.T, r *recorder, _ *source, _ string) {
			first = lastState(t, r)
			version, _ = resumeOf(t, first)["version"].(float64)
			if version == 0 {
				t.Fatalf("no version in the resume: %s", first)
			}
		}})
	runEngineCase(t, engineCase{name: "resumed", stream: full, rows: rows, state: first, now: time.Date(2026, 1, 12, 0, 0, 0, 0, time.UTC),
		check: func(t *testing.T, r *recorder, src *source, _ string) {
			equal(t, "requests", src.requests, []string{"s?page=2&per_page=2", "s?page=3&per_page=2"})
			equal(t, "ids", ids(r), []int{3, 4, 5})
			for _, m := range r.msgs {
				if m.Type == "RECORD" && float64(m.Version) != version {
					t.Errorf("RECORD %v in version %d, want the resumed one %v", m.Record, m.Version, version)
				}
			}
		}})
}

// A resume position the API rejects restarts the walk from the bookmark,
// also for a stream whose failed requests are dead letters: the refusal
// is the resume position's, not the stream's.
func TestEngineResumeRejected(t *testing.T) {
	rows := []map[string]any{row(1, 9), row(2, 3), row(3, 5)}
	state := `{"bookmarks":{"s":{"resume":{"request":{"method":"GET","url":"/s","query":{"page":["7"],"per_page":["2"]}},"pages":4}}}}`
	letters := filepath.Join(t.TempDir(), "dead_letter.jsonl")
	for _, tc := range []struct {
		name   string
		stream map[string]any
	}{
		{"expired cursor", nil},
		{"expired cursor, on_request_failure dead_letter", map[string]any{"on_request_failure": "dead_letter"}},
	} {
		runEngineCase(t, engineCase{name: tc.name, rows: rows, state: state, stream: tc.stream,
			cfg: map[string]any{"dead_letter_path": letters},
			fail: func(context.CancelFunc) func(int) error {
				return func(n int) error {
					if n == 1 {
						return &client.StatusError{Stream: "s", Method: "GET", Path: "/s", Status: 400, Message: "cursor expired"}
					}
					return nil
				}
			},
			check: func(t *testing.T, r *recorder, src *source, logs string) {
				since := "since=" + url.QueryEscape(key(1))
				equal(t, "requests", src.requests, []string{"s?page=7&per_page=2", "s?page=1&per_page=2&" + since, "s?page=2&per_page=2&" + since})
				equal(t, "ids", ids(r), []int{1, 2, 3})
				if !strings.Contains(logs, "WARN") || !strings.Contains(logs, "rejected the resume position") {
					t.Errorf("no WARN:\n%s", logs)
				}
				if b, err := os.ReadFile(letters); err == nil && len(b) > 0 {
					t.Errorf("the refused resume position was dead-lettered: %s", b)
				}
			}})
	}
}

// end_date bounds a backfill (exclusive); end_inclusive sends each
// window's last included second as end_param.
func TestEngineEndDateInclusive(t *testing.T) {
	rows := []map[string]any{row(1, 5), row(2, 3), row(3, 7), row(4, 6), row(5, 4)}
	runEngineCase(t, engineCase{name: "end_date and end_inclusive", rows: rows, cfg: map[string]any{"end_date": key(7)},
		stream: map[string]any{"incremental": map[string]any{"param": "from", "end_param": "to", "chunk_days": 3, "format": "rfc3339", "end_inclusive": true},
			"pagination": map[string]any{"type": "none"}},
		check: func(t *testing.T, r *recorder, src *source, _ string) {
			q := url.QueryEscape
			equal(t, "requests", src.requests, []string{
				"s?from=" + q(key(1)) + "&to=" + q("2026-01-03T23:59:59Z"),
				"s?from=" + q(key(4)) + "&to=" + q("2026-01-06T23:59:59Z"),
			})
			// Nothing at or after end_date (day 7: id 3) is read.
			equal(t, "ids", ids(r), []int{2, 1, 4, 5})
		}})
}

// A run from the state of a run interrupted after stream "t" ended goes
// on with the job: it does not ask "t" again, and its last STATE has no
// job_done. A run that ends with streams left running lists the ended
// ones until it ends.
func TestEngineJobDone(t *testing.T) {
	rows := []map[string]any{row(1, 9), row(2, 3), row(3, 5)}
	other := map[string]any{
		"name": "t", "path": "/t", "records_path": "data", "primary_key": []string{"id"},
		"pagination": map[string]any{"type": "none"},
		"schema":     map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}}},
	}
	for _, tc := range []struct {
		name, state string
		wantT       bool // stream t is read
	}{
		{"t ended in the interrupted run", `{"bookmarks":{},"job_done":["t"]}`, false},
		{"a run that ended", `{"bookmarks":{}}`, true},
	} {
		runEngineCase(t, engineCase{name: tc.name, rows: rows, state: tc.state, more: []map[string]any{other},
			srcRows: map[string][]map[string]any{"t": {{"id": 7, "updated_at": key(2)}}},
			check: func(t *testing.T, r *recorder, src *source, logs string) {
				asked := false
				for _, q := range src.requests {
					asked = asked || strings.HasPrefix(q, "t")
				}
				if asked != tc.wantT {
					t.Errorf("stream t asked: %v, want %v (requests %v)", asked, tc.wantT, src.requests)
				}
				sawJob := false
				for _, m := range r.msgs {
					if m.Type == "STATE" {
						_, ok := m.State["job_done"]
						sawJob = sawJob || ok
					}
				}
				if last := lastState(t, r); strings.Contains(last, "job_done") {
					t.Errorf("the last STATE of a run that ended lists job_done: %s", last)
				}
				if !tc.wantT && !strings.Contains(logs, "ended in the interrupted run") {
					t.Errorf("no log of the stream left out:\n%s", logs)
				}
				if tc.wantT && !sawJob {
					t.Errorf("no STATE listed the stream that ended first while the other ran")
				}
			}})
	}
}

// testEngine is r's engine on cfg, connected as connect.Open connects it
// (with r.log), closed when the test ends; tests replace its fetch.
func testEngine(t *testing.T, cfg *Config, r run) *engine {
	t.Helper()
	r.connect = &connect.Options{Log: r.log}
	e, err := newEngine(cfg, r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.close() })
	return e
}
