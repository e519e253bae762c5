package command

import (
	"context"
	"errors"

	"github.com/tap-dev/tap/tap"
	"github.com/tap-dev/tap/tap/backfill"
	"github.com/tap-dev/tap/tap/inputs"
	"github.com/tap-dev/tap/tap/output"
	"github.com/tap-dev/tap/tap/state"
)

// airbyteCheck is `tap check --config C`. A config that cannot be loaded
// is an error (TRACE ERROR, non-zero exit); otherwise it writes
// CONNECTION_STATUS SUCCEEDED or FAILED and returns nil.
func airbyteCheck(ctx context.Context, f inputs.Files, aw *output.Airbyte) error {
	cfg, err := loadAirbyteConfig("check", f, aw)
	if err != nil {
		return err
	}
	// check is given no state: a backfill with no start is a config error,
	// found before the demo starts or any request is sent.
	if err := backfill.CheckStarts(cfg, state.New(), nil); err != nil {
		return err
	}
	log := aw.Logger(f.Level(cfg))
	status := map[string]any{"status": "SUCCEEDED"}
	if err := tap.CheckConnection(ctx, cfg, log, aw); err != nil {
		// One rule for config errors, whatever finds them: a TRACE ERROR
		// (config_error) and exit 2. CONNECTION_STATUS is for the API.
		var ie *tap.InputError
		if errors.As(err, &ie) {
			return err
		}
		status = map[string]any{"status": "FAILED", "message": cfg.Redactor.Redact("Connection check failed: " + err.Error())}
	}
	return aw.ConnectionStatus(status)
}
