package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// -against names another build of the tap for the models scenario to
// run beside this one, in the same rounds (issue 27's "not worse, same
// bench, same run"): a tap binary, or a git revision of this module,
// built as buildTap builds this one in a detached worktree of its own,
// which is removed once the binary is built.

// oldBuild is the build -against names.
type oldBuild struct {
	bin  string // the binary
	desc string // what it is, for the report
}

// buildAgainst returns the build that against names: an executable
// file as it is, or else a git revision of the module at root, built
// into dir.
func buildAgainst(ctx context.Context, root, dir, against string) (*oldBuild, error) {
	if fi, err := os.Stat(against); err == nil && fi.Mode().IsRegular() {
		if fi.Mode().Perm()&0o111 == 0 {
			return nil, fmt.Errorf("-against %s: a file, but not executable", against)
		}
		bin, err := filepath.Abs(against)
		if err != nil {
			return nil, fmt.Errorf("-against %s: %w", against, err)
		}
		return &oldBuild{bin: bin, desc: "binary " + bin}, nil
	}
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", root}, args...)...)
		out, err := cmd.CombinedOutput()
		if msg := strings.TrimSpace(string(out)); err != nil && msg != "" {
			return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, msg)
		} else if err != nil {
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	commit, err := git("rev-parse", "--verify", "--quiet", against+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("-against %s: neither a file nor a git revision of %s: %w", against, root, err)
	}
	src := filepath.Join(dir, "against-src")
	if _, err := git("worktree", "add", "--detach", src, commit); err != nil {
		return nil, fmt.Errorf("-against %s: %w", against, err)
	}
	bin := filepath.Join(dir, "tap-against")
	buildErr := goBuild(ctx, src, bin)
	// The worktree is only the build's: gone before anything is measured.
	_, rmErr := git("worktree", "remove", "--force", src)
	if err := errors.Join(buildErr, rmErr); err != nil {
		return nil, fmt.Errorf("-against %s: %w", against, err)
	}
	return &oldBuild{bin: bin, desc: fmt.Sprintf("%s (%.12s)", against, commit)}, nil
}

// oldRejected says why a run of the old build failed, as its row's
// figure: exit status 2 is the tap's "bad input" (the config names
// something the old build does not know), anything else a failed run.
func oldRejected(err error) string {
	var exit *exec.ExitError
	what := "the old build failed"
	if errors.As(err, &exit) && exit.ExitCode() == 2 {
		what = "the old build rejects this config"
	}
	msg := err.Error()
	if _, after, ok := strings.Cut(msg, "stderr ends with:\n"); ok {
		// The tap's last line says what it refused.
		lines := strings.Split(strings.TrimSpace(after), "\n")
		msg = lines[len(lines)-1]
	}
	return what + ": " + oneLine(msg)
}

// runOld runs row with the old build and adds the run to runs. It
// returns why the row has no figure of the old build, "" when it ran.
func (b *bench) runOld(ctx context.Context, row modelRow, srv *modelServer, n int, runs *modelRuns) string {
	t, err := b.runModel(ctx, b.old.bin, row, srv, n)
	if err != nil {
		why := oldRejected(err)
		progress("models: " + row.name + ": " + why + "; the row goes on without it")
		return why
	}
	runs.add(t)
	return ""
}

// addAgainst adds a row's figures of new against old to the report: the
// ratio of the medians of their CPU-seconds, the range of the rounds'
// own ratios (each round ran both, one after the other), and the peak
// RSS of both.
func addAgainst(rep *report, sc, name string, runs, old *modelRuns, why string) {
	if why != "" {
		rep.add(sc, name+" against the old build", why, "", "")
		return
	}
	lo, hi := 0.0, 0.0
	for k := range runs.cpu {
		q := runs.cpu[k].Seconds() / old.cpu[k].Seconds()
		if k == 0 || q < lo {
			lo = q
		}
		hi = max(hi, q)
	}
	rep.add(sc, name+" CPU new/old", fmt.Sprintf("%.2f (medians %.3f / %.3f CPU-s; rounds %.2f–%.2f)",
		runs.median().Seconds()/old.median().Seconds(), runs.median().Seconds(), old.median().Seconds(), lo, hi), "", "")
	rep.add(sc, name+" peak RSS new / old", fmt.Sprintf("%.1f / %.1f MiB (%+.1f)", mib(runs.rss), mib(old.rss), mib(runs.rss-old.rss)), "", "")
}
