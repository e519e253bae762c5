package manifest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/tap-dev/tap/manifest/interp"
)

// responseFilters are a stream's HttpResponseFilters, in the order of its
// error handlers, when one of them reads the body (a predicate, an
// error_message_contains): the stream's streams.ResponseRule. As in the
// CDK, the first filter whose http_codes hold the status, whose
// error_message_contains is in the body, or whose predicate holds
// decides; none: the status does (the stream's on_status, then the
// tap's defaults).
type responseFilters []responseFilter

type responseFilter struct {
	codes    []int
	contains string
	pred     *interp.Condition // nil: none
	rule     string            // of on_status: retry, ignore, fail
	base     interp.Vars       // the config and the filter's $parameters
}

func (fs responseFilters) Rule(status int, h http.Header, body []byte) (string, bool) {
	var decoded any
	read := false
	for _, f := range fs {
		if slices.Contains(f.codes, status) {
			return f.rule, true
		}
		if f.contains != "" && bytes.Contains(body, []byte(f.contains)) {
			return f.rule, true
		}
		if f.pred == nil {
			continue
		}
		if !read {
			// The CDK's response is the body decoded, or nothing when
			// it is not JSON.
			read = true
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.UseNumber()
			if dec.Decode(&decoded) != nil {
				decoded = nil
			}
		}
		v := f.base
		v.Response, v.Headers = decoded, interp.ResponseHeaders(h)
		if ok, err := f.pred.Eval(&v); err == nil && ok {
			return f.rule, true
		}
	}
	return "", false
}
