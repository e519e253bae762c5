package tap

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/tap-dev/tap/client"
)

func TestRequestDeadLetters(t *testing.T) {
	unsorted := []map[string]any{row(1, 5), row(2, 3), row(3, 7), row(4, 6), row(5, 4)}
	failOn := func(want int, status int) func(context.CancelFunc) func(int) error {
		return func(context.CancelFunc) func(int) error {
			return func(n int) error {
				if n == want {
					return &client.StatusError{Stream: "s", Method: "GET", Path: "/s?page=2", Status: status, Attempts: 6, Body: `{"error":"boom"}`}
				}
				return nil
			}
		}
	}
	windows := map[string]any{"incremental": map[string]any{"param": "from", "end_param": "to", "chunk_days": 3, "format": "rfc3339", "overlap_s": 0},
		"pagination": map[string]any{"type": "none"}}
	state := `{"bookmarks":{"s":{"replication_key":"updated_at","replication_key_value":"` + key(2) + `"}}}`
	for _, c := range []engineCase{{
		name:    "fail (default): the run fails",
		rows:    unsorted,
		fail:    failOn(2, 503),
		wantErr: "503",
		check:   func(t *testing.T, r *recorder, _ *source, _ string) {},
	}, {
		name:   "unsorted, a page dead-lettered: the run goes on, the bookmark does not move",
		stream: map[string]any{"on_request_failure": "dead_letter"},
		rows:   unsorted, state: state,
		fail: failOn(2, 503),
		check: func(t *testing.T, r *recorder, _ *source, logs string) {
			equal(t, "ids", ids(r), []int{1, 2})
			for _, s := range states(r) {
				if s != key(2) {
					t.Errorf("a STATE moved the bookmark to %s past a dead-lettered page", s)
				}
			}
			if !strings.Contains(logs, "request dead-lettered") || !strings.Contains(logs, `kind=request count=1`) {
				t.Errorf("logs lack the dead letter:\n%s", logs)
			}
			lastIsState(t, r)
		},
	}, {
		name:   "more letters than dead_letter_alert: a WARN",
		stream: map[string]any{"on_request_failure": "dead_letter"},
		cfg:    map[string]any{"dead_letter_alert": 0},
		rows:   unsorted, fail: failOn(2, 503),
		check: func(t *testing.T, r *recorder, _ *source, logs string) {
			if !strings.Contains(logs, "WARN dead letters pass dead_letter_alert: set aside this run; fix the cause, then tap replay --dead-letters the file count=1 dead_letter_alert=0") {
				t.Errorf("no WARN over dead_letter_alert:\n%s", logs)
			}
		},
	}, {
		name:   "as many letters as dead_letter_alert: no WARN",
		stream: map[string]any{"on_request_failure": "dead_letter"},
		cfg:    map[string]any{"dead_letter_alert": 1},
		rows:   unsorted, fail: failOn(2, 503),
		check: func(t *testing.T, r *recorder, _ *source, logs string) {
			if !strings.Contains(logs, "kind=request count=1") || strings.Contains(logs, "pass dead_letter_alert") {
				t.Errorf("want the letter counted and no WARN:\n%s", logs)
			}
		},
	}, {
		name:   "a window dead-lettered: the next windows are read, the bookmark stays",
		stream: with(windows, "on_request_failure", "dead_letter"), rows: unsorted, state: state,
		fail: failOn(1, 500),
		check: func(t *testing.T, r *recorder, src *source, logs string) {
			if len(src.requests) == 0 || !strings.Contains(src.requests[0], "from="+url.QueryEscape(key(2))) {
				t.Fatalf("requests %v", src.requests)
			}
			equal(t, "ids", ids(r), []int{1, 3, 4})
			for _, s := range states(r) {
				if s != key(2) {
					t.Errorf("a STATE moved the bookmark to %s past a dead-lettered window", s)
				}
			}
		},
	}, {
		name:   "on_status dead_letter without on_request_failure",
		stream: map[string]any{"on_status": map[string]any{"404": "dead_letter"}},
		rows:   unsorted,
		fail:   failOn(1, 404),
		check: func(t *testing.T, r *recorder, _ *source, logs string) {
			equal(t, "ids", ids(r), nil)
			if !strings.Contains(logs, "request dead-lettered") {
				t.Errorf("logs lack the dead letter:\n%s", logs)
			}
		},
	}, {
		name:    "on_status dead_letter does not cover another status",
		stream:  map[string]any{"on_status": map[string]any{"404": "dead_letter"}},
		rows:    unsorted,
		fail:    failOn(1, 400),
		wantErr: "400",
		check:   func(t *testing.T, r *recorder, _ *source, _ string) {},
	}} {
		t.Run(c.name, func(t *testing.T) { runEngineCase(t, c) })
	}
}

func with(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{k: v}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// A child's dead-lettered partition keeps its bookmark; the other
// partitions move on.
func TestRequestDeadLetterPartition(t *testing.T) {
	children := map[string][]map[string]any{"/c/1": {row(10, 8)}, "/c/3": {row(30, 5)}}
	state := `{"bookmarks":{"c":{"replication_key":"updated_at","partitions":[` +
		`{"context":{"order_id":1},"replication_key_value":"` + key(2) + `"},` +
		`{"context":{"order_id":3},"replication_key_value":"` + key(3) + `"}]}}}`
	c := childCase("parent 3's child fails", state, []map[string]any{row(1, 2), row(3, 2)}, children, nil,
		func(t *testing.T, r *recorder, _ *source, logs string) {
			equal(t, "child ids", streamIDs(r, "c"), []int{10})
			parts, _ := partitionsOf(t, lastState(t, r))
			equal(t, "partitions", parts, []string{"map[order_id:1] updated_at " + key(8), "map[order_id:3] updated_at " + key(3)})
			if !strings.Contains(logs, "request dead-lettered") {
				t.Errorf("logs lack the dead letter:\n%s", logs)
			}
		})
	c.more[0]["on_request_failure"] = "dead_letter"
	c.fail = func(context.CancelFunc) func(int) error {
		return func(n int) error {
			if n == 3 {
				return &client.StatusError{Stream: "c", Method: "GET", Path: "/c/3", Status: 500, Attempts: 6}
			}
			return nil
		}
	}
	runEngineCase(t, c)
}
