package demoapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gobwas/ws"
)

// The feeds: numbered trades, 1..FeedTrades, with heartbeats, over a
// websocket (/v1/feed/ws, subscribe {"op": "subscribe", "from": N}),
// server-sent events (/v1/feed/sse?from=N, or Last-Event-ID) and one
// long response of JSON lines (/v1/feed/ndjson?from=N); and their REST
// history by seq range (/v1/trades?from_seq=A&to_seq=B). Each fault
// fires once per server, on the first connection that reaches its seq,
// so that a reconnect recovers from it.

// feedFaults is which of the once-only faults have fired.
type feedFaults struct {
	dropped, silenced, cut, muted atomic.Bool
	connections                   atomic.Int64
}

// appendTrade appends trade seq as JSON: what every feed sends and what
// /v1/trades lists.
func appendTrade(b []byte, seq int64) []byte {
	symbols := [...]string{"ACME", "GLOBX", "INITECH", "UMBRL", "WAYNE"}
	b = append(b, `{"type":"trade","seq":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"symbol":"`...)
	b = append(b, symbols[seq%int64(len(symbols))]...)
	b = append(b, `","price":`...)
	b = strconv.AppendFloat(b, 100+float64(seq*37%1000)/100, 'f', 2, 64)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, 1+seq%9, 10)
	b = append(b, '}')
	return b
}

var (
	heartbeatMsg = []byte(`{"type":"heartbeat"}`)
	endMsg       = []byte(`{"type":"end"}`)
)

// errCut is a connection the feed cuts without a goodbye.
var errCut = errors.New("connection cut")

// sendFunc sends one message of a feed: kind is "trade", "heartbeat" or
// "end"; flush says more is not coming right away.
type sendFunc func(kind string, seq int64, msg []byte, flush bool) error

// runFeed sends the trades from seq from, with heartbeats, then an end
// message (or, with FeedNoEnd, heartbeats until the client leaves). It
// returns errCut when the connection is to be cut.
func (s *Server) runFeed(ctx context.Context, from int64, send sendFunc) error {
	c := &s.cfg
	f := &s.feeds
	if f.connections.Add(1) > 1 && c.FeedReplay > 0 {
		from = max(1, from-int64(c.FeedReplay)) // a reconnect replays: duplicates
	}
	if c.FeedMute && f.muted.CompareAndSwap(false, true) {
		<-ctx.Done() // accepted, nothing ever sent
		return nil
	}
	beat := time.Duration(c.FeedHeartbeatMS) * time.Millisecond
	interval := time.Duration(c.FeedIntervalMS) * time.Millisecond
	nextBeat := time.Now().Add(beat)
	var buf []byte
	for seq := max(from, 1); seq <= int64(c.FeedTrades); seq++ {
		if ctx.Err() != nil {
			return nil
		}
		if now := time.Now(); !now.Before(nextBeat) {
			nextBeat = now.Add(beat)
			if err := send("heartbeat", 0, heartbeatMsg, false); err != nil {
				return err
			}
		}
		if int64(c.FeedDrop) == seq && f.dropped.CompareAndSwap(false, true) {
			continue // lost on the way
		}
		buf = appendTrade(buf[:0], seq)
		last := seq == int64(c.FeedTrades)
		silence := int64(c.FeedSilenceAfter) == seq && f.silenced.CompareAndSwap(false, true)
		cut := int64(c.FeedCloseAfter) == seq && f.cut.CompareAndSwap(false, true)
		if err := send("trade", seq, buf, interval > 0 || last || silence || cut || seq%256 == 0); err != nil {
			return err
		}
		switch {
		case silence:
			<-ctx.Done() // open, and silent: not even a heartbeat
			return nil
		case cut:
			return errCut
		}
		if interval > 0 && !s.feedWait(ctx, interval, &nextBeat, beat, send) {
			return nil
		}
	}
	if !c.FeedNoEnd {
		return send("end", 0, endMsg, true)
	}
	for s.feedWait(ctx, beat, &nextBeat, beat, send) {
	}
	return nil
}

// feedWait waits d, sending the heartbeats that fall due; false when
// the client has gone.
func (s *Server) feedWait(ctx context.Context, d time.Duration, nextBeat *time.Time, beat time.Duration, send sendFunc) bool {
	end := time.Now().Add(d)
	for {
		until := end
		if nextBeat.Before(end) {
			until = *nextBeat
		}
		if !sleep(ctx, time.Until(until)) {
			return false
		}
		now := time.Now()
		if !now.Before(*nextBeat) {
			*nextBeat = now.Add(beat)
			if send("heartbeat", 0, heartbeatMsg, true) != nil {
				return false
			}
		}
		if !now.Before(end) {
			return true
		}
	}
}

// fromParam reads the first seq asked for; absent is 1.
func fromParam(r *http.Request) (int64, error) {
	v := r.URL.Query().Get("from")
	if v == "" {
		if id := r.Header.Get("Last-Event-ID"); id != "" {
			n, err := strconv.ParseInt(id, 10, 64)
			if err != nil {
				return 0, badRequest("Last-Event-ID: expected a seq, got %q", id)
			}
			return n + 1, nil
		}
		return 1, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, badRequest("from: expected a seq >= 0, got %q", v)
	}
	return n, nil
}

// feedNDJSON serves /v1/feed/ndjson: a JSON line per message.
func (s *Server) feedNDJSON(w http.ResponseWriter, r *http.Request, _ []byte) ([]byte, error) {
	return s.feedHTTP(w, r, "feed_ndjson", map[string]string{"Content-Type": "application/x-ndjson"}, func(b []byte, _ string, _ int64, msg []byte) []byte {
		return append(append(b, msg...), '\n')
	})
}

// feedSSE serves /v1/feed/sse: an event per message, a trade's id its seq.
func (s *Server) feedSSE(w http.ResponseWriter, r *http.Request, _ []byte) ([]byte, error) {
	return s.feedHTTP(w, r, "feed_sse", map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}, func(b []byte, kind string, seq int64, msg []byte) []byte {
		if seq > 0 {
			b = append(strconv.AppendInt(append(b, "id: "...), seq, 10), '\n')
		}
		b = append(append(append(b, "event: "...), kind...), '\n')
		return append(append(append(b, "data: "...), msg...), "\n\n"...)
	})
}

// feedHTTP serves a feed as one long HTTP response from the request's
// from, with header, each message framed by frame; a cut fault aborts the
// response.
func (s *Server) feedHTTP(w http.ResponseWriter, r *http.Request, route string, header map[string]string, frame func(b []byte, kind string, seq int64, msg []byte) []byte) ([]byte, error) {
	from, err := fromParam(r)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		w.Header().Set(k, v)
	}
	s.record(route, http.StatusOK)
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	fl.Flush()
	var b []byte
	err = s.runFeed(r.Context(), from, func(kind string, seq int64, msg []byte, flush bool) error {
		b = frame(b[:0], kind, seq, msg)
		if _, err := w.Write(b); err != nil {
			return err
		}
		if flush {
			fl.Flush()
		}
		return nil
	})
	if errors.Is(err, errCut) {
		abort(w)
	}
	return nil, errWritten
}

// feedWS serves /v1/feed/ws: after the subscribe message, a websocket
// message per feed message.
func (s *Server) feedWS(w http.ResponseWriter, r *http.Request, _ []byte) ([]byte, error) {
	nc, rw, _, err := ws.UpgradeHTTP(r, w)
	if err != nil {
		s.record("feed_ws", http.StatusBadRequest)
		return nil, errWritten // UpgradeHTTP answered
	}
	s.record("feed_ws", http.StatusSwitchingProtocols)
	defer nc.Close()
	c := &wsServerConn{r: rw.Reader, w: bufio.NewWriterSize(nc, 64<<10)}
	nc.SetReadDeadline(time.Now().Add(30 * time.Second)) //nolint:errcheck
	sub, err := c.readText()
	nc.SetReadDeadline(time.Time{}) //nolint:errcheck
	if err != nil {
		return nil, errWritten
	}
	var req struct {
		Op   string      `json:"op"`
		From json.Number `json:"from"`
	}
	from := int64(1)
	if json.Unmarshal(sub, &req) != nil || req.Op != "subscribe" {
		c.close(ws.StatusPolicyViolation, `expected {"op": "subscribe", "from": N}`)
		return nil, errWritten
	}
	if req.From != "" {
		if from, err = req.From.Int64(); err != nil {
			c.close(ws.StatusPolicyViolation, "from: expected a seq")
			return nil, errWritten
		}
	}
	// Reads from now on only answer pings and see the client leave.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		defer cancel()
		for {
			if _, err := c.readText(); err != nil {
				return
			}
		}
	}()
	err = s.runFeed(ctx, from, func(_ string, _ int64, msg []byte, flush bool) error {
		return c.write(ws.NewTextFrame(msg), flush)
	})
	switch {
	case errors.Is(err, errCut):
		return nil, errWritten // no close frame
	case err == nil:
		c.close(ws.StatusNormalClosure, "")
	}
	return nil, errWritten
}

// maxClientMessage bounds what the demo reads of a client's message.
const maxClientMessage = 64 << 10

// wsServerConn is the demo's side of a websocket: frames written whole
// under a lock, as pongs go out beside the feed's messages, and sent
// when runFeed flushes, as the other feeds' messages are.
type wsServerConn struct {
	r  io.Reader
	mu sync.Mutex
	w  *bufio.Writer
}

func (c *wsServerConn) write(f ws.Frame, flush bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := ws.WriteFrame(c.w, f); err != nil {
		return err
	}
	if flush {
		return c.w.Flush()
	}
	return nil
}

func (c *wsServerConn) close(code ws.StatusCode, reason string) {
	_ = c.write(ws.NewCloseFrame(ws.NewCloseFrameBody(code, reason)), true)
}

// readText reads the client's next data message, answering pings; a
// close frame or a broken frame ends the connection.
func (c *wsServerConn) readText() ([]byte, error) {
	var msg []byte
	for {
		h, err := ws.ReadHeader(c.r)
		if err != nil {
			return nil, err
		}
		if err := ws.CheckHeader(h, ws.StateServerSide); err != nil {
			return nil, err
		}
		if h.Length > maxClientMessage-int64(len(msg)) {
			return nil, errors.New("a client message too long")
		}
		f := ws.Frame{Header: h, Payload: make([]byte, h.Length)}
		if _, err := io.ReadFull(c.r, f.Payload); err != nil {
			return nil, err
		}
		f = ws.UnmaskFrameInPlace(f)
		switch f.Header.OpCode {
		case ws.OpPing:
			if err := c.write(ws.NewPongFrame(f.Payload), true); err != nil {
				return nil, err
			}
		case ws.OpPong:
		case ws.OpClose:
			return nil, io.EOF
		default:
			if msg = append(msg, f.Payload...); f.Header.Fin {
				return msg, nil
			}
		}
	}
}

// trades serves /v1/trades?from_seq=A&to_seq=B: the feed's history,
// trades A..B (both included), at most max_page_size (or limit) of them;
// after_seq=K is from_seq=K+1, for keyset pages.
func (s *Server) trades(_ http.ResponseWriter, r *http.Request, b []byte) ([]byte, error) {
	q := r.URL.Query()
	bound := func(name string, def int64) (int64, error) {
		v := q.Get(name)
		if v == "" {
			return def, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return 0, badRequest("%s: expected a seq >= 1, got %q", name, v)
		}
		return n, nil
	}
	from, err := bound("from_seq", 1)
	if err != nil {
		return nil, err
	}
	if v := q.Get("after_seq"); v != "" {
		k, err := strconv.ParseInt(v, 10, 64)
		if err != nil || k < 0 {
			return nil, badRequest("after_seq: expected a seq >= 0, got %q", v)
		}
		from = k + 1
	}
	size, err := bound("limit", int64(s.cfg.MaxPageSize))
	if err != nil {
		return nil, err
	}
	to, err := bound("to_seq", int64(s.cfg.FeedTrades))
	if err != nil {
		return nil, err
	}
	to = min(to, int64(s.cfg.FeedTrades), from+min(size, int64(s.cfg.MaxPageSize))-1)
	b = append(b, `{"data":[`...)
	for seq := from; seq <= to; seq++ {
		if seq > from {
			b = append(b, ',')
		}
		b = appendTrade(b, seq)
	}
	return append(b, "]}"...), nil
}
