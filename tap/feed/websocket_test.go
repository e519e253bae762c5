package feed

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gobwas/ws"
)

// wsScript is a websocket server for one connection that answers the
// upgrade with accept (the right key when empty) and extra headers,
// writes frames as they are given, and keeps the frames the client sent.
type wsScript struct {
	status int
	accept string
	extra  string
	frames []byte

	mu   sync.Mutex
	sent []ws.Frame // what the client sent, unmasked
}

func (s *wsScript) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.status != 0 {
		http.Error(w, "go away", s.status)
		return
	}
	nc, rw, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer nc.Close()
	accept := s.accept
	if accept == "" {
		sum := sha1.Sum([]byte(r.Header.Get("Sec-WebSocket-Key") + wsGUID))
		accept = base64.StdEncoding.EncodeToString(sum[:])
	}
	fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n%s\r\n", accept, s.extra)
	rw.Flush()
	read := func() bool {
		f, err := ws.ReadFrame(rw)
		if err != nil {
			return false
		}
		s.mu.Lock()
		s.sent = append(s.sent, ws.UnmaskFrameInPlace(f))
		s.mu.Unlock()
		return true
	}
	read() // the subscribe message
	go func() {
		for read() {
		}
	}()
	nc.Write(s.frames)
	time.Sleep(200 * time.Millisecond) // the client reads and answers
}

// clientSent is what the client sent, once it holds a frame that
// satisfies done or a second has passed.
func (s *wsScript) clientSent(done func([]ws.Frame) bool) []ws.Frame {
	for range 100 {
		s.mu.Lock()
		sent := append([]ws.Frame(nil), s.sent...)
		s.mu.Unlock()
		if done(sent) {
			return sent
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ws.Frame(nil), s.sent...)
}

func frames(fs ...ws.Frame) []byte {
	var b bytes.Buffer
	for _, f := range fs {
		ws.MustWriteFrame(&b, f)
	}
	return b.Bytes()
}

func TestWebSocketReadsMessages(t *testing.T) {
	masked := ws.MaskFrameInPlace(ws.NewTextFrame([]byte("x")))
	big := ws.Header{Fin: true, OpCode: ws.OpText, Length: maxMessage + 1}
	var bigHeader bytes.Buffer
	ws.WriteHeader(&bigHeader, big)
	for _, tt := range []struct {
		name   string
		server *wsScript
		want   []string // messages, then the error that ends the reads
		pong   string   // the payload of the pong the client must send
	}{
		{"messages, then a close", &wsScript{frames: frames(ws.NewTextFrame([]byte(`{"seq":1}`)), ws.NewBinaryFrame([]byte(`{"seq":2}`)),
			ws.NewCloseFrame(ws.NewCloseFrameBody(ws.StatusGoingAway, "bye")))},
			[]string{`{"seq":1}`, `{"seq":2}`, `error: the server closed the websocket: status 1001, reason "bye"`}, ""},
		{"fragments joined, a ping between them answered", &wsScript{frames: frames(ws.NewFrame(ws.OpText, false, []byte("ab")),
			ws.NewPingFrame([]byte("p1")), ws.NewFrame(ws.OpContinuation, true, []byte("cd")))},
			[]string{"abcd", "error: the server closed the connection"}, "p1"},
		{"a masked frame", &wsScript{frames: frames(masked)},
			[]string{"error: the websocket server broke the protocol: frames from server to client must be not masked"}, ""},
		{"a continuation that starts nothing", &wsScript{frames: frames(ws.NewFrame(ws.OpContinuation, true, []byte("x")))},
			[]string{"error: the websocket server broke the protocol: unexpected continuation data frame"}, ""},
		{"a compressed frame never negotiated", &wsScript{frames: frames(ws.Frame{Header: ws.Header{Fin: true, Rsv: ws.Rsv(true, false, false), OpCode: ws.OpText, Length: 1}, Payload: []byte("x")})},
			[]string{"error: the websocket server broke the protocol: non-zero rsv bits with no extension negotiated"}, ""},
		{"a message over the bound", &wsScript{frames: bigHeader.Bytes()},
			[]string{fmt.Sprintf("error: a websocket message of more than %d bytes", maxMessage)}, ""},
		{"cut inside a message", &wsScript{frames: frames(ws.NewTextFrame([]byte("whole")))[:4]},
			[]string{"error: the server closed the connection"}, ""},
		{"a close without a status", &wsScript{frames: frames(ws.NewCloseFrame(nil))},
			[]string{`error: the server closed the websocket: status 1000, reason ""`}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.server)
			defer srv.Close()
			c, err := openWS(context.Background(), srv.Client(), srv.URL, http.Header{}, []byte(`{"op":"subscribe"}`), time.Minute, strings.Clone)
			if err != nil {
				t.Fatal(err)
			}
			defer c.close()
			var got []string
			for range 10 {
				b, err := c.read()
				if err != nil {
					got = append(got, "error: "+err.Error())
					break
				}
				got = append(got, string(b))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("read\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			sent := tt.server.clientSent(func(fs []ws.Frame) bool { return tt.pong == "" || hasFrame(fs, ws.OpPong, tt.pong) })
			if len(sent) == 0 || sent[0].Header.OpCode != ws.OpText || string(sent[0].Payload) != `{"op":"subscribe"}` {
				t.Errorf("the client's first frame is not the subscribe message: %+v", sent)
			}
			if tt.pong != "" && !hasFrame(sent, ws.OpPong, tt.pong) {
				t.Errorf("no pong %q among the client's frames %+v", tt.pong, sent)
			}
		})
	}
}

func hasFrame(fs []ws.Frame, op ws.OpCode, payload string) bool {
	for _, f := range fs {
		if f.Header.OpCode == op && string(f.Payload) == payload {
			return true
		}
	}
	return false
}

func TestWebSocketRefusesABadUpgrade(t *testing.T) {
	for _, tt := range []struct {
		name   string
		server *wsScript
		want   string
		final  bool // a reconnect would meet the same
	}{
		{"a refusal", &wsScript{status: http.StatusForbidden}, "HTTP 403: go away", true},
		{"an answer that is no upgrade", &wsScript{status: http.StatusOK}, "HTTP 200, not 101 Switching Protocols: the URL does not serve a websocket", true},
		{"a refusal that may pass", &wsScript{status: http.StatusServiceUnavailable}, "HTTP 503: go away", false},
		{"a wrong accept key", &wsScript{accept: "bm9wZQ=="}, `the server's 101 has a wrong Sec-WebSocket-Accept "bm9wZQ=="`, false},
		{"an extension not offered", &wsScript{extra: "Sec-WebSocket-Extensions: permessage-deflate\r\n"}, `the server's 101 negotiated an extension the tap did not offer: "permessage-deflate"`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.server)
			defer srv.Close()
			c, err := openWS(context.Background(), srv.Client(), srv.URL, http.Header{}, nil, time.Minute, strings.Clone)
			if err == nil {
				c.close()
				t.Fatal("opened")
			}
			if err.Error() != tt.want {
				t.Errorf("error %q, want %q", err, tt.want)
			}
			if final(err) != tt.final {
				t.Errorf("final(%q) = %v, want %v", err, final(err), tt.final)
			}
		})
	}
}

// A server that stops answering pings is closed within the idle timeout.
func TestWebSocketClosesWithoutPongs(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		req, err := http.ReadRequest(bufio.NewReader(nc))
		if err != nil {
			return
		}
		sum := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + wsGUID))
		fmt.Fprintf(nc, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", base64.StdEncoding.EncodeToString(sum[:]))
		io.Copy(io.Discard, nc) // reads the pings, answers none
	}()
	c, err := openWS(context.Background(), http.DefaultClient, "http://"+ln.Addr().String(), http.Header{}, nil, 100*time.Millisecond, strings.Clone)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.read()
	if err == nil || err.Error() != "the websocket was closed" {
		t.Fatalf("read: %v, want the websocket closed", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("closed after %s, want about the idle timeout (100ms)", d)
	}
}
