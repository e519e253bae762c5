package report

import (
	"context"
	"errors"
	"net/url"
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

// api answers the polls of job 42 with the statuses given, in turn; the
// create request with the job's id.
type api struct {
	t        *testing.T
	statuses []string
	sent     []string
	fail     error // the answer to every request when set
}

func (a *api) get(_ context.Context, req streams.Request) (any, *url.URL, error) {
	a.sent = append(a.sent, req.Method+" "+req.URL)
	if a.fail != nil {
		return nil, nil, a.fail
	}
	if req.URL == "/reports" {
		return jsontest.Decode(a.t, `{"id": "42"}`), nil, nil
	}
	if len(a.statuses) == 0 {
		a.t.Fatalf("poll %d: no answer left", len(a.sent))
	}
	s := a.statuses[0]
	a.statuses = a.statuses[1:]
	u, _ := url.Parse("https://api.test" + req.URL)
	if s == "failed" {
		return jsontest.Decode(a.t, `{"status": "failed", "error": "quota hunter2 exceeded"}`), u, nil
	}
	return jsontest.Decode(a.t, `{"status": "`+s+`"}`), u, nil
}

func TestPoll(t *testing.T) {
	tests := map[string]struct {
		statuses  []string
		fail      error
		wantPolls int
		check     func(t *testing.T, body any, err error, forgotten int)
	}{
		"done on the third poll": {
			statuses: []string{"pending", "running", "done"}, wantPolls: 3,
			check: func(t *testing.T, body any, err error, forgotten int) {
				if err != nil || body.(map[string]any)["status"] != "done" || forgotten != 0 {
					t.Errorf("body %v, err %v, forgotten %d", body, err, forgotten)
				}
			},
		},
		"failed: forgotten, the message masked": {
			statuses: []string{"pending", "failed"}, wantPolls: 2,
			check: func(t *testing.T, _ any, err error, forgotten int) {
				var je *Error
				if !errors.As(err, &je) || je.Phase != "poll" || je.ID != "42" || je.Status != "failed" || je.Polls != 2 || je.Body == "" || forgotten != 1 {
					t.Fatalf("err %#v, forgotten %d", err, forgotten)
				}
				if want := `stream "report": report job 42 failed (status "failed"): quota REDACTED exceeded`; err.Error() != want {
					t.Errorf("error %q, want %q", err, want)
				}
			},
		},
		"still pending at the timeout: deferred": {
			statuses: []string{"pending", "pending", "pending"}, wantPolls: 3, // at 0 s, 1 s and 2 s; a fourth would end past 2.5 s
			check: func(t *testing.T, _ any, err error, forgotten int) {
				var je *Error
				var de *client.DeferError
				if !errors.As(err, &je) || !errors.As(err, &de) || je.Polls != 3 || je.Msg == "" || forgotten != 0 {
					t.Errorf("err %#v, forgotten %d", err, forgotten)
				}
			},
		},
		"a poll out of retries": {
			fail: errors.New("503"), wantPolls: 1,
			check: func(t *testing.T, _ any, err error, _ int) {
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
				j := &Job{Def: reportDef(streams.AsyncCreate{}, ""), Get: a.get, Now: time.Now, Redact: settings.NewRedactor("hunter2")}
				forgotten := 0
				body, _, err := j.Poll(context.Background(), "42", func() error { forgotten++; return nil })
				if len(a.sent) != tt.wantPolls {
					t.Errorf("%d polls %v, want %d", len(a.sent), a.sent, tt.wantPolls)
				}
				tt.check(t, body, err, forgotten)
			})
		})
	}
}

func TestCreate(t *testing.T) {
	first := streams.Request{Method: "GET", URL: "/reports"}
	a := &api{t: t}
	j := &Job{Def: reportDef(streams.AsyncCreate{}, ""), Get: a.get, Now: time.Now}
	if id, err := j.Create(context.Background(), first); id != "42" || err != nil {
		t.Errorf("Create = %q, %v", id, err)
	}
	a.fail = errors.New("500")
	_, err := j.Create(context.Background(), first)
	var je *Error
	if !errors.As(err, &je) || je.Phase != "create" || je.Req.Method != "POST" || !errors.Is(err, a.fail) {
		t.Errorf("err %#v", err)
	}
}
