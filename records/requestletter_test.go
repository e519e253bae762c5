package records

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRequestLetter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dead.jsonl")
	d := NewDeadLetters(path, testRun, redactor{"s3cret"})
	at := time.Date(2026, 8, 18, 9, 0, 0, 0, time.UTC)
	long := strings.Repeat("x", MaxLetterBody-1) + "é" + "s3cret"
	letters := []RequestLetter{{
		Stream: "orders", Context: map[string]any{"user_id": json.Number("2")},
		Method: "GET", URL: "https://api.test/users/2/orders?key=s3cret", Status: 500,
		ResponseBody: `{"error":"down, key s3cret"}`, Transient: true, Attempts: 6, Error: "GET /users/2/orders?key=s3cret: 500", Time: at,
	}, {
		Stream: "events", WindowStart: "2026-01-01T00:00:00Z", WindowEnd: "2026-01-04T00:00:00Z", Bookmark: "2025-12-31T00:00:00Z",
		Method: "POST", URL: "https://api.test/events", RequestBody: long, Status: 404, ResponseBody: long, Attempts: 1, Time: at,
	}}
	for _, l := range letters {
		if err := d.Request(l); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "s3cret") {
		t.Errorf("a secret is in the letters:\n%s", b)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2", len(lines))
	}
	want := `{"kind":"request","run_id":"01KB0000000000000000000000","run_started_at":"2026-08-18T06:59:00Z","stream":"orders",` +
		`"context":{"user_id":2},"request":{"method":"GET","url":"https://api.test/users/2/orders?key=REDACTED","body":""},` +
		`"response":{"status":500,"body":"{\"error\":\"down, key REDACTED\"}"},"error_type":"transient","error":"GET /users/2/orders?key=REDACTED: 500","attempts":6,"time":"2026-08-18T09:00:00Z"}`
	if diff := cmp.Diff(want, lines[0]); diff != "" {
		t.Errorf("first letter (-want +got):\n%s", diff)
	}
	var second struct {
		Context   map[string]any    `json:"context"`
		Window    map[string]string `json:"window"`
		Bookmark  string            `json:"bookmark"`
		Request   struct{ Body string }
		Response  struct{ Body string }
		ErrorType string `json:"error_type"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &second); err != nil {
		t.Fatal(err)
	}
	cut := strings.Repeat("x", MaxLetterBody-1) // the é would be split: dropped
	if second.Request.Body != cut || second.Response.Body != cut || second.ErrorType != "permanent" ||
		second.Window["start"] != "2026-01-01T00:00:00Z" || second.Window["end"] != "2026-01-04T00:00:00Z" ||
		second.Bookmark != "2025-12-31T00:00:00Z" || second.Context != nil {
		t.Errorf("second letter: %+v", second)
	}
	if diff := cmp.Diff([]Depth{{Stream: "events", Kind: KindRequest, N: 1}, {Stream: "orders", Kind: KindRequest, N: 1}}, d.Depths()); diff != "" {
		t.Errorf("depths (-want +got):\n%s", diff)
	}
}

// A letter keeps the page it failed on unless the page's request holds a
// secret, which masked could not be sent again.
func TestRequestLetterResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dead.jsonl")
	d := NewDeadLetters(path, testRun, redactor{"s3cret"})
	page := func(cursor string) map[string]any {
		return map[string]any{"request": map[string]any{"method": "GET", "url": "/items", "query": map[string]any{"cursor": []any{cursor}}}, "pages": int64(0)}
	}
	for _, c := range []string{"c2", "c2-s3cret"} {
		if err := d.Request(RequestLetter{Stream: "items", Method: "GET", URL: "/items", Resume: page(c)}); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"resume":{"pages":0,"request":{"method":"GET","query":{"cursor":["c2"]},"url":"/items"}}`) ||
		strings.Contains(lines[1], "resume") {
		t.Errorf("letters:\n%s", b)
	}
}

// A secret the API echoed into the failed page's query (an api_key in
// its next link) is left out of the letter's resume, the position kept:
// the client sends its credentials again, and replay starts at that page.
func TestRequestLetterResumeWithoutEchoedSecret(t *testing.T) {
	for _, c := range []struct {
		name    string
		request map[string]any
		want    string // the letter's resume, "" for none
	}{
		{name: "in the url", request: map[string]any{"method": "GET", "url": "/items?page=2&api_key=s3cret"},
			want: `"resume":{"pages":3,"request":{"method":"GET","url":"/items?page=2"}}`},
		{name: "in the query", request: map[string]any{"method": "GET", "url": "/items", "query": map[string]any{"cursor": []any{"c2"}, "key": []any{"s3cret"}}},
			want: `"resume":{"pages":3,"request":{"method":"GET","query":{"cursor":["c2"]},"url":"/items"}}`},
		{name: "in a header", request: map[string]any{"method": "GET", "url": "/items?page=2", "header": map[string]any{"X-Key": []any{"s3cret"}}},
			want: `"resume":{"pages":3,"request":{"header":{},"method":"GET","url":"/items?page=2"}}`},
		{name: "in the body", request: map[string]any{"method": "POST", "url": "/items", "body": `{"after":"s3cret"}`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "dead.jsonl")
			d := NewDeadLetters(path, testRun, redactor{"s3cret"})
			resume := map[string]any{"request": c.request, "pages": int64(3)}
			if err := d.Request(RequestLetter{Stream: "items", Method: "GET", URL: "/items", Resume: resume}); err != nil {
				t.Fatal(err)
			}
			d.Close()
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), "s3cret") {
				t.Errorf("the secret in the letter: %s", b)
			}
			if c.want == "" && strings.Contains(string(b), `"resume"`) || c.want != "" && !strings.Contains(string(b), c.want) {
				t.Errorf("letter:\n%s\nwant %s", b, c.want)
			}
			if _, ok := resume["request"].(map[string]any)["header"]; c.name == "in a header" && !ok {
				t.Error("the caller's resume was changed")
			}
		})
	}
}
