package feed

import (
	"crypto/tls"
	"net"
	"syscall"
)

// socket is a connection's socket, to set its options; the zero socket
// sets none.
type socket struct{ raw syscall.RawConn }

// socketOf is c's socket, through TLS; the zero socket when c has none.
func socketOf(c net.Conn) socket {
	if t, ok := c.(*tls.Conn); ok {
		c = t.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return socket{}
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return socket{}
	}
	return socket{raw: raw}
}

// lowat sets SO_RCVLOWAT: the socket is readable to poll and epoll once
// n bytes wait. A read that finds fewer still returns them. Best effort:
// a socket that refuses it is read as before.
func (s socket) lowat(n int) {
	if s.raw == nil {
		return
	}
	s.raw.Control(func(fd uintptr) { //nolint:errcheck
		syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT, n) //nolint:errcheck
	})
}
