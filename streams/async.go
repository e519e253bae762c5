package streams

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Async describes a report stream: one request creates a job, the job is
// polled until it is done, then the files it lists are downloaded and
// decoded. The tap drives it; this package only reads its answers.
type Async struct {
	Create AsyncCreate `json:"create" doc:"The request that creates the job."`
	// JobIDPath is where the create answer holds the job id.
	JobIDPath string        `json:"job_id_path" lang:"required" eg:"\"id\"" doc:"Where the create answer holds the job id."`
	Poll      AsyncPoll     `json:"poll" doc:"How the job is watched until it is done."`
	Download  AsyncDownload `json:"download" doc:"Where a done job lists its files, and their format."`
}

// AsyncCreate is the request that creates a job.
type AsyncCreate struct {
	Path   string            `json:"path" doc:"The create request's path [the stream's path]."` // [the stream's path]
	Method string            `json:"method" lang:"enum=GET|POST,fold,default=POST" doc:"GET or POST."`
	Params map[string]string `json:"params" doc:"Query parameters of the create request."`
	Body   json.RawMessage   `json:"body" doc:"JSON body of the create request [the stream's body]."` // [the stream's body]
}

// AsyncPoll is how a job is watched.
type AsyncPoll struct {
	// Path may hold {job_id}.
	Path       string   `json:"path" lang:"required" eg:"\"/reports/{job_id}\"" doc:"The poll path; {job_id} is the job id."`
	StatusPath string   `json:"status_path" lang:"required" eg:"\"status\"" doc:"Where the poll answer holds the job status."`
	Done       []string `json:"done" lang:"required" eg:"[\"completed\"]" doc:"The statuses of a finished job."`
	Failed     []string `json:"failed" doc:"The statuses of a failed job."`
	// MessagePath is where a failed job says why [error, then message].
	MessagePath string  `json:"message_path" doc:"Where a failed job says why [error, then message]."`
	IntervalS   float64 `json:"interval_s" lang:"min=0,default=5" doc:"Seconds between polls."`
	TimeoutS    float64 `json:"timeout_s" lang:"min=0,default=3600" doc:"How long one run polls."`
}

// AsyncDownload says where a done job's files are and how to read them.
type AsyncDownload struct {
	// URLsPath holds the file URLs: an array of strings (or of objects
	// with a "url"), or one string. A URL may be absolute, or relative to
	// the poll URL.
	URLsPath string `json:"urls_path" lang:"required" eg:"\"result.files\"" doc:"Where the finished job lists its files."`
	Format   string `json:"format" lang:"enum=json|jsonl|csv|xml" doc:"The files' format [the stream's]."`
}

// JobIDVar is the placeholder of the job id in poll.path.
const JobIDVar = "job_id"

// Interval is the wait between two polls.
func (p AsyncPoll) Interval() time.Duration {
	if p.IntervalS <= 0 {
		return 5 * time.Second
	}
	return time.Duration(p.IntervalS * float64(time.Second))
}

// Timeout is how long one run polls a job before it stops (and resumes
// polling the same job next run).
func (p AsyncPoll) Timeout() time.Duration {
	if p.TimeoutS <= 0 {
		return time.Hour
	}
	return time.Duration(p.TimeoutS * float64(time.Second))
}

// DownloadFormat is the format of the job's files.
func (a *Async) DownloadFormat(d *Definition) string {
	if a.Download.Format != "" {
		return a.Download.Format
	}
	return d.BodyFormat()
}

// check reports the first problem of d.Async.
func (d *Definition) checkAsync() error {
	a := d.Async
	bad := func(field, format string, args ...any) error {
		if field != "" {
			field = "." + field
		}
		return &FieldError{Stream: d.Name, Field: "async" + field, Msg: fmt.Sprintf(format, args...)}
	}
	if b := a.Create.Body; len(b) > 0 && string(b) != "null" && !json.Valid(b) {
		return bad("create.body", "must be JSON")
	}
	if a.Create.Path != "" {
		if err := checkJobPath(a.Create.Path, false); err != nil {
			return bad("create.path", "%v", err)
		}
	}
	if err := checkJobPath(a.Poll.Path, true); err != nil {
		return bad("poll.path", "%v", err)
	}
	switch {
	case d.Parent != nil:
		return bad("", "a child stream cannot be async (parent is set)")
	case d.GraphQL != nil:
		return bad("", "a GraphQL stream cannot be async")
	case d.Pagination.Type != "" && d.Pagination.Type != PageNone:
		return &FieldError{Stream: d.Name, Field: "pagination.type", Msg: fmt.Sprintf("an async stream downloads files and does not page; use \"none\", got %q", d.Pagination.Type)}
	case d.Incremental != nil && d.Incremental.ChunkDays > 0:
		return &FieldError{Stream: d.Name, Field: "incremental.chunk_days", Msg: "an async stream runs one job per run; chunk_days is not supported"}
	}
	return nil
}

// checkJobPath checks the placeholders of an async path: {job_id} only,
// and only where job says it is filled.
func checkJobPath(path string, job bool) error {
	parts, err := splitPath(path)
	if err != nil {
		return err
	}
	for i := 1; i < len(parts); i += 2 {
		if parts[i] != JobIDVar || !job {
			return fmt.Errorf("placeholder {%s} is not filled here (only poll.path takes {%s})", parts[i], JobIDVar)
		}
	}
	return nil
}

// JobID reads the job id from the create answer: a string, or a number
// as its exact text.
func (a *Async) JobID(stream string, body any) (string, error) {
	v, found := Lookup(body, a.JobIDPath)
	id := ""
	switch x := v.(type) {
	case string:
		id = x
	case json.Number:
		id = string(x)
	}
	if !found || id == "" {
		return "", streamErr(stream, "async.job_id_path %q holds no job id in the create answer (found a JSON %s)", a.JobIDPath, jsonType(v))
	}
	return id, nil
}

// PollRequest is the request that polls job id.
func (a *Async) PollRequest(stream, id string) (Request, error) {
	path, err := fillPath(stream, a.Poll.Path, map[string]string{JobIDVar: id})
	if err != nil {
		return Request{}, err
	}
	return Request{Method: "GET", URL: path}, nil
}

// JobState is what a poll answer says of a job.
type JobState int

const (
	JobPending JobState = iota
	JobDone
	JobFailed
)

// Status reads a poll answer: the job's state, its status text and, for a
// failed job, the API's message.
func (a *Async) Status(stream string, body any) (state JobState, status, message string, err error) {
	v, _ := Lookup(body, a.Poll.StatusPath)
	switch x := v.(type) {
	case string:
		status = x
	case json.Number:
		status = string(x)
	case bool:
		status = fmt.Sprint(x)
	default:
		return 0, "", "", streamErr(stream, "async.poll.status_path %q holds no status in the poll answer (found a JSON %s)", a.Poll.StatusPath, jsonType(v))
	}
	for _, s := range a.Poll.Done {
		if strings.EqualFold(s, status) {
			return JobDone, status, "", nil
		}
	}
	for _, s := range a.Poll.Failed {
		if strings.EqualFold(s, status) {
			paths := []string{"error", "message", "error_message"}
			if a.Poll.MessagePath != "" {
				paths = []string{a.Poll.MessagePath}
			}
			for _, p := range paths {
				if m, ok := Lookup(body, p); ok && !isEmptyValue(m) {
					return JobFailed, status, errorMessage(m), nil
				}
			}
			return JobFailed, status, "", nil
		}
	}
	return JobPending, status, "", nil
}

// DownloadURLs reads the file URLs of a done job from the poll answer,
// resolved against pollURL (the URL of that answer).
func (a *Async) DownloadURLs(stream string, body any, pollURL *url.URL) ([]string, error) {
	v, found := Lookup(body, a.Download.URLsPath)
	var raws []string
	switch x := v.(type) {
	case string:
		raws = []string{x}
	case []any:
		for i, e := range x {
			switch f := e.(type) {
			case string:
				raws = append(raws, f)
			case map[string]any:
				u, ok := f["url"].(string)
				if !ok {
					return nil, streamErr(stream, "async.download.urls_path %q: file %d has no \"url\" string", a.Download.URLsPath, i)
				}
				raws = append(raws, u)
			default:
				return nil, streamErr(stream, "async.download.urls_path %q: file %d is a JSON %s, expected a URL string", a.Download.URLsPath, i, jsonType(e))
			}
		}
	case nil:
		if !found {
			return nil, streamErr(stream, "async.download.urls_path %q is not in the answer of the finished job", a.Download.URLsPath)
		}
	default:
		return nil, streamErr(stream, "async.download.urls_path %q holds a JSON %s, expected a list of URLs", a.Download.URLsPath, jsonType(v))
	}
	urls := make([]string, 0, len(raws))
	for i, raw := range raws {
		ref, err := url.Parse(raw)
		if err != nil || raw == "" {
			// Never echo the URL: a pre-signed one carries a signature.
			return nil, streamErr(stream, "async.download.urls_path %q: file %d is not a valid URL", a.Download.URLsPath, i)
		}
		if pollURL != nil {
			ref = pollURL.ResolveReference(ref)
		}
		if ref.IsAbs() && ref.Scheme != "http" && ref.Scheme != "https" {
			return nil, streamErr(stream, "async.download.urls_path %q: file %d is not an http(s) URL", a.Download.URLsPath, i)
		}
		urls = append(urls, ref.String())
	}
	return urls, nil
}
