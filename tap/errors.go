package tap

import (
	"errors"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/tap/backfill"
	"github.com/tap-dev/tap/tap/inputs"
)

// Exit codes of the tap.
const (
	ExitOK       = 0
	ExitFailure  = 1  // the run failed; the last STATE written is valid
	ExitBadInput = 2  // bad flags, config, state or catalog; nothing was sent
	ExitDeferred = 75 // the API asked us to stop (ban, long Retry-After, daily quota); retry later from the last STATE
)

// InputError is a problem with a file the user gave: config, streams file,
// state or catalog.
type InputError = settings.InputError

func inputErr(file string, err error) error {
	var ie *InputError
	if errors.As(err, &ie) {
		return err
	}
	return &InputError{File: file, Err: err}
}

// UsageError is a bad command line.
type UsageError = inputs.UsageError

// ExitCode maps an error of a run to the process exit code.
func ExitCode(err error) int {
	var ie *InputError
	var ue *UsageError
	var de *client.DeferError
	var we *backfill.Error
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ie), errors.As(err, &ue):
		return ExitBadInput
	case errors.As(err, &we):
		return ExitFailure // a failed window outweighs a deferral
	case errors.As(err, &de):
		return ExitDeferred
	}
	return ExitFailure
}
