// Package client is the resilient HTTP client every request of every tap
// stream goes through.
//
// The model. A Client is shared by all streams of a run. Each call to Do is
// one logical request, made of one or more attempts:
//
//   - go-retryablehttp runs the retry loop. After each attempt the response
//     body is read whole (inside the loop, so a body cut short is retried)
//     and classified: accepted, ignored, transient (retried with full-jitter
//     backoff, or after exactly Retry-After for 429/503), permanent
//     (StatusError at once) or deferred (DeferError: the run must stop and
//     be resumed later). See retry.go.
//   - Every attempt, retries included, goes through one http.RoundTripper
//     (transport.go) that takes a token from the one token bucket of the
//     Client, an in-flight slot, a circuit-breaker ticket and a unit of the
//     daily quota, and adds credentials only for BaseURL's origin.
//   - Rate-limit response headers slow the bucket down before the API has
//     to answer 429 (package limit).
//   - All waiting (tokens, Retry-After, backoff, breaker cooldown) goes
//     through Config.Sleep with the caller's context, so a cancelled context
//     returns promptly and tests need not sleep.
//
// Credentials never appear in errors or logs: URLs are shown without
// userinfo and with credential-like query parameters set to REDACTED, and
// the configured secret values are scrubbed from any text shown.
package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/tap-dev/tap/client/limit"
)

// maxBodyBytes bounds a response body held in memory.
const maxBodyBytes = 256 << 20

// Auth is how requests to BaseURL authenticate.
type Auth struct {
	Type               string  // "", "none", "bearer", "basic", "api_key", "oauth2", "jwt", "session"
	Token              string  // bearer
	Username, Password string  // basic
	Name, Value        string  // api_key
	In                 string  // api_key: "header" (default) or "query"
	OAuth              OAuth   // oauth2, jwt: Bearer access tokens from OAuth.TokenURL
	Session            Session // session: a token from a login
}

// Config configures a Client. Its settings come whole from the caller
// (the tap's registry of settings fills in every default, the one place
// defaults are written): a setting left zero that must be positive is a
// programmer error, reported by New. Zero values in brackets are filled
// in.
type Config struct {
	BaseURL *url.URL          // auth and default headers are sent only to this scheme+host+port
	Auth    Auth              //
	Headers map[string]string // default headers (e.g. User-Agent); names and values already checked
	// Limit is the limiter's config (package limit): the bucket, the
	// in-flight cap, the daily quota, the weight and cost budgets, the
	// longest Retry-After waited for and the Redis that may share them.
	// Its Logger, OnWait, Now and Sleep are the Client's. The Client
	// closes Limit.Shared.
	Limit limit.Config

	FreeRetries  bool          // a retry after a failure other than 429 takes no bucket tokens (its backoff paces it) [false: every attempt takes its tokens]
	MaxAttempts  int           // attempts per request including the first
	BaseDelay    time.Duration // first backoff step
	MaxDelay     time.Duration // cap of one backoff delay
	MaxRetryTime time.Duration // 0 = no cap; a request whose next retry would end later than this after its first attempt fails
	Timeout      time.Duration // per attempt, headers+body

	BreakerThreshold   int           // consecutive transient failures across the client that open the circuit
	BreakerCooldown    time.Duration // the open circuit sends nothing this long before a probe
	BreakerMaxOpenings int           // the circuit opening this many times in one run is final: ErrCircuitOpen

	// OnBreaker, if set, is called on every change of the circuit
	// breaker's state ("closed", "open", "half-open", "open for good")
	// with the openings so far. It is called with the breaker locked: it
	// must not call the Client.
	OnBreaker func(state string, openings int)

	// Redactor masks secret values in errors and logs [none: only
	// credential-like query parameters are masked].
	Redactor Redactor

	// Logger gets retries (Warn), circuit state changes (Warn) and
	// slowdowns from rate-limit headers (Info); never headers or
	// credentials. nil discards.
	Logger *slog.Logger

	// OnAttempt, if set, is called after every attempt, once its body has
	// been read, with the redacted URL path (no query), the status (0 on
	// transport errors) and the attempt's duration. An attempt the
	// caller's context cancelled before a response is not a request that
	// failed: it is counted in Stats.Cancelled instead. It is called from
	// the goroutine calling Do, concurrently for concurrent calls.
	OnAttempt func(stream, method, path string, status int, d time.Duration)

	// OnTrace, if set, is called after every attempt OnAttempt is called
	// for, with what a request trace writes of it (Trace). It is called
	// as OnAttempt is.
	OnTrace func(Trace)

	// For tests.
	Transport http.RoundTripper                                // base transport [a clone of http.DefaultTransport: HTTPS_PROXY/NO_PROXY, TLS verified]
	Rand      func() float64                                   // uniform [0,1) for jitter [math/rand/v2]; called under a lock
	Now       func() time.Time                                 // clock [time.Now]
	Sleep     func(ctx context.Context, d time.Duration) error // every wait [timer + ctx]
}

// Client sends requests with rate limiting, retries, a circuit breaker and
// timeouts. It is safe for concurrent use; one Client serves a whole run.
type Client struct {
	cfg   Config
	base  *url.URL
	hc    *http.Client
	lim   *limit.Limiter
	brk   *breaker
	red   *redactor
	auth  *tokens // nil unless Auth.Type is oauth2 or jwt
	stats *stats
	log   *slog.Logger
	now   func() time.Time
	sleep func(context.Context, time.Duration) error

	randMu sync.Mutex
}

// New fills in the defaults of cfg and returns a Client. The caller checks
// user input; an invalid cfg is a programmer error, reported as such.
func New(cfg Config) (*Client, error) {
	if err := normalize(&cfg); err != nil {
		return nil, err
	}
	base := *cfg.BaseURL
	cfg.BaseURL = &base
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Client{
		cfg:   cfg,
		base:  &base,
		red:   newRedactor(cfg.Auth, cfg.Redactor),
		stats: newStats(),
		log:   log,
		now:   cfg.Now,
		sleep: cfg.Sleep,
	}
	lc := cfg.Limit
	lc.Logger, lc.OnWait, lc.Now, lc.Sleep = log, c.stats.limitWait, cfg.Now, cfg.Sleep
	c.lim = limit.New(lc)
	c.brk = newBreaker(&cfg, c.stats, log)
	rt := cfg.Transport
	if rt == nil {
		rt = defaultTransport(cfg.Limit.MaxInFlight)
	}
	// The wrapping transport has no CloseIdleConnections, so the
	// CloseIdleConnections calls go-retryablehttp makes after every failed
	// request do not tear down the connections other streams are using.
	c.hc = &http.Client{Transport: &transport{c: c, base: rt}, CheckRedirect: checkRedirect}
	if t := cfg.Auth.Type; t == "oauth2" || t == "jwt" {
		var err error
		if c.auth, err = newTokens(c, cfg.Auth.OAuth); err != nil {
			return nil, err
		}
	}
	if cfg.Auth.Type == "session" {
		var err error
		if c.auth, err = newTokens(c, OAuth{TokenURL: cfg.Auth.Session.URL}); err != nil {
			return nil, fmt.Errorf("client: Config.Auth.Session.URL: %w", err)
		}
	}
	return c, nil
}

func defaultTransport(maxInFlight int) http.RoundTripper {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		t = &http.Transport{Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true}
	} else {
		t = t.Clone()
	}
	t.Proxy = http.ProxyFromEnvironment
	t.MaxIdleConnsPerHost = max(maxInFlight, 2)
	// A body is read from the socket 64 KiB at a time, not 4: an SSE
	// feed took 25,000 read syscalls for 1,000,000 messages, now 1,600.
	t.ReadBufferSize = 64 << 10
	return t
}

// normalize checks cfg and fills in the zero values of what is not a
// setting (the auth type, the clock, the jitter). The tap has checked
// every setting, defaults filled in, before, so an invalid one here is a
// programmer error, reported with the name of the Config field.
func normalize(cfg *Config) error {
	if b := cfg.BaseURL; b == nil || (b.Scheme != "http" && b.Scheme != "https") || b.Host == "" || b.User != nil {
		return fmt.Errorf("client: Config.BaseURL must be an http(s) URL with a host and no userinfo, got %v", b)
	}
	a := &cfg.Auth
	switch a.Type {
	case "":
		a.Type = "none"
	case "none", "bearer", "basic", "oauth2", "jwt":
	case "session":
		if s := &a.Session; s.Name != "" && s.In == "" {
			s.In = "header"
		}
	case "api_key":
		if a.In == "" {
			a.In = "header"
		}
		if a.In != "header" && a.In != "query" {
			return fmt.Errorf("client: Config.Auth.In must be header or query, got %q", a.In)
		}
	default:
		return fmt.Errorf("client: Config.Auth.Type must be none, bearer, basic, api_key, oauth2, jwt or session, got %q", a.Type)
	}
	l := &cfg.Limit
	if r := l.RequestsPerSecond; r < 0 || math.IsNaN(r) || math.IsInf(r, 0) {
		return fmt.Errorf("client: Config.Limit.RequestsPerSecond must be >= 0, got %v", r)
	}
	for _, f := range []struct {
		v    int
		name string
	}{
		{l.Burst, "Limit.Burst"},
		{l.MaxInFlight, "Limit.MaxInFlight"},
		{cfg.MaxAttempts, "MaxAttempts"},
		{cfg.BreakerThreshold, "BreakerThreshold"},
		{cfg.BreakerMaxOpenings, "BreakerMaxOpenings"},
	} {
		if f.v < 1 {
			return fmt.Errorf("client: Config.%s must be >= 1, got %d", f.name, f.v)
		}
	}
	for _, f := range []struct {
		v    int
		name string
	}{{l.DailyQuota, "Limit.DailyQuota"}, {l.QuotaUsed, "Limit.QuotaUsed"}, {l.WeightPerMinute, "Limit.WeightPerMinute"}} {
		if f.v < 0 {
			return fmt.Errorf("client: Config.%s must be >= 0, got %d", f.name, f.v)
		}
	}
	if l.QuotaDay != "" {
		if _, err := time.Parse(time.DateOnly, l.QuotaDay); err != nil {
			return fmt.Errorf("client: Config.Limit.QuotaDay must be a date such as 2026-11-30, got %q", l.QuotaDay)
		}
	}
	if b := l.Cost; b.Points < 0 || b.RestorePerS < 0 || math.IsNaN(b.Points) || math.IsNaN(b.RestorePerS) {
		return fmt.Errorf("client: Config.Limit.Cost must have Points and RestorePerS >= 0, got %+v", b)
	}
	if cfg.MaxRetryTime < 0 {
		return fmt.Errorf("client: Config.MaxRetryTime must be >= 0, got %s", cfg.MaxRetryTime)
	}
	for _, f := range []struct {
		v    time.Duration
		name string
	}{
		{cfg.BaseDelay, "BaseDelay"},
		{cfg.MaxDelay, "MaxDelay"},
		{l.MaxRetryAfter, "Limit.MaxRetryAfter"},
		{cfg.Timeout, "Timeout"},
		{cfg.BreakerCooldown, "BreakerCooldown"},
	} {
		if f.v <= 0 {
			return fmt.Errorf("client: Config.%s must be > 0, got %s", f.name, f.v)
		}
	}
	if cfg.MaxDelay < cfg.BaseDelay {
		return fmt.Errorf("client: Config.MaxDelay (%s) must be >= Config.BaseDelay (%s)", cfg.MaxDelay, cfg.BaseDelay)
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = Sleep
	}
	return nil
}

// Sleep waits d or until ctx is done, whichever comes first; it is the
// client's wait unless Config.Sleep replaces it.
func Sleep(ctx context.Context, d time.Duration) error { return limit.Sleep(ctx, d) }

func (c *Client) rand() float64 {
	c.randMu.Lock()
	defer c.randMu.Unlock()
	return c.cfg.Rand()
}

// Request is one logical request; Do may send it several times.
type Request struct {
	Stream string     // for errors, logs and metrics
	Method string     // GET or POST [GET]
	URL    string     // path relative to BaseURL ("/v1/orders", appended to BaseURL's path) or an absolute URL
	Query  url.Values // merged into the URL's query (a key given here replaces the URL's)
	Body   []byte     // JSON for POST (Content-Type: application/json), resent on each attempt

	// Check, when set, inspects a 2xx body before it is accepted. Returning
	// an error wrapped by Transient retries the request like a 503 (e.g. a
	// 200 whose error_path is set, or a body that is not JSON because it
	// was cut); any other error fails the request at once. It is called
	// once per attempt that got a 2xx. A permanent error is given the
	// response's Content-Type, which usually says what the body was.
	Check func(body []byte) error

	// Consume, when set, takes a 2xx body as it arrives instead of it
	// being read whole (no size bound, nothing held: a download of any
	// size). Its error is judged as Check's; an error reading the body
	// (cut short, timeout) is transient. Records it handed on before a
	// retry are handed on again: the caller decides what that means.
	Consume func(body io.Reader, header http.Header) error

	// Buffer, when set, gives the buffer a 2xx body is read into, with
	// room for size bytes (Content-Length and a little): a caller done
	// with each body before its next request reuses one buffer rather
	// than the client allocating one per page. Every attempt of the
	// request reads into it.
	Buffer func(size int) []byte

	// Header is sent with every attempt, over the defaults (it may set
	// Accept). Credentials are the client's to add, never the caller's.
	Header http.Header

	// IgnoreStatuses: such a status is not an error: Do returns a Response
	// with Ignored=true, without retrying.
	IgnoreStatuses []int

	// OnStatus overrides the classification of a status: StatusRetry
	// (transient, Retry-After honoured), StatusIgnore (as IgnoreStatuses)
	// or StatusFail (permanent). It wins over IgnoreStatuses.
	OnStatus map[int]StatusRule
	// Classify, when set, reads a buffered answer's status, headers and
	// body before OnStatus: its rule, when ok, decides what the answer is
	// (an API that says in its body that a 200 is to be retried, or that
	// a 400 holds nothing to read).
	Classify func(status int, header http.Header, body []byte) (StatusRule, bool)

	// Weight is the tokens the request spends from the bucket and the
	// weight budget on every attempt [1].
	Weight int

	// Cost > 0 marks a request billed by a GraphQL cost budget
	// (Config.Cost): it is the estimate reserved before the first attempt
	// of its stream has told the actual cost (the page size asked for).
	Cost float64
}

// StatusRule is what a status listed in Request.OnStatus means.
type StatusRule string

// Status rules.
const (
	StatusRetry  StatusRule = "retry"
	StatusIgnore StatusRule = "ignore"
	StatusFail   StatusRule = "fail"
)

// Close lets go of the shared limiter's connections, if any.
func (c *Client) Close() error {
	if c.cfg.Limit.Shared != nil {
		return c.cfg.Limit.Shared.Close()
	}
	return nil
}

// QuotaUsage returns the UTC day and the attempts counted against the
// daily quota on it, earlier runs' Config.QuotaUsed included: what STATE
// carries so that the next run the same day goes on counting.
func (c *Client) QuotaUsage() (day string, used int) { return c.lim.QuotaUsage() }

// Response is the accepted (or ignored) answer to a Request.
type Response struct {
	Status   int
	Header   http.Header
	Body     []byte   // the whole body
	URL      *url.URL // the final absolute URL requested (after redirects, without credentials)
	Ignored  bool
	Attempts int
}

// call is the state of one Do: the retry hooks of go-retryablehttp are
// closures over it. It is used by the goroutine calling Do only.
type call struct {
	c      *Client
	ctx    context.Context
	req    Request
	method string
	u      *url.URL // the request's URL, as resolved
	shown  bool     // path and logURL are worked out (shownAs)
	path   string   // redacted path + query, for errors
	logURL string   // redacted absolute URL, for logs

	attempts   int      // attempts made (loop iterations)
	handled    bool     // cs.handle ran for the current attempt
	last       outcome  // of the current (last) attempt
	attempt    *attempt // set by the transport for the current attempt
	finalURL   *url.URL // set by the transport
	wait       time.Duration
	waitRA     bool
	prepareErr error
	start      time.Time // of the first attempt
	capped     bool      // retries stopped by MaxRetryTime
	prevStatus int       // of the attempt before the current one (0: none, or no response)
	token      string    // the access token the current attempt carried
	reauthed   bool      // a 401 dropped the access token once already
	// waited is what the call waited, by reason, since its last attempt
	// ended: the wait before the next one, for Config.OnTrace.
	waited [waitKinds]time.Duration
}

// stream is the call's stream; "" outside a call (nil).
func (cs *call) stream() string {
	if cs == nil {
		return ""
	}
	return cs.req.Stream
}

// spend is what each attempt of the call costs the limiter.
func (cs *call) spend() limit.Spend {
	return limit.Spend{Stream: cs.req.Stream, Weight: max(cs.req.Weight, 1), Cost: cs.req.Cost,
		Retry: cs.c.cfg.FreeRetries && cs.attempts > 1 && cs.prevStatus != http.StatusTooManyRequests}
}

type callKey struct{}

func callFrom(ctx context.Context) *call {
	cs, _ := ctx.Value(callKey{}).(*call)
	return cs
}

// Do sends req until it is accepted, ignored, fails permanently, runs out
// of attempts, must be deferred, or ctx ends. Errors are a *StatusError, a
// *DeferError, an error wrapping ErrCircuitOpen, or one wrapping ctx.Err().
func (c *Client) Do(ctx context.Context, req Request) (*Response, error) {
	method := strings.ToUpper(strings.TrimSpace(req.Method))
	if method == "" {
		method = http.MethodGet
	}
	u, err := c.resolve(req.URL, req.Query)
	if err != nil {
		return nil, fmt.Errorf("stream %q: %s: %w", req.Stream, method, err)
	}
	cs := &call{c: c, ctx: ctx, req: req, method: method, u: u, start: c.now()}
	if err := ctx.Err(); err != nil {
		return nil, cs.wrap(err)
	}
	var body any // nil interface: no body
	if len(req.Body) > 0 {
		body = req.Body
	}
	rreq, err := retryablehttp.NewRequestWithContext(context.WithValue(ctx, callKey{}, cs), method, u.String(), body)
	if err != nil {
		return nil, cs.wrap(fmt.Errorf("building the request: %w", unwrapURLError(err)))
	}
	rreq.Header.Set("Accept", "application/json")
	if body != nil {
		rreq.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range req.Header {
		rreq.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	rreq.SetResponseHandler(cs.handle)

	// A retryablehttp.Client per call: its Backoff hook gets neither the
	// context nor the error, so per-request state must come by closure.
	rc := &retryablehttp.Client{
		HTTPClient:     c.hc,
		Logger:         nil, // its own logs print URLs with their query: never
		RetryMax:       c.cfg.MaxAttempts - 1,
		RequestLogHook: cs.startAttempt,
		CheckRetry:     cs.checkRetry,
		Backoff:        cs.backoff,
		PrepareRetry:   cs.prepareRetry,
		ErrorHandler:   cs.errorHandler,
	}
	resp, err := rc.Do(rreq)
	if err != nil {
		if !isOurs(err) {
			// go-retryablehttp returns ctx.Err() bare when the context ends
			// between attempts; never pass its own errors on (their text
			// holds the URL with its query).
			return nil, cs.failure()
		}
		return nil, err
	}
	resp.Body.Close()
	out := &Response{
		Status:   cs.last.status,
		Header:   cs.last.header,
		Body:     cs.last.body,
		URL:      cs.finalURL,
		Ignored:  cs.last.v == vIgnored,
		Attempts: cs.attempts,
	}
	if out.Ignored && !isTokenCall(ctx) { // an OAuth error answer is no ignored status
		c.stats.ignored()
	}
	return out, nil
}

func isOurs(err error) bool {
	var se *StatusError
	var de *DeferError
	return errors.As(err, &se) || errors.As(err, &de) || errors.Is(err, ErrCircuitOpen) || errors.Is(err, errCallFailed)
}

// errCallFailed marks errors built by call.wrap.
var errCallFailed = errors.New("client: call failed")

// resolve builds the absolute URL of a request: an absolute URL as is, a
// relative one appended to BaseURL's path; then the query merged in.
func (c *Client) resolve(raw string, q url.Values) (*url.URL, error) {
	ref, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid request URL: %w", unwrapURLError(err))
	}
	var u url.URL
	if ref.IsAbs() {
		u = *ref
		if u.Scheme != "http" && u.Scheme != "https" {
			return nil, fmt.Errorf("invalid request URL: scheme %q is not http or https", u.Scheme)
		}
		if u.Host == "" {
			return nil, errors.New("invalid request URL: no host")
		}
	} else {
		if ref.Host != "" { // "//host/path"
			return nil, errors.New("invalid request URL: a scheme-relative URL is not supported")
		}
		u = *c.base
		u.User = nil
		bp := strings.TrimRight(c.base.EscapedPath(), "/")
		rp := ref.EscapedPath()
		if rp != "" && !strings.HasPrefix(rp, "/") {
			rp = "/" + rp
		}
		ep := bp + rp
		if ep == "" {
			ep = "/"
		}
		p, err := url.PathUnescape(ep)
		if err != nil {
			return nil, fmt.Errorf("invalid request URL: %w", err)
		}
		u.Path, u.RawPath = p, ep
		if u.EscapedPath() != ep { // ep was not a valid encoding; let url decide
			u.RawPath = ""
		}
		u.RawQuery = ref.RawQuery
		if u.RawQuery == "" && ref.Path == "" && !ref.ForceQuery {
			u.RawQuery = c.base.RawQuery
		}
	}
	u.Fragment, u.RawFragment = "", ""
	switch {
	case len(q) == 0:
	case u.RawQuery == "": // the usual page request: its parameters are q
		u.RawQuery = q.Encode()
	default:
		merged := u.Query()
		for k, vs := range q {
			merged[k] = vs // Encode only reads them
		}
		u.RawQuery = merged.Encode()
	}
	return &u, nil
}

// startAttempt is the go-retryablehttp RequestLogHook, called before each
// attempt.
func (cs *call) startAttempt(_ retryablehttp.Logger, _ *http.Request, i int) {
	cs.attempts = i + 1
	cs.handled = false
	cs.prevStatus = cs.last.status
	cs.last = outcome{}
	cs.attempt = nil
}

// handle is the go-retryablehttp response handler: it reads the whole body
// (within the attempt's timeout and in-flight slot), classifies the
// attempt, reports it to the circuit breaker and ends it.
func (cs *call) handle(resp *http.Response) error {
	cs.handled = true
	defer func() { // even if Check panics: the attempt holds a slot
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(nil))
	}()
	ok := resp.StatusCode >= 200 && resp.StatusCode <= 299 && cs.rule(resp.StatusCode) == ""
	if a := cs.attempt; a != nil {
		a.costDone = true // trued up here, not released at Close
	}
	switch {
	case ok && noContent(resp):
		// No body by the answer's own word: not one cut short, and nothing
		// for Check or Consume to judge; the caller gets an empty page.
		cs.last = outcome{v: vOK, status: resp.StatusCode, header: resp.Header}
		cs.c.lim.TrueUpCost(cs.spend(), nil)
	case ok && cs.req.Consume != nil:
		cs.last = cs.consume(resp)
		cs.c.lim.TrueUpCost(cs.spend(), nil)
	default:
		body, rerr := cs.readBody(resp)
		cs.last = cs.classifyResponse(resp, body, rerr)
		cs.c.lim.TrueUpCost(cs.spend(), body)
	}
	if a := cs.attempt; a != nil {
		a.resolve(cs.last.health()) // before Close, which would judge by status
	}
	if v := cs.last.v; v == vOK || v == vIgnored {
		return nil
	}
	return errStop
}

// noContent reports whether a 2xx says it has no body: 204 No Content,
// 205 Reset Content, or a Content-Length of 0. A body that merely came
// empty, with no length given, may be one a closed connection cut: Check
// judges that.
func noContent(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusNoContent, http.StatusResetContent:
		return true
	}
	return resp.ContentLength == 0 // -1 when no length was given
}

// errorHandler is the go-retryablehttp ErrorHandler, called when the loop
// stops without success.
func (cs *call) errorHandler(resp *http.Response, _ error, _ int) (*http.Response, error) {
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	return nil, cs.failure()
}

// failure builds the error of a call that did not succeed.
func (cs *call) failure() error {
	if err := cs.ctx.Err(); err != nil {
		return cs.wrap(err)
	}
	if cs.prepareErr != nil {
		return cs.wrap(fmt.Errorf("waiting before retry: %w", cs.prepareErr))
	}
	o := cs.last
	switch o.v {
	case vDefer:
		var de *DeferError
		if errors.As(o.err, &de) {
			d := *de
			d.Stream = cs.req.Stream
			return &d
		}
	case vFatal, vCanceled:
		return cs.wrap(o.err)
	case vRetry, vPermanent:
		e := &StatusError{
			Stream: cs.req.Stream, Method: cs.method, Path: cs.shownPath(),
			Status: o.status, Attempts: cs.attempts, Err: o.err, retried: o.v == vRetry,
			URL: cs.shownURL(), Body: cs.c.red.scrub(bodyPrefix(o.body)),
		}
		if cs.capped {
			e.RetryTime = cs.c.cfg.MaxRetryTime
		}
		switch {
		case o.err != nil:
			e.Message = clip(cs.c.red.scrub(o.err.Error()))
		case o.status != 0:
			e.Message = cs.c.red.scrub(apiMessage(o.body))
		}
		return e
	}
	return cs.wrap(errors.New("request failed"))
}

// wrap names the stream, method and path of the call in err.
func (cs *call) wrap(err error) error {
	return &callError{stream: cs.req.Stream, method: cs.method, path: cs.shownPath(), err: err}
}

// shownPath is the call's path and query as errors show them, secrets
// masked; shownURL, its URL as logs show it. Worked out when first shown:
// masking a request's parameters took a tenth of its allocations, and
// nearly every request is never shown.
func (cs *call) shownPath() string { cs.shownAs(); return cs.path }

func (cs *call) shownURL() string { cs.shownAs(); return cs.logURL }

func (cs *call) shownAs() {
	if !cs.shown {
		cs.shown = true
		cs.path, cs.logURL = cs.c.red.pathQuery(cs.u), cs.c.red.url(cs.u)
	}
}

type callError struct {
	stream, method, path string
	err                  error
}

func (e *callError) Error() string {
	return fmt.Sprintf("stream %q: %s %s: %v", e.stream, e.method, e.path, e.err)
}
func (e *callError) Unwrap() []error { return []error{e.err, errCallFailed} }

// quotaError is the DeferError of a used-up daily quota.
func (c *Client) quotaError(cs *call) error {
	return &DeferError{
		Stream:  cs.stream(),
		Reason:  fmt.Sprintf("daily quota of %d requests for today (UTC) reached (rate_limit.daily_quota); it renews at midnight UTC", c.cfg.Limit.DailyQuota),
		RetryAt: limit.NextUTCMidnight(c.now()),
	}
}

// sharedWaitError is the DeferError of a wait on the shared bucket in
// Redis beyond MaxRetryAfter.
func (c *Client) sharedWaitError(cs *call, sw *limit.SharedWaitError) error {
	return &DeferError{
		Stream:  cs.stream(),
		Reason:  fmt.Sprintf("%v, more than retry.max_retry_after_s (%s): a key shared with a slower config, or a clock gone wrong", sw, c.cfg.Limit.MaxRetryAfter),
		RetryAt: sw.Until,
	}
}

// windowError is the DeferError of an API rate-limit window used up
// until a reset beyond MaxRetryAfter, which is as long a Retry-After.
func (c *Client) windowError(cs *call, we *limit.WindowError) error {
	return &DeferError{
		Stream:  cs.stream(),
		Reason:  fmt.Sprintf("%v (X-RateLimit-Remaining 0), more than retry.max_retry_after_s (%s)", we, c.cfg.Limit.MaxRetryAfter),
		RetryAt: we.ResetAt,
	}
}
