package feed

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// conn is one connection of a feed: its messages in order, until it
// ends. read returns nil without an error for what only says the
// connection is alive (an SSE comment, an empty line); the bytes it
// returns are valid until its next call. It is called from one
// goroutine, close from another.
type conn interface {
	read() ([]byte, error)
	// ready reports whether the next read likely returns without
	// waiting: a message is buffered, or the start of one whose rest
	// is on its way.
	ready() bool
	close()
}

// maxMessage bounds one message (a line, an event, a websocket message).
const maxMessage = 16 << 20

// statusError is a connection the server refused with an HTTP status.
type statusError struct {
	status int
	body   string
}

func (e *statusError) Error() string {
	if e.body == "" {
		return fmt.Sprintf("HTTP %d", e.status)
	}
	return fmt.Sprintf("HTTP %d: %s", e.status, e.body)
}

// final reports whether a refusal would come back the same on a
// reconnect: a 4xx other than 408 and 429 (bad credentials, no such
// feed), or a websocket's URL answered without an upgrade.
func final(err error) bool {
	var se *statusError
	if errors.As(err, &se) && se.status >= 400 && se.status < 500 && se.status != 408 && se.status != 429 {
		return true
	}
	var nu *notUpgraded
	return errors.As(err, &nu)
}

// refused reads the start of a refusal's body for its error.
func refused(resp *http.Response, scrub func(string) string) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	resp.Body.Close()
	return &statusError{status: resp.StatusCode, body: scrub(strings.TrimSpace(string(b)))}
}

// lines reads a body line by line, each without its line break; a last
// line without one was cut by the connection's end and is not returned.
type lines struct {
	r    *bufio.Reader
	body io.Closer
	long []byte
}

func newLines(body io.ReadCloser) *lines {
	return &lines{r: bufio.NewReaderSize(body, 64<<10), body: body}
}

// line returns the next line; its bytes are valid until the next call.
func (l *lines) line() ([]byte, error) {
	l.long = l.long[:0]
	for {
		b, err := l.r.ReadSlice('\n')
		switch {
		case err == nil:
			if len(l.long) > 0 {
				b = append(l.long, b...)
				l.long = b
			}
			b = bytes.TrimSuffix(b[:len(b)-1], []byte("\r"))
			return b, nil
		case errors.Is(err, bufio.ErrBufferFull):
			if len(l.long)+len(b) > maxMessage {
				return nil, fmt.Errorf("a line of more than %d bytes", maxMessage)
			}
			l.long = append(l.long, b...)
		case errors.Is(err, io.EOF):
			return nil, errors.New("the server closed the connection")
		default:
			return nil, err
		}
	}
}

func (l *lines) close() { l.body.Close() }

// ready: bytes read and not yet taken start the next message; a server
// writes a message at once, so if they hold only its start, its rest is
// on its way. (Looking for the message's end cost a second scan of every
// message, and missed an SSE event ended by CRLFs.)
func (l *lines) ready() bool { return l.r.Buffered() > 0 }

// ndjson is a feed of one long response of JSON lines.
type ndjson struct{ *lines }

func (n ndjson) read() ([]byte, error) {
	b, err := n.line()
	if err != nil || len(bytes.TrimSpace(b)) == 0 {
		return nil, err // an empty line keeps the connection alive
	}
	return b, nil
}

// sse is a feed of server-sent events: each event's data is a message;
// comments and events without data only keep the connection alive.
type sse struct {
	*lines
	data []byte
}

func (s *sse) read() ([]byte, error) {
	s.data = s.data[:0]
	has := false
	for {
		b, err := s.line()
		if err != nil {
			return nil, err
		}
		if len(b) == 0 { // the event is complete
			if !has {
				return nil, nil
			}
			return s.data, nil
		}
		if b[0] == ':' {
			if !has {
				return nil, nil // a comment between events: a heartbeat
			}
			continue
		}
		field, value, _ := bytes.Cut(b, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		if string(field) == "data" {
			// An event is bounded as a line is: many data lines of a
			// bounded length each would otherwise grow it without end.
			if len(s.data)+len(value)+1 > maxMessage {
				return nil, fmt.Errorf("an event of more than %d bytes of data", maxMessage)
			}
			if has {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, value...)
			has = true
		}
	}
}

// openHTTP opens an sse or ndjson feed: one GET whose answer goes on as
// long as the feed.
func openHTTP(ctx context.Context, hc *http.Client, url string, header http.Header, protocol string, scrub func(string) string) (conn, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, refused(resp, scrub)
	}
	l := newLines(resp.Body)
	if protocol == "sse" {
		return &sse{lines: l}, nil
	}
	return ndjson{l}, nil
}
