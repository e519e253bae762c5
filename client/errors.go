package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ErrCircuitOpen is wrapped by the error of every attempt made after the
// circuit breaker has opened Config.BreakerMaxOpenings times in one run.
var ErrCircuitOpen = errors.New("circuit breaker open: the API keeps failing")

// maxMessageRunes bounds StatusError.Message.
const maxMessageRunes = 200

// StatusError is a request that failed: a permanent status (400, 404, ...)
// on the first attempt, or a transient failure (503, timeout, ...) that was
// still there after the last attempt allowed.
//
// Status is 0 when the last attempt got no usable response (a transport
// error, a timeout, a body cut short); Message then describes the error.
// Otherwise Message is the API's own message, at most 200 runes.
// Path is the URL path and query with credentials masked.
type StatusError struct {
	Stream   string
	Method   string
	Path     string
	Status   int
	Message  string
	Attempts int
	Err      error // the underlying error, if any (transport error, Check error)
	// RetryTime is Config.MaxRetryTime when that cap, not the attempts,
	// ended the retries.
	RetryTime time.Duration
	// retried: the last attempt's verdict was retry (an on_status rule
	// may make any status one), so the attempts or the time ran out.
	retried bool
	// URL is the absolute URL of the last attempt with credentials masked,
	// and Body the start of its response body (at most MaxBodyPrefix
	// bytes, credentials masked): what a dead letter keeps of the answer.
	URL  string
	Body string
}

// MaxBodyPrefix bounds StatusError.Body.
const MaxBodyPrefix = 4 << 10

// Transient reports whether the request failed for a reason that may pass
// (a 503, a timeout) and was retried until its attempts ran out, rather
// than for one another attempt would repeat (a 404, a body of the wrong
// kind).
func (e *StatusError) Transient() bool { return e.exhausted() }

func (e *StatusError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "stream %q: %s %s: ", e.Stream, e.Method, e.Path)
	if e.exhausted() {
		fmt.Fprintf(&b, "gave up after %d %s", e.Attempts, plural(e.Attempts, "attempt", "attempts"))
		if e.RetryTime > 0 {
			fmt.Fprintf(&b, " (the next retry would pass retry.max_total_s, %s)", e.RetryTime)
		}
		b.WriteString(": ")
		if e.Status == 0 {
			b.WriteString("last error: ")
		} else {
			b.WriteString("last status ")
		}
	}
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if e.Status != 0 {
		b.WriteString(statusText(e.Status))
		if msg != "" {
			b.WriteString(": ")
			b.WriteString(msg)
		}
	} else if msg != "" {
		b.WriteString(msg)
	} else {
		b.WriteString("request failed")
	}
	if e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden {
		b.WriteString("; check the credentials in the config's auth block")
	}
	return b.String()
}

func (e *StatusError) Unwrap() error { return e.Err }

// exhausted reports whether the failure is of a retryable kind, which means
// the request was retried until Attempts ran out.
func (e *StatusError) exhausted() bool {
	return e.retried || retryableStatus(e.Status) || IsTransient(e.Err)
}

// DeferError says the run must stop now and be resumed later: the API
// answered 418, asked (Retry-After) to wait longer than
// Config.MaxRetryAfter, or the daily quota is used up. The tap checkpoints
// its state and exits 75.
type DeferError struct {
	Stream  string
	Reason  string
	RetryAt time.Time
}

func (e *DeferError) Error() string {
	return fmt.Sprintf("stream %q: deferred: %s; retry after %s",
		e.Stream, e.Reason, e.RetryAt.UTC().Format(time.RFC3339))
}

// transientError marks an error as retryable; see Transient.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// Transient marks err, returned by Request.Check, as retryable: the request
// is retried with backoff like a 503. Transient(nil) is nil.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	if IsTransient(err) {
		return err
	}
	return &transientError{err: err}
}

// IsTransient reports whether err, or an error it wraps, was marked by
// Transient.
func IsTransient(err error) bool {
	var t *transientError
	return errors.As(err, &t)
}

// timeoutError is an attempt that outlived Config.Timeout.
type timeoutError struct{ d time.Duration }

func (e *timeoutError) Error() string { return fmt.Sprintf("timeout after %s", e.d) }
func (e *timeoutError) Timeout() bool { return true }

func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return fmt.Sprintf("%d %s", code, t)
	}
	return fmt.Sprint(code)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// apiMessage extracts the API's own error message from a response body:
// the JSON fields error.message, error (a string), message,
// errors[0].message or detail, in that order; otherwise the body text.
// The result is at most 200 runes, on one line.
func apiMessage(body []byte) string {
	var v map[string]any
	if json.Unmarshal(body, &v) == nil {
		if m := jsonMessage(v); m != "" {
			return clip(m)
		}
	}
	return clip(string(body))
}

func jsonMessage(v map[string]any) string {
	str := func(x any) string {
		s, _ := x.(string)
		return strings.TrimSpace(s)
	}
	if e, ok := v["error"].(map[string]any); ok {
		if s := str(e["message"]); s != "" {
			return s
		}
	}
	if s := str(v["error"]); s != "" {
		return s
	}
	if s := str(v["message"]); s != "" {
		return s
	}
	if errs, ok := v["errors"].([]any); ok && len(errs) > 0 {
		if e, ok := errs[0].(map[string]any); ok {
			if s := str(e["message"]); s != "" {
				return s
			}
		}
	}
	if s := str(v["detail"]); s != "" {
		return s
	}
	// FastAPI/pydantic: {"detail": [{"msg": "..."}]}
	if d, ok := v["detail"].([]any); ok && len(d) > 0 {
		if e, ok := d[0].(map[string]any); ok {
			if s := str(e["msg"]); s != "" {
				return s
			}
		}
	}
	return ""
}

// bodyPrefix is the start of a response body, at most MaxBodyPrefix bytes
// and cut on a rune boundary, as valid UTF-8.
func bodyPrefix(b []byte) string {
	if len(b) > MaxBodyPrefix {
		b = b[:MaxBodyPrefix]
		// Drop a rune the cut split in two.
		for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
			if utf8.RuneStart(b[i]) {
				if !utf8.FullRune(b[i:]) {
					b = b[:i]
				}
				break
			}
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// clip makes s valid UTF-8 on one line and cuts it to maxMessageRunes.
func clip(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.Fields(s), " ")
	if strings.ContainsFunc(s, unicode.IsControl) {
		// ESC, BEL, C1 left in an API's text would drive the terminal
		// reading stderr: escaped as Go does (\x1b).
		q := strconv.Quote(s)
		s = q[1 : len(q)-1]
	}
	if utf8.RuneCountInString(s) <= maxMessageRunes {
		return s
	}
	n := 0
	for i := range s {
		if n == maxMessageRunes {
			return s[:i]
		}
		n++
	}
	return s
}
