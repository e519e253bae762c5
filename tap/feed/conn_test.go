package feed

import (
	"io"
	"strings"
	"testing"
)

func TestSSEReadsEventsAndHeartbeats(t *testing.T) {
	body := ": hello\n\nid: 1\nevent: trade\ndata: {\"seq\":1,\ndata: \"x\":2}\n\nid: 2\r\ndata: {\"seq\":2}\r\n\r\nevent: ping\n\ndata: {\"seq\":3}"
	s := &sse{lines: newLines(io.NopCloser(strings.NewReader(body)))}
	want := []string{"<alive>", "<alive>", "{\"seq\":1,\n\"x\":2}", "{\"seq\":2}", "<alive>"}
	for i, w := range want {
		b, err := s.read()
		got := string(b)
		if b == nil {
			got = "<alive>"
		}
		if err != nil || got != w {
			t.Fatalf("event %d: %q, %v; want %q", i, got, err, w)
		}
	}
	// The last event has no blank line after it: the connection cut it.
	if b, err := s.read(); err == nil {
		t.Fatalf("an event cut by the connection's end was read: %q", b)
	}
}

func TestNDJSONSkipsEmptyLinesAndACutLine(t *testing.T) {
	n := ndjson{newLines(io.NopCloser(strings.NewReader("{\"seq\":1}\n\n{\"seq\":2}\r\n{\"seq\":")))}
	for i, w := range []string{`{"seq":1}`, "<alive>", `{"seq":2}`} {
		b, err := n.read()
		got := string(b)
		if b == nil {
			got = "<alive>"
		}
		if err != nil || got != w {
			t.Fatalf("line %d: %q, %v; want %q", i, got, err, w)
		}
	}
	if b, err := n.read(); err == nil {
		t.Fatalf("a line cut by the connection's end was read: %q", b)
	}
}

// endlessData is an SSE body of data lines that never ends its event,
// cut after limit bytes; read counts what was read of it.
type endlessData struct{ read, limit int }

func (e *endlessData) Read(p []byte) (int, error) {
	if e.read >= e.limit {
		return 0, io.EOF
	}
	line := "data: " + strings.Repeat("x", 1017) + "\n" // 1 KiB a line
	n := 0
	for n+len(line) <= len(p) && e.read+n < e.limit {
		n += copy(p[n:], line)
	}
	e.read += n
	return n, nil
}

// An SSE event is bounded as a line is: data lines that never end their
// event (1 GB in 2 s from a hostile server) stop the read at maxMessage,
// not at the machine's memory.
func TestSSEEventIsBounded(t *testing.T) {
	body := &endlessData{limit: 4 * maxMessage}
	s := &sse{lines: newLines(io.NopCloser(body))}
	_, err := s.read()
	if err == nil || !strings.Contains(err.Error(), "an event of more than") {
		t.Fatalf("err = %v, want the event's bound", err)
	}
	if body.read > maxMessage+1<<20 {
		t.Errorf("read %d bytes before stopping, want about maxMessage (%d)", body.read, maxMessage)
	}
}
