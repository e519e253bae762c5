package runreport

import (
	"strings"
	"testing"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/tap/metrics"
)

// The report masks secrets in the error and the warnings, escapes what an
// API wrote, marks each 429, and keeps its lists bounded.
func TestHTML(t *testing.T) {
	start := time.Date(2026, 12, 5, 5, 0, 0, 0, time.UTC)
	r := New(start)
	r.Attempt(client.Trace{Time: start.Add(time.Second), Stream: "items", Status: 429})
	r.Attempt(client.Trace{Time: start.Add(2 * time.Second), Stream: "items", Status: 200, Waits: map[string]time.Duration{"retry_after": time.Second}})
	r.Records(start.Add(2*time.Second), "items", 2)
	for range maxWarnings + 5 {
		r.Warn("drift <b>bold</b> s3cret-token-1")
	}
	r.Summary([]metrics.Row{{Stream: "items", Records: 2, Requests: 2}}, client.Stats{})
	page, err := r.HTML(Run{Version: "0.2.0", Mode: "Singer sync", Start: start, End: start.Add(3 * time.Second), Exit: 1,
		Error: "stream items: key s3cret-token-1 refused"}, settings.NewRedactor("s3cret-token-1"))
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	for _, want := range []string{`<td id="exit" class="failed">1</td>`, "key REDACTED refused", "&lt;b&gt;bold&lt;/b&gt;",
		`class="throttle"`, "waited 1s", `<td class="records">2</td>`, "5 more warnings not shown"} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %s", want)
		}
	}
	if strings.Contains(html, "s3cret-token-1") || strings.Contains(html, "<b>bold") {
		t.Errorf("the report holds a secret or an API's markup")
	}
}

// The summary file says per stream and in total what the run summary
// does, with the bookmarks before and after and the exit status.
func TestJSON(t *testing.T) {
	start := time.Date(2026, 12, 5, 5, 0, 0, 0, time.UTC)
	r := New(start)
	r.before, r.after = map[string]string{}, map[string]string{"items": "2026-12-01T00:00:00Z"}
	r.Summary([]metrics.Row{{Stream: "items", Records: 2, Pages: 1, Requests: 2, ByClass: [6]int64{2: 1, 4: 1}, DeadLetters: 1}},
		client.Stats{Requests: 2, ByStatus: map[int]int{200: 1, 429: 1}, Retries: 1})
	doc, err := r.JSON(Run{Mode: "Singer sync", Start: start, End: start.Add(time.Second), Exit: 0}, settings.NewRedactor(), "/tmp/dead.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"exit_status": 0`, `"bookmark_after": "2026-12-01T00:00:00Z"`, `"4xx": 1`,
		`"requests_by_status": {`, `"429": 1`, `"dead_letter_path": "/tmp/dead.jsonl"`, `"records": 2`} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("summary lacks %s:\n%s", want, doc)
		}
	}
}
