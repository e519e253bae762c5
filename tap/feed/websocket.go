package feed

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gobwas/ws"
)

// websocket is a websocket feed (RFC 6455, the client's side): the handshake is
// a request of the run's HTTP client (its credentials, limits and
// stats), and the connection it upgrades is read frame by frame with
// gobwas/ws's frame functions, which take no lock and start no timer per
// message. Its pings find a connection that died without closing (no
// pong within the idle timeout); the idle timeout itself counts
// messages, which a server that still answers pings may have stopped
// sending.
type websocket struct {
	rwc  io.ReadWriteCloser // the upgraded connection
	br   *bufio.Reader      // rwc read through a pausedReader
	hdr  [ws.MaxHeaderSize - 2]byte
	ctl  [ws.MaxControlFramePayloadSize]byte
	msg  []byte // the message read last, its buffer reused
	wmu  sync.Mutex
	wbuf bytes.Buffer // a frame is written whole, under wmu
	// awaiting is set while a ping has had no pong.
	awaiting  atomic.Bool
	done      chan struct{}
	closeOnce sync.Once
}

// wsGUID is the constant RFC 6455 appends to the key in the handshake.
const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

func openWS(ctx context.Context, hc *http.Client, url string, header http.Header, subscribe []byte, idle time.Duration, scrub func(string) string) (conn, error) {
	// The connection the handshake goes on is the socket the reads
	// pause on (pausedReader).
	var sock socket
	traced := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { sock = socketOf(info.Conn) },
	})
	req, err := http.NewRequestWithContext(traced, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	key := base64.StdEncoding.EncodeToString(nonce[:])
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", key)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusSwitchingProtocols:
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		resp.Body.Close()
		return nil, &notUpgraded{status: resp.StatusCode}
	default:
		return nil, refused(resp, scrub)
	}
	rwc, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		resp.Body.Close()
		return nil, fmt.Errorf("the websocket's upgraded connection cannot be written (%T)", resp.Body)
	}
	if err := checkUpgrade(resp.Header, key); err != nil {
		rwc.Close()
		return nil, err
	}
	w := &websocket{rwc: rwc, br: bufio.NewReaderSize(&pausedReader{r: rwc, sock: sock}, wsRead), done: make(chan struct{})}
	if len(subscribe) > 0 {
		// A server that takes no subscribe message in idle is deaf.
		stop := context.AfterFunc(ctx, w.close)
		t := time.AfterFunc(idle, w.close)
		err := w.write(ws.NewTextFrame(slices.Clone(subscribe)))
		stop()
		t.Stop()
		if err != nil {
			w.close()
			return nil, errors.Join(errors.New("sending the subscribe message"), err)
		}
	}
	go w.ping(idle)
	return w, nil
}

// notUpgraded is a websocket's handshake answered with a success that is
// not 101 Switching Protocols: the URL serves something else.
type notUpgraded struct{ status int }

func (e *notUpgraded) Error() string {
	return fmt.Sprintf("HTTP %d, not 101 Switching Protocols: the URL does not serve a websocket", e.status)
}

// checkUpgrade checks a 101's headers say the server speaks websocket to
// this request (RFC 6455 section 4.1) and negotiated nothing the feed
// does not read: no extension, no subprotocol.
func checkUpgrade(h http.Header, key string) error {
	if !hasToken(h, "Connection", "upgrade") || !hasToken(h, "Upgrade", "websocket") {
		return fmt.Errorf("the server's 101 does not upgrade to a websocket (Connection %q, Upgrade %q)", h.Get("Connection"), h.Get("Upgrade"))
	}
	sum := sha1.Sum([]byte(key + wsGUID))
	if got := h.Get("Sec-WebSocket-Accept"); got != base64.StdEncoding.EncodeToString(sum[:]) {
		return fmt.Errorf("the server's 101 has a wrong Sec-WebSocket-Accept %q", got)
	}
	if e := h.Get("Sec-WebSocket-Extensions"); e != "" {
		return fmt.Errorf("the server's 101 negotiated an extension the tap did not offer: %q", e)
	}
	return nil
}

// hasToken reports whether a comma-separated header holds token, in any case.
func hasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// ping sends a ping every half idle timeout; one without a pong within
// the idle timeout closes the connection, which ends its read.
func (w *websocket) ping(idle time.Duration) {
	t := time.NewTicker(idle / 2)
	defer t.Stop()
	var sent time.Time
	for {
		select {
		case <-w.done:
			return
		case now := <-t.C:
			if !w.awaiting.Load() {
				w.awaiting.Store(true)
				sent = now
				if w.write(ws.NewPingFrame(nil)) != nil {
					w.close()
					return
				}
			} else if now.Sub(sent) >= idle {
				w.close()
				return
			}
		}
	}
}

// write sends one frame, masked as a client's must be, in one write.
func (w *websocket) write(f ws.Frame) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	w.wbuf.Reset()
	if err := ws.WriteFrame(&w.wbuf, ws.MaskFrameInPlace(f)); err != nil {
		return err
	}
	_, err := w.rwc.Write(w.wbuf.Bytes())
	return err
}

// read returns the next text or binary message, its fragments joined;
// it answers the pings and the close it meets on the way.
func (w *websocket) read() ([]byte, error) {
	w.msg = w.msg[:0]
	state := ws.StateClientSide
	for {
		h, err := ws.ReadHeaderBuffer(w.br, w.hdr[:])
		if err != nil {
			return nil, w.broken(err)
		}
		if err := ws.CheckHeader(h, state); err != nil {
			w.fail(ws.StatusProtocolError)
			return nil, fmt.Errorf("the websocket server broke the protocol: %w", err)
		}
		if h.OpCode.IsControl() {
			if err := w.control(h); err != nil {
				return nil, err
			}
			continue
		}
		if int64(len(w.msg))+h.Length > maxMessage {
			w.fail(ws.StatusMessageTooBig)
			return nil, fmt.Errorf("a websocket message of more than %d bytes", maxMessage)
		}
		n := len(w.msg)
		w.msg = slices.Grow(w.msg, int(h.Length))[:n+int(h.Length)]
		if _, err := io.ReadFull(w.br, w.msg[n:]); err != nil {
			return nil, w.broken(err)
		}
		if h.Fin {
			return w.msg, nil
		}
		state = state.Set(ws.StateFragmented)
	}
}

// control handles a ping, a pong or a close; a close ends the feed.
func (w *websocket) control(h ws.Header) error {
	p := w.ctl[:h.Length]
	if _, err := io.ReadFull(w.br, p); err != nil {
		return w.broken(err)
	}
	switch h.OpCode {
	case ws.OpPing:
		if err := w.write(ws.NewPongFrame(slices.Clone(p))); err != nil {
			return w.broken(err)
		}
	case ws.OpPong:
		w.awaiting.Store(false)
	case ws.OpClose:
		code, reason := ws.ParseCloseFrameData(p)
		if len(p) == 0 {
			code = ws.StatusNormalClosure
		}
		w.fail(code) // the close echoed
		return fmt.Errorf("the server closed the websocket: status %d, reason %q", code, reason)
	}
	return nil
}

// fail closes the connection after telling the server why.
func (w *websocket) fail(code ws.StatusCode) {
	_ = w.write(ws.NewCloseFrame(ws.NewCloseFrameBody(code, "")))
	w.close()
}

// broken is a read's or write's error as the feed reports it.
func (w *websocket) broken(err error) error {
	select {
	case <-w.done:
		return errors.New("the websocket was closed")
	default:
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the server closed the connection")
	}
	return err
}

// ready: the socket's bytes read and not yet taken likely hold the next
// message (a server writes a message at once); if they hold only its
// start, its rest is on its way.
func (w *websocket) ready() bool { return w.br.Buffered() > 0 }

func (w *websocket) close() {
	w.closeOnce.Do(func() {
		close(w.done)
		w.rwc.Close()
	})
}

// A pausedReader pauses readPause before a read that follows one that
// did not fill its buffer. A server writes each message on its own: a
// reader as fast as it read one message per read syscall, and the
// syscalls were most of a websocket feed's CPU. The pause lets a busy
// feed's messages gather (hundreds in a millisecond); a quiet feed's
// message waits no longer than it would have, as the read then blocks
// until it comes. While it pauses, the socket tells the runtime's poller
// nothing until wsRead bytes wait (SO_RCVLOWAT, where there is one):
// else each segment that arrives wakes the poller, and a server whose
// messages came in segments of their own made the run spend half its
// CPU (and twice its wall time) waking up to them.
type pausedReader struct {
	r      io.Reader
	sock   socket
	little bool
}

const (
	wsRead    = 256 << 10
	readPause = time.Millisecond
)

func (p *pausedReader) Read(b []byte) (int, error) {
	if p.little {
		p.sock.lowat(wsRead)
		time.Sleep(readPause)
		p.sock.lowat(1)
	}
	n, err := p.r.Read(b)
	p.little = n < len(b)
	return n, err
}
