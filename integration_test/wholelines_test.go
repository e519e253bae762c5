package integration_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tap-dev/tap/demoapi"
)

// TestKillLeavesWholeLines kills the tap with SIGKILL in the middle of a
// large stream, in Singer and in Airbyte mode, and checks that every line
// it wrote to stdout is whole JSON. The events stream is declared unsorted
// here, so its only STATE comes at its end: between the start and the
// kill, stdout is written only when the tap's buffer fills, which is where
// a writer that flushed a full buffer cut a line in two. The kill comes as
// the tap requests a given page, while it writes the records of the pages
// before.
func TestKillLeavesWholeLines(t *testing.T) {
	t.Parallel()
	dc := demoBase()
	dc.Events = 40000 // ~12 MB of messages, far more than any buffer
	srv, err := demoapi.New(dc)
	if err != nil {
		t.Fatal(err)
	}
	log := &reqLog{}
	base := serve(t, log.wrap(srv))
	defs := demoStreams(t, map[string]int{"events": 1000}, "events")
	defs[0].(map[string]any)["is_sorted"] = false
	d := newTapDir(t, tapConfig(base, defs))
	catalog, _ := json.Marshal(map[string]any{"streams": []any{map[string]any{
		"stream":                map[string]any{"name": "events", "json_schema": map[string]any{"type": "object"}, "supported_sync_modes": []string{"full_refresh"}},
		"sync_mode":             "full_refresh",
		"destination_sync_mode": "overwrite",
	}}})
	writeFile(t, filepath.Join(d.dir, "catalog.json"), catalog)

	runs := []struct {
		mode      string
		args      []string
		afterPage int // the kill comes as this page is requested
	}{
		{"singer", []string{"--config", "config.json"}, 4},
		{"singer", []string{"--config", "config.json"}, 8},
		{"airbyte", []string{"read", "--config", "config.json", "--catalog", "catalog.json"}, 4},
		{"airbyte", []string{"read", "--config", "config.json", "--catalog", "catalog.json"}, 8},
	}
	for i, r := range runs {
		run := i + 1
		log.setRun(run)
		out := killAfterRequest(t, d.dir, r.args, log.after(run, r.afterPage))
		if len(out) < 256<<10 { // less than a buffer's worth would prove nothing
			t.Fatalf("%s run %d: killed after %d bytes of stdout; the test needs more", r.mode, run, len(out))
		}
		if out[len(out)-1] != '\n' {
			t.Errorf("%s run %d: stdout ends in a cut line: …%q", r.mode, run, out[max(0, len(out)-80):])
		}
		lines := bytes.Split(bytes.TrimSuffix(out, []byte{'\n'}), []byte{'\n'})
		for n, l := range lines {
			if !json.Valid(l) {
				t.Errorf("%s run %d: line %d of %d is not JSON: %.80q…", r.mode, run, n+1, len(lines), l)
				break
			}
		}
		t.Logf("%s run %d: killed after %d bytes of stdout, %d lines", r.mode, run, len(out), len(lines))
	}
}

// killAfterRequest runs the tap in dir, kills it with SIGKILL once
// trigger fires, and returns what it wrote to stdout. A tap that exits on
// its own fails the test.
func killAfterRequest(t *testing.T, dir string, args []string, trigger <-chan struct{}) []byte {
	t.Helper()
	// A SIGKILL that lands while the kernel copies a large write, to a
	// pipe or a file, can leave part of it (at a page boundary): the
	// kernel's doing, which no writer can prevent, and under load the
	// test saw it often. What the tap controls is that each write ends
	// at a line's end, so the tap is first stopped (SIGSTOP lets a write
	// under way finish) and then killed: a cut line left is the tap's.
	// stdout is a regular file, so no reader can fall behind.
	outPath := filepath.Join(t.TempDir(), "stdout")
	w, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(tapBin, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, w, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-trigger:
		if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		waitStopped(t, cmd.Process.Pid)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-exited
	case err := <-exited:
		t.Fatalf("the tap ended before the kill (%v); stderr:\n%s", err, stderr.Bytes())
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("the tap did not reach the kill point in 2 minutes; stderr:\n%s", stderr.Bytes())
	}
	out, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// waitStopped waits until every thread of process pid is stopped (state
// T in /proc), for at most 30 seconds.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		stats, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		stopped := len(stats) > 0
		for _, f := range stats {
			b, err := os.ReadFile(f)
			// The state follows the command's closing parenthesis.
			i := bytes.LastIndexByte(b, ')')
			if err != nil || i < 0 || i+2 >= len(b) || (b[i+2] != 'T' && b[i+2] != 't') {
				stopped = false
				break
			}
		}
		if stopped {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tap (pid %d) did not stop within 30 s of SIGSTOP", pid)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestKillOnAFullPipeLeavesWholeLines: a tap killed (SIGKILL, which no handler sees)
// while a slow target holds its stdout pipe full leaves no part of a line
// in the pipe: whatever the target reads after the kill ends with a whole
// line. Records of 60 B to 12 KiB, so that lines longer than PIPE_BUF
// (4 KiB) are among those cut at; six kills at different moments, each
// once the target has read so much.
func TestKillOnAFullPipeLeavesWholeLines(t *testing.T) {
	t.Parallel()
	var body strings.Builder
	body.WriteString(`{"data": [`)
	for i := range 6000 {
		if i > 0 {
			body.WriteString(",")
		}
		body.WriteString(`{"id": ` + strconv.Itoa(i) + `, "note": "` + strings.Repeat("n", 40+(i*7919)%12000) + `"}`)
	}
	body.WriteString(`]}`)
	page := body.String()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, page)
	}))
	defer srv.Close()
	d := newTapDir(t, tapConfig(srv.URL, []any{map[string]any{"name": "notes", "path": "/notes", "records_path": "data",
		"primary_key": []string{"id"}, "pagination": map[string]any{"type": "none"},
		"schema": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}, "note": map[string]any{"type": "string"}}}}}))
	for run := range 6 {
		killAt := (run + 1) * 300 << 10 // bytes the target has read
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(plainTap(t), "--config", "config.json")
		cmd.Dir, cmd.Stdout = d.dir, w
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		// A slow target: 4,000 bytes a millisecond at most, so the pipe
		// stays full while the tap writes.
		got, due := make(chan []byte, 1), make(chan struct{})
		go func() {
			var out []byte
			buf := make([]byte, 4000)
			for {
				n, err := r.Read(buf)
				if len(out) < killAt && len(out)+n >= killAt {
					close(due)
				}
				out = append(out, buf[:n]...)
				if err != nil {
					got <- out
					return
				}
				time.Sleep(time.Millisecond)
			}
		}()
		select {
		case <-due:
		case <-time.After(time.Minute): // a bound
			t.Fatalf("run %d: the target did not read %d bytes in a minute", run+1, killAt)
		}
		cmd.Process.Kill()
		cmd.Wait()
		var out []byte
		select {
		case out = <-got:
		case <-time.After(time.Minute): // a bound: the pipe ends with the child
			t.Fatal("the pipe did not end after the kill")
		}
		r.Close()
		if len(out) > 0 && out[len(out)-1] != '\n' {
			i := bytes.LastIndexByte(out, '\n')
			t.Errorf("run %d, killed once %d bytes were read: the pipe ends with part of a line (%d bytes after the last whole line of %d bytes read)", run+1, killAt, len(out)-i-1, len(out))
		}
	}
}
