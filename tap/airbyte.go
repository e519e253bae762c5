package tap

import (
	"context"
	"fmt"
	"io"

	"github.com/tap-dev/tap/settings"
)

// Airbyte runs an Airbyte command: spec, check, discover or read. Every
// line it writes to stdout is an AirbyteMessage, logs included (LOG). An
// error that ends the command is reported as a TRACE ERROR message and
// returned, for a non-zero exit; a failed `check` is a CONNECTION_STATUS
// FAILED and no error.
func Airbyte(ctx context.Context, cmd string, f Files, stdout io.Writer) error {
	aw := NewAirbyteWriter(stdout)
	var err error
	switch cmd {
	case "spec":
		err = aw.writeJSON(true, airbyteMessage{Type: "SPEC", Spec: settings.AirbyteSpec()})
	case "check":
		err = airbyteCheck(ctx, f, aw)
	case "discover":
		err = airbyteDiscover(f, aw)
	case "read":
		err = airbyteRead(ctx, f, aw)
	default:
		err = &UsageError{Msg: fmt.Sprintf("unknown Airbyte command %q: expected spec, check, discover or read", cmd)}
	}
	if err != nil {
		_ = aw.Error(err)
	}
	if ferr := aw.Flush(); ferr != nil && err == nil {
		err = ferr
	}
	return err
}

// AirbyteFail reports err, which ended an Airbyte command before it ran
// (a bad command line), as a TRACE ERROR on stdout, and returns it.
func AirbyteFail(stdout io.Writer, err error) error {
	aw := NewAirbyteWriter(stdout)
	_ = aw.Error(err)
	_ = aw.Flush()
	return err
}

// loadAirbyteConfig loads --config and arms the writer's scrubbing with
// its secrets.
func loadAirbyteConfig(cmd string, f Files, aw *AirbyteWriter) (*Config, error) {
	if f.Config == "" {
		return nil, &UsageError{Msg: cmd + " needs --config"}
	}
	cfg, err := loadConfig(f.Config)
	if err != nil {
		return nil, err
	}
	aw.redact = cfg.Redactor
	return cfg, nil
}

// airbyteDiscover is `tap discover --config C`.
func airbyteDiscover(f Files, aw *AirbyteWriter) error {
	cfg, err := loadAirbyteConfig("discover", f, aw)
	if err != nil {
		return err
	}
	return aw.writeJSON(true, airbyteMessage{Type: "CATALOG", Catalog: DiscoverAirbyte(cfg)})
}

// airbyteRead is `tap read --config C --catalog K [--state S]`: the same
// engine as the Singer mode, with the Airbyte writer.
func airbyteRead(ctx context.Context, f Files, aw *AirbyteWriter) error {
	cfg, err := loadAirbyteConfig("read", f, aw)
	if err != nil {
		return err
	}
	st := NewState()
	if f.State != "" {
		if st, err = loadStateFor(f.State, cfg); err != nil {
			return err
		}
	}
	if f.Catalog == "" {
		return &UsageError{Msg: "read needs --catalog CONFIGURED_CATALOG"}
	}
	sel, fullRefresh, err := LoadConfiguredCatalog(f.Catalog, cfg)
	if err != nil {
		return err
	}
	for _, name := range fullRefresh {
		resetBookmark(st, name)
	}
	if err := checkBackfills(cfg, st, sel); err != nil {
		return err
	}
	return Sync(ctx, Options{Config: cfg, Selection: sel, State: st, Writer: aw, Log: aw.Logger(f.logLevel(cfg)), Shard: f.Shard})
}
