// Package redistest runs a real redis-server (Debian's package) on a free
// loopback port for tests and the bench: no persistence, its files in a
// directory of its own, stopped by Stop.
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/tap-dev/tap/internal/taptest"
)

// ErrNotInstalled is returned by Start when redis-server is not on PATH.
var ErrNotInstalled = errors.New("redis-server not installed (apt-get install redis-server)")

// Server is a running redis-server.
type Server struct {
	Addr string // 127.0.0.1:port
	cmd  *exec.Cmd
	done chan struct{}
}

// URL is the server's redis:// URL (database 0).
func (s *Server) URL() string { return "redis://" + s.Addr + "/0" }

// Start starts redis-server with its files under dir and waits (at most
// 10 s) until it answers PING.
func Start(dir string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNotInstalled
	}
	// A free port: listen on port 0, note the port, close. Another
	// process could take it in between; Start then fails and says so.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(port),
		"--save", "", "--appendonly", "no", "--dir", dir, "--logfile", "")
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting redis-server: %w", err)
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(s.done) }()
	for range 100 {
		if err = ping(s.Addr); err == nil {
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("redis-server on port %d exited at start", port)
		case <-time.After(100 * time.Millisecond):
		}
	}
	s.Stop()
	return nil, fmt.Errorf("redis-server on port %d did not answer PING within 10 s: %v", port, err)
}

// ping sends PING to the server at addr and wants +PONG, within 100 ms.
// Written by hand so that the tests' helper shares no code with the
// client it tests.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// Stop kills the server and waits for it to exit. It may be called twice.
func (s *Server) Stop() {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Kill()
	<-s.done
}

// Restart starts a server again on the same port and directory (the data
// is gone: nothing is saved).
func (s *Server) Restart(dir string) error {
	s.Stop()
	_, port, _ := net.SplitHostPort(s.Addr)
	cmd := exec.Command(s.cmd.Path, "--bind", "127.0.0.1", "--port", port,
		"--save", "", "--appendonly", "no", "--dir", dir, "--logfile", "")
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd, s.done = cmd, make(chan struct{})
	done := s.done
	go func() { cmd.Wait(); close(done) }()
	for range 100 {
		if ping(s.Addr) == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("redis-server did not answer PING within 10 s after a restart")
}

// ForTest starts a server stopped with the test. Without redis-server the
// test fails under CI=true (the CI installs it) and is skipped, loudly,
// elsewhere.
func ForTest(t testing.TB) *Server {
	t.Helper()
	s, err := Start(t.TempDir())
	if errors.Is(err, ErrNotInstalled) {
		taptest.MissingProgram(t, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}
