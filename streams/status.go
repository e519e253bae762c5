package streams

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
)

// Rules of on_status: what a status means for a request.
const (
	StatusRetry      = "retry"       // transient: retried with backoff (Retry-After honoured)
	StatusIgnore     = "ignore"      // no error: the walk of that request ends, as ignore_statuses
	StatusFail       = "fail"        // permanent: the run fails
	StatusDeadLetter = "dead_letter" // permanent, but written as a request dead letter and the run goes on
)

// A ResponseRule is what a front end makes of an answer from more than
// its status (an Airbyte manifest's response filters, whose predicates
// read the body): a rule of on_status (retry, ignore, fail) when ok, which
// wins over the stream's on_status; not ok, the status decides.
type ResponseRule interface {
	Rule(status int, header http.Header, body []byte) (rule string, ok bool)
}

// Values of on_request_failure.
const (
	RequestFailureFail       = "fail"        // the run fails (default)
	RequestFailureDeadLetter = "dead_letter" // the request becomes a dead letter; the run goes on
)

// ParseOnStatus checks an on_status object ({"409": "retry"}) and returns
// its rules by status. The error names the status key and what was
// expected.
func ParseOnStatus(m map[string]string) (map[int]string, error) {
	out := make(map[int]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		code, err := strconv.Atoi(k)
		if err != nil || code < 400 || code > 599 {
			return nil, fmt.Errorf("%q: expected an HTTP error status (400-599) as the key", k)
		}
		switch r := m[k]; r {
		case StatusRetry, StatusIgnore, StatusFail, StatusDeadLetter:
			out[code] = r
		default:
			return nil, fmt.Errorf("%q: expected retry, ignore, fail or dead_letter, got %q", k, r)
		}
	}
	return out, nil
}

// StatusRules merges the rules of a stream: the config's on_status, the
// stream's ignore_statuses (as ignore) and the stream's on_status, each
// winning over the one before. The inputs have been checked.
func StatusRules(config map[string]string, d *Definition) map[int]string {
	out := map[int]string{}
	if r, err := ParseOnStatus(config); err == nil {
		maps.Copy(out, r)
	}
	for _, s := range d.IgnoreStatuses {
		out[s] = StatusIgnore
	}
	if r, err := ParseOnStatus(d.OnStatus); err == nil {
		maps.Copy(out, r)
	}
	return out
}
