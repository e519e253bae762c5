package integration_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// asyncConfig is a tap config for the sample's invoices_report stream
// against base, with the job created to need polls polls, polled every
// interval seconds for at most timeout seconds.
func asyncConfig(t *testing.T, base string, polls int, fail bool, interval, timeout float64) map[string]any {
	t.Helper()
	def := reportStreams(t)["invoices_report"]
	a := def["async"].(map[string]any)
	a["create"].(map[string]any)["body"] = map[string]any{"report": "invoices", "polls": polls, "fail": fail}
	poll := a["poll"].(map[string]any)
	poll["interval_s"], poll["timeout_s"] = interval, timeout
	return tapConfig(base, []any{def})
}

// asyncJob returns the job id a state value holds for invoices_report.
func asyncJob(t *testing.T, state json.RawMessage) string {
	t.Helper()
	var st struct {
		Bookmarks map[string]struct {
			AsyncJob *struct {
				ID string `json:"id"`
			} `json:"async_job"`
		} `json:"bookmarks"`
	}
	if err := json.Unmarshal(state, &st); err != nil {
		t.Fatalf("state %s: %v", state, err)
	}
	if j := st.Bookmarks["invoices_report"].AsyncJob; j != nil {
		return j.ID
	}
	return ""
}

// TestAsyncReport: create → poll → download of two gzipped JSON Lines
// files, one at a relative URL on the API and one at an absolute URL on
// another host, which gets no credentials.
func TestAsyncReport(t *testing.T) {
	t.Parallel()
	srv, _ := startDemo(t, demoBase())
	var log reqLog
	// Downloads from another host are pre-signed: this "storage" lets an
	// unauthenticated file request through after the log has seen it.
	storage := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.Host, "localhost:") && strings.HasPrefix(r.URL.Path, "/v1/reports/") && !strings.Contains(r.URL.Path, "/files/") {
			// The absolute file URL the API hands out names the host the
			// poll came to: make it another host than the tap's base URL.
			r.Host = strings.Replace(r.Host, "localhost", "127.0.0.1", 1)
		}
		if strings.Contains(r.URL.Path, "/files/") && r.Header.Get("Authorization") == "" && strings.HasPrefix(r.Host, "127.0.0.1:") {
			r.Header.Set("Authorization", "Bearer "+sentinel)
		}
		srv.ServeHTTP(w, r)
	})
	base := serve(t, log.wrap(storage))
	base = strings.Replace(base, "127.0.0.1", "localhost", 1)
	d := newTapDir(t, asyncConfig(t, base, 2, false, 0.01, 60))
	l := newLoader(t)
	r := d.sync(l, time.Minute)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	assertTable(t, l, "invoices_report", []string{"id"}, source(t, srv, "invoices"))
	st := srv.Stats().ByPath
	if st["reports_create"] != 1 || st["reports_poll"] != 3 || st["reports_file"] != 2 {
		t.Errorf("creates, polls, files = %d, %d, %d; want 1, 3, 2", st["reports_create"], st["reports_poll"], st["reports_file"])
	}
	var files []loggedReq
	for _, q := range log.all() {
		if strings.Contains(q.Path, "/files/") {
			files = append(files, q)
		}
	}
	if len(files) != 2 {
		t.Fatalf("%d file requests, want 2", len(files))
	}
	for _, f := range files {
		wantAuth := ""
		if strings.HasSuffix(f.Path, "/files/0") {
			wantAuth = "Bearer " + sentinel // the API's own relative URL
		}
		if f.Auth != wantAuth {
			t.Errorf("%s sent Authorization %q, want %q", f.Path, f.Auth, wantAuth)
		}
	}
	if job := asyncJob(t, l.state); job != "" {
		t.Errorf("the final state still holds job %q", job)
	}
}

// TestAsyncKillRerun: a run killed while its job is pending leaves the job
// id in STATE; the next run polls that job instead of creating another.
func TestAsyncKillRerun(t *testing.T) {
	t.Parallel()
	srv, base := startDemo(t, demoBase())
	d := newTapDir(t, asyncConfig(t, base, 20, false, 0.05, 60))
	l := newLoader(t)
	k := d.syncKill(l, nil, 0, time.Minute, func(line []byte) bool {
		return bytes.Contains(line, []byte(`"type":"STATE"`)) && bytes.Contains(line, []byte(`"async_job"`))
	})
	if !k.killed {
		t.Fatalf("the run ended (exit %d) before it could be killed with its job pending; stderr:\n%s", k.code, k.stderr)
	}
	if job := asyncJob(t, l.state); job != "rep_1" {
		t.Fatalf("state after the kill holds job %q, want rep_1", job)
	}
	r := d.sync(l, time.Minute)
	if r.code != 0 {
		t.Fatalf("rerun: exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	if n := srv.Stats().ByPath["reports_create"]; n != 1 {
		t.Errorf("%d jobs created, want 1", n)
	}
	if !bytes.Contains(r.stderr, []byte("job_id=rep_1")) {
		t.Errorf("the rerun does not say it polls rep_1:\n%s", r.stderr)
	}
	assertTable(t, l, "invoices_report", []string{"id"}, source(t, srv, "invoices"))
}

// TestAsyncFailed: a failed job is an error carrying the API's message.
func TestAsyncFailed(t *testing.T) {
	t.Parallel()
	_, base := startDemo(t, demoBase())
	d := newTapDir(t, asyncConfig(t, base, 1, true, 0.01, 60))
	l := newLoader(t)
	r := d.sync(l, time.Minute)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
	line := lastLine(r.stderr)
	if !strings.Contains(line, `report job rep_1 failed (status "failed"): report quota exceeded for this account`) {
		t.Errorf("error line %q does not carry the API's message", line)
	}
	if job := asyncJob(t, l.state); job != "" {
		t.Errorf("the state still holds the failed job %q; the next run must create a new one", job)
	}
}

// TestAsyncPollTimeout: a job still pending after poll.timeout_s defers
// the run (exit 75) with the job in STATE; the next run polls it again.
func TestAsyncPollTimeout(t *testing.T) {
	t.Parallel()
	srv, base := startDemo(t, demoBase())
	d := newTapDir(t, asyncConfig(t, base, 1000, false, 0.01, 0.1))
	l := newLoader(t)
	for run := 1; run <= 2; run++ {
		r := d.sync(l, time.Minute)
		if r.code != 75 {
			t.Fatalf("run %d: exit %d, want 75; stderr:\n%s", run, r.code, r.stderr)
		}
		if !strings.Contains(string(r.stderr), "async.poll.timeout_s") {
			t.Errorf("run %d: stderr does not name async.poll.timeout_s:\n%s", run, r.stderr)
		}
		if job := asyncJob(t, l.state); job != "rep_1" {
			t.Fatalf("run %d: last STATE holds job %q, want rep_1", run, job)
		}
	}
	if n := srv.Stats().ByPath["reports_create"]; n != 1 {
		t.Errorf("%d jobs created over two runs, want 1", n)
	}
}

// TestAsyncJobGone: a job id in the state that the API no longer knows
// (404 on its poll) is replaced by a new job, with a WARN.
func TestAsyncJobGone(t *testing.T) {
	t.Parallel()
	srv, base := startDemo(t, demoBase())
	d := newTapDir(t, asyncConfig(t, base, 1, false, 0.01, 60))
	l := newLoader(t)
	l.state = json.RawMessage(`{"bookmarks": {"invoices_report": {"async_job": {"id": "rep_77", "created_at": "2026-01-01T00:00:00Z"}}}}`)
	r := d.sync(l, time.Minute)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(string(r.stderr), "the report job of the last run is gone; creating a new one") {
		t.Errorf("no WARN about the lost job:\n%s", r.stderr)
	}
	if n := srv.Stats().ByPath["reports_create"]; n != 1 {
		t.Errorf("%d jobs created, want 1", n)
	}
	assertTable(t, l, "invoices_report", []string{"id"}, source(t, srv, "invoices"))
}
