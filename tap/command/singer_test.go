package command

import "testing"

// The log of serve-demo names the address the server is bound to: a
// wildcard is reported as such, not as the loopback URL a client uses.
func TestBoundAddr(t *testing.T) {
	for _, c := range []struct{ host, base, want string }{
		{"127.0.0.1", "http://127.0.0.1:8765", "http://127.0.0.1:8765"},
		{"localhost", "http://127.0.0.1:41234", "http://127.0.0.1:41234"},
		{"0.0.0.0", "http://127.0.0.1:8765", "0.0.0.0:8765 (every interface)"},
		{"::", "http://127.0.0.1:8765", "[::]:8765 (every interface)"},
		{"", "http://127.0.0.1:41234", ":41234 (every interface)"},
	} {
		if got := boundAddr(c.host, c.base); got != c.want {
			t.Errorf("boundAddr(%q, %q) = %q, want %q", c.host, c.base, got, c.want)
		}
	}
}
