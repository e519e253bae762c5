package streams

import (
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/internal/jsontest"
)

func TestAsyncAnswers(t *testing.T) {
	a := &Async{JobIDPath: "job.id",
		Poll:     AsyncPoll{Path: "/r/{job_id}", StatusPath: "state", Done: []string{"DONE"}, Failed: []string{"error"}},
		Download: AsyncDownload{URLsPath: "files"}}

	if id, err := a.JobID("s", jsontest.Decode(t, `{"job":{"id":12345678901234567890}}`)); err != nil || id != "12345678901234567890" {
		t.Errorf("numeric job id = %q, %v", id, err)
	}
	if _, err := a.JobID("s", jsontest.Decode(t, `{"job":{}}`)); err == nil || !strings.Contains(err.Error(), `async.job_id_path "job.id" holds no job id`) {
		t.Errorf("missing job id: %v", err)
	}
	if req, err := a.PollRequest("s", "a/b"); err != nil || req.URL != "/r/a%2Fb" {
		t.Errorf("poll request = %+v, %v: the id must stay one path segment", req, err)
	}

	statuses := []struct {
		body   string
		state  JobState
		msg    string
		errSub string
	}{
		{`{"state":"running"}`, JobPending, "", ""},
		{`{"state":"done"}`, JobDone, "", ""},
		{`{"state":"ERROR","error":{"message":"out of quota"}}`, JobFailed, "out of quota", ""},
		{`{"state":"error","message":"bad range"}`, JobFailed, "bad range", ""},
		{`{"state":"error"}`, JobFailed, "", ""},
		{`{"status":"done"}`, 0, "", `async.poll.status_path "state" holds no status`},
	}
	for _, tt := range statuses {
		state, _, msg, err := a.Status("s", jsontest.Decode(t, tt.body))
		if tt.errSub != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errSub) {
				t.Errorf("%s: err = %v", tt.body, err)
			}
			continue
		}
		if err != nil || state != tt.state || msg != tt.msg {
			t.Errorf("%s: state %v, message %q, err %v; want %v, %q", tt.body, state, msg, err, tt.state, tt.msg)
		}
	}

	poll, _ := url.Parse("https://api.example.com/v1/r/7?x=1")
	urls := []struct {
		body   string
		want   []string
		errSub string
	}{
		{`{"files":["/dl/1.gz","https://bucket.s3.example.net/2.gz?X-Sig=abc"]}`, []string{"https://api.example.com/dl/1.gz", "https://bucket.s3.example.net/2.gz?X-Sig=abc"}, ""},
		{`{"files":[{"url":"part-0.csv"}]}`, []string{"https://api.example.com/v1/r/part-0.csv"}, ""},
		{`{"files":"https://x.example/a"}`, []string{"https://x.example/a"}, ""},
		{`{"files":[]}`, []string{}, ""},
		{`{}`, nil, `is not in the answer of the finished job`},
		{`{"files":["ftp://x/a"]}`, nil, `file 0 is not an http(s) URL`},
		{`{"files":[3]}`, nil, `file 0 is a JSON number`},
	}
	for _, tt := range urls {
		got, err := a.DownloadURLs("s", jsontest.Decode(t, tt.body), poll)
		if tt.errSub != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errSub) {
				t.Errorf("%s: err = %v", tt.body, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.body, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: urls (-want +got):\n%s", tt.body, diff)
		}
	}
}
