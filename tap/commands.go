package tap

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strconv"

	"github.com/tap-dev/tap/demoapi"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/tap/output"
	"github.com/tap-dev/tap/tap/state"
)

// Files are the paths given on the command line; empty means not given.
type Files struct {
	Config, State, Catalog string
	LogLevel               string        // --log-level: debug, info, warn or error; "" = the config's log_level
	Shard                  streams.Shard // --shard I/N: this process's part of the chunked backfills
}

// CheckLogLevel checks the value of --log-level: empty (the config's
// log_level decides), debug, info, warn or error.
func CheckLogLevel(name string) error {
	if name == "" {
		return nil
	}
	if _, err := settings.Level(name); err != nil {
		return &UsageError{Msg: "--log-level: " + err.Error()}
	}
	return nil
}

// logLevel is the level of a run's log: --log-level when given, else the
// config's log_level.
func (f Files) logLevel(cfg *Config) slog.Level {
	name := cfg.LogLevel
	if f.LogLevel != "" {
		name = f.LogLevel
	}
	l, _ := settings.Level(name) // both checked: the flag by CheckLogLevel, the config by its registry
	return l
}

// load reads the config, then the state and the catalog, so that every
// input is checked before anything is sent or written.
func (f Files) load() (*Config, *state.State, *Selection, error) {
	if f.Config == "" {
		return nil, nil, nil, &UsageError{Msg: "--config is required"}
	}
	cfg, err := loadConfig(f.Config)
	if err != nil {
		return nil, nil, nil, err
	}
	st := state.New()
	if f.State != "" {
		if st, err = state.LoadFor(f.State, cfg); err != nil {
			return nil, nil, nil, err
		}
	}
	var sel *Selection
	if f.Catalog != "" {
		if sel, err = LoadCatalog(f.Catalog, cfg); err != nil {
			return nil, nil, nil, err
		}
	}
	if err := checkBackfills(cfg, st, sel); err != nil {
		return nil, nil, nil, err
	}
	return cfg, st, sel, nil
}

// SingerSync is `tap --config C [--state S] [--catalog K]`.
func SingerSync(ctx context.Context, f Files, stdout, stderr io.Writer) error {
	cfg, st, sel, err := f.load()
	if err != nil {
		return err
	}
	return Sync(ctx, Options{Config: cfg, Selection: sel, State: st, Writer: output.NewSinger(stdout), Log: output.NewStderrLogger(stderr, f.logLevel(cfg), cfg.Redactor), Shard: f.Shard})
}

// SingerDiscover is `tap --config C --discover`.
func SingerDiscover(f Files, stdout io.Writer) error {
	cfg, err := loadConfig(f.Config)
	if err != nil {
		return err
	}
	return writeIndented(stdout, Discover(cfg))
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
	return &UsageError{Msg: fmt.Sprintf("--format: expected json, markdown or meltano, got %q", format)}
}

// ServeDemo is `tap serve-demo [--addr A] [--config C]`: the demo API alone,
// with the demo block of C when given, until ctx ends.
func ServeDemo(ctx context.Context, addr, configPath string, stderr io.Writer) error {
	host, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = strconv.ParseUint(port, 10, 16)
	}
	if err != nil {
		return &UsageError{Msg: fmt.Sprintf("--addr: expected host:port with a port number, e.g. 127.0.0.1:8765, got %q", addr)}
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
		return &InputError{File: configPath, Err: err}
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
