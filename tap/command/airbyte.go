package command

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/tap"
	"github.com/tap-dev/tap/tap/catalog"
	"github.com/tap-dev/tap/tap/inputs"
	"github.com/tap-dev/tap/tap/output"
	"github.com/tap-dev/tap/tap/runreport"
)

// Airbyte runs an Airbyte command: spec, check, discover or read. Every
// line it writes to stdout is an AirbyteMessage, logs included (LOG). An
// error that ends the command is reported as a TRACE ERROR message and
// returned, for a non-zero exit; a failed `check` is a CONNECTION_STATUS
// FAILED and no error.
func Airbyte(ctx context.Context, cmd string, f inputs.Files, stdout io.Writer) error {
	aw := output.NewAirbyte(stdout)
	var err error
	switch cmd {
	case "spec":
		err = aw.Spec(settings.AirbyteSpec())
	case "check":
		err = airbyteCheck(ctx, f, aw)
	case "discover":
		err = airbyteDiscover(f, aw)
	case "read":
		err = airbyteRead(ctx, f, aw)
	default:
		err = &tap.UsageError{Msg: fmt.Sprintf("unknown Airbyte command %q: expected spec, check, discover or read", cmd)}
	}
	if err != nil {
		_ = reportError(aw, err)
	}
	if ferr := aw.Flush(); ferr != nil && err == nil {
		err = ferr
	}
	return err
}

// AirbyteFail reports err, which ended an Airbyte command before it ran
// (a bad command line), as a TRACE ERROR on stdout, and returns it.
func AirbyteFail(stdout io.Writer, err error) error {
	aw := output.NewAirbyte(stdout)
	_ = reportError(aw, err)
	_ = aw.Flush()
	return err
}

// reportError writes the ERROR trace of err, which ends the command.
func reportError(aw *output.Airbyte, err error) error {
	return aw.Error(err, failureType(err), errorStream(err))
}

// failureType classifies the error that ended a command: config_error is
// the user's to fix (the config, the catalog, the state, the credentials);
// transient_error may pass on its own (the API was down, rate-limited or
// asked us to come back later); system_error is anything else.
func failureType(err error) string {
	var ie *tap.InputError
	var ue *tap.UsageError
	var de *client.DeferError
	var se *client.StatusError
	switch {
	case errors.As(err, &ie), errors.As(err, &ue):
		return output.FailureConfig
	case errors.As(err, &de), errors.Is(err, client.ErrCircuitOpen):
		return output.FailureTransient
	case errors.As(err, &se):
		switch {
		case se.Status == 401 || se.Status == 403:
			return output.FailureConfig
		case se.Status == 0 || se.Status == 408 || se.Status == 425 || se.Status == 429 || se.Status >= 500:
			return output.FailureTransient
		}
	}
	return output.FailureSystem
}

// errorStream is the stream an error names, if any.
func errorStream(err error) string {
	var de *client.DeferError
	var se *client.StatusError
	switch {
	case errors.As(err, &se):
		return se.Stream
	case errors.As(err, &de):
		return de.Stream
	}
	return ""
}

// loadAirbyteConfig loads --config and arms the writer's scrubbing with
// its secrets.
func loadAirbyteConfig(cmd string, f inputs.Files, aw *output.Airbyte) (*tap.Config, error) {
	if f.Config == "" {
		return nil, &tap.UsageError{Msg: cmd + " needs --config"}
	}
	cfg, err := f.LoadConfig()
	if err != nil {
		return nil, err
	}
	if err := settings.CheckAirbyte(cfg); err != nil {
		return nil, err
	}
	aw.SetRedactor(cfg.Redactor)
	return cfg, nil
}

// airbyteDiscover is `tap discover --config C`.
func airbyteDiscover(f inputs.Files, aw *output.Airbyte) error {
	cfg, err := loadAirbyteConfig("discover", f, aw)
	if err != nil {
		return err
	}
	m, err := inputs.Maps(cfg)
	if err != nil {
		return err
	}
	return aw.Catalog(catalog.DiscoverAirbyte(cfg, m))
}

// airbyteRead is `tap read --config C --catalog K [--state S]`: the same
// engine as the Singer mode, with the Airbyte writer.
func airbyteRead(ctx context.Context, f inputs.Files, aw *output.Airbyte) (err error) {
	cfg, err := loadAirbyteConfig("read", f, aw)
	if err != nil {
		return err
	}
	st, sel, err := f.LoadRead(cfg)
	if err != nil {
		return err
	}
	aw.SetNamespaces(sel.Namespace)
	rec, log, finish := runreport.Start(cfg, "Airbyte read", aw.Logger(f.Level(cfg)), st.Value)
	defer func() { err = errors.Join(err, finish(tap.ExitCode(err), err)) }()
	f.LogFirstRun(log)
	if cfg.OnSchemaViolation == settings.ViolationDeadLetter {
		// A dead-letter file would stay in the container, and the
		// records with it: they are emitted, their violations logged.
		cfg.OnSchemaViolation = settings.ViolationEmit
		log.Info("on_schema_violation: dead_letter is emit in Airbyte mode: a record that fails its schema is emitted and its violation logged, not set aside in a file inside the container")
	}
	return tap.Sync(ctx, tap.Options{Config: cfg, Selection: sel, State: st, Writer: aw, Log: log, Shard: f.Shard, Report: rec})
}
