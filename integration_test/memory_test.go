package integration_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The memory of hostile bodies: each run is a child process whose peak
// resident memory is asserted, and which is killed as soon as it passes
// the bound, so that a tap without the cap fails the test quickly
// rather than taking the machine's memory.

var (
	plainOnce sync.Once
	plainBin  string
	plainErr  error
)

// plainTap is the tap built without the race detector, which multiplies
// the memory a run takes: it is tapBin unless the suite runs with -race.
func plainTap(t *testing.T) string {
	t.Helper()
	if !raceEnabled {
		return tapBin
	}
	plainOnce.Do(func() {
		plainBin = filepath.Join(filepath.Dir(tapBin), "tap-plain")
		build := exec.Command("go", "build", "-o", plainBin, "..")
		var stderr bytes.Buffer
		build.Stderr = &stderr
		if err := build.Run(); err != nil {
			plainErr = errors.New(stderr.String())
		}
	})
	if plainErr != nil {
		t.Fatalf("building tap without -race: %v", plainErr)
	}
	return plainBin
}

// runBounded runs the plain tap in dir with args, killing it after limit
// or once its resident memory passes maxMiB; it fails the test if either
// happened, and returns the run with its peak resident memory in MiB.
func runBounded(t *testing.T, dir string, limit time.Duration, maxMiB int64, args ...string) (result, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, plainTap(t), args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var over sync.Once
	overMiB := int64(0)
	var hwmKiB atomic.Int64 // the child's own high-water mark, as /proc last said it
	done := make(chan struct{})
	go func() {
		// Linux says a process's resident memory in /proc; elsewhere only
		// the peak at the end is known.
		status := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "status")
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if kib := procKiB(status, "VmRSS:"); kib > maxMiB<<10 {
				over.Do(func() { overMiB = kib >> 10; cmd.Process.Kill() })
			}
			if kib := procKiB(status, "VmHWM:"); kib > 0 {
				hwmKiB.Store(kib)
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running tap %v: %v", args, err)
	}
	if overMiB > 0 {
		t.Fatalf("tap %v passed %d MiB resident (%d MiB) and was killed; stderr ends:\n%s", args, maxMiB, overMiB, tail(errb.Bytes()))
	}
	if ctx.Err() != nil {
		t.Fatalf("tap %v did not finish within %s; stderr ends:\n%s", args, limit, tail(errb.Bytes()))
	}
	peak := hwmKiB.Load() >> 10
	// The rusage's peak is no use on Linux: exec records the high-water
	// mark of the memory it replaces, which for a child forked with
	// CLONE_VM is this test process's (hundreds of MiB under -race).
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && runtime.GOOS != "linux" {
		peak = int64(ru.Maxrss) >> 10 // KiB on Linux
		if runtime.GOOS == "darwin" {
			peak >>= 10 // bytes there
		}
	}
	if peak > maxMiB {
		t.Fatalf("tap %v peaked at %d MiB resident, more than %d MiB", args, peak, maxMiB)
	}
	return result{stdout: out.Bytes(), stderr: errb.Bytes(), code: code}, peak
}

// procKiB is a "Name: n kB" line of a /proc status file, 0 when absent.
func procKiB(path, name string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

func tail(b []byte) []byte {
	if len(b) > 2000 {
		return b[len(b)-2000:]
	}
	return b
}

// gzipBomb is a gzip body of head, mib MiB of the byte fill, then tail:
// gzip members one after the other (a reader reads them as one stream),
// the MiB compressed once, so a GiB costs the server a few kilobytes.
func gzipBomb(t *testing.T, head string, fill byte, mib int, tail string) []byte {
	t.Helper()
	member := func(b []byte) []byte {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	mb := member(bytes.Repeat([]byte{fill}, 1<<20))
	out := member([]byte(head))
	for range mib {
		out = append(out, mb...)
	}
	return append(out, member([]byte(tail))...)
}

// TestHostileBodiesRunInBoundedMemory: a csv field, an xml text and an
// xml nesting of a gzip bomb stop at their caps with an error naming the
// stream, in bounded memory, for a sync and for check alike. Before the
// caps a 512 MiB field took 2.6 GB and deep XML overflowed the stack.
func TestHostileBodiesRunInBoundedMemory(t *testing.T) {
	t.Parallel()
	const maxMiB = 400
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"id": map[string]any{"type": "integer"}, "name": map[string]any{"type": "string"},
	}}
	bodies := map[string][]byte{
		"/csv": gzipBomb(t, "id,name\n1,", 'a', 1024, "\n"),
		"/xml": gzipBomb(t, "<items><item><id>1</id><name>", 'a', 1024, "</name></item></items>"),
		// 20 KB of gzip: <a> nested millions deep.
		"/deep": append(gzipBomb(t, "<items><item>", 'x', 0, ""), gzipBomb(t, "", 0, 0, strings.Repeat("<a>", 8<<20))...),
	}
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/gzip")
		w.Write(bodies[r.URL.Path])
	}))
	for _, tt := range []struct {
		name, path, format, want string
	}{
		{"csv_field", "/csv", "csv", `stream "csv_field": row 2 of the csv body is larger than 64 MiB`},
		{"xml_text", "/xml", "xml", `stream "xml_text": record 1 of the xml body is larger than 64 MiB`},
		{"xml_depth", "/deep", "xml", `stream "xml_depth": the xml body is nested deeper than 10000 levels`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			def := map[string]any{"name": tt.name, "path": tt.path, "format": tt.format, "primary_key": []string{"id"},
				"pagination": map[string]any{"type": "none"}, "schema": schema}
			if tt.format == "xml" {
				def["records_path"] = "items.item"
			}
			cfg := tapConfig(base, []any{def})
			// Reading 64 MiB through encoding/xml takes seconds on a busy
			// machine: more than the harness's 5 s timeout, which would
			// retry a body that fails the same each time.
			cfg["request_timeout_s"] = 300
			cfg["retry"].(map[string]any)["max_attempts"] = 1
			d := newTapDir(t, cfg)
			for _, args := range [][]string{{"--config", "config.json"}, {"--config", "config.json", "--test"}, {"check", "--config", "config.json"}} {
				r, peak := runBounded(t, d.dir, 5*time.Minute, maxMiB, args...)
				t.Logf("tap %v: exit %d, peak %d MiB resident", args, r.code, peak)
				failed := r.code != 0 && bytes.Contains(r.stderr, []byte(tt.want))
				if args[0] == "check" { // Airbyte's: the answer is on stdout, in JSON
					failed = r.code == 0 && bytes.Contains(r.stdout, []byte(`"status":"FAILED"`)) &&
						bytes.Contains(r.stdout, []byte(strings.ReplaceAll(tt.want, `"`, `\"`)))
				}
				if !failed {
					t.Errorf("tap %v: exit %d, want a failure with %q; output ends:\n%s%s", args, r.code, tt.want, tail(r.stdout), tail(r.stderr))
				}
			}
		})
	}
}

// TestFeedReadAheadBounded: a feed of 8 MiB messages into a stdout no one
// reads. The tap may read ahead while its write waits, but only so many
// bytes (two messages of the largest size), not so many messages: the
// child's resident memory stays bounded while the server would send
// 480 MiB, and the server is held back by the unread connection.
func TestFeedReadAheadBounded(t *testing.T) {
	t.Parallel()
	const msgs, size, maxMiB = 60, 8 << 20, 200
	filler := strings.Repeat("x", size)
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		for i := 1; i <= msgs; i++ {
			if _, err := io.WriteString(w, `{"type":"trade","seq":`+strconv.Itoa(i)+`,"symbol":"`+filler+`"}`+"\n"); err != nil {
				return
			}
			sent.Add(1)
		}
	}))
	defer srv.Close()
	d := newTapDir(t, tapConfig(srv.URL, []any{feedStream("ndjson", map[string]any{"path": "/"})}))
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdoutR.Close() // never read: the tap's writes wait
	cmd := exec.Command(plainTap(t), "--config", "config.json")
	cmd.Dir, cmd.Stdout = d.dir, stdoutW
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdoutW.Close()
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	status := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "status")
	// Watch until the server has been held still for a second (the tap
	// reads no more) or has sent everything; at most 30 s.
	var peak int64
	last, still := sent.Load(), time.Now()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		kib := procKiB(status, "VmRSS:")
		peak = max(peak, kib>>10)
		if peak > maxMiB {
			t.Fatalf("the tap passed %d MiB resident (%d MiB) with %d of %d messages of 8 MiB sent: its read-ahead is not bounded in bytes", maxMiB, peak, sent.Load(), msgs)
		}
		if n := sent.Load(); n != last {
			last, still = n, time.Now()
		} else if time.Since(still) > time.Second || n == msgs {
			break
		}
	}
	if n := sent.Load(); n >= msgs {
		t.Fatalf("the server sent all %d messages to a tap whose stdout is not read: it read them all ahead", n)
	}
	t.Logf("held at %d of %d messages of 8 MiB sent, peak %d MiB resident", sent.Load(), msgs, peak)
}
