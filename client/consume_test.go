package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestConsume: a 2xx body goes to Consume as it arrives; a body cut short
// is retried, a body the consumer refuses is not, and the error names the
// Content-Type; Request.Header is sent.
func TestConsume(t *testing.T) {
	cuts := 0
	srv := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/cut":
			if cuts++; cuts == 1 {
				// Promise more than is sent: the body ends early.
				w.Header().Set("Content-Length", "100")
				io.WriteString(w, "id\n1\n")
				return
			}
			io.WriteString(w, "id\n1\n2\n")
		case "/html":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html></html>")
		default:
			io.WriteString(w, r.Header.Get("X-Cursor")+"|"+r.Header.Get("Accept"))
		}
	})
	e := newEnv(t, srv.URL, nil)

	var got string
	consume := func(body io.Reader, _ http.Header) error {
		b, err := io.ReadAll(body)
		got = string(b)
		return err
	}
	if _, err := e.c.Do(context.Background(), Request{Stream: "s", URL: "/h", Consume: consume,
		Header: http.Header{"X-Cursor": {"abc"}, "Accept": {"text/csv"}}}); err != nil || got != "abc|text/csv" {
		t.Errorf("headers: got %q, %v", got, err)
	}

	if resp, err := e.c.Do(context.Background(), Request{Stream: "s", URL: "/cut", Consume: consume}); err != nil || got != "id\n1\n2\n" || resp.Attempts != 2 {
		t.Errorf("cut body: got %q, %v, attempts %d", got, err, resp.Attempts)
	}

	refused := errors.New("not CSV")
	calls := 0
	_, err := e.c.Do(context.Background(), Request{Stream: "s", URL: "/html", Consume: func(io.Reader, http.Header) error {
		calls++
		return refused
	}})
	var se *StatusError
	if !errors.As(err, &se) || !errors.Is(err, refused) || !strings.Contains(err.Error(), `Content-Type "text/html"`) || calls != 1 {
		t.Errorf("refused body: err %v after %d calls (status %s)", err, calls, strconv.Itoa(statusOf(se)))
	}
}

func statusOf(se *StatusError) int {
	if se == nil {
		return 0
	}
	return se.Status
}
