package records

import (
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Kinds of dead letters.
const (
	KindRecord  = "record"
	KindRequest = "request"
)

// RequestLetter is a request that failed for good while the run went on
// (on_request_failure dead_letter): one child fetch for one parent, one
// chunk window, one report job.
//
// Context, Window and Bookmark are what `tap replay` rebuilds the request
// from, with the stream's definition: the URL kept is masked, so it cannot
// be sent again as is.
type RequestLetter struct {
	Stream string
	// Context names the parent record of a child stream's request
	// ({"user_id": 7}); nil for a stream with no parent.
	Context map[string]any
	// Window is the chunk window the request read, [Start, End) in RFC
	// 3339; empty when the stream is not read in windows.
	WindowStart, WindowEnd string
	// Bookmark is the stream's replication-key value the request was
	// filtered from (nil: no filter).
	Bookmark any
	// Resume, when the walk failed past its first page, is the request of
	// the page that failed (as a resume object of the bookmark): replay
	// starts there, since the pages before it were written.
	Resume map[string]any

	Method, URL  string // URL with credentials masked
	RequestBody  string
	Status       int // of the last answer; 0 when there was none
	ResponseBody string
	Transient    bool // the retries ran out (else: a permanent failure)
	Attempts     int
	// Error is the run's one-line error for the failure, secrets masked.
	Error string
	Time  time.Time
}

// requestLetter is the line of a RequestLetter.
type requestLetter struct {
	Kind         string         `json:"kind"`
	RunID        string         `json:"run_id"`
	RunStartedAt string         `json:"run_started_at"`
	Stream       string         `json:"stream"`
	Context      map[string]any `json:"context"`
	Window       *letterWindow  `json:"window,omitempty"`
	Bookmark     any            `json:"bookmark,omitempty"`
	Resume       map[string]any `json:"resume,omitempty"`
	Request      letterRequest  `json:"request"`
	Response     letterResponse `json:"response"`
	ErrorType    string         `json:"error_type"`
	Error        string         `json:"error,omitempty"`
	Attempts     int            `json:"attempts"`
	Time         string         `json:"time"`
}

type letterWindow struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

type letterRequest struct {
	Method string `json:"method"`
	URL    string `json:"url"`
	Body   string `json:"body"`
}

type letterResponse struct {
	Status int    `json:"status"`
	Body   string `json:"body"`
}

// MaxLetterBody bounds the request and response bodies a letter keeps.
const MaxLetterBody = 4 << 10

// Request appends a request's dead letter, its secrets masked and its
// bodies cut to MaxLetterBody bytes.
func (d *DeadLetters) Request(r RequestLetter) error {
	l := requestLetter{
		Kind: KindRequest, RunID: d.run.ID, RunStartedAt: d.run.StartedAt.UTC().Format(time.RFC3339Nano),
		Stream:    r.Stream,
		Bookmark:  d.redact.Value(r.Bookmark),
		Request:   letterRequest{Method: r.Method, URL: d.redact.Redact(r.URL), Body: cut(d.redact.Redact(r.RequestBody))},
		Response:  letterResponse{Status: r.Status, Body: cut(d.redact.Redact(r.ResponseBody))},
		ErrorType: "permanent",
		Error:     cut(d.redact.Redact(r.Error)),
		Attempts:  r.Attempts,
		Time:      r.Time.UTC().Format(time.RFC3339Nano),
	}
	if r.Context != nil {
		l.Context, _ = d.redact.Value(r.Context).(map[string]any)
	}
	if r.Resume != nil {
		l.Resume = d.keptResume(r.Resume)
	}
	if r.WindowStart != "" || r.WindowEnd != "" {
		l.Window = &letterWindow{Start: r.WindowStart, End: r.WindowEnd}
	}
	if r.Transient {
		l.ErrorType = "transient"
	}
	return d.append(r.Stream, KindRequest, l)
}

// mask is what a Redactor puts in a secret's place (settings.Mask).
const mask = "REDACTED"

// keptResume is the resume object a letter keeps of the page that
// failed. A query parameter or header that holds a secret — an API's next
// link echoing our api_key — is left out: the client sends its own
// credentials again. A position that still holds one (a cursor made of
// it) cannot be sent again masked, and is left out whole: replay then
// reads the walk from its start.
func (d *DeadLetters) keptResume(r map[string]any) map[string]any {
	// A value that is a secret and nothing more: one that also holds a
	// position (a cursor made of a secret) is not ours to drop.
	holds := func(s string) bool {
		m := d.redact.Redact(s)
		return m != s && strings.ReplaceAll(m, mask, "") == ""
	}
	clean := func(v map[string]any) bool {
		m, _ := d.redact.Value(v).(map[string]any)
		return reflect.DeepEqual(m, v)
	}
	if clean(r) {
		return r
	}
	out := maps.Clone(r)
	req, _ := r["request"].(map[string]any)
	req = maps.Clone(req)
	out["request"] = req
	if raw, ok := req["url"].(string); ok {
		if u, err := url.Parse(raw); err == nil && u.RawQuery != "" {
			q := u.Query()
			for k, vs := range q {
				if slices.ContainsFunc(vs, holds) {
					q.Del(k)
				}
			}
			u.RawQuery = q.Encode()
			req["url"] = u.String()
		}
	}
	for _, field := range []string{"query", "header"} {
		m, ok := req[field].(map[string]any)
		if !ok {
			continue
		}
		m = maps.Clone(m)
		for k, vs := range m {
			if list, _ := vs.([]any); slices.ContainsFunc(list, func(v any) bool { s, _ := v.(string); return holds(s) }) {
				delete(m, k)
			}
		}
		req[field] = m
	}
	if clean(out) {
		return out
	}
	return nil
}

// cut keeps the first MaxLetterBody bytes of s, on a rune boundary.
func cut(s string) string {
	if len(s) <= MaxLetterBody {
		return s
	}
	s = s[:MaxLetterBody]
	for i := 0; i < 4 && len(s) > 0; i++ {
		if strings.ToValidUTF8(s, "") == s {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}

// Depth is a count of dead letters by stream and kind.
type Depth struct {
	Stream, Kind string
	N            int
}

// Depths lists the letters written so far by stream and kind, sorted.
func (d *DeadLetters) Depths() []Depth {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]Depth, 0, len(d.depth))
	for _, k := range slices.SortedFunc(maps.Keys(d.depth), func(a, b Depth) int {
		return strings.Compare(a.Stream+"\x00"+a.Kind, b.Stream+"\x00"+b.Kind)
	}) {
		k.N = d.depth[k]
		out = append(out, k)
	}
	return out
}
