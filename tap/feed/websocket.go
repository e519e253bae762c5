package feed

import (
	"context"
	"errors"
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
	ctx    context.Context
	cancel context.CancelFunc
}

func openWS(ctx context.Context, hc *http.Client, url string, header http.Header, subscribe []byte, idle time.Duration, scrub func(string) string) (conn, error) {
	c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: hc, HTTPHeader: header})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			se := &statusError{status: resp.StatusCode}
			return nil, se
		}
		return nil, err
	}
	c.SetReadLimit(maxMessage)
	cctx, cancel := context.WithCancel(context.Background())
	w := &ws{c: c, ctx: cctx, cancel: cancel}
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
	_, b, err := w.c.Read(context.Background())
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return nil, errors.New("the server closed the websocket: " + ce.Error())
	}
	return b, err
}

// ready: coder/websocket does not say what it has buffered.
func (w *ws) ready() bool { return false }

func (w *ws) close() {
	w.cancel()
	w.c.CloseNow()
}
