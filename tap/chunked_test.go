package tap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tap-dev/tap/client"
)

// winReq is the request of the one-day window starting on day d.
func winReq(d int) string {
	return "s?from=" + url.QueryEscape(key(d)) + "&to=" + url.QueryEscape(key(d+1))
}

// lastBookmark is the bookmark of "s" in the last STATE.
func lastBookmark(t *testing.T, r *recorder) map[string]any {
	t.Helper()
	for i := len(r.msgs) - 1; i >= 0; i-- {
		if m := r.msgs[i]; m.Type == "STATE" {
			b, _ := m.State["bookmarks"].(map[string]any)["s"].(map[string]any)
			return b
		}
	}
	t.Fatal("no STATE")
	return nil
}

// failedWindows lists a bookmark's failed_windows as "start/end: error".
func failedWindowsOf(b map[string]any) []string {
	var out []string
	list, _ := b["failed_windows"].([]any)
	for _, e := range list {
		m := e.(map[string]any)
		out = append(out, m["start"].(string)+"/"+m["end"].(string)+": "+m["error"].(string))
	}
	return out
}

// hasFailed checks a bookmark's failed windows: each "start/end" with an
// error containing the text given.
func hasFailed(t *testing.T, b map[string]any, want map[string]string) {
	t.Helper()
	got := failedWindowsOf(b)
	if len(got) != len(want) {
		t.Fatalf("failed_windows = %q, want %d windows: %v", got, len(want), want)
	}
	for _, g := range got {
		w, why, _ := strings.Cut(g, ": ")
		if text, ok := want[w]; !ok || !strings.Contains(why, text) {
			t.Errorf("failed window %q, want one of %v", g, want)
		}
	}
}

func hasLine(t *testing.T, logs, line string) {
	t.Helper()
	if !strings.Contains(logs, "\n"+line+"\n") {
		t.Errorf("logs lack the line %q:\n%s", line, logs)
	}
}

func TestEngineBackfillOutcomes(t *testing.T) {
	days := []map[string]any{row(1, 1), row(2, 2), row(3, 3), row(4, 4), row(5, 5)}
	daily := map[string]any{"incremental": map[string]any{"param": "from", "end_param": "to", "chunk_days": 1, "format": "rfc3339"},
		"pagination": map[string]any{"type": "none"}}
	endDate := map[string]any{"end_date": key(6)} // five windows: days 1 to 5
	unavailable := &client.StatusError{Stream: "s", Method: "GET", Path: "/s", Status: 503, Attempts: 3}
	deferred := &client.DeferError{Stream: "s", Reason: "daily quota reached", RetryAt: time.Date(2026, 1, 12, 0, 0, 0, 0, time.UTC)}
	failOn := func(err error, reqs ...string) func(string) error {
		return func(req string) error {
			for _, r := range reqs {
				if req == r {
					return err
				}
			}
			return nil
		}
	}
	lettersPath := filepath.Join(t.TempDir(), "letters.jsonl")
	for _, c := range []engineCase{{
		name:   "a window that always fails: the others are read, it is read once more at the end, the bookmark stays before it",
		stream: daily, cfg: endDate, rows: days,
		failReq: failOn(unavailable, winReq(3)),
		wantErr: `stream "s": 1 backfill window still failed after a second try`, wantExit: ExitFailure,
		check: func(t *testing.T, r *recorder, src *source, logs string) {
			equal(t, "requests", src.requests, []string{winReq(1), winReq(2), winReq(3), winReq(4), winReq(5), winReq(3)})
			equal(t, "ids", ids(r), []int{1, 2, 4, 5})
			// Before each window, at the walk's end, at the run's end.
			equal(t, "states", states(r), []string{"-", key(1), key(2), key(2), key(2), key(2), key(2)})
			noBookmarkPastUnread(t, r)
			b := lastBookmark(t, r)
			equal(t, "bookmark", []any{b["replication_key_value"]}, []any{key(2)})
			// The walk is over: its position is its end, with the largest
			// key it read.
			equal(t, "window", []any{b["window"]}, []any{map[string]any{"start": key(6), "end": key(6), "high": key(5)}})
			hasFailed(t, b, map[string]string{key(3) + "/" + key(4): "gave up after 3 attempts: last status 503"})
			hasLine(t, logs, "INFO windows completed=4 failed=1 deferred=0 resumed=0 stream=s")
			equal(t, "stream statuses", r.statuses, []string{"s:STARTED", "s:INCOMPLETE"})
			if !strings.Contains(logs, "WARN backfill window failed; the walk goes on stream=s start="+key(3)) {
				t.Errorf("no WARN for the failed window:\n%s", logs)
			}
		},
	}, {
		name:   "the next run reads only the failed window, first; the bookmark then reaches the end",
		stream: daily, cfg: endDate, rows: days,
		state: `{"bookmarks":{"s":{"replication_key":"updated_at","replication_key_value":"` + key(2) + `",
			"window":{"start":"` + key(6) + `","end":"` + key(6) + `","high":"` + key(5) + `"},
			"failed_windows":[{"start":"` + key(3) + `","end":"` + key(4) + `","error":"503"}]}}}`,
		check: func(t *testing.T, r *recorder, src *source, logs string) {
			equal(t, "requests", src.requests, []string{winReq(3)})
			equal(t, "ids", ids(r), []int{3})
			b := lastBookmark(t, r)
			equal(t, "bookmark", []any{b["replication_key_value"]}, []any{key(5)})
			for _, k := range []string{"window", "failed_windows", "resume"} {
				if _, ok := b[k]; ok {
					t.Errorf("the bookmark keeps %s: %v", k, b)
				}
			}
			hasLine(t, logs, "INFO windows completed=1 failed=0 deferred=0 resumed=1 stream=s")
			equal(t, "stream statuses", r.statuses, []string{"s:STARTED", "s:COMPLETE"})
		},
	}, {
		// A run killed in the last window, the one ending at its clock:
		// the next run resumes that window with the end STATE recorded,
		// then reads the rest up to its own clock as a window of its own.
		name:   "a resumed last window keeps its recorded end",
		stream: daily, rows: append(days, row(6, 6)), now: time.Date(2026, 1, 6, 12, 0, 0, 0, time.UTC),
		state: `{"bookmarks":{"s":{"replication_key":"updated_at","replication_key_value":"` + key(5) + `",
			"window":{"start":"` + key(6) + `","end":"2026-01-06T06:00:00Z"}}}}`,
		check: func(t *testing.T, r *recorder, src *source, logs string) {
			q := func(from, to string) string { return "s?from=" + url.QueryEscape(from) + "&to=" + url.QueryEscape(to) }
			equal(t, "requests", src.requests, []string{q(key(6), "2026-01-06T06:00:00Z"), q("2026-01-06T06:00:00Z", "2026-01-06T12:00:00Z")})
			equal(t, "ids", ids(r), []int{6})
			hasLine(t, logs, "INFO windows completed=2 failed=0 deferred=0 resumed=1 stream=s")
		},
	}, {
		name:   "failed windows of the last run come before the walk at its position",
		stream: daily, cfg: map[string]any{"end_date": key(7)}, rows: append(days, row(6, 6)),
		state: `{"bookmarks":{"s":{"replication_key":"updated_at","replication_key_value":"` + key(1) + `",
			"window":{"start":"` + key(5) + `","end":"` + key(6) + `","high":"` + key(4) + `"},
			"failed_windows":[{"start":"` + key(3) + `","end":"` + key(4) + `","error":"x"},{"start":"` + key(2) + `","end":"` + key(3) + `","error":"y"}]}}}`,
		check: func(t *testing.T, r *recorder, src *source, logs string) {
			equal(t, "requests", src.requests, []string{winReq(2), winReq(3), winReq(5), winReq(6)})
			equal(t, "ids", ids(r), []int{2, 3, 5, 6})
			// Day 4 was read by the last run, which held the bookmark back:
			// once both failed windows are read, the bookmark takes it up.
			equal(t, "states", states(r), []string{key(4), key(5), key(6)})
			noBookmarkPastUnread(t, r)
			hasLine(t, logs, "INFO windows completed=4 failed=0 deferred=0 resumed=3 stream=s")
		},
	}, {
		name:   "a window that fails once is read again at the end; the bookmark then moves on",
		stream: daily, cfg: endDate, rows: days,
		failReq: func() func(string) error {
			failed := false
			return func(req string) error {
				if req == winReq(3) && !failed {
					failed = true
					return unavailable
				}
				return nil
			}
		}(),
		check: func(t *testing.T, r *recorder, src *source, logs string) {
			equal(t, "requests", src.requests, []string{winReq(1), winReq(2), winReq(3), winReq(4), winReq(5), winReq(3)})
			equal(t, "ids", ids(r), []int{1, 2, 4, 5, 3})
			equal(t, "states", states(r), []string{"-", key(1), key(2), key(2), key(2), key(2), key(5)})
			noBookmarkPastUnread(t, r)
			b := lastBookmark(t, r)
			if _, ok := b["failed_windows"]; ok {
				t.Errorf("failed_windows kept: %v", b)
			}
			if _, ok := b["window"]; ok {
				t.Errorf("window kept: %v", b)
			}
			hasLine(t, logs, "INFO windows completed=5 failed=0 deferred=0 resumed=0 stream=s")
		},
	}, {
		name:   "a deferred window is recorded and the run stops at the next window: exit 75",
		stream: daily, cfg: endDate, rows: days,
		failReq: failOn(deferred, winReq(3)),
		wantErr: "deferred: daily quota reached", wantExit: ExitDeferred,
		check: func(t *testing.T, r *recorder, src *source, logs string) {
			equal(t, "requests", src.requests, []string{winReq(1), winReq(2), winReq(3)})
			equal(t, "ids", ids(r), []int{1, 2})
			lastIsState(t, r)
			b := lastBookmark(t, r)
			equal(t, "bookmark", []any{b["replication_key_value"]}, []any{key(2)})
			equal(t, "window", []string{r.msgs[len(r.msgs)-1].window("s")}, []string{key(4) + "/" + key(5)})
			hasFailed(t, b, map[string]string{key(3) + "/" + key(4): "deferred: daily quota reached"})
			hasLine(t, logs, "INFO windows completed=2 failed=0 deferred=1 resumed=0 stream=s")
		},
	}, {
		name:   "the circuit breaker giving up: the window is recorded and the stream stops there, exit 1",
		stream: daily, cfg: endDate, rows: days,
		failReq: failOn(fmt.Errorf("stream %q: GET /s: %w (opened 5 times in this run)", "s", client.ErrCircuitOpen), winReq(3)),
		wantErr: "1 backfill window still failed", wantExit: ExitFailure,
		check: func(t *testing.T, r *recorder, src *source, logs string) {
			equal(t, "requests", src.requests, []string{winReq(1), winReq(2), winReq(3)})
			b := lastBookmark(t, r)
			equal(t, "bookmark", []any{b["replication_key_value"]}, []any{key(2)})
			equal(t, "window", []string{r.msgs[len(r.msgs)-1].window("s")}, []string{key(4) + "/" + key(5)})
			hasFailed(t, b, map[string]string{key(3) + "/" + key(4): "circuit breaker open"})
			hasLine(t, logs, "INFO windows completed=2 failed=1 deferred=0 resumed=0 stream=s")
		},
	}, {
		name:   "a failed window, then a deferred one: exit 1, both recorded, none read again",
		stream: daily, cfg: endDate, rows: days,
		failReq: func(req string) error {
			return map[string]error{winReq(2): unavailable, winReq(4): deferred}[req]
		},
		wantErr: "also: stream \"s\": deferred", wantExit: ExitFailure,
		check: func(t *testing.T, r *recorder, src *source, logs string) {
			equal(t, "requests", src.requests, []string{winReq(1), winReq(2), winReq(3), winReq(4)})
			equal(t, "ids", ids(r), []int{1, 3})
			b := lastBookmark(t, r)
			equal(t, "bookmark", []any{b["replication_key_value"]}, []any{key(1)})
			equal(t, "window", []any{b["window"]}, []any{map[string]any{"start": key(5), "end": key(6), "high": key(3)}})
			hasFailed(t, b, map[string]string{key(2) + "/" + key(3): "503", key(4) + "/" + key(5): "deferred"})
			hasLine(t, logs, "INFO windows completed=2 failed=1 deferred=1 resumed=0 stream=s")
		},
	}, {
		name: "on_request_failure dead_letter: the window's request is a letter naming the window; it stays in failed_windows, is not read again, exit 0",
		stream: map[string]any{"on_request_failure": "dead_letter",
			"incremental": daily["incremental"], "pagination": daily["pagination"]},
		cfg:     map[string]any{"end_date": key(6), "dead_letter_path": lettersPath},
		rows:    days,
		failReq: failOn(unavailable, winReq(3)),
		check: func(t *testing.T, r *recorder, src *source, logs string) {
			equal(t, "requests", src.requests, []string{winReq(1), winReq(2), winReq(3), winReq(4), winReq(5)})
			equal(t, "ids", ids(r), []int{1, 2, 4, 5})
			b := lastBookmark(t, r)
			equal(t, "bookmark", []any{b["replication_key_value"]}, []any{key(2)})
			hasFailed(t, b, map[string]string{key(3) + "/" + key(4): "a request was dead-lettered to " + lettersPath})
			hasLine(t, logs, "INFO windows completed=4 failed=1 deferred=0 resumed=0 stream=s")
			equal(t, "stream statuses", r.statuses, []string{"s:STARTED", "s:COMPLETE"}) // the letter is its record
			raw, err := os.ReadFile(lettersPath)
			if err != nil {
				t.Fatal(err)
			}
			lines := bytes.Split(bytes.TrimSpace(raw), []byte("\n"))
			if len(lines) != 1 {
				t.Fatalf("%d letters, want 1:\n%s", len(lines), raw)
			}
			var l struct {
				Kind   string            `json:"kind"`
				Window map[string]string `json:"window"`
			}
			if err := json.Unmarshal(lines[0], &l); err != nil {
				t.Fatal(err)
			}
			if l.Kind != "request" || l.Window["start"] != key(3) || l.Window["end"] != key(4) {
				t.Errorf("letter %s, want kind request and window %s to %s", lines[0], key(3), key(4))
			}
		},
	}, {
		name:   "a test run (--test) stops at its record: the window it read to its end is the only one completed, no other is asked for",
		stream: daily, cfg: endDate, rows: days, recordLimit: 1,
		check: func(t *testing.T, r *recorder, src *source, logs string) {
			equal(t, "requests", src.requests, []string{winReq(1)})
			equal(t, "ids", ids(r), []int{1})
			hasLine(t, logs, "INFO windows completed=1 failed=0 deferred=0 resumed=0 stream=s")
		},
	}, {
		name:   "a test run whose record limit cuts a window short counts no window completed",
		stream: daily, cfg: endDate, rows: append([]map[string]any{row(11, 1)}, days...), recordLimit: 1,
		check: func(t *testing.T, r *recorder, src *source, logs string) {
			equal(t, "requests", src.requests, []string{winReq(1)})
			equal(t, "ids", ids(r), []int{11})
			hasLine(t, logs, "INFO windows completed=0 failed=0 deferred=0 resumed=0 stream=s")
		},
	}} {
		t.Run(c.name, func(t *testing.T) { runEngineCase(t, c) })
	}
}

// A sorted stream checkpoints inside a window; when the window then fails,
// the bookmark goes back to where it stood before the window, and its
// resume object goes: the next window starts on its own first page.
func TestEngineBackfillFailedWindowInsidePages(t *testing.T) {
	at := func(id, d, h int) map[string]any {
		return map[string]any{"id": id, "updated_at": time.Date(2026, 1, d, h, 0, 0, 0, time.UTC).Format(time.RFC3339)}
	}
	rows := []map[string]any{at(1, 1, 0), at(2, 2, 0), at(31, 3, 1), at(32, 3, 2), at(33, 3, 3), at(4, 4, 0), at(5, 5, 0)}
	runEngineCase(t, engineCase{
		stream: map[string]any{"is_sorted": true,
			"incremental": map[string]any{"param": "from", "end_param": "to", "chunk_days": 1, "format": "rfc3339"}},
		cfg:  map[string]any{"end_date": key(6)},
		rows: rows,
		failReq: func(req string) error {
			if strings.Contains(req, "from="+url.QueryEscape(key(3))) && strings.Contains(req, "&page=2&") {
				return &client.StatusError{Stream: "s", Method: "GET", Path: "/s", Status: 502, Attempts: 3}
			}
			return nil
		},
		wantErr: "1 backfill window still failed", wantExit: ExitFailure,
		check: func(t *testing.T, r *recorder, src *source, logs string) {
			equal(t, "ids", ids(r), []int{1, 2, 31, 32, 4, 5, 31, 32})
			failed := false
			for i, m := range r.msgs {
				if m.Type != "STATE" {
					continue
				}
				b, _ := m.State["bookmarks"].(map[string]any)["s"].(map[string]any)
				if _, ok := b["failed_windows"]; ok {
					failed = true
				}
				if !failed {
					continue
				}
				if v := b["replication_key_value"]; v != key(2) {
					t.Errorf("message %d: bookmark %v after the window failed, want %s, where it stood before", i, v, key(2))
				}
				if _, ok := b["resume"]; ok {
					t.Errorf("message %d: a resume object after the window failed: %v", i, b["resume"])
				}
			}
			if !failed {
				t.Fatal("no STATE has failed_windows")
			}
			if !strings.Contains(strings.Join(states(r), " "), "2026-01-03T02:00:00Z") {
				t.Errorf("states %v: want the page inside day 3 checkpointed before the failure", states(r))
			}
		},
	})
}

// A failed window read again writes no resume object, with children too:
// the resume object belongs to the window at the walk's position.
func TestEngineBackfillRetryWritesNoResume(t *testing.T) {
	parents := []map[string]any{row(1, 1), row(2, 2), row(31, 3), row(32, 3), row(33, 3), row(4, 4)}
	children := map[string][]map[string]any{}
	for _, p := range parents {
		id := p["id"].(int)
		children[fmt.Sprintf("/c/%d", id)] = []map[string]any{{"id": 100 + id, "updated_at": p["updated_at"]}}
	}
	failed := false
	c := childCase("", "", parents, children, map[string]any{"end_date": key(5)}, func(t *testing.T, r *recorder, src *source, _ string) {
		equal(t, "parents", idsOf(r, "s"), []int{1, 2, 31, 32, 4, 31, 32, 33})
		equal(t, "children", idsOf(r, "c"), []int{101, 102, 131, 132, 104, 131, 132, 133})
		var after bool
		for i, m := range r.msgs {
			if m.Type != "STATE" {
				continue
			}
			b, _ := m.State["bookmarks"].(map[string]any)["s"].(map[string]any)
			if w, _ := b["window"].(map[string]any); w != nil && w["start"] == key(5) {
				after = true // the walk is over, checkpointed before the retry
			}
			res, _ := b["resume"].(map[string]any)
			if filter, _ := res["filter"].(map[string]any); after && filter["from"] == key(3) {
				t.Errorf("message %d: the retry of day 3 wrote a resume object: %v", i, res)
			}
		}
		if !after {
			t.Fatal("no STATE at the walk's end")
		}
		if b := lastBookmark(t, r); b["resume"] != nil || b["failed_windows"] != nil || b["window"] != nil {
			t.Errorf("last bookmark %v", b)
		}
	})
	c.name = "a failed window read again writes no resume object"
	c.stream = map[string]any{
		"incremental": map[string]any{"param": "from", "end_param": "to", "chunk_days": 1, "format": "rfc3339"},
		"pagination":  map[string]any{"type": "page_number", "page_param": "page", "page_size_param": "per_page", "page_size": 2}}
	c.failReq = func(req string) error {
		if strings.Contains(req, "from="+url.QueryEscape(key(3))) && strings.Contains(req, "&page=2&") && !failed {
			failed = true
			return &client.StatusError{Stream: "s", Method: "GET", Path: "/s", Status: 503, Attempts: 3}
		}
		return nil
	}
	runEngineCase(t, c)
}

// idsOf lists the ids of a stream's RECORD messages.
func idsOf(r *recorder, stream string) []int {
	var out []int
	for _, m := range r.msgs {
		if m.Type == "RECORD" && m.Stream == stream {
			n, _ := m.Record["id"].(float64)
			out = append(out, int(n))
		}
	}
	return out
}
