package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestOldRejected(t *testing.T) {
	exit := func(code int) error {
		err := exec.Command("sh", "-c", fmt.Sprintf("exit %d", code)).Run()
		if err == nil {
			t.Fatalf("sh -c 'exit %d' succeeded", code)
		}
		return err
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"bad input", fmt.Errorf("tap: %w; stderr ends with:\nINFO starting\ntap: c.json: pagination.type: unknown \"x\"\n", exit(2)),
			"the old build rejects this config: tap: c.json: pagination.type: unknown \"x\""},
		{"failed run", fmt.Errorf("tap: %w; stderr ends with:\nERROR stream events: 500\n", exit(1)),
			"the old build failed: ERROR stream events: 500"},
		{"wrong count", errors.New("keyset: the tap emitted 3 RECORD messages, want 4"),
			"the old build failed: keyset: the tap emitted 3 RECORD messages, want 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := oldRejected(tc.err); got != tc.want {
				t.Errorf("oldRejected = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBuildAgainstFile(t *testing.T) {
	dir := t.TempDir()
	exe, plain := filepath.Join(dir, "tap-old"), filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old, err := buildAgainst(context.Background(), dir, dir, exe)
	if err != nil || old.bin != exe {
		t.Errorf("buildAgainst(%s) = %+v, %v; want the binary as it is", exe, old, err)
	}
	if _, err := buildAgainst(context.Background(), dir, dir, plain); err == nil || !strings.Contains(err.Error(), "not executable") {
		t.Errorf("buildAgainst(%s) = %v, want a file that is not executable", plain, err)
	}
	// dir is no git repository: a name that is no file is no revision either.
	if _, err := buildAgainst(context.Background(), dir, dir, "no-such-rev"); err == nil || !strings.Contains(err.Error(), "neither a file nor a git revision") {
		t.Errorf("buildAgainst(no-such-rev) = %v, want neither a file nor a revision", err)
	}
}
