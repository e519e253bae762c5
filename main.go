// Command tap pulls records out of any REST or GraphQL API described in a
// declarative stream file and writes them as Singer (default) or Airbyte
// protocol messages. main only parses arguments and dispatches.
package main

//go:generate go run ./internal/generate

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/tap"
	"github.com/tap-dev/tap/tap/command"
	"github.com/tap-dev/tap/tap/gcpace"
	"github.com/tap-dev/tap/tap/inputs"
	"github.com/tap-dev/tap/tap/output"
	"github.com/tap-dev/tap/tap/replay"
)

const usage = `tap — a declarative Singer tap and Airbyte source

Singer:
  tap --config CONFIG [--state STATE] [--state-out STATE] [--catalog CATALOG | --properties CATALOG] [--shard I/N] [--reconcile]
  tap --config CONFIG --discover
  tap --about [--format json|markdown|meltano]
  tap --version
  tap --config CONFIG --test[=all|schema]
  tap --config CONFIG --infer-schema STREAM [--infer-pages N]
  tap serve-demo [--addr 127.0.0.1:8765] [--config CONFIG]
  tap replay --config CONFIG --dead-letters FILE [--state STATE]
  tap init --openapi SPEC [--base-url URL] [--paths GLOB] [--out CONFIG]
  tap init --probe URL [--auth-header "Authorization: Bearer …"] [--out CONFIG]

Airbyte:
  tap spec
  tap check    --config CONFIG
  tap discover --config CONFIG
  tap read     --config CONFIG --catalog CONFIGURED_CATALOG [--state STATE] [--shard I/N]

Airbyte declarative manifests:
  tap spec     --manifest MANIFEST
  tap check    --manifest MANIFEST --config CONFIG   (and discover, read, a Singer run: not yet
                                                     supported; the manifest and the config are
                                                     checked, then exit 2)

Flags:
  --config FILE       the config (base_url, auth, streams, limits)
  --state FILE        state from an earlier run (bookmarks); a file that does not exist yet or
                      is empty starts a first run
  --state-out FILE    a Singer sync: at exit (also a failed one) write the last STATE's value to
                      FILE, atomically; with --state FILE too, the whole incremental loop
  --catalog FILE      a catalog selecting streams and properties
  --properties FILE   the old name of --catalog
  --discover          print the catalog of the configured streams
  --about             print name, version, capabilities and settings
  --format FORMAT     format of --about: json (default), markdown, or meltano (a plugin definition)
  --infer-schema S    walk the first pages of stream S and print a JSON Schema inferred from them
  --infer-pages N     pages read by --infer-schema (default 3)
  --addr ADDR         serve-demo: address to listen on (default 127.0.0.1:8765)
  --dead-letters FILE replay: re-sends the failed requests of FILE and re-validates its
                      records against today's schemas, writes what passes as Singer
                      messages (one STATE at the end: --state unchanged, {} without it)
                      and leaves the rest in FILE. Singer only: Airbyte mode has no replay
  --openapi SPEC      init: write a config from an OpenAPI 3.0/3.1 (or Swagger 2.0) document,
                      JSON or YAML: a stream per GET operation that lists records
  --probe URL         init: write a one-stream config from one answer of URL
  --auth-header H     init --probe: "Name: value" sent with the request; the config reads
                      the secret from the environment instead (TAP_TOKEN, TAP_API_KEY, …)
  --base-url URL      init --openapi: the API's URL, when the document's server is relative
                      or a template
  --paths GLOBS       init --openapi: only the paths matching one of these comma-separated
                      globs ('*' matches across '/')
  --out FILE          init: the config to write, atomically (default: stdout); the guesses
                      that could be wrong are printed on stderr, one a line
  --test[=MODE]       Meltano's connection test, writing no STATE: all (the default) syncs
                      one record per stream, whatever the catalog selects; schema writes
                      only the SCHEMA messages
  --shard I/N         read only the chunk windows whose index is I modulo N of each chunked
                      stream, and the other streams only when I is 0; one state file per shard
  --reconcile         reconcile now every stream with a reconcile block (its keys listed and
                      compared: deletion records for the keys gone, the missed rows fetched),
                      whatever its every_runs; Singer sync only
  --manifest FILE     an Airbyte declarative manifest (YAML or JSON), its config checked against
                      the manifest's spec; also --manifest-path, or a config carrying it in
                      __injected_declarative_manifest
  --version           print "tap VERSION"
  --log-level LEVEL   debug, info, warn or error (default: the config's log_level, info)
  --log-format F      Singer mode's stderr: text (default: "TIME LEVEL message key=value") or
                      json (one object a line: time, level, msg and the keys)
  --report FILE       write a self-contained HTML report of the run (a sync, --test, read or
                      replay) to FILE at its end, also a failed or interrupted one (the
                      setting report_path)
  --summary-json FILE write the run summary to FILE as one JSON document at the run's end (per
                      stream and total: records, requests by status, waits, dead letters,
                      bookmarks, exit status; the setting summary_json_path)
  --trace FILE        write one JSON line per HTTP attempt to FILE (the setting trace_path):
                      stream, method, URL (secret values masked), status, bytes, ms, attempt,
                      the wait before it; never a header or a body
  --help              this text

Exit codes: 0 ok, 1 run failed (last STATE valid), 2 bad input, 75 deferred (retry later).
`

func main() {
	// The collector's pace (package gcpace): the heap grows by what a
	// cycle scans, not by the page buffers it need not; the soft limit
	// is a ceiling for a stream of huge records.
	gcpace.Start()
	enlargePipe(os.Stdout)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := ""
	if len(args) > 0 {
		switch args[0] {
		case "serve-demo", "replay", "init", "spec", "check", "discover", "read":
			cmd, args = args[0], args[1:]
		}
	}
	fs := flag.NewFlagSet("tap", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f inputs.Files
	var properties, format, addr, infer, shard, deadLetters string
	var initOpts command.InitOptions
	fs.StringVar(&initOpts.OpenAPI, "openapi", "", "")
	fs.StringVar(&initOpts.Probe, "probe", "", "")
	fs.StringVar(&initOpts.AuthHeader, "auth-header", "", "")
	fs.StringVar(&initOpts.BaseURL, "base-url", "", "")
	fs.StringVar(&initOpts.Paths, "paths", "", "")
	fs.StringVar(&initOpts.Out, "out", "", "")
	var inferPages int
	var discover, about, version bool
	var test testFlag
	fs.StringVar(&f.Config, "config", "", "")
	fs.StringVar(&f.State, "state", "", "")
	fs.StringVar(&f.StateOut, "state-out", "", "")
	fs.StringVar(&f.Catalog, "catalog", "", "")
	fs.StringVar(&properties, "properties", "", "")
	fs.BoolVar(&discover, "discover", false, "")
	fs.BoolVar(&about, "about", false, "")
	fs.StringVar(&format, "format", "", "")
	fs.StringVar(&addr, "addr", "127.0.0.1:8765", "")
	fs.StringVar(&deadLetters, "dead-letters", "", "")
	fs.StringVar(&infer, "infer-schema", "", "")
	fs.IntVar(&inferPages, "infer-pages", 3, "")
	fs.BoolVar(&version, "version", false, "")
	fs.Var(&test, "test", "")
	fs.StringVar(&shard, "shard", "", "")
	fs.BoolVar(&f.Reconcile, "reconcile", false, "")
	args = slices.Clone(args)
	for i, a := range args {
		if a == "--test" || a == "-test" {
			args[i] = "--test=" + command.TestAll // alone it means all, as in the Meltano SDK
		}
	}
	fs.StringVar(&f.LogLevel, "log-level", "", "")
	fs.StringVar(&f.Trace, "trace", "", "")
	fs.StringVar(&f.Report, "report", "", "")
	fs.StringVar(&f.SummaryJSON, "summary-json", "", "")
	fs.StringVar(&f.LogFormat, "log-format", "", "")
	var manifestPath string
	fs.StringVar(&f.Manifest, "manifest", "", "")
	fs.StringVar(&manifestPath, "manifest-path", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return 0
		}
		return badUsage(cmd, stdout, stderr, err.Error()+" (see tap --help)")
	}
	if fs.NArg() > 0 {
		return badUsage(cmd, stdout, stderr, fmt.Sprintf("unexpected argument %q (see tap --help)", fs.Arg(0)))
	}
	if err := inputs.CheckLogLevel(f.LogLevel); err != nil {
		return badUsage(cmd, stdout, stderr, err.Error())
	}
	if err := inputs.CheckLogFormat(f.LogFormat); err != nil {
		return badUsage(cmd, stdout, stderr, err.Error())
	}
	if shard != "" {
		s, err := keys.ParseShard(shard)
		if err != nil {
			return badUsage(cmd, stdout, stderr, "--shard: "+err.Error())
		}
		f.Shard = s
	}
	if manifestPath != "" {
		if f.Manifest != "" && f.Manifest != manifestPath {
			return badUsage(cmd, stdout, stderr, "give --manifest or --manifest-path, not both")
		}
		f.Manifest = manifestPath
	}
	if f.Manifest != "" && (cmd == "serve-demo" || cmd == "replay" || cmd == "init") {
		return badUsage(cmd, stdout, stderr, "--manifest: is for spec, check, discover, read and a Singer run")
	}
	if properties != "" {
		if f.Catalog != "" {
			return badUsage(cmd, stdout, stderr, "give --catalog or --properties, not both")
		}
		f.Catalog = properties
	}
	if f.StateOut != "" && (cmd != "" || test != "" || discover || infer != "" || about || version) {
		return badUsage(cmd, stdout, stderr, "--state-out: is for a Singer sync (tap --config CONFIG --state-out FILE) only")
	}
	if f.Reconcile && (cmd != "" || test != "" || discover || infer != "") {
		return badUsage(cmd, stdout, stderr, "--reconcile: is for a Singer sync (tap --config CONFIG --reconcile) only")
	}
	if cmd == "" && !version && !about && infer == "" || cmd == "spec" || cmd == "check" || cmd == "discover" || cmd == "read" {
		if withManifest, ok := command.FindManifest(f); ok {
			compiled, done, err := command.Manifest(cmd, withManifest, stdout)
			switch {
			case done && cmd != "":
				return tap.ExitCode(err) // reported on stdout as a TRACE message
			case done:
				return fail(stderr, err)
			}
			f = compiled
		}
	}
	var err error
	switch {
	case cmd == "serve-demo":
		err = command.ServeDemo(ctx, addr, f.Config, stderr)
	case cmd == "replay":
		err = replay.Run(ctx, f, deadLetters, stdout, stderr)
	case cmd == "init":
		err = command.Init(ctx, initOpts, stdout, stderr)
	case cmd != "":
		err = command.Airbyte(ctx, cmd, f, stdout)
		return tap.ExitCode(err) // Airbyte reports errors on stdout as TRACE messages
	case infer != "":
		err = command.InferSchema(ctx, f, infer, inferPages, stdout, stderr)
	case version:
		_, err = fmt.Fprintln(stdout, settings.Name, settings.Version)
	case about:
		err = command.PrintAbout(format, stdout)
	case discover:
		if f.Config == "" {
			err = &tap.UsageError{Msg: "--discover needs --config"}
		} else {
			err = command.SingerDiscover(f, stdout)
		}
	case test != "":
		err = command.SingerTest(ctx, f, string(test), stdout, stderr)
	default:
		err = command.SingerSync(ctx, f, stdout, stderr)
	}
	return fail(stderr, err)
}

// badUsage reports a bad command line: as a TRACE message on stdout for an
// Airbyte command, which must keep stderr free, else as one line on stderr.
func badUsage(cmd string, stdout, stderr io.Writer, msg string) int {
	err := &tap.UsageError{Msg: msg}
	if cmd != "" && cmd != "serve-demo" && cmd != "replay" && cmd != "init" {
		return tap.ExitCode(command.AirbyteFail(stdout, err))
	}
	return fail(stderr, err)
}

// fail prints err as one line and returns its exit code.
func fail(stderr io.Writer, err error) int {
	var lined interface{ Lines() []string } // a manifest's problems: one line each
	switch {
	case errors.As(err, &lined):
		for _, l := range lined.Lines() {
			fmt.Fprintf(stderr, "tap: %s\n", output.Printable(l))
		}
	case err != nil:
		fmt.Fprintf(stderr, "tap: %s\n", output.Printable(err.Error())) // one line, whatever an API put in it
	}
	return tap.ExitCode(err)
}

// testFlag is --test=all|schema.
type testFlag string

func (t *testFlag) String() string { return string(*t) }

func (t *testFlag) Set(s string) error {
	if s != command.TestAll && s != command.TestSchema {
		return fmt.Errorf("expected all or schema, got %q", s)
	}
	*t = testFlag(s)
	return nil
}
