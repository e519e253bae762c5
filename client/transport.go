package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tap-dev/tap/client/limit"
)

// transport is the http.RoundTripper under go-retryablehttp's retry loop,
// so every attempt (retries and redirect hops included) passes through it.
// In order, an attempt:
//
//   - fails with a DeferError if the daily quota is used up (nothing sent);
//   - waits for the circuit breaker (cooldown, probe);
//   - waits for the limiter (API window reset, in-flight slot, token);
//   - gets auth and default headers, only if it goes to BaseURL's origin;
//   - is sent under its own Timeout, which also covers reading the body.
//
// The in-flight slot, the timeout's context and the breaker ticket are
// held by the response body and let go when it is closed.
type transport struct {
	c    *Client
	base http.RoundTripper
	// long marks the transport of Streaming: its Timeout covers the
	// answer's headers only, and the in-flight slot is let go once they
	// are in, so a feed open for hours holds neither.
	long bool
}

// attempt is the bookkeeping of one round trip.
type attempt struct {
	c        *Client
	cs       *call // nil outside Client.Do
	parent   context.Context
	ctx      context.Context // parent + Timeout
	cancel   context.CancelFunc
	release  func()
	ticket   *ticket
	start    time.Time
	path     string // redacted URL path, for OnAttempt
	url      string // redacted URL, its query included, for OnTrace
	status   int
	bytes    atomic.Int64 // of the body read (a feed may close it from another goroutine), for OnTrace
	errClass string       // without an answer: timeout or transport, for OnTrace
	// sp is what the attempt took from the limiter, when limited. Its
	// cost reservation is trued up by the caller's handler (costDone),
	// or released when the answer never reaches one: a redirect hop,
	// which the http.Client follows and closes.
	sp       limit.Spend
	limited  bool
	costDone bool
	stream   string // the stream of a Streaming request (cs is nil)
	// cancelled: the caller's context ended before a response came. The
	// caller no longer wanted it (a look-ahead page, a stopped run): not
	// a failure of the API, so not reported to OnAttempt.
	cancelled bool
	once      sync.Once
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	c := t.c
	ctx := req.Context()
	cs := callFrom(ctx)
	fail := func(err error) (*http.Response, error) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	// A token request goes outside the API's rate limit and quota unless
	// it goes to the API's origin; it carries what x/oauth2 put in it.
	tokenCall := isTokenCall(ctx)
	limited := !tokenCall || sameOrigin(req.URL, c.base)
	// The access token comes before any slot is taken: fetching it may
	// need one.
	var token string
	if c.auth != nil && !tokenCall && sameOrigin(req.URL, c.base) {
		var err error
		if token, err = c.auth.token(ctx); err != nil {
			return fail(err)
		}
	}
	if limited && c.lim.QuotaReached() {
		return fail(c.quotaError(cs))
	}
	tk, err := c.brk.acquire(ctx)
	if err != nil {
		return fail(err)
	}
	sp := limit.Spend{Weight: 1}
	if cs != nil {
		sp = cs.spend()
	}
	release := func() {}
	if limited {
		if release, err = c.lim.Acquire(ctx, sp); err != nil {
			tk.done(neutral)
			var we *limit.WindowError
			var sw *limit.SharedWaitError
			switch {
			case errors.Is(err, limit.ErrQuotaReached):
				err = c.quotaError(cs)
			case errors.As(err, &we):
				err = c.windowError(cs, we)
			case errors.As(err, &sw):
				err = c.sharedWaitError(cs, sw)
			}
			return fail(err)
		}
	}

	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	var headers *time.Timer // the long transport's timeout, until the headers
	if t.long {
		cancel() // not used: the attempt's context has no deadline
		actx, cancel = context.WithCancel(ctx)
		headers = time.AfterFunc(c.cfg.Timeout, cancel)
	}
	// The attempt's request: req, which go-retryablehttp sends again on a
	// retry, is never changed; its header and URL are copied only when
	// credentials are added or stripped.
	out := req.WithContext(actx)
	if token != "" || (!tokenCall && c.authorizes(req.URL)) {
		out.Header = req.Header.Clone()
		u := *req.URL
		out.URL = &u
		if !tokenCall {
			c.authorize(out)
		}
		if token != "" {
			c.injectToken(out, token)
		}
	}
	a := &attempt{
		c: c, cs: cs, parent: ctx, ctx: actx, cancel: cancel, release: release, ticket: tk,
		start: c.now(), path: c.red.scrub(req.URL.EscapedPath()), sp: sp, limited: limited, stream: streamOf(ctx),
	}
	if c.cfg.OnTrace != nil {
		a.url = c.red.url(out.URL) // as sent, an api_key in the query masked
	}
	if cs != nil {
		cs.attempt = a
		cs.token = token
		u := *req.URL
		cs.finalURL = &u
	}
	c.stats.sent()

	resp, err := t.base.RoundTrip(out)
	if err != nil {
		if limited {
			c.lim.Settle(sp, nil, 0)
		}
		a.costDone = true // Settle without an answer took it out of flight
		switch {
		case ctx.Err() != nil:
			tk.done(neutral)
		case actx.Err() != nil:
			err = &timeoutError{d: c.cfg.Timeout}
			a.errClass = "timeout"
			tk.done(failing)
		case permanentTransportError(err):
			tk.done(neutral)
		default:
			tk.done(failing)
		}
		if ctx.Err() != nil {
			a.cancelled = true
			c.stats.cancelled()
		} else {
			c.stats.status(0)
		}
		if a.errClass == "" {
			a.errClass = "transport"
		}
		a.finish()
		return nil, err
	}
	if resp.Body == nil {
		resp.Body = http.NoBody
	}
	if headers != nil && !headers.Stop() {
		// The timeout fired as the headers came: the body's reads
		// would fail on its context.
		resp.Body.Close()
		if limited {
			c.lim.Settle(sp, nil, 0)
		}
		tk.done(failing)
		c.stats.status(0)
		a.errClass = "timeout"
		a.finish()
		return nil, &timeoutError{d: c.cfg.Timeout}
	}
	c.stats.status(resp.StatusCode)
	if limited {
		c.lim.Settle(sp, resp.Header, resp.StatusCode)
	}
	a.status = resp.StatusCode
	resp.Request = req // not out: it carries the credentials
	body := &attemptBody{rc: resp.Body, a: a}
	resp.Body = body
	if t.long {
		a.release()
		a.release = func() {}
		a.resolve(statusHealth(resp.StatusCode))
		if rw, ok := body.rc.(io.ReadWriteCloser); ok && resp.StatusCode == http.StatusSwitchingProtocols {
			// A websocket's upgraded connection is written too.
			resp.Body = &attemptConn{attemptBody: body, w: rw}
		}
	}
	return resp, nil
}

// resolve reports the attempt's health to the breaker (first report wins).
func (a *attempt) resolve(h health) { a.ticket.done(h) }

// finish ends the attempt: breaker report from the bare status unless the
// caller classified the body already, in-flight slot back, timeout context
// released, OnAttempt called.
func (a *attempt) finish() {
	a.once.Do(func() {
		if a.status != 0 {
			a.ticket.done(statusHealth(a.status))
		}
		a.release()
		if a.limited && !a.costDone {
			a.c.lim.ReleaseCost(a.sp)
		}
		a.cancel()
		if f := a.c.cfg.OnAttempt; f != nil && !a.cancelled {
			stream, method := a.stream, ""
			if a.cs != nil {
				stream, method = a.cs.req.Stream, a.cs.method
			}
			f(stream, method, a.path, a.status, a.c.now().Sub(a.start))
		}
		if f := a.c.cfg.OnTrace; f != nil && !a.cancelled {
			f(a.trace())
		}
	})
}

// attemptBody is a response body that ends its attempt when closed and
// reports the attempt's timeout as such while reading.
type attemptBody struct {
	rc io.ReadCloser
	a  *attempt
}

func (b *attemptBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.a.bytes.Add(int64(n))
	if err != nil && err != io.EOF && b.a.parent.Err() == nil && b.a.ctx.Err() != nil {
		err = &timeoutError{d: b.a.c.cfg.Timeout}
	}
	return n, err
}

func (b *attemptBody) Close() error {
	err := b.rc.Close()
	b.a.finish()
	return err
}

// attemptConn is the body of a 101 answer: the upgraded connection.
type attemptConn struct {
	*attemptBody
	w io.Writer
}

func (c *attemptConn) Write(p []byte) (int, error) { return c.w.Write(p) }

// authorizes reports whether authorize changes a request to u: a
// configured header or credential is added (same origin) or stripped.
func (c *Client) authorizes(u *url.URL) bool {
	if !sameOrigin(u, c.base) {
		return true
	}
	switch c.cfg.Auth.Type {
	case "bearer", "basic", "api_key":
		return true
	}
	return len(c.cfg.Headers) > 0
}

// authorize adds the auth and default headers to a request for BaseURL's
// origin (scheme, host and port), and makes sure a request anywhere else
// carries none of the configured credentials.
func (c *Client) authorize(r *http.Request) {
	a := c.cfg.Auth
	if sameOrigin(r.URL, c.base) {
		for k, v := range c.cfg.Headers {
			r.Header.Set(k, v)
		}
		switch a.Type {
		case "bearer":
			r.Header.Set("Authorization", "Bearer "+a.Token)
		case "basic":
			r.SetBasicAuth(a.Username, a.Password)
		case "api_key":
			if a.In == "query" {
				r.URL.RawQuery = setQueryParam(r.URL.RawQuery, a.Name, a.Value)
			} else {
				r.Header.Set(a.Name, a.Value)
			}
		}
		return
	}
	r.URL.User = nil
	r.Header.Del("Authorization")
	r.Header.Del("Proxy-Authorization")
	for k := range c.cfg.Headers { // only BaseURL's origin gets them
		r.Header.Del(k)
	}
	if a.Type == "api_key" && a.In == "header" {
		r.Header.Del(a.Name)
	}
	// A configured secret in the query (say, a next URL echoing our
	// api_key) is dropped: ours only, whatever the parameter's name.
	for _, v := range []string{a.Token, a.Password, a.Value} {
		if v != "" {
			r.URL.RawQuery = dropQueryValue(r.URL.RawQuery, v)
		}
	}
}

// sameOrigin compares scheme, host and port, with default ports filled in.
func sameOrigin(u, base *url.URL) bool {
	return strings.EqualFold(u.Scheme, base.Scheme) &&
		strings.EqualFold(u.Hostname(), base.Hostname()) &&
		effectivePort(u) == effectivePort(base)
}

func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}

// setQueryParam replaces every name= in a raw query by one name=value,
// leaving the rest byte for byte.
func setQueryParam(raw, name, value string) string {
	raw = dropQueryParam(raw, name)
	kv := url.QueryEscape(name) + "=" + url.QueryEscape(value)
	if raw == "" {
		return kv
	}
	return raw + "&" + kv
}

// dropQueryParam removes every name= from a raw query.
func dropQueryParam(raw, name string) string {
	return filterQuery(raw, func(k, _ string) bool { return k == name })
}

// dropQueryValue removes every parameter whose value is value.
func dropQueryValue(raw, value string) string {
	return filterQuery(raw, func(_, v string) bool { return v == value })
}

// filterQuery removes the parameters for which drop (given the unescaped
// name and value) is true, leaving the others byte for byte.
func filterQuery(raw string, drop func(k, v string) bool) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(raw, "&")
	kept := parts[:0]
	for _, p := range parts {
		k, v, _ := strings.Cut(p, "=")
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		if uv, err := url.QueryUnescape(v); err == nil {
			v = uv
		}
		if !drop(k, v) {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "&")
}
