//go:build !linux

package feed

import "net"

// socket is a connection's socket; elsewhere than on Linux the tap sets
// no option on it.
type socket struct{}

func socketOf(net.Conn) socket { return socket{} }

func (socket) lowat(int) {}
