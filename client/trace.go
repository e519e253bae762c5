package client

import "time"

// Trace is one attempt as a request trace (tap --trace) writes it: never
// a header or a body, and the URL with its secret query values masked as
// every log masks them.
type Trace struct {
	Time     time.Time // when the attempt was sent
	Stream   string
	Method   string // "" for a connection that is not a Do call (a feed)
	URL      string
	Status   int    // 0: no answer
	Error    string // without an answer: "timeout" or "transport"; "" otherwise
	Bytes    int64  // of the answer's body, as read
	Duration time.Duration
	Attempt  int // 1 for the first attempt of a request
	// Waits are what the request waited before this attempt, by reason
	// ("slot", "bucket", "retry_after", "backoff", "breaker"); nil when
	// it did not wait.
	Waits map[string]time.Duration
}

// trace is the Trace of attempt a, and the waits it reports are reset.
func (a *attempt) trace() Trace {
	t := Trace{Time: a.start, Stream: a.stream, URL: a.url, Status: a.status, Error: a.errClass,
		Bytes: a.bytes.Load(), Duration: a.c.now().Sub(a.start), Attempt: 1}
	if cs := a.cs; cs != nil {
		t.Stream, t.Method, t.Attempt = cs.req.Stream, cs.method, cs.attempts
		for k, d := range cs.waited {
			if d > 0 {
				if t.Waits == nil {
					t.Waits = map[string]time.Duration{}
				}
				t.Waits[waitKind(k).String()] = d
			}
		}
		cs.waited = [waitKinds]time.Duration{}
	}
	return t
}
