package feed

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/coder/websocket"
)

// ws is a websocket feed. Its pings find a connection that died without
// closing (no pong within the idle timeout); the idle timeout itself
// counts messages, which a server that still answers pings may have
// stopped sending.
type ws struct {
	c      *websocket.Conn
	sock   *batchedConn // what c reads
	msg    []byte       // the message read last, its buffer reused
	ctx    context.Context
	cancel context.CancelFunc
}

func openWS(ctx context.Context, hc *http.Client, url string, header http.Header, subscribe []byte, idle time.Duration, scrub func(string) string) (conn, error) {
	up := &upgrade{base: hc.Transport}
	if up.base == nil {
		up.base = http.DefaultTransport
	}
	batched := *hc
	batched.Transport = up
	c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: &batched, HTTPHeader: header})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			se := &statusError{status: resp.StatusCode}
			return nil, se
		}
		return nil, err
	}
	c.SetReadLimit(maxMessage)
	cctx, cancel := context.WithCancel(context.Background())
	w := &ws{c: c, sock: up.conn, ctx: cctx, cancel: cancel}
	if len(subscribe) > 0 {
		wctx, wcancel := context.WithTimeout(ctx, idle)
		err := c.Write(wctx, websocket.MessageText, subscribe)
		wcancel()
		if err != nil {
			w.close()
			return nil, errors.Join(errors.New("sending the subscribe message"), err)
		}
	}
	go w.ping(idle)
	return w, nil
}

// ping sends a ping every half idle timeout; one without a pong within
// the idle timeout closes the connection, which ends its read.
func (w *ws) ping(idle time.Duration) {
	t := time.NewTicker(idle / 2)
	defer t.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(w.ctx, idle)
		err := w.c.Ping(pctx)
		cancel()
		if err != nil {
			w.c.CloseNow()
			return
		}
	}
}

func (w *ws) read() ([]byte, error) {
	// A context without Done: coder/websocket then arms no timer per
	// message (a tenth of a feed's CPU); close ends a read in progress.
	_, r, err := w.c.Reader(context.Background())
	if err == nil {
		w.msg, err = readAll(w.msg[:0], r)
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return nil, errors.New("the server closed the websocket: " + ce.Error())
	}
	return w.msg, err
}

// readAll appends what r holds to b (io.ReadAll into a buffer reused).
func readAll(b []byte, r io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// ready: the socket's bytes read and not yet taken likely hold the next
// message (a server writes a message at once); if they hold only its
// start, its rest is on its way.
func (w *ws) ready() bool { return w.sock != nil && w.sock.buffered() > 0 }

// upgrade is the websocket's transport: the connection it upgrades is
// read through a batchedConn.
type upgrade struct {
	base http.RoundTripper
	conn *batchedConn
}

func (u *upgrade) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := u.base.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		return resp, err
	}
	if rwc, ok := resp.Body.(io.ReadWriteCloser); ok {
		u.conn = &batchedConn{ReadWriteCloser: rwc, buf: make([]byte, batchedRead)}
		resp.Body = u.conn
	}
	return resp, nil
}

// A batchedConn reads a websocket's connection in chunks of up to
// batchedRead bytes; after a read that did not fill them, it pauses
// readPause first. A server writes each message on its
// own: a reader as fast as it read one message per read syscall, and the
// syscalls were most of a websocket feed's CPU. The pause lets a busy
// feed's messages gather (hundreds in a millisecond); a quiet feed's
// message waits no longer than it would have, as the read then blocks
// until it comes.
type batchedConn struct {
	io.ReadWriteCloser
	buf    []byte
	r, w   int
	err    error // the read's, once what it read is taken
	little bool
}

const (
	batchedRead = 64 << 10
	readPause   = time.Millisecond
)

func (b *batchedConn) Read(p []byte) (int, error) {
	if b.r == b.w {
		if b.err != nil {
			return 0, b.err
		}
		if b.little {
			time.Sleep(readPause)
		}
		n, err := b.ReadWriteCloser.Read(b.buf)
		b.r, b.w, b.err = 0, n, err
		b.little = n < len(b.buf)
		if n == 0 {
			return 0, err
		}
	}
	n := copy(p, b.buf[b.r:b.w])
	b.r += n
	return n, nil
}

// buffered is how many bytes were read and not yet taken.
func (b *batchedConn) buffered() int { return b.w - b.r }

func (w *ws) close() {
	w.cancel()
	w.c.CloseNow()
}
