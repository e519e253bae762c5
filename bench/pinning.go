package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// pinning runs the tap on one CPU with taskset and, while it runs, moves
// the bench (demo server, stdout reader) to the other CPUs, so that the
// tap's CPU is its own. Without taskset the tap gets GOMAXPROCS=1 instead.
type pinning struct {
	taskset string // path of taskset; "" when unavailable
	cpus    []int  // the CPUs this process may use, as found at start
	selfErr error  // why the bench could not move itself, if it could not
}

func setupPinning() *pinning {
	p := &pinning{}
	path, err := exec.LookPath("taskset")
	if err != nil {
		return p
	}
	out, err := exec.Command(path, "-c", "-p", strconv.Itoa(os.Getpid())).Output()
	if err != nil {
		return p
	}
	// "pid 123's current affinity list: 0-3,6"
	_, list, _ := strings.Cut(strings.TrimSpace(string(out)), ": ")
	cpus, err := parseCPUList(list)
	if err != nil || len(cpus) == 0 {
		return p
	}
	p.taskset, p.cpus = path, cpus
	return p
}

// method describes how the tap is pinned, for the report.
func (p *pinning) method() string {
	if p.taskset == "" {
		return "GOMAXPROCS=1 in its environment (taskset not available)"
	}
	s := fmt.Sprintf("taskset -c %d (GOMAXPROCS=1 follows the affinity)", p.cpus[0])
	switch {
	case len(p.cpus) < 2:
		s += "; only one CPU, shared with the bench"
	case p.selfErr != nil:
		s += "; the bench could not leave that CPU: " + p.selfErr.Error()
	default:
		s += "; bench on CPU(s) " + formatCPUList(p.cpus[1:]) + " meanwhile"
	}
	return s
}

// wrap returns the command line and environment of a pinned tap.
func (p *pinning) wrap(args, env []string) ([]string, []string) {
	if p.taskset == "" {
		return args, append(env, "GOMAXPROCS=1")
	}
	return append([]string{p.taskset, "-c", strconv.Itoa(p.cpus[0])}, args...), env
}

// offTapCPU runs f with every thread of the bench moved off the tap's CPU,
// and moves them back afterwards.
func (p *pinning) offTapCPU(f func() error) error { return p.offCPUs(1)(f) }

// offCPUs is offTapCPU for a tap on the first n CPUs; the bench stays
// where it is when no CPU would be left to it.
func (p *pinning) offCPUs(n int) func(func() error) error {
	return func(f func() error) error {
		if p.taskset == "" || len(p.cpus) <= n || p.selfErr != nil {
			return f()
		}
		if err := p.self(p.cpus[n:]); err != nil {
			p.selfErr = err
			return f()
		}
		defer func() {
			if err := p.self(p.cpus); err != nil {
				progress("cannot restore the bench's CPU affinity: " + err.Error())
			}
		}()
		return f()
	}
}

// self sets the affinity of every thread of this process ("taskset -a");
// threads started later inherit it.
func (p *pinning) self(cpus []int) error {
	out, err := exec.Command(p.taskset, "-a", "-c", "-p", formatCPUList(cpus), strconv.Itoa(os.Getpid())).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// parseCPUList reads a Linux CPU list such as "0-3,6".
func parseCPUList(s string) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("bad CPU list %q", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 4096 {
				return nil, fmt.Errorf("bad CPU list %q", s)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

func formatCPUList(cpus []int) string {
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ",")
}
