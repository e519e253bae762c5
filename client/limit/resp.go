package limit

import (
	"bufio"
	"context"
	"crypto/sha1"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A minimal RESP2 client: the shared limiter needs three Lua scripts, a
// PING and, for tests, a few reads. It is ours rather than a library's
// because that is all it needs: a full client cost the stripped binary 1.8 MB
// and the run about 1 MiB of peak resident memory.

// redisOptions is what a redis:// or rediss:// URL says.
type redisOptions struct {
	addr     string // host:port
	tls      *tls.Config
	user     string
	password string
	db       int
}

// parseRedisURL reads redis://[[user]:password@]host[:port][/db], or
// rediss://... for TLS (the server's certificate verified against the
// system's roots). Its errors never quote the URL: it may hold the
// password.
func parseRedisURL(raw string) (redisOptions, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return redisOptions{}, errors.New("not a redis:// or rediss:// URL")
	}
	var o redisOptions
	switch u.Scheme {
	case "redis":
	case "rediss":
		o.tls = &tls.Config{MinVersion: tls.VersionTLS12}
	default:
		return o, errors.New("not a redis:// or rediss:// URL")
	}
	if u.Opaque != "" || u.Host == "" {
		return o, errors.New("a redis:// URL needs a host")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return o, errors.New("a redis:// URL takes no query or fragment")
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return o, errors.New("a redis:// URL needs a host")
	}
	if port == "" {
		port = "6379"
	} else if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return o, errors.New("the port of a redis:// URL must be 1–65535")
	}
	o.addr = net.JoinHostPort(host, port)
	if o.tls != nil {
		o.tls.ServerName = host
	}
	if u.User != nil {
		o.user = u.User.Username()
		o.password, _ = u.User.Password()
	}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		n, err := strconv.Atoi(db)
		if err != nil || n < 0 {
			return o, errors.New("the path of a redis:// URL must be a database number, e.g. /0")
		}
		o.db = n
	}
	return o, nil
}

// redisError is an error reply of the server: the connection stays good.
type redisError string

func (e redisError) Error() string { return string(e) }

// Bounds on a reply: the scripts answer a few integers, so anything
// near these is a broken stream, not an answer.
const (
	maxBulk  = 1 << 20
	maxArray = 1 << 16
	maxDepth = 8
)

// readReply reads one RESP2 reply: int64 (:), string (+ and $), nil ($-1
// and *-1), []any (*) or a redisError (-). Any other error means the
// stream is broken and the connection must be dropped.
func readReply(r *bufio.Reader) (any, error) { return readReplyDepth(r, 0) }

func readReplyDepth(r *bufio.Reader, depth int) (any, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, errors.New("RESP: line too long")
		}
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("RESP: malformed line %q", truncate(line))
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '+':
		return string(body), nil
	case '-':
		return redisError(body), nil
	case ':':
		n, err := strconv.ParseInt(string(body), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("RESP: bad integer %q", truncate(body))
		}
		return n, nil
	case '$':
		n, err := strconv.Atoi(string(body))
		if err != nil || n < -1 || n > maxBulk {
			return nil, fmt.Errorf("RESP: bad bulk length %q", truncate(body))
		}
		if n == -1 {
			return nil, nil
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, noEOF(err)
		}
		if b[n] != '\r' || b[n+1] != '\n' {
			return nil, errors.New("RESP: bulk string not ended by CRLF")
		}
		return string(b[:n]), nil
	case '*':
		n, err := strconv.Atoi(string(body))
		if err != nil || n < -1 || n > maxArray {
			return nil, fmt.Errorf("RESP: bad array length %q", truncate(body))
		}
		if n == -1 {
			return nil, nil
		}
		if depth >= maxDepth {
			return nil, errors.New("RESP: arrays nested too deep")
		}
		a := make([]any, n)
		for i := range a {
			if a[i], err = readReplyDepth(r, depth+1); err != nil {
				return nil, noEOF(err)
			}
		}
		return a, nil
	}
	return nil, fmt.Errorf("RESP: unknown reply type %q", kind)
}

// noEOF makes an end of stream inside a reply what it is.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func truncate(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

// appendCommand appends args as a RESP array of bulk strings.
func appendCommand(b []byte, args []string) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

// respConn is one connection; used by one call at a time.
type respConn struct {
	c   net.Conn
	r   *bufio.Reader
	buf []byte
}

// do sends one command and reads its reply within ctx. A transport or
// protocol error leaves the connection unusable (broken is true).
func (rc *respConn) do(ctx context.Context, args []string) (reply any, broken bool, err error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(redisTimeout)
	}
	if err := rc.c.SetDeadline(deadline); err != nil {
		return nil, true, err
	}
	// A context ended early (not by its deadline) interrupts the I/O.
	stop := context.AfterFunc(ctx, func() { rc.c.SetDeadline(time.Unix(1, 0)) })
	rc.buf = appendCommand(rc.buf[:0], args)
	if _, err = rc.c.Write(rc.buf); err == nil {
		reply, err = readReply(rc.r)
	}
	if !stop() {
		// The deadline was moved to the past: the I/O error is its
		// doing, and the connection's state is unknown whatever was read.
		return nil, true, context.Cause(ctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return nil, true, err
	}
	return reply, false, nil
}

// redisTimeout bounds a call whose context has no deadline, and a dial.
const redisTimeout = 5 * time.Second

// maxIdle is how many connections are kept between calls: about the
// requests in flight at once, each calling at most once at a time.
const maxIdle = 8

// redisClient is a pool of connections to one server. Calls come from
// every request in flight at once, so one connection would queue them
// behind each other's round trips.
type redisClient struct {
	opt redisOptions

	mu     sync.Mutex
	idle   []*respConn
	closed bool
}

func newRedisClient(opt redisOptions) *redisClient { return &redisClient{opt: opt} }

// dial opens a connection, authenticates and selects the database.
func (c *redisClient) dial(ctx context.Context) (*respConn, error) {
	nd := &net.Dialer{Timeout: redisTimeout}
	var conn net.Conn
	var err error
	if c.opt.tls != nil {
		conn, err = (&tls.Dialer{NetDialer: nd, Config: c.opt.tls}).DialContext(ctx, "tcp", c.opt.addr)
	} else {
		conn, err = nd.DialContext(ctx, "tcp", c.opt.addr)
	}
	if err != nil {
		return nil, err
	}
	rc := &respConn{c: conn, r: bufio.NewReader(conn)}
	var setup [][]string
	switch {
	case c.opt.user != "":
		setup = append(setup, []string{"AUTH", c.opt.user, c.opt.password})
	case c.opt.password != "":
		setup = append(setup, []string{"AUTH", c.opt.password})
	}
	if c.opt.db != 0 {
		setup = append(setup, []string{"SELECT", strconv.Itoa(c.opt.db)})
	}
	for _, args := range setup {
		v, _, err := rc.do(ctx, args)
		if err == nil {
			if e, ok := v.(redisError); ok {
				err = e
			}
		}
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("redis %s: %w", args[0], err) // never the args: AUTH's hold the password
		}
	}
	return rc, nil
}

// get takes an idle connection (reused true) or dials one.
func (c *redisClient) get(ctx context.Context) (rc *respConn, reused bool, err error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, false, errors.New("redis: client closed")
	}
	if n := len(c.idle); n > 0 {
		rc = c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		return rc, true, nil
	}
	c.mu.Unlock()
	rc, err = c.dial(ctx)
	return rc, false, err
}

func (c *redisClient) put(rc *respConn) {
	c.mu.Lock()
	if !c.closed && len(c.idle) < maxIdle {
		c.idle = append(c.idle, rc)
		rc = nil
	}
	c.mu.Unlock()
	if rc != nil {
		rc.c.Close()
	}
}

// do runs one command. An error reply comes back as an error naming the
// command; so does a connection failing during it, which is dropped. A connection
// that had sat idle and fails before anything was read (the server
// restarted, or closed it) is replaced once by a new one.
func (c *redisClient) do(ctx context.Context, args ...string) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("redis %s: %w", args[0], context.Cause(ctx))
	}
	for attempt := 0; ; attempt++ {
		rc, reused, err := c.get(ctx)
		if err != nil {
			return nil, err // a dial's error names the address; AUTH's and SELECT's, the command
		}
		v, broken, err := rc.do(ctx, args)
		if broken {
			rc.c.Close()
			if reused && attempt == 0 && ctx.Err() == nil && staleConn(err) {
				continue
			}
			return nil, fmt.Errorf("redis %s: %w", args[0], err)
		}
		c.put(rc)
		if e, ok := v.(redisError); ok {
			return nil, fmt.Errorf("redis %s: %w", args[0], e)
		}
		return v, nil
	}
}

// staleConn is whether err is what a connection the server has closed
// gives: the command cannot have run.
func staleConn(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// Close closes the idle connections; those in use close when returned.
func (c *redisClient) Close() error {
	c.mu.Lock()
	idle := c.idle
	c.idle, c.closed = nil, true
	c.mu.Unlock()
	for _, rc := range idle {
		rc.c.Close()
	}
	return nil
}

// redisScript is a Lua script run by its SHA-1 (EVALSHA), loaded by
// EVAL the first time a server does not know it.
type redisScript struct {
	src, sha string
}

func newRedisScript(src string) *redisScript {
	h := sha1.Sum([]byte(src))
	return &redisScript{src: src, sha: hex.EncodeToString(h[:])}
}

// run runs the script on keys with args.
func (s *redisScript) run(ctx context.Context, c *redisClient, keys []string, args ...any) (any, error) {
	cmd := make([]string, 0, 3+len(keys)+len(args))
	cmd = append(cmd, "EVALSHA", s.sha, strconv.Itoa(len(keys)))
	cmd = append(cmd, keys...)
	for _, a := range args {
		cmd = append(cmd, argString(a))
	}
	v, err := c.do(ctx, cmd...)
	var re redisError
	if errors.As(err, &re) && strings.HasPrefix(string(re), "NOSCRIPT") {
		cmd[0], cmd[1] = "EVAL", s.src
		v, err = c.do(ctx, cmd...)
	}
	return v, err
}

func argString(a any) string {
	switch a := a.(type) {
	case string:
		return a
	case int:
		return strconv.Itoa(a)
	case int64:
		return strconv.FormatInt(a, 10)
	case float64:
		return strconv.FormatFloat(a, 'f', -1, 64)
	}
	panic(fmt.Sprintf("redis: argument of type %T", a))
}

// int64s is v as the integers of an array reply.
func int64s(v any) ([]int64, error) {
	a, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("redis: got %T, want an array", v)
	}
	out := make([]int64, len(a))
	for i, e := range a {
		n, ok := e.(int64)
		if !ok {
			return nil, fmt.Errorf("redis: element %d is %T, want an integer", i, e)
		}
		out[i] = n
	}
	return out, nil
}
