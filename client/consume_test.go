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

// TestBuffer: a 2xx body is read into the request's Buffer, asked for
// with room for its Content-Length; an error body is not, as its error
// outlives the request.
func TestBuffer(t *testing.T) {
	srv := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bad" {
			w.WriteHeader(http.StatusBadRequest)
		}
		io.WriteString(w, `{"page":"`+r.URL.Path+`"}`)
	})
	e := newEnv(t, srv.URL, nil)
	buf := make([]byte, 0, 1024)
	var asked []int
	var checked []byte
	req := func(path string) Request {
		return Request{Stream: "s", URL: path,
			Buffer: func(size int) []byte { asked = append(asked, size); return buf },
			Check:  func(b []byte) error { checked = b; return nil }}
	}
	if _, err := e.c.Do(context.Background(), req("/ok")); err != nil {
		t.Fatal(err)
	}
	if string(checked) != `{"page":"/ok"}` || &checked[0] != &buf[:1][0] {
		t.Errorf("checked %q, not in the request's buffer", checked)
	}
	if len(asked) != 1 || asked[0] < len(`{"page":"/ok"}`) {
		t.Errorf("Buffer asked for %v bytes", asked)
	}
	asked = nil
	if _, err := e.c.Do(context.Background(), req("/bad")); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("a 400: %v", err)
	}
	if len(asked) != 0 {
		t.Errorf("Buffer asked for an error body (%v)", asked)
	}
}
