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
