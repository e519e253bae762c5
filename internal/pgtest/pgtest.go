// Package pgtest runs a real PostgreSQL server (Debian's postgresql
// package) for tests: a cluster of its own made by initdb in a temporary
// folder, listening on 127.0.0.1 on a free port, trust authentication,
// stopped and removed by Stop.
package pgtest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tap-dev/tap/internal/taptest"
)

// ErrNotInstalled is returned by Start when PostgreSQL's programs are
// neither on PATH nor under /usr/lib/postgresql.
var ErrNotInstalled = errors.New("PostgreSQL not installed: no initdb on PATH or under /usr/lib/postgresql/*/bin (apt-get install postgresql)")

// Server is a running PostgreSQL cluster.
type Server struct {
	Port int
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
	log  string
}

// URL is the connection URL of the cluster's database "postgres" as the
// superuser "tap".
func (s *Server) URL() string {
	return fmt.Sprintf("postgres://tap@127.0.0.1:%d/postgres?sslmode=disable", s.Port)
}

// bin finds a PostgreSQL program: on PATH, else in the newest
// /usr/lib/postgresql/N/bin, where Debian puts it.
func bin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return vb - va
	})
	for _, d := range dirs {
		if p := filepath.Join(d, name); isExec(p) {
			return p, nil
		}
	}
	return "", ErrNotInstalled
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode()&0o111 != 0
}

// Start makes a cluster and starts it, waiting (at most 30 s) until it
// takes connections. PostgreSQL refuses to run as root: as root, the
// cluster belongs to, and runs as, the system user "postgres".
func Start() (*Server, error) {
	initdb, err := bin("initdb")
	if err != nil {
		return nil, err
	}
	postgres, err := bin("postgres")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root, PostgreSQL needs the user postgres: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	run := func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		return cmd
	}
	data := filepath.Join(dir, "data")
	if out, err := run(initdb, "-D", data, "-U", "tap", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	// A free port: listen on port 0, note the port, close. Another
	// process could take it in between; Start then fails and says so.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s := &Server{Port: port, dir: dir, done: make(chan struct{}), log: filepath.Join(dir, "postgres.log")}
	logf, err := os.Create(s.log)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	defer logf.Close()
	s.cmd = run(postgres, "-D", data, "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-k", dir, "-F",
		"-c", "fsync=off", "-c", "full_page_writes=off", "-c", "synchronous_commit=off")
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting postgres: %w", err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	for range 300 {
		// Taking TCP connections is not being ready: the server says so
		// in its log once recovery is over.
		if log, _ := os.ReadFile(s.log); bytes.Contains(log, []byte("database system is ready to accept connections")) {
			return s, nil
		}
		select {
		case <-s.done:
			out, _ := os.ReadFile(s.log)
			os.RemoveAll(dir)
			return nil, fmt.Errorf("postgres on port %d exited at start: %s", port, out)
		case <-time.After(100 * time.Millisecond):
		}
	}
	s.Stop()
	return nil, fmt.Errorf("postgres on port %d was not ready within 30 s", port)
}

// Stop shuts the server down (fast: SIGINT, then SIGKILL after 10 s) and
// removes its cluster. It may be called twice.
func (s *Server) Stop() {
	select {
	case <-s.done:
	default:
		s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			s.cmd.Process.Kill()
			<-s.done
		}
	}
	os.RemoveAll(s.dir)
}

// ForTest starts a server stopped with the test. Without PostgreSQL the
// test fails under CI=true (the CI installs it) and is skipped, loudly,
// elsewhere.
func ForTest(t testing.TB) *Server {
	t.Helper()
	s, err := Start()
	if errors.Is(err, ErrNotInstalled) {
		taptest.MissingProgram(t, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}
