package demoapi

import (
	"bufio"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tap-dev/tap/demoapi/dataset"
)

// Server is the demo API. It is an http.Handler (so httptest.NewServer(s)
// works) and can run its own listener with Start.
type Server struct {
	cfg   settings
	g     *dataset.Gen
	clock func() time.Time // wall clock; tests may replace it before serving

	// bufs holds the per-request output buffers, so that a page of a
	// thousand records is encoded into memory that is already there.
	bufs sync.Pool

	requests      atomic.Int64 // every request, for unauthorized_after/teapot_after
	eventsExtra   atomic.Int64 // events appended by growth
	invoicesExtra atomic.Int64 // invoices appended by growth

	mu       sync.Mutex // guards everything below
	rng      *rand.Rand
	winStart int64 // Unix second of the current rate-limit window
	winUsed  int   // requests admitted in it
	n429     int64 // 429s answered so far, to alternate the Retry-After forms
	byStatus map[int]int
	byPath   map[string]int
	served   int

	reports map[string]*report // report jobs by id, guarded by mu

	lim limits // throttling knobs, limits.go

	oauth *oauthState // nil unless cfg.OAuth is set

	feeds feedFaults // feed.go

	srvMu sync.Mutex
	srv   *http.Server
}

// Stats counts the requests served.
type Stats struct {
	Requests int
	// ByStatus counts answers by HTTP status; 0 counts requests that got
	// no answer (connection reset, or the client gave up first).
	ByStatus map[int]int
	// ByPath counts requests by route name: "customers", "orders",
	// "order_items", "events", "invoices", "tickets", "bars", "graphql",
	// and the report endpoints: "export", "search", "reports_create",
	// "reports_poll", "reports_file".
	// Requests to unknown paths are only in Requests and ByStatus.
	ByPath map[string]int
}

// LateRow is a row that commits after its updated_at: it is invisible while
// UpdatedAt <= Now < CommittedAt. ID is the primary key: an int64 for
// customers and orders, the node id string for issues.
type LateRow struct {
	ID                     any
	UpdatedAt, CommittedAt time.Time
}

// New checks cfg and builds a server. Errors name the config field
// ("demo.fail_rate: must be between 0 and 1, got 2").
func New(cfg Config) (*Server, error) {
	c, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg: c,
		g: dataset.New(dataset.Params{Seed: c.Seed, End: c.dataEnd, Span: c.span, LateRate: c.LateRate, Drift: c.Drift, BarsDays: c.BarsDays,
			Customers: c.Customers, Orders: c.Orders, Events: c.Events, Invoices: c.Invoices, Tickets: c.Tickets, Issues: c.Issues}),
		clock:    time.Now,
		rng:      rand.New(rand.NewPCG(uint64(c.Seed), 0x5eed_fa17)),
		byStatus: map[int]int{},
		byPath:   map[string]int{},
	}
	if c.OAuth != nil {
		pub, _ := c.OAuth.resolve() // checked by cfg.resolve
		s.oauth = &oauthState{used: map[string]bool{}, pub: pub}
	}
	s.bufs.New = func() any {
		b := make([]byte, 0, 64<<10)
		return &b
	}
	return s, nil
}

// Start listens on addr ("127.0.0.1:0" picks a free port; "" means that),
// serves in the background and returns the base URL, e.g.
// "http://127.0.0.1:41234". A wildcard address is reported as 127.0.0.1.
func (s *Server) Start(addr string) (string, error) {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	if s.srv != nil {
		return "", errors.New("demoapi: server already started")
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 30 * time.Second,
		// Resets and truncations are deliberate; keep the server's own
		// complaints about them out of the tap's stderr.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	go s.srv.Serve(ln) //nolint:errcheck // returns ErrServerClosed on Close
	tcp := ln.Addr().(*net.TCPAddr)
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(tcp.Port)), nil
}

// Close stops the listener and closes every connection, which also ends
// the sleep of slow requests. It is a no-op when Start was not called.
func (s *Server) Close() error {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	if s.srv == nil {
		return nil
	}
	err := s.srv.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// Stats returns a copy of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Requests: s.served, ByStatus: make(map[int]int, len(s.byStatus)), ByPath: make(map[string]int, len(s.byPath))}
	for k, v := range s.byStatus {
		st.ByStatus[k] = v
	}
	for k, v := range s.byPath {
		st.ByPath[k] = v
	}
	return st
}

func (s *Server) record(route string, status int) {
	s.mu.Lock()
	s.served++
	s.byStatus[status]++
	if route != "" {
		s.byPath[route]++
	}
	s.mu.Unlock()
}

// now is the visibility clock in Unix seconds: Config.Now, or the wall clock.
func (s *Server) now() int64 {
	if s.cfg.hasNow {
		return s.cfg.now
	}
	return s.clock().Unix()
}

// apiError is a 4xx answer produced by a handler.
type apiError struct {
	status  int
	msg     string
	graphql bool // body is {"errors":[...]} rather than {"error":{...}}
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &apiError{status: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

// handler appends the body of a 200 answer to b, or returns an *apiError.
type handler func(s *Server, w http.ResponseWriter, r *http.Request, b []byte) ([]byte, error)

type route struct {
	name   string
	method string
	fn     handler
}

// route maps a request to its endpoint; an unknown path has an empty name.
func (s *Server) route(r *http.Request) route {
	switch p := r.URL.Path; p {
	case "/v1/customers":
		return route{"customers", http.MethodGet, (*Server).customers}
	case "/v1/orders":
		return route{"orders", http.MethodGet, (*Server).orders}
	case "/v1/events":
		return route{"events", http.MethodGet, (*Server).events}
	case "/v1/invoices":
		return route{"invoices", http.MethodGet, (*Server).invoices}
	case "/v1/tickets":
		return route{"tickets", http.MethodGet, (*Server).tickets}
	case "/v1/bars":
		return route{"bars", http.MethodGet, (*Server).bars}
	case "/v1/accounts":
		return route{"accounts", http.MethodGet, (*Server).accountsList}
	case "/v1/accounts/deletions":
		return route{"account_deletions", http.MethodGet, (*Server).accountDeletions}
	case "/graphql":
		return route{"graphql", http.MethodPost, (*Server).graphqlBilled}
	case "/v1/feed/ws":
		return route{"feed_ws", http.MethodGet, (*Server).feedWS}
	case "/v1/feed/sse":
		return route{"feed_sse", http.MethodGet, (*Server).feedSSE}
	case "/v1/feed/ndjson":
		return route{"feed_ndjson", http.MethodGet, (*Server).feedNDJSON}
	case "/v1/trades":
		return route{"trades", http.MethodGet, (*Server).trades}
	default:
		if strings.HasPrefix(p, "/v1/orders/") && strings.HasSuffix(p, "/items") {
			return route{"order_items", http.MethodGet, (*Server).orderItems}
		}
		if strings.HasPrefix(p, "/v1/accounts/") {
			return route{"account", http.MethodGet, (*Server).accountByID}
		}
		if rt, ok := s.reportRoute(p); ok {
			return rt
		}
	}
	return route{fn: func(_ *Server, _ http.ResponseWriter, r *http.Request, _ []byte) ([]byte, error) {
		return nil, &apiError{status: http.StatusNotFound, msg: "not found: " + r.URL.Path}
	}}
}

// ServeHTTP answers one request, applying the faults in a fixed order:
// auth/token → unauthorized_after → teapot_after → rate limit → reset →
// slow → fail_rate → error body → normal answer (maybe truncated).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.oauth != nil && r.URL.Path == tokenPath {
		s.token(w, r)
		return
	}
	rt := s.route(r)
	n := s.requests.Add(1)
	s.logArrival(s.clock())
	ctx := r.Context()
	c := &s.cfg
	if c.LatencyMS > 0 && !sleep(ctx, time.Duration(c.LatencyMS)*time.Millisecond) {
		s.record(rt.name, 0)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")

	status, msg := 0, ""
	switch {
	case (c.Token != "" || s.oauth != nil) && !s.authorized(r):
		status, msg = http.StatusUnauthorized, "invalid credentials"
	case c.UnauthorizedAfter > 0 && n > int64(c.UnauthorizedAfter):
		status, msg = http.StatusUnauthorized, "token expired"
	case c.TeapotAfter > 0 && n > int64(c.TeapotAfter):
		status, msg = http.StatusTeapot, "banned"
	}
	if s.cfg.rpsLimit > 0 {
		// Requests refused above do not use the quota, but still see it.
		if !s.quota(h, status == 0) && status == 0 {
			s.writeError(w, rt.name, http.StatusTooManyRequests, "rate limit exceeded", false)
			return
		}
	}
	if status == 0 && s.throttled(w, rt.name, n) {
		return
	}
	if status != 0 {
		s.writeError(w, rt.name, status, msg, false)
		return
	}

	f := s.roll()
	if f.reset {
		s.record(rt.name, 0)
		abort(w)
		return
	}
	if f.slow && !sleep(ctx, time.Duration(c.SlowMS)*time.Millisecond) {
		s.record(rt.name, 0)
		return
	}
	if f.fail {
		s.writeError(w, rt.name, http.StatusServiceUnavailable, "service unavailable", false)
		return
	}
	if f.errBody {
		s.writeError(w, rt.name, http.StatusOK, "temporary backend error", false)
		return
	}
	if rt.method != "" && r.Method != rt.method && !(rt.method == http.MethodGet && r.Method == http.MethodHead) {
		h.Set("Allow", rt.method)
		s.writeError(w, rt.name, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed on "+r.URL.Path, false)
		return
	}

	bp := s.bufs.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= 8<<20 { // do not keep one huge page alive forever
			s.bufs.Put(bp)
		}
	}()
	body, err := rt.fn(s, w, r, (*bp)[:0])
	if cap(body) > cap(*bp) {
		*bp = body[:0]
	}
	if err == errWritten {
		return
	}
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			ae = &apiError{status: http.StatusInternalServerError, msg: err.Error()}
		}
		s.writeError(w, rt.name, ae.status, ae.msg, ae.graphql)
		return
	}
	if f.truncate {
		s.record(rt.name, http.StatusOK)
		truncate(w, body)
		return
	}
	s.write(w, rt.name, http.StatusOK, body)
}

func (s *Server) write(w http.ResponseWriter, route string, status int, body []byte) {
	// Counted before the answer leaves, so a client that has read it sees
	// it in Stats.
	s.record(route, status)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body) //nolint:errcheck // the client may be gone; nothing to do
}

func (s *Server) writeError(w http.ResponseWriter, route string, status int, msg string, graphql bool) {
	var b []byte
	if graphql {
		b = appendGraphQLError(nil, msg)
	} else {
		b = appendError(nil, msg)
	}
	s.write(w, route, status, b)
}

// authorized checks "Authorization: Bearer <token>" or ?api_key=<token>,
// or an access token of the OAuth endpoint.
func (s *Server) authorized(r *http.Request) bool {
	if s.oauth != nil && s.accessTokenValid(r) {
		return true
	}
	if s.cfg.Token == "" {
		return false
	}
	want := []byte(s.cfg.Token)
	if a := r.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(a[7:])), want) == 1 {
			return true
		}
	}
	if k := r.URL.Query().Get("api_key"); k != "" {
		return subtle.ConstantTimeCompare([]byte(k), want) == 1
	}
	return false
}

// quota implements the fixed one-second window, aligned on whole Unix
// seconds so that X-RateLimit-Reset (whole seconds) is exact. It sets the
// rate-limit headers on every answer and, when take, admits the request
// (true) or sets Retry-After and refuses it (false). 429s use no quota.
func (s *Server) quota(h http.Header, take bool) bool {
	now := s.clock()
	sec := now.Unix()
	s.mu.Lock()
	if sec != s.winStart {
		s.winStart, s.winUsed = sec, 0
	}
	ok := true
	var n429 int64
	if take {
		if s.winUsed < s.cfg.rpsLimit {
			s.winUsed++
		} else {
			ok = false
			s.n429++
			n429 = s.n429
		}
	}
	remaining := s.cfg.rpsLimit - s.winUsed
	s.mu.Unlock()

	reset := sec + 1
	h.Set("X-RateLimit-Limit", strconv.Itoa(s.cfg.rpsLimit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset, 10))
	if ok {
		return true
	}
	// Odd-numbered 429s give delay-seconds, even-numbered ones an
	// HTTP-date, so that clients must understand both forms.
	var at time.Time
	secs := int64(s.cfg.RetryAfterS)
	if secs > 0 {
		at = now.Add(time.Duration(secs) * time.Second)
	} else {
		secs = max(1, reset-sec) // the window resets in (0, 1] s
		at = time.Unix(reset, 0)
	}
	if n429%2 == 1 {
		h.Set("Retry-After", strconv.FormatInt(secs, 10))
	} else {
		// An HTTP-date has whole seconds: round up, so that waiting until
		// the date never lands before the window has reset.
		if at.Nanosecond() != 0 {
			at = at.Truncate(time.Second).Add(time.Second)
		}
		h.Set("Retry-After", at.UTC().Format(http.TimeFormat))
	}
	return false
}

// faults are the random draws of one request.
type faults struct{ reset, slow, fail, errBody, truncate bool }

// roll draws the faults of one request from the seeded source. A rate of 0
// draws nothing, so enabling one fault does not change another's sequence,
// and a sequential client sees the same faults on every run.
func (s *Server) roll() faults {
	c := &s.cfg
	if c.ResetRate == 0 && c.SlowRate == 0 && c.FailRate == 0 && c.ErrorBodyRate == 0 && c.TruncateRate == 0 {
		return faults{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	draw := func(rate float64) bool { return rate > 0 && s.rng.Float64() < rate }
	return faults{
		reset:    draw(c.ResetRate),
		slow:     draw(c.SlowRate),
		fail:     draw(c.FailRate),
		errBody:  draw(c.ErrorBodyRate),
		truncate: draw(c.TruncateRate),
	}
}

// sleep waits d, or less if ctx ends first; it reports whether it slept the
// whole d.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// abort closes the connection without an answer. Lingering 0 makes the
// close a TCP RST, which the client sees as "connection reset by peer".
func abort(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0) //nolint:errcheck
	}
	conn.Close()
}

// truncate sends a 200 whose Content-Length announces body but whose
// connection closes after half of it: the client must notice the short body
// rather than parse what it got.
func truncate(w http.ResponseWriter, body []byte) {
	h := w.Header()
	h.Set("Content-Length", strconv.Itoa(len(body)))
	hj, ok := w.(http.Hijacker)
	if !ok {
		// Not HTTP/1 (or a recorder): send the short body; net/http
		// notices the mismatch and ends the stream.
		w.WriteHeader(http.StatusOK)
		w.Write(body[:len(body)/2]) //nolint:errcheck
		return
	}
	conn, rw, err := hj.Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	bw := rw.Writer
	if bw == nil {
		bw = bufio.NewWriter(conn)
	}
	bw.WriteString("HTTP/1.1 200 OK\r\n") //nolint:errcheck
	h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	h.Set("Connection", "close")
	h.Write(bw)                  //nolint:errcheck
	bw.WriteString("\r\n")       //nolint:errcheck
	bw.Write(body[:len(body)/2]) //nolint:errcheck
	bw.Flush()                   //nolint:errcheck
}
