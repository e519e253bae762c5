// Package command holds the tap's commands — the Singer sync, discover,
// test, about and serve-demo, the Airbyte spec, check, discover and read,
// and --infer-schema — on top of the engine in package tap: each reads
// its inputs, runs the engine or one of its probes, and writes its answer.
// main parses the command line and calls one of them.
package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"

	"github.com/tap-dev/tap/demoapi"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/tap"
	"github.com/tap-dev/tap/tap/catalog"
	"github.com/tap-dev/tap/tap/inputs"
	"github.com/tap-dev/tap/tap/output"
	"github.com/tap-dev/tap/tap/runreport"
)

// SingerSync is `tap --config C [--state S] [--catalog K]`.
func SingerSync(ctx context.Context, f inputs.Files, stdout, stderr io.Writer) (err error) {
	cfg, st, sel, err := f.Load()
	if err != nil {
		return err
	}
	rec, log, finish := runreport.Start(cfg, "Singer sync", f.Logger(cfg, stderr), st.Value)
	defer func() { err = errors.Join(err, finish(tap.ExitCode(err), err)) }()
	f.LogFirstRun(log)
	w := output.NewSinger(stdout)
	err = tap.Sync(ctx, tap.Options{Config: cfg, Selection: sel, State: st, Writer: w, Log: log, Shard: f.Shard, Reconcile: f.Reconcile, Report: rec})
	return errors.Join(err, keepState(f.StateOut, w.LastState(), log))
}

// keepState writes value, the last STATE's, to path (--state-out)
// atomically: a run killed while writing leaves the file it had. A run
// that wrote no STATE (it failed before its first checkpoint) leaves the
// file as it was, so that a loop reading and writing one file never loses
// its bookmarks.
func keepState(path string, value []byte, log *slog.Logger) error {
	if path == "" {
		return nil
	}
	if value == nil {
		log.Warn("state: no STATE was written: " + path + " is left as it was")
		return nil
	}
	data := append(slices.Clip(value), '\n')
	write := settings.WriteFileAtomic // keeps the file's mode, follows a link
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		write = func(path string, data []byte) error { return settings.CreateFileAtomic(path, data, 0o644) }
	}
	if err := write(path, data); err != nil {
		return fmt.Errorf("--state-out: cannot write %s: %w", path, err)
	}
	log.Info("state: the last STATE is in " + path)
	return nil
}

// SingerDiscover is `tap --config C --discover`.
func SingerDiscover(f inputs.Files, stdout io.Writer) error {
	cfg, err := f.LoadConfig()
	if err != nil {
		return err
	}
	m, err := inputs.Maps(cfg)
	if err != nil {
		return err
	}
	return writeIndented(stdout, catalog.Discover(cfg, m))
}

// PrintAbout is `tap --about [--format json|markdown|meltano]`.
func PrintAbout(format string, stdout io.Writer) error {
	a := settings.AboutInfo()
	switch format {
	case "", "json":
		return writeIndented(stdout, a)
	case "markdown":
		_, err := io.WriteString(stdout, a.Markdown())
		return err
	case "meltano":
		_, err := io.WriteString(stdout, a.Meltano())
		return err
	}
	return &tap.UsageError{Msg: fmt.Sprintf("--format: expected json, markdown or meltano, got %q", format)}
}

// ServeDemo is `tap serve-demo [--addr A] [--config C]`: the demo API alone,
// with the demo block of C when given, until ctx ends.
func ServeDemo(ctx context.Context, addr, configPath string, stderr io.Writer) error {
	host, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = strconv.ParseUint(port, 10, 16)
	}
	if err != nil {
		return &tap.UsageError{Msg: fmt.Sprintf("--addr: expected host:port with a port number, e.g. 127.0.0.1:8765, got %q", addr)}
	}
	var dc demoapi.Config
	if configPath != "" {
		cfg, err := settings.Load(configPath)
		if err != nil {
			return err
		}
		dc = cfg.Demo
	}
	srv, err := demoapi.New(dc)
	if err != nil {
		return &tap.InputError{File: configPath, Err: err}
	}
	base, err := srv.Start(addr)
	if err != nil {
		return fmt.Errorf("serve-demo: cannot listen on %s: %w", addr, err)
	}
	fmt.Fprintf(stderr, "INFO demo API listening on %s (Ctrl-C stops it)\n", boundAddr(host, base))
	<-ctx.Done()
	return srv.Close()
}

// boundAddr is the address the demo listens on. base is the URL Start
// reports, which names 127.0.0.1 for a wildcard host so that a client can
// use it; the log names the wildcard the user asked for instead, because
// it decides who can reach the server.
func boundAddr(host, base string) string {
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		if u, err := url.Parse(base); err == nil {
			return net.JoinHostPort(host, u.Port()) + " (every interface)"
		}
	}
	return base
}

func writeIndented(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
