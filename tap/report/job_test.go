package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/internal/jsontest"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
)

func reportDef(create streams.AsyncCreate, body string) *streams.Definition {
	return &streams.Definition{
		Name: "report", Path: "/reports", Body: []byte(body),
		Async: &streams.Async{
			Create:    create,
			JobIDPath: "id",
			Poll: streams.AsyncPoll{Path: "/jobs/{job_id}", StatusPath: "status", Done: []string{"done"}, Failed: []string{"failed"},
				MessagePath: "error", IntervalS: 1, TimeoutS: 2.5},
		},
	}
}

func TestCreateRequest(t *testing.T) {
	first := streams.Request{Method: "GET", URL: "/reports", Query: url.Values{"since": {"2026-01-01"}}}
	tests := map[string]struct {
		create     streams.AsyncCreate
		streamBody string
		want       streams.Request
	}{
		"POST by default, with the stream's body": {
			streamBody: `{"q": 1}`,
			want:       streams.Request{Method: "POST", URL: "/reports", Query: url.Values{"since": {"2026-01-01"}}, Body: []byte(`{"q": 1}`)},
		},
		"the create block's path, body and params": {
			create:     streams.AsyncCreate{Path: "/jobs", Method: "post", Body: []byte(` {"r": 2} `), Params: map[string]string{"kind": "daily"}},
			streamBody: `{"q": 1}`,
			want:       streams.Request{Method: "POST", URL: "/jobs", Query: url.Values{"since": {"2026-01-01"}, "kind": {"daily"}}, Body: []byte(`{"r": 2}`)},
		},
		"a GET has no body": {
			create: streams.AsyncCreate{Method: "GET", Body: []byte(`{"r": 2}`)},
			want:   streams.Request{Method: "GET", URL: "/reports", Query: url.Values{"since": {"2026-01-01"}}},
		},
		"a null body is none": {
			create:     streams.AsyncCreate{Body: []byte(`null`)},
			streamBody: `null`,
			want:       streams.Request{Method: "POST", URL: "/reports", Query: url.Values{"since": {"2026-01-01"}}},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := CreateRequest(reportDef(tt.create, tt.streamBody), first)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// api answers a create request with a new job's id (42, then 43), and
// the polls of a job with the statuses given, in turn; a done job lists
// two files. A job in gone answers 404, as one that expired upstream.
type api struct {
	t        *testing.T
	statuses []string
	gone     map[string]bool
	sent     []string
	fail     error // the answer to every request when set
	jobs     int
}

func (a *api) get(_ context.Context, req streams.Request) (any, *url.URL, error) {
	a.sent = append(a.sent, req.Method+" "+req.URL)
	if a.fail != nil {
		return nil, nil, a.fail
	}
	if req.URL == "/reports" {
		a.jobs++
		return jsontest.Decode(a.t, fmt.Sprintf(`{"id": "%d"}`, 41+a.jobs)), nil, nil
	}
	id, _ := strings.CutPrefix(req.URL, "/jobs/")
	if a.gone[id] {
		return nil, nil, &client.StatusError{Stream: "report", Method: "GET", Path: req.URL, Status: 404, Attempts: 1}
	}
	if len(a.statuses) == 0 {
		a.t.Fatalf("poll %d: no answer left", len(a.sent))
	}
	s := a.statuses[0]
	a.statuses = a.statuses[1:]
	u, _ := url.Parse("https://api.test" + req.URL)
	switch s {
	case "failed":
		return jsontest.Decode(a.t, `{"status": "failed", "error": "quota hunter2-pw exceeded"}`), u, nil
	case "done":
		return jsontest.Decode(a.t, `{"status": "done", "files": ["/files/`+id+`-1.csv", "https://files.test/`+id+`-2.csv?sig=x"]}`), u, nil
	}
	return jsontest.Decode(a.t, `{"status": "`+s+`"}`), u, nil
}

// saved is what a job left in the state: the ids SetID was given, and at
// which of them the state was checkpointed.
type saved struct {
	ids         []string
	checkpoints []string
	read        []string
	readErr     error
}

func (s *saved) job(t *testing.T, a *api, log *bytes.Buffer) *Job {
	return &Job{
		Def: reportDef(streams.AsyncCreate{}, ""), Get: a.get, Now: time.Now, Redact: settings.NewRedactor("hunter2-pw"),
		Log: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}})),
		SetID: func(id string) { s.ids = append(s.ids, id) },
		Checkpoint: func() error {
			s.checkpoints = append(s.checkpoints, s.ids[len(s.ids)-1])
			return nil
		},
		Read: func(_ context.Context, file streams.Request) error {
			s.read = append(s.read, file.Method+" "+file.URL)
			return s.readErr
		},
	}
}

func TestRun(t *testing.T) {
	tests := map[string]struct {
		saved    string // the id the last run left
		statuses []string
		gone     map[string]bool
		fail     error
		readErr  error
		want     saved
		sent     []string
		logs     []string
		check    func(t *testing.T, err error)
	}{
		"a new job: created, its id checkpointed, polled until done, its files read": {
			statuses: []string{"pending", "done"},
			want: saved{ids: []string{"42"}, checkpoints: []string{"42"},
				read: []string{"GET https://api.test/files/42-1.csv", "GET https://files.test/42-2.csv?sig=x"}},
			sent: []string{"POST /reports", "GET /jobs/42", "GET /jobs/42"},
			logs: []string{
				`level=INFO msg="report job created" stream=report job_id=42`,
				`level=INFO msg="report job done; downloading" stream=report job_id=42 files=2`,
			},
		},
		"the job of the last run: polled, not created": {
			saved: "7", statuses: []string{"done"},
			want: saved{read: []string{"GET https://api.test/files/7-1.csv", "GET https://files.test/7-2.csv?sig=x"}},
			sent: []string{"GET /jobs/7"},
			logs: []string{
				`level=INFO msg="polling the report job of the last run" stream=report job_id=7`,
				`level=INFO msg="report job done; downloading" stream=report job_id=7 files=2`,
			},
		},
		"the job of the last run expired: a new one": {
			saved: "7", gone: map[string]bool{"7": true}, statuses: []string{"done"},
			want: saved{ids: []string{"42"}, checkpoints: []string{"42"},
				read: []string{"GET https://api.test/files/42-1.csv", "GET https://files.test/42-2.csv?sig=x"}},
			sent: []string{"GET /jobs/7", "POST /reports", "GET /jobs/42"},
			logs: []string{
				`level=INFO msg="polling the report job of the last run" stream=report job_id=7`,
				`level=WARN msg="the report job of the last run is gone; creating a new one" stream=report job_id=7 status=404`,
				`level=INFO msg="report job created" stream=report job_id=42`,
				`level=INFO msg="report job done; downloading" stream=report job_id=42 files=2`,
			},
		},
		"a new job gone at once: not created again": {
			gone: map[string]bool{"42": true},
			want: saved{ids: []string{"42"}, checkpoints: []string{"42"}},
			sent: []string{"POST /reports", "GET /jobs/42"},
			logs: []string{`level=INFO msg="report job created" stream=report job_id=42`},
			check: func(t *testing.T, err error) {
				var je *Error
				if !errors.As(err, &je) || je.Phase != "poll" || je.ID != "42" {
					t.Errorf("err %#v", err)
				}
			},
		},
		"the job failed: forgotten and checkpointed": {
			statuses: []string{"failed"},
			want:     saved{ids: []string{"42", ""}, checkpoints: []string{"42", ""}},
			sent:     []string{"POST /reports", "GET /jobs/42"},
			logs:     []string{`level=INFO msg="report job created" stream=report job_id=42`},
			check: func(t *testing.T, err error) {
				var je *Error
				if !errors.As(err, &je) || je.Phase != "poll" || je.Status != "failed" {
					t.Errorf("err %#v", err)
				}
			},
		},
		"the create out of retries: no job": {
			fail: errors.New("500"),
			sent: []string{"POST /reports"},
			check: func(t *testing.T, err error) {
				var je *Error
				if !errors.As(err, &je) || je.Phase != "create" || je.Req.Method != "POST" || je.ID != "" || err.Error() != "500" {
					t.Errorf("err %#v", err)
				}
			},
		},
		"a file that cannot be read: the download's error, no file after it": {
			statuses: []string{"done"}, readErr: errors.New("503"),
			want: saved{ids: []string{"42"}, checkpoints: []string{"42"}, read: []string{"GET https://api.test/files/42-1.csv"}},
			sent: []string{"POST /reports", "GET /jobs/42"},
			logs: []string{
				`level=INFO msg="report job created" stream=report job_id=42`,
				`level=INFO msg="report job done; downloading" stream=report job_id=42 files=2`,
			},
			check: func(t *testing.T, err error) {
				var je *Error
				if !errors.As(err, &je) || je.Phase != "download" || je.ID != "42" || je.Req.URL != "https://api.test/files/42-1.csv" {
					t.Errorf("err %#v", err)
				}
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := &api{t: t, statuses: tt.statuses, gone: tt.gone, fail: tt.fail}
				var log bytes.Buffer
				s := &saved{readErr: tt.readErr}
				j := s.job(t, a, &log)
				j.Def.Async.Download.URLsPath = "files"
				err := j.Run(context.Background(), streams.Request{Method: "GET", URL: "/reports"}, tt.saved)
				if tt.check != nil {
					tt.check(t, err)
				} else if err != nil {
					t.Fatal(err)
				}
				s.readErr = nil
				if diff := cmp.Diff(tt.want, *s, cmp.AllowUnexported(saved{})); diff != "" {
					t.Errorf("state (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tt.sent, a.sent); diff != "" {
					t.Errorf("requests (-want +got):\n%s", diff)
				}
				var logs []string
				if l := strings.TrimSpace(log.String()); l != "" {
					logs = strings.Split(l, "\n")
				}
				if diff := cmp.Diff(tt.logs, logs); diff != "" {
					t.Errorf("logs (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func TestPoll(t *testing.T) {
	tests := map[string]struct {
		statuses  []string
		fail      error
		wantPolls int
		check     func(t *testing.T, body any, err error, s *saved)
	}{
		"done on the third poll": {
			statuses: []string{"pending", "running", "done"}, wantPolls: 3,
			check: func(t *testing.T, body any, err error, s *saved) {
				if err != nil || body.(map[string]any)["status"] != "done" || len(s.ids) != 0 {
					t.Errorf("body %v, err %v, state %+v", body, err, s)
				}
			},
		},
		"failed: forgotten, the message masked": {
			statuses: []string{"pending", "failed"}, wantPolls: 2,
			check: func(t *testing.T, _ any, err error, s *saved) {
				var je *Error
				if !errors.As(err, &je) || je.Phase != "poll" || je.ID != "42" || je.Status != "failed" || je.Polls != 2 || je.Body == "" ||
					!slices.Equal(s.ids, []string{""}) || !slices.Equal(s.checkpoints, []string{""}) {
					t.Fatalf("err %#v, state %+v", err, s)
				}
				if want := `stream "report": report job 42 failed (status "failed"): quota REDACTED exceeded`; err.Error() != want {
					t.Errorf("error %q, want %q", err, want)
				}
			},
		},
		"still pending at the timeout: deferred, the job kept": {
			statuses: []string{"pending", "pending", "pending"}, wantPolls: 3, // at 0 s, 1 s and 2 s; a fourth would end past 2.5 s
			check: func(t *testing.T, _ any, err error, s *saved) {
				var je *Error
				var de *client.DeferError
				if !errors.As(err, &je) || !errors.As(err, &de) || je.Polls != 3 || je.Msg == "" || len(s.ids) != 0 {
					t.Errorf("err %#v, state %+v", err, s)
				}
			},
		},
		"a poll out of retries": {
			fail: errors.New("503"), wantPolls: 1,
			check: func(t *testing.T, _ any, err error, _ *saved) {
				var je *Error
				if !errors.As(err, &je) || je.Phase != "poll" || je.Req.URL != "/jobs/42" || je.Polls != 1 {
					t.Errorf("err %#v", err)
				}
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := &api{t: t, statuses: tt.statuses, fail: tt.fail}
				s := &saved{}
				body, _, err := s.job(t, a, &bytes.Buffer{}).poll(context.Background(), "42")
				if len(a.sent) != tt.wantPolls {
					t.Errorf("%d polls %v, want %d", len(a.sent), a.sent, tt.wantPolls)
				}
				tt.check(t, body, err, s)
			})
		})
	}
}
