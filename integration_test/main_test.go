// Package integration_test builds the real tap binary and runs it as a
// subprocess, as users and Meltano do.
package integration_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// tapBin is the binary built once for the whole suite.
var tapBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tap-it-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tapBin = filepath.Join(dir, "tap")
	args := []string{"build", "-o", tapBin}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "..")...)
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building tap:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what one run of the binary printed and returned.
type result struct {
	stdout, stderr []byte
	code           int
}

// runTap runs the binary in dir with args, giving up after limit.
// outputs are r's stdout and stderr by name, for assertNone.
func (r result) outputs() map[string][]byte {
	return map[string][]byte{"stdout": r.stdout, "stderr": r.stderr}
}

func runTap(t *testing.T, dir string, limit time.Duration, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, tapBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running tap %v: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("tap %v did not finish within %s; stderr:\n%s", args, limit, errb.String())
	}
	return result{stdout: out.Bytes(), stderr: errb.Bytes(), code: code}
}
