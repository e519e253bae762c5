package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/tap-dev/tap/client/limit"
)

// Classification. Every attempt ends in one verdict; the retry loop of
// go-retryablehttp asks CheckRetry, which answers from the verdict.
//
//	Request.OnStatus rules                  first: retry, ignore or fail
//	2xx (Check passed), IgnoreStatuses      done
//	500 502 503 504 (and other 5xx except 501 505 511), 408 425 429,
//	transport errors, timeouts, a body cut short, Check → Transient
//	                                         retried with backoff (429 and
//	                                         503: Retry-After when given)
//	418; Retry-After > MaxRetryAfter; daily quota;
//	an API rate-limit window used up past it
//	                                         DeferError, no retry
//	other 4xx, 1xx/3xx left over, Check → other error, TLS/scheme errors
//	                                         StatusError, no retry
//	breaker opened BreakerMaxOpenings times  ErrCircuitOpen, no retry
type verdict int

const (
	vNone      verdict = iota
	vOK                // accepted
	vIgnored           // status in IgnoreStatuses
	vRetry             // transient: retry while attempts remain
	vPermanent         // fail now with a StatusError
	vDefer             // stop the run with a DeferError
	vFatal             // fail now with err as is (ErrCircuitOpen)
	vCanceled          // the caller's context ended
)

// outcome is what one attempt came to.
type outcome struct {
	v             verdict
	status        int // 0: no usable response
	header        http.Header
	body          []byte
	err           error // transport, body or Check error; *DeferError for vDefer
	retryAfter    time.Duration
	hasRetryAfter bool
}

// health is what an attempt says about the API, for the circuit breaker.
type health int

const (
	neutral health = iota // says nothing (cancelled, 429, 418)
	healthy               // the API answered sensibly
	failing               // transient failure
)

func (o outcome) health() health {
	switch o.v {
	case vOK, vIgnored, vPermanent:
		return healthy
	case vRetry:
		if o.status == http.StatusTooManyRequests || o.status == http.StatusUnauthorized {
			return neutral
		}
		return failing
	}
	return neutral
}

// retryableStatus reports whether a status is transient.
func retryableStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooEarly, http.StatusTooManyRequests:
		return true
	case http.StatusNotImplemented, http.StatusHTTPVersionNotSupported, http.StatusNetworkAuthenticationRequired:
		return false
	}
	return code >= 500 && code <= 599
}

// statusHealth classifies a bare status for the breaker, when no body was
// looked at (redirect hops).
func statusHealth(code int) health {
	switch {
	case code == http.StatusTooManyRequests || code == http.StatusTeapot:
		return neutral
	case retryableStatus(code):
		return failing
	}
	return healthy
}

// classifyResponse turns a response whose body has been read (body, rerr)
// into an outcome.
func (cs *call) classifyResponse(resp *http.Response, body []byte, rerr error) outcome {
	c := cs.c
	o := outcome{status: resp.StatusCode, header: resp.Header, body: body}
	if rerr != nil {
		if err := cs.ctx.Err(); err != nil {
			return outcome{v: vCanceled, err: err}
		}
		var te *timeoutError
		switch {
		case errors.As(rerr, &te):
			o.err = rerr
		case errors.Is(rerr, io.ErrUnexpectedEOF):
			o.err = fmt.Errorf("response body cut short (%d bytes read): %w", len(body), rerr)
		default:
			o.err = fmt.Errorf("reading response body: %w", rerr)
		}
		o.v, o.status, o.err = vRetry, 0, Transient(o.err)
		return o
	}
	if int64(len(body)) > maxBodyBytes {
		o.v, o.err = vPermanent, fmt.Errorf("response body larger than %d MiB", maxBodyBytes>>20)
		return o
	}
	code := resp.StatusCode
	if code == http.StatusUnauthorized && cs.token != "" && !cs.reauthed {
		// The access token was refused before it expired (revoked,
		// rotated server-side): drop it and retry once with a new one.
		cs.reauthed = true
		c.auth.invalidate(cs.token)
		o.v, o.hasRetryAfter = vRetry, true
		o.err = Transient(errors.New("access token refused (401); getting a new one"))
		return o
	}
	now := c.now()
	rule := cs.rule(code)
	if cs.req.Classify != nil {
		if r, ok := cs.req.Classify(code, resp.Header, body); ok {
			rule = r
		}
	}
	switch rule {
	case StatusIgnore:
		o.v = vIgnored
		return o
	case StatusFail:
		o.v = vPermanent
		return o
	case StatusRetry:
		o.v = vRetry
		return cs.retryAfter(o, resp, now)
	}
	switch {
	case code >= 200 && code <= 299:
		o.v = vOK
		if cs.req.Check != nil {
			if err := cs.req.Check(body); err != nil {
				o.rejected(err, resp.Header)
			}
		}
	case code == http.StatusTeapot:
		at := now.Add(time.Hour)
		if d, ok := limit.ParseRetryAfter(resp.Header.Get("Retry-After"), now); ok {
			at = now.Add(d)
		}
		o.v, o.err = vDefer, &DeferError{Stream: cs.req.Stream, Reason: "API answered 418 (banned)", RetryAt: at}
	case retryableStatus(code):
		o.v = vRetry
		if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
			return cs.retryAfter(o, resp, now)
		}
	default:
		o.v = vPermanent
	}
	return o
}

// rule is the caller's rule for a status: Request.OnStatus, else ignore
// for a status in Request.IgnoreStatuses, else none ("").
func (cs *call) rule(code int) StatusRule {
	if r, ok := cs.req.OnStatus[code]; ok {
		return r
	}
	if slices.Contains(cs.req.IgnoreStatuses, code) {
		return StatusIgnore
	}
	return ""
}

// retryAfter applies a retried answer's Retry-After: the wait before the
// next attempt, or a DeferError when it is longer than MaxRetryAfter.
func (cs *call) retryAfter(o outcome, resp *http.Response, now time.Time) outcome {
	c := cs.c
	code := resp.StatusCode
	d, ok := limit.ParseRetryAfter(resp.Header.Get("Retry-After"), now)
	if !ok {
		return o
	}
	if d > c.cfg.Limit.MaxRetryAfter {
		o.v, o.err = vDefer, &DeferError{
			Stream: cs.req.Stream,
			Reason: fmt.Sprintf("API answered %s with Retry-After %s, more than retry.max_retry_after_s (%s)",
				statusText(code), d, c.cfg.Limit.MaxRetryAfter),
			RetryAt: now.Add(d),
		}
		return o
	}
	o.retryAfter, o.hasRetryAfter = d, true
	return o
}

// classifyTransport turns an error from http.Client.Do into an outcome.
func (cs *call) classifyTransport(err error) outcome {
	var de *DeferError
	switch {
	case errors.As(err, &de):
		return outcome{v: vDefer, err: de}
	case errors.As(err, new(*TokenError)):
		// The token request had its own retries: no retry storm here.
		return outcome{v: vFatal, err: unwrapURLError(err)}
	case errors.Is(err, ErrCircuitOpen):
		return outcome{v: vFatal, err: unwrapURLError(err)}
	case cs.ctx.Err() != nil:
		return outcome{v: vCanceled, err: cs.ctx.Err()}
	}
	inner := unwrapURLError(err)
	if permanentTransportError(inner) {
		return outcome{v: vPermanent, err: inner}
	}
	return outcome{v: vRetry, err: Transient(inner)}
}

// unwrapURLError drops the *url.Error that http.Client wraps around
// transport errors: its text holds the full URL, credentials included.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err
	}
	return err
}

// permanentTransportError: errors no retry can fix.
func permanentTransportError(err error) bool {
	var (
		unknownAuth *x509.UnknownAuthorityError
		hostname    x509.HostnameError
		invalid     x509.CertificateInvalidError
		verify      *tls.CertificateVerificationError
	)
	if errors.As(err, &unknownAuth) || errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &verify) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "unsupported protocol scheme") ||
		errors.Is(err, errTokenRedirect) ||
		strings.Contains(msg, "stopped after") && strings.Contains(msg, "redirects") ||
		strings.Contains(msg, "invalid header")
}

// checkRetry is the go-retryablehttp CheckRetry policy. It is called once
// after the round trip and, when a response came back, again after the
// response handler (cs.handle) has read and classified the body.
func (cs *call) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if !cs.handled {
		if err == nil {
			return false, nil // let cs.handle read the body and decide
		}
		cs.last = cs.classifyTransport(err)
	}
	switch cs.last.v {
	case vRetry:
		if cs.attempts >= cs.c.cfg.MaxAttempts {
			return true, nil // go-retryablehttp stops on its count
		}
		cs.chooseWait()
		if m := cs.c.cfg.MaxRetryTime; m > 0 && cs.c.now().Add(cs.wait).Sub(cs.start) > m {
			cs.capped = true
			return false, errStop
		}
		return true, nil
	case vOK, vIgnored:
		return false, nil
	}
	return false, errStop
}

// errStop tells go-retryablehttp to stop; the error the caller sees is
// built by cs.failure.
var errStop = errors.New("client: stop")

// chooseWait decides the wait before the next attempt: Retry-After when
// the answer gave one, else the jittered backoff.
func (cs *call) chooseWait() {
	c := cs.c
	o := cs.last
	cs.waitRA = o.hasRetryAfter
	if o.hasRetryAfter {
		cs.wait = o.retryAfter
	} else {
		cs.wait = Backoff(c.cfg.BaseDelay, c.cfg.MaxDelay, cs.attempts-1, c.rand())
	}
}

// backoff is the go-retryablehttp Backoff hook, called once checkRetry
// has chosen the wait: it logs the retry and returns 0, because the
// waiting is done by cs.prepareRetry with the context and the injectable
// Sleep.
func (cs *call) backoff(_, _ time.Duration, _ int, _ *http.Response) time.Duration {
	c := cs.c
	o := cs.last
	c.stats.retried(cs.req.Stream)
	args := []any{"stream", cs.req.Stream, "method", cs.method, "url", cs.shownURL(),
		"attempt", cs.attempts, "max_attempts", c.cfg.MaxAttempts, "wait", cs.wait.String()}
	if o.status != 0 {
		args = append(args, "status", o.status)
	}
	if o.err != nil {
		args = append(args, "error", c.red.scrub(o.err.Error()))
	}
	if o.hasRetryAfter {
		args = append(args, "retry_after", true)
	}
	c.log.Warn("retrying request", args...)
	return 0
}

// prepareRetry is the go-retryablehttp PrepareRetry hook, called before
// every retry: it sleeps the wait chosen by backoff.
func (cs *call) prepareRetry(req *http.Request) error {
	if err := cs.c.sleep(req.Context(), cs.wait); err != nil {
		cs.prepareErr = err
		return err
	}
	kind := backoffWait
	if cs.waitRA {
		kind = retryAfterWait
	}
	cs.c.stats.wait(req.Context(), kind, cs.wait)
	return nil
}

// Backoff is the full-jitter backoff U(0, min(max, base·2^attempt)) for
// retry number attempt (0 for the first retry), where rnd is a uniform
// draw in [0, 1).
func Backoff(base, max time.Duration, attempt int, rnd float64) time.Duration {
	if base <= 0 || max <= 0 {
		return 0
	}
	attempt = min(64, attempt)
	attempt = maxInt(0, attempt)
	ceil := float64(base) * math.Pow(2, float64(attempt))
	if ceil > float64(max) {
		ceil = float64(max)
	}
	rnd = math.Min(math.Max(rnd, 0), math.Nextafter(1, 0))
	return time.Duration(rnd * ceil)
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}
