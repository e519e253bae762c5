package integration_test

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A report job that fails, or is still pending at poll.timeout_s, is a
// request letter under on_request_failure dead_letter and the run goes on;
// replay runs a new job and writes its records.
func TestReplayAsyncJob(t *testing.T) {
	t.Parallel()
	srv, _ := startDemo(t, demoBase())
	// While broken is "poll", every poll says the job failed; while it is
	// "create" or "download", creating a job or reading its files answers
	// 503.
	var broken atomic.Value
	broken.Store("")
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, poll := strings.CutPrefix(r.URL.Path, "/v1/reports/")
		switch {
		case broken.Load() == "poll" && poll && !strings.Contains(id, "/"):
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":%q,"status":"failed","error":{"message":"the warehouse is down"}}`, id)
		case broken.Load() == "create" && r.URL.Path == "/v1/reports":
			http.Error(w, `{"error":"the report service is down"}`, http.StatusServiceUnavailable)
		case broken.Load() == "download" && poll && strings.Contains(id, "/files/"):
			http.Error(w, `{"error":"the file store is down"}`, http.StatusServiceUnavailable)
		default:
			srv.ServeHTTP(w, r)
		}
	}))
	var want []string
	for _, row := range source(t, srv, "invoices") {
		want = append(want, fmt.Sprint("invoices_report:", row["id"]))
	}
	slices.Sort(want)
	deadLettered := func(cfg map[string]any) map[string]any {
		cfg["streams"].([]any)[0].(map[string]any)["on_request_failure"] = "dead_letter"
		return cfg
	}
	for _, c := range []struct {
		name, broken, phase, url string
		polls                    int
		timeout                  float64
		errorType, message       string
	}{
		{"failed", "poll", "poll", "/v1/reports/rep_", 1, 60, "permanent", "the warehouse is down"},
		{"still pending at poll.timeout_s", "", "poll", "/v1/reports/rep_", 1000, 0.1, "transient", "async.poll.timeout_s"},
		{"create out of retries", "create", "create", "/v1/reports", 1, 60, "transient", "503"},
		{"download out of retries", "download", "download", "/v1/reports/rep_", 1, 60, "transient", "503"},
	} {
		t.Run(c.name, func(t *testing.T) {
			broken.Store(c.broken)
			d := newTapDir(t, deadLettered(asyncConfig(t, base, c.polls, false, 0.01, c.timeout)))
			l := newLoader(t)
			r := d.sync(l, time.Minute)
			if r.code != 0 {
				t.Fatalf("exit %d, want 0; stderr:\n%s", r.code, r.stderr)
			}
			if job := asyncJob(t, l.state); job != "" {
				t.Errorf("the state holds job %q: the letter has it, the next run must start a new one", job)
			}
			ls := letters(t, d)
			if len(ls) != 1 {
				t.Fatalf("%d letters, want 1: %v", len(ls), ls)
			}
			ctx, _ := ls[0]["context"].(map[string]any)
			req, _ := ls[0]["request"].(map[string]any)
			if ls[0]["kind"] != "request" || ls[0]["stream"] != "invoices_report" || ls[0]["error_type"] != c.errorType ||
				(ctx["job_id"] == nil) != (c.phase == "create") || ctx["phase"] != c.phase || !strings.Contains(fmt.Sprint(req["url"]), c.url) ||
				!strings.Contains(fmt.Sprint(ls[0]["error"]), c.message) || c.phase == "download" && strings.Contains(fmt.Sprint(req["url"]), "?") {
				t.Errorf("letter %v", ls[0])
			}

			broken.Store("")
			d.writeConfig(deadLettered(asyncConfig(t, base, 1, false, 0.01, 60)))
			rr := runTap(t, d.dir, time.Minute, nil, "replay", "--config", "config.json", "--dead-letters", "dead_letter.jsonl")
			d.checkSecrets(rr)
			if rr.code != 0 {
				t.Fatalf("replay exit %d; stderr:\n%s", rr.code, rr.stderr)
			}
			if got := recordIDs(t, rr.stdout); !slices.Equal(got, want) {
				t.Errorf("replay wrote %d records, want the %d invoices: %v", len(got), len(want), got)
			}
			if n := bytes.Count(rr.stdout, []byte(`"type":"STATE"`)); n != 1 {
				t.Errorf("replay wrote %d STATE messages, want 1 (the one at the end)", n)
			}
			if ls := letters(t, d); len(ls) != 0 {
				t.Errorf("letters left: %v", ls)
			}
			replaySummary(t, rr.stderr, fmt.Sprintf("letters=1 emitted=1 records=%d still_failing=0 left=0", len(want)))
		})
	}
}
