package failure

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/records"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/tap/report"
)

func TestLetter(t *testing.T) {
	first := streams.Request{Method: "GET", URL: "https://api.test/orders", Query: url.Values{"since": {"2026-01-01"}}}
	page2 := first.WithParam("page", "2")
	status := func(code int) *client.StatusError {
		return &client.StatusError{Stream: "orders", Method: "GET", URL: "https://api.test/orders?page=2", Status: code, Attempts: 6, Body: `{"error":"boom"}`}
	}
	job := func(phase string, body string, msg string, err error) *report.Error {
		return &report.Error{Stream: "orders", ID: "42", Phase: phase, Req: streams.Request{Method: "GET", URL: "https://files.test/42.csv?sig=abc"},
			Body: body, Polls: 3, Msg: msg, Err: err}
	}
	window := &keys.Window{Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 1, 4, 0, 0, 0, 0, time.UTC)}
	relative := func(r streams.Request) streams.Request {
		r.URL = strings.TrimPrefix(r.URL, "https://api.test")
		return r
	}
	tests := map[string]struct {
		walk Walk
		err  error
		want *records.RequestLetter // nil: no letter, the run fails
	}{
		"no rule: the run fails": {
			walk: Walk{Stream: "orders", First: first},
			err:  status(500),
		},
		"on_request_failure dead_letter: the last answer": {
			walk: Walk{Stream: "orders", First: first, Context: map[string]any{"user_id": 7}, DeadLetter: true},
			err:  status(500),
			want: &records.RequestLetter{Stream: "orders", Context: map[string]any{"user_id": 7}, Method: "GET", URL: "https://api.test/orders?page=2",
				Status: 500, ResponseBody: `{"error":"boom"}`, Transient: true, Attempts: 6, Error: status(500).Error()},
		},
		"a status error without a URL: its path": {
			walk: Walk{Stream: "orders", First: first, DeadLetter: true},
			err:  &client.StatusError{Stream: "orders", Method: "POST", Path: "/orders?page=2", Status: 404, Attempts: 1},
			want: &records.RequestLetter{Stream: "orders", Method: "POST", URL: "/orders?page=2", Status: 404, Attempts: 1,
				Error: (&client.StatusError{Stream: "orders", Method: "POST", Path: "/orders?page=2", Status: 404, Attempts: 1}).Error()},
		},
		"a child's failure is the child's": {
			walk: Walk{Stream: "users", First: first, DeadLetter: true},
			err:  status(500),
		},
		"an error that is no request's": {
			walk: Walk{Stream: "orders", First: first, DeadLetter: true},
			err:  errors.New("disk full"),
		},
		"on_status dead_letter for the last status": {
			walk: Walk{Stream: "orders", First: first, OnStatus: map[int]string{404: streams.StatusDeadLetter, 500: streams.StatusRetry}},
			err:  status(404),
			want: &records.RequestLetter{Stream: "orders", Method: "GET", URL: "https://api.test/orders?page=2",
				Status: 404, ResponseBody: `{"error":"boom"}`, Attempts: 6, Error: status(404).Error()},
		},
		"on_status dead_letter does not cover another status": {
			walk: Walk{Stream: "orders", First: first, OnStatus: map[int]string{404: streams.StatusDeadLetter}},
			err:  status(400),
		},
		"a resume position refused: not a letter": {
			walk: Walk{Stream: "orders", First: first, Resumed: true, DeadLetter: true},
			err:  status(410),
		},
		"a resumed walk out of retries: a letter": {
			walk: Walk{Stream: "orders", First: first, Resumed: true, DeadLetter: true},
			err:  status(429),
			want: &records.RequestLetter{Stream: "orders", Method: "GET", URL: "https://api.test/orders?page=2",
				Status: 429, ResponseBody: `{"error":"boom"}`, Transient: true, Attempts: 6, Error: status(429).Error()},
		},
		"a window: its bounds, and the context that names it": {
			walk: Walk{Stream: "orders", First: first, Window: window, DeadLetter: true},
			err:  status(500),
			want: &records.RequestLetter{Stream: "orders", Method: "GET", URL: "https://api.test/orders?page=2",
				Context:     map[string]any{"window": map[string]any{"start": "2026-01-01T00:00:00Z", "end": "2026-01-04T00:00:00Z"}},
				WindowStart: "2026-01-01T00:00:00Z", WindowEnd: "2026-01-04T00:00:00Z",
				Status: 500, ResponseBody: `{"error":"boom"}`, Transient: true, Attempts: 6, Error: status(500).Error()},
		},
		"a window of a child: the parent's context stays": {
			walk: Walk{Stream: "orders", First: first, Context: map[string]any{"user_id": 7}, Window: window, DeadLetter: true},
			err:  status(500),
			want: &records.RequestLetter{Stream: "orders", Method: "GET", URL: "https://api.test/orders?page=2", Context: map[string]any{"user_id": 7},
				WindowStart: "2026-01-01T00:00:00Z", WindowEnd: "2026-01-04T00:00:00Z",
				Status: 500, ResponseBody: `{"error":"boom"}`, Transient: true, Attempts: 6, Error: status(500).Error()},
		},
		"the first page failed: no resume": {
			walk: Walk{Stream: "orders", First: first, DeadLetter: true, Relative: relative},
			err:  &pageError{Req: first, Err: status(500)},
			want: &records.RequestLetter{Stream: "orders", Method: "GET", URL: "https://api.test/orders?page=2",
				Status: 500, ResponseBody: `{"error":"boom"}`, Transient: true, Attempts: 6, Error: status(500).Error()},
		},
		"a later page failed: replay resumes there, relative to the base": {
			walk: Walk{Stream: "orders", First: first, DeadLetter: true, Relative: relative},
			err:  &pageError{Req: page2, Err: status(500)},
			want: &records.RequestLetter{Stream: "orders", Method: "GET", URL: "https://api.test/orders?page=2",
				Resume: map[string]any{"pages": int64(0), "request": map[string]any{"method": "GET", "url": "/orders",
					"query": map[string]any{"page": []any{"2"}, "since": []any{"2026-01-01"}}}},
				Status: 500, ResponseBody: `{"error":"boom"}`, Transient: true, Attempts: 6, Error: status(500).Error()},
		},
		"a resumed walk's first page failed: replay resumes there": {
			walk: Walk{Stream: "orders", First: first, Resumed: true, DeadLetter: true},
			err:  &pageError{Req: first, Err: status(503)},
			want: &records.RequestLetter{Stream: "orders", Method: "GET", URL: "https://api.test/orders?page=2",
				Resume: map[string]any{"pages": int64(0), "request": map[string]any{"method": "GET", "url": "https://api.test/orders",
					"query": map[string]any{"since": []any{"2026-01-01"}}}},
				Status: 503, ResponseBody: `{"error":"boom"}`, Transient: true, Attempts: 6, Error: status(503).Error()},
		},
		"a report job that failed: the poll answer, the API's message": {
			walk: Walk{Stream: "orders", First: first, DeadLetter: true},
			err:  job("poll", `{"status":"failed"}`, "", errors.New(`report job 42 failed`)),
			want: &records.RequestLetter{Stream: "orders", Context: map[string]any{"report": "orders", "phase": "poll", "job_id": "42"},
				Method: "GET", URL: "https://files.test/42.csv?sig=abc", Status: 200, ResponseBody: `{"status":"failed"}`, Attempts: 3,
				Error: "report job 42 failed"},
		},
		"a report job still pending: transient, its message": {
			walk: Walk{Stream: "orders", First: first, DeadLetter: true},
			err:  job("poll", `{"status":"pending"}`, "still pending", &client.DeferError{Stream: "orders", Reason: "later"}),
			want: &records.RequestLetter{Stream: "orders", Context: map[string]any{"report": "orders", "phase": "poll", "job_id": "42"},
				Method: "GET", URL: "https://files.test/42.csv?sig=abc", Status: 200, ResponseBody: `{"status":"pending"}`, Attempts: 3,
				Transient: true, Error: "still pending"},
		},
		"a download out of retries: the file's URL without its signature": {
			walk: Walk{Stream: "orders", First: first, DeadLetter: true},
			err:  job("download", "", "", status(503)),
			want: &records.RequestLetter{Stream: "orders", Context: map[string]any{"report": "orders", "phase": "download", "job_id": "42"},
				Method: "GET", URL: "https://api.test/orders", Status: 503, ResponseBody: `{"error":"boom"}`, Attempts: 6,
				Transient: true, Error: status(503).Error()},
		},
		"a job's create refused: no job id": {
			walk: Walk{Stream: "orders", First: first, DeadLetter: true},
			err:  &report.Error{Stream: "orders", Phase: "create", Req: streams.Request{Method: "POST", URL: "/reports", Body: []byte(`{"q":1}`)}, Err: errors.New("bad")},
			want: &records.RequestLetter{Stream: "orders", Context: map[string]any{"report": "orders", "phase": "create"},
				Method: "POST", URL: "/reports", RequestBody: `{"q":1}`, Attempts: 1, Error: "bad"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, ok := tt.walk.Letter(tt.err)
			if tt.want == nil {
				if ok {
					t.Fatalf("a letter %+v, want none", got)
				}
				return
			}
			if !ok {
				t.Fatal("no letter")
			}
			if diff := cmp.Diff(*tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPages(t *testing.T) {
	boom := errors.New("boom")
	fetch := Pages(func(_ context.Context, req streams.Request) (*streams.Page, error) {
		if req.URL == "/bad" {
			return nil, boom
		}
		return &streams.Page{}, nil
	})
	if _, err := fetch(context.Background(), streams.Request{URL: "/good"}); err != nil {
		t.Errorf("good page: %v", err)
	}
	_, err := fetch(context.Background(), streams.Request{URL: "/bad"})
	var pe *pageError
	if !errors.As(err, &pe) || pe.Req.URL != "/bad" || !errors.Is(err, boom) || err.Error() != "boom" {
		t.Errorf("bad page: %#v", err)
	}
}

func TestSameRequest(t *testing.T) {
	a := streams.Request{URL: "/x", Query: url.Values{"a": {"1"}}, Body: []byte("b")}
	tests := []struct {
		b    streams.Request
		want bool
	}{
		{streams.Request{Method: "get", URL: "/x", Query: url.Values{"a": {"1"}}, Body: []byte("b")}, true},
		{streams.Request{Method: "POST", URL: "/x", Query: url.Values{"a": {"1"}}, Body: []byte("b")}, false},
		{streams.Request{URL: "/y", Query: url.Values{"a": {"1"}}, Body: []byte("b")}, false},
		{streams.Request{URL: "/x", Query: url.Values{"a": {"2"}}, Body: []byte("b")}, false},
		{streams.Request{URL: "/x", Query: url.Values{"a": {"1"}}}, false},
	}
	for i, tt := range tests {
		if got := sameRequest(a, tt.b); got != tt.want {
			t.Errorf("%d: sameRequest(%+v, %+v) = %v", i, a, tt.b, got)
		}
	}
}

func TestPathOnly(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pw@files.test/a/b.csv?X-Amz-Signature=abc#frag": "https://files.test/a/b.csv",
		"/relative?x=1": "/relative",
		"://bad":        "",
	} {
		if got := pathOnly(in); got != want {
			t.Errorf("pathOnly(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClientRule(t *testing.T) {
	for rule, want := range map[string]client.StatusRule{
		streams.StatusDeadLetter: client.StatusFail,
		streams.StatusFail:       client.StatusFail,
		streams.StatusRetry:      client.StatusRetry,
		streams.StatusIgnore:     client.StatusIgnore,
	} {
		if got := ClientRule(rule); got != want {
			t.Errorf("ClientRule(%q) = %q, want %q", rule, got, want)
		}
	}
}

func TestSummary(t *testing.T) {
	depths := []records.Depth{{Stream: "orders", Kind: records.KindRequest, N: 2}, {Stream: "users", Kind: records.KindRecord, N: 1}}
	tests := map[string]struct {
		depths []records.Depth
		alert  int
		level  slog.Level
		want   []string
	}{
		"none": {alert: 0, want: nil},
		"within the alert": {
			depths: depths, alert: 3,
			want: []string{
				`level=INFO msg="dead letters" stream=orders kind=request count=2 path=/data/dead.jsonl`,
				`level=INFO msg="METRIC: {\"metric\":\"dead_letters\",\"tags\":{\"endpoint\":\"orders\",\"kind\":\"request\"},\"type\":\"counter\",\"value\":2}"`,
				`level=INFO msg="dead letters" stream=users kind=record count=1 path=/data/dead.jsonl`,
				`level=INFO msg="METRIC: {\"metric\":\"dead_letters\",\"tags\":{\"endpoint\":\"users\",\"kind\":\"record\"},\"type\":\"counter\",\"value\":1}"`,
				`level=WARN msg="dead letters: set aside this run; fix the cause, then tap replay --dead-letters the file" count=3 path=/data/dead.jsonl`,
			},
		},
		"past the alert, metrics at debug": {
			depths: depths, alert: 2, level: slog.LevelDebug,
			want: []string{
				`level=INFO msg="dead letters" stream=orders kind=request count=2 path=/data/dead.jsonl`,
				`level=INFO msg="dead letters" stream=users kind=record count=1 path=/data/dead.jsonl`,
				`level=WARN msg="dead letters pass dead_letter_alert: set aside this run; fix the cause, then tap replay --dead-letters the file" count=3 dead_letter_alert=2 path=/data/dead.jsonl`,
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			}}))
			Summary(log, tt.level, tt.depths, tt.alert, "/data/dead.jsonl")
			var got []string
			if s := strings.TrimSpace(buf.String()); s != "" {
				got = strings.Split(s, "\n")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
