package tap

import (
	"log/slog"

	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/tap/catalog"
	"github.com/tap-dev/tap/tap/connect"
	"github.com/tap-dev/tap/tap/output"
	"github.com/tap-dev/tap/tap/runreport"
	"github.com/tap-dev/tap/tap/state"
)

// Mode is what a run of the engine is for: given to Open, never changed.
type Mode int

// The engine's modes.
const (
	ModeSync    Mode = iota // a sync: records, then STATE
	ModeTest                // --test: a sync stopped at recordLimit records a stream, no STATE
	ModeReplay              // tap replay: no bookmark moves, one STATE at the end, every failure a letter
	ModeCheck               // check: the first page of each stream, nothing written
	ModeInfer               // --infer-schema: pages read whole, nothing written
	ModeSchemas             // --test=schema: the SCHEMA messages only, nothing sent
)

// policy is how a run's mode shapes the engine: given at construction,
// read by the steps it changes, never set afterwards.
type policy struct {
	mode        Mode
	recordLimit int64      // ModeTest: the records a stream writes at most
	shard       keys.Shard // --shard I/N
	reconcile   bool       // --reconcile: a reconcile now, whatever its every_runs
}

// testRun reports whether streams stop at recordLimit records.
func (p policy) testRun() bool { return p.mode == ModeTest }

// replay reports whether the run is tap replay: every failed request
// becomes a dead letter, and the state is the one it was given.
func (p policy) replay() bool { return p.mode == ModeReplay }

// writesState reports whether the run checkpoints as it goes: not a test
// run (it must not move a bookmark) nor a replay (one STATE, at its end).
func (p policy) writesState() bool { return !p.testRun() && !p.replay() }

// run is what one run of the engine is made with besides the config.
type run struct {
	policy
	sel   *catalog.Selection // nil: every stream
	state *state.State
	out   output.Writer
	log   *slog.Logger
	// connect, when set, is how the engine connects to the API: a sync
	// and a replay add their request metric lines, a sync its breaker's.
	// nil: the engine sends nothing.
	connect *connect.Options
	report  *runreport.Recorder // nil: no report
}
