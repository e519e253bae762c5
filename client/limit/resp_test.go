package limit

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/internal/redistest"
)

func TestReadReply(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     any
		err      string // a substring of the error; "" = none
	}{
		{name: "simple", in: "+OK\r\n", want: "OK"},
		{name: "error reply", in: "-NOSCRIPT No matching script\r\n", want: redisError("NOSCRIPT No matching script")},
		{name: "integer", in: ":-42\r\n", want: int64(-42)},
		{name: "bulk", in: "$5\r\nhe\r\no\r\n", want: "he\r\no"},
		{name: "empty bulk", in: "$0\r\n\r\n", want: ""},
		{name: "nil bulk", in: "$-1\r\n", want: nil},
		{name: "nil array", in: "*-1\r\n", want: nil},
		{name: "empty array", in: "*0\r\n", want: []any{}},
		{name: "array", in: "*3\r\n:0\r\n:17\r\n$3\r\nabc\r\n", want: []any{int64(0), int64(17), "abc"}},
		{name: "nested", in: "*2\r\n*1\r\n:1\r\n$-1\r\n", want: []any{[]any{int64(1)}, nil}},
		{name: "no CR", in: "+OK\n", err: "malformed line"},
		{name: "empty line", in: "\r\n", err: "malformed line"},
		{name: "unknown type", in: "%1\r\n", err: "unknown reply type"},
		{name: "bad integer", in: ":12x\r\n", err: "bad integer"},
		{name: "integer overflow", in: ":99999999999999999999\r\n", err: "bad integer"},
		{name: "bad bulk length", in: "$-2\r\n", err: "bad bulk length"},
		{name: "huge bulk", in: "$999999999\r\n", err: "bad bulk length"},
		{name: "bulk without CRLF", in: "$2\r\nabcd\r\n", err: "not ended by CRLF"},
		{name: "short bulk", in: "$5\r\nab", err: io.ErrUnexpectedEOF.Error()},
		{name: "short array", in: "*2\r\n:1\r\n", err: io.ErrUnexpectedEOF.Error()},
		{name: "bad array length", in: "*x\r\n", err: "bad array length"},
		{name: "too deep", in: strings.Repeat("*1\r\n", maxDepth+1) + ":1\r\n", err: "nested too deep"},
		{name: "nothing", in: "", err: "EOF"},
		{name: "line too long", in: "+" + strings.Repeat("a", 5000) + "\r\n", err: "line too long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readReply(bufio.NewReader(strings.NewReader(tc.in)))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("readReply(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("readReply(%q): %v", tc.in, err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("readReply(%q) (-want +got):\n%s", tc.in, d)
			}
		})
	}
}

// A reply is read whole: two replies in a row come back one by one.
func TestReadReplyStream(t *testing.T) {
	r := bufio.NewReader(strings.NewReader(":1\r\n$2\r\nab\r\n"))
	for _, want := range []any{int64(1), "ab"} {
		got, err := readReply(r)
		if err != nil || got != want {
			t.Fatalf("got %v, %v; want %v", got, err, want)
		}
	}
	if _, err := readReply(r); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last reply: %v, want EOF", err)
	}
}

func TestAppendCommand(t *testing.T) {
	got := string(appendCommand(nil, []string{"GET", "", "a\r\nb"}))
	want := "*3\r\n$3\r\nGET\r\n$0\r\n\r\n$4\r\na\r\nb\r\n"
	if got != want {
		t.Errorf("appendCommand = %q, want %q", got, want)
	}
}

func TestParseRedisURL(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want redisOptions
		tls  string // the TLS server name; "" = no TLS
		err  string
	}{
		{in: "redis://127.0.0.1:6380/0", want: redisOptions{addr: "127.0.0.1:6380"}},
		{in: "redis://localhost", want: redisOptions{addr: "localhost:6379"}},
		{in: "redis://h:1/", want: redisOptions{addr: "h:1"}},
		{in: "redis://:s3cret@h:1/3", want: redisOptions{addr: "h:1", password: "s3cret", db: 3}},
		{in: "redis://bob:s3cret@h:1", want: redisOptions{addr: "h:1", user: "bob", password: "s3cret"}},
		{in: "redis://:p%40ss@h:1", want: redisOptions{addr: "h:1", password: "p@ss"}},
		{in: "redis://[::1]:7000/1", want: redisOptions{addr: "[::1]:7000", db: 1}},
		{in: "rediss://cache.example:6380/2", want: redisOptions{addr: "cache.example:6380", db: 2}, tls: "cache.example"},
		{in: "http://h:1", err: "not a redis:// or rediss:// URL"},
		{in: "redis:h:1", err: "needs a host"},
		{in: "redis:///0", err: "needs a host"},
		{in: "redis://:s3cret@:1/0", err: "needs a host"},
		{in: "redis://h:0", err: "port"},
		{in: "redis://h:99999", err: "port"},
		{in: "redis://h:1/x", err: "database number"},
		{in: "redis://h:1/-1", err: "database number"},
		{in: "redis://h:1/0?db=2", err: "no query"},
		{in: "redis://:s3cret@h:1 /0", err: "not a redis://"},
		{in: "redis://:s3cret@h:x/0", err: "not a redis://"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseRedisURL(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("parseRedisURL(%q) = %+v, %v; want an error with %q", tc.in, got, err, tc.err)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("the error holds the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseRedisURL(%q): %v", tc.in, err)
			}
			switch {
			case tc.tls == "" && got.tls != nil:
				t.Errorf("TLS on for %q", tc.in)
			case tc.tls != "" && (got.tls == nil || got.tls.ServerName != tc.tls || got.tls.InsecureSkipVerify):
				t.Errorf("TLS config %+v, want verification of %q", got.tls, tc.tls)
			}
			got.tls = nil
			if got != tc.want {
				t.Errorf("parseRedisURL(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

// Against a real server: AUTH, SELECT, the NOSCRIPT fallback, errors
// that name the command and not the password, and a new connection
// after the server restarts.
func TestRedisClient(t *testing.T) {
	srv := redistest.ForTest(t)
	ctx := context.Background()
	admin := newRedisClient(redisOptions{addr: srv.Addr})
	defer admin.Close()
	if _, err := admin.do(ctx, "CONFIG", "SET", "requirepass", "s3cret"); err != nil {
		t.Fatal(err)
	}

	bad := newRedisClient(redisOptions{addr: srv.Addr, password: "wrong-pw"})
	_, err := bad.do(ctx, "PING")
	if err == nil || !strings.Contains(err.Error(), "redis AUTH") || strings.Contains(err.Error(), "wrong-pw") {
		t.Errorf("a wrong password: %v, want a redis AUTH error without it", err)
	}
	bad.Close()

	opt, err := parseRedisURL("redis://:s3cret@" + srv.Addr + "/5")
	if err != nil {
		t.Fatal(err)
	}
	c := newRedisClient(opt)
	defer c.Close()
	if _, err := c.do(ctx, "SET", "k", "in db 5"); err != nil {
		t.Fatal(err)
	}
	if v, err := c.do(ctx, "GET", "k"); err != nil || v != "in db 5" {
		t.Fatalf("GET k = %v, %v", v, err)
	}
	noAuth := newRedisClient(redisOptions{addr: srv.Addr, db: 5})
	if v, err := noAuth.do(ctx, "GET", "k"); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("a client without AUTH read %v, %v", v, err)
	}
	noAuth.Close()
	if _, err := c.do(ctx, "INCR", "k"); err == nil || !strings.HasPrefix(err.Error(), "redis INCR: ERR") {
		t.Errorf("INCR of a string: %v, want an error naming INCR", err)
	}

	s := newRedisScript("return {tonumber(ARGV[1]) + 1, redis.call('GET', KEYS[1])}")
	if _, err := c.do(ctx, "SCRIPT", "FLUSH"); err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // the first runs by EVAL after NOSCRIPT, the second by EVALSHA
		v, err := s.run(ctx, c, []string{"k"}, 41.0)
		if d := cmp.Diff([]any{int64(42), "in db 5"}, v); err != nil || d != "" {
			t.Fatalf("run %d: %v, %s", i, err, d)
		}
	}
	if v, err := c.do(ctx, "SCRIPT", "EXISTS", s.sha); err != nil || cmp.Diff([]any{int64(1)}, v) != "" {
		t.Errorf("SCRIPT EXISTS after a run = %v, %v; want [1]", v, err)
	}

	// A context ended before the call fails it, and the client goes on.
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.do(done, "PING"); !errors.Is(err, context.Canceled) {
		t.Errorf("PING with a cancelled context: %v", err)
	}
	// One ended while a command waits for its reply: BLPOP on an empty
	// list waits, here until the context ends (ended before the call, it
	// fails the same way).
	blocked, cancel := context.WithCancel(ctx)
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	if _, err := c.do(blocked, "BLPOP", "empty", "0"); !errors.Is(err, context.Canceled) {
		t.Errorf("BLPOP ended by its context: %v", err)
	}
	if v, err := c.do(ctx, "GET", "k"); err != nil || v != "in db 5" {
		t.Errorf("GET k after a cancelled call = %v, %v", v, err)
	}
	short, cancel := context.WithTimeout(ctx, time.Nanosecond)
	<-short.Done()
	if _, err := c.do(short, "PING"); err == nil {
		t.Errorf("PING past its deadline succeeded")
	}
	cancel()

	// The server restarts (its data and password gone): the idle
	// connection is dead, and the next call dials a new one.
	if err := srv.Restart(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	// AUTH with a password the new server does not have is refused
	// (Redis ≥ 6): so the call reached it.
	if _, err := c.do(ctx, "PING"); err == nil || !strings.Contains(err.Error(), "redis AUTH") {
		t.Errorf("PING after the restart: %v, want the new server's AUTH refusal", err)
	}
	c2 := newRedisClient(redisOptions{addr: srv.Addr})
	defer c2.Close()
	if v, err := c2.do(ctx, "PING"); err != nil || v != "PONG" {
		t.Fatalf("PING = %v, %v", v, err)
	}
	if err := srv.Restart(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if v, err := c2.do(ctx, "PING"); err != nil || v != "PONG" {
		t.Errorf("PING on a pooled connection after a restart = %v, %v; want a new connection", v, err)
	}
}
