// Package inputs reads what a run is given: the files named on the command
// line (the config, the state, the catalog) and the flags that go with
// them (--log-level, --shard).
//
// Every input is read and checked before anything is sent or written,
// each against the others: the config first, with its streams and its
// stream maps compiled; then the catalog, whose names are the streams the
// maps write; then the state, against the config's streams and what the
// catalog reads as a full table; and last the start of each chunked
// backfill, which the config or the state must give.
// A problem is an *settings.InputError naming the file and the field, or a
// *UsageError for the command line: exit 2, nothing started.
package inputs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/tap-dev/tap/inputfile"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streammap"
	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/tap/backfill"
	"github.com/tap-dev/tap/tap/catalog"
	"github.com/tap-dev/tap/tap/output"
	"github.com/tap-dev/tap/tap/state"
)

// UsageError is a bad command line.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Files are the paths given on the command line; empty means not given.
type Files struct {
	Config, State, Catalog string
	StateOut               string     // --state-out: where the last STATE's value is written at exit ("" = nowhere)
	LogLevel               string     // --log-level: debug, info, warn or error; "" = the config's log_level
	Trace                  string     // --trace: the request trace's file, for trace_path ("" = the config's)
	Report                 string     // --report: the run report's file, for report_path ("" = the config's)
	SummaryJSON            string     // --summary-json: the summary's file, for summary_json_path ("" = the config's)
	Shard                  keys.Shard // --shard I/N: this process's part of the chunked backfills
	Reconcile              bool       // --reconcile: reconcile now the streams that have a reconcile block
	Manifest               string     // --manifest (or --manifest-path): an Airbyte declarative manifest
	LogFormat              string     // --log-format: text ("") or json, of Singer mode's stderr
	// Compiled is the config a front end compiled from what Config
	// names (an Airbyte manifest and its connector's config): LoadConfig
	// takes it instead of reading Config as the tap's own.
	Compiled *settings.Config
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

// CheckLogFormat checks the value of --log-format.
func CheckLogFormat(name string) error {
	switch name {
	case "", output.LogText, output.LogJSON:
		return nil
	}
	return &UsageError{Msg: fmt.Sprintf("--log-format: expected text or json, got %q", name)}
}

// Logger is a Singer run's log on w: its level (Level) and format
// (--log-format), a time on every line, the config's secrets masked.
func (f Files) Logger(cfg *settings.Config, w io.Writer) *slog.Logger {
	return output.NewLogger(w, output.LogOptions{Level: f.Level(cfg), Redactor: cfg.Redactor, Format: f.LogFormat, Now: time.Now})
}

// Level is the level of a run's log: --log-level when given, else the
// config's log_level.
func (f Files) Level(cfg *settings.Config) slog.Level {
	name := cfg.LogLevel
	if f.LogLevel != "" {
		name = f.LogLevel
	}
	l, _ := settings.Level(name) // both checked: the flag by CheckLogLevel, the config by its registry
	return l
}

// Load reads the config, then the catalog and the state, so that every
// input is checked before anything is sent or written. The catalog comes
// before the state: a stream it reads as a full table may keep a
// bookmark the state check would otherwise refuse (one in the future).
func (f Files) Load() (*settings.Config, *state.State, *catalog.Selection, error) {
	if f.Config == "" {
		return nil, nil, nil, &UsageError{Msg: "--config is required"}
	}
	cfg, err := f.LoadConfig()
	if err != nil {
		return nil, nil, nil, err
	}
	var sel *catalog.Selection
	if f.Catalog != "" {
		m, err := Maps(cfg)
		if err != nil {
			return nil, nil, nil, err
		}
		if sel, err = catalog.Load(f.Catalog, cfg, m); err != nil {
			return nil, nil, nil, err
		}
	}
	st, err := f.loadState(cfg, sel.FullTable)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := backfill.CheckStarts(cfg, st, sel); err != nil {
		return nil, nil, nil, err
	}
	return cfg, st, sel, nil
}

// LoadConfig reads the config, its streams and stream maps: a map that
// does not compile is a bad config, reported before anything is sent.
func (f Files) LoadConfig() (*settings.Config, error) {
	cfg := f.Compiled
	if cfg == nil {
		var err error
		if cfg, err = settings.Load(f.Config); err != nil {
			return nil, err
		}
	}
	if f.Trace != "" {
		if err := cfg.SetTracePath(f.Trace); err != nil {
			return nil, &UsageError{Msg: "--trace: " + err.Error()}
		}
	}
	if f.Report != "" {
		if err := cfg.SetReportPath(f.Report); err != nil {
			return nil, &UsageError{Msg: "--report: " + err.Error()}
		}
	}
	if f.SummaryJSON != "" {
		if err := cfg.SetSummaryJSONPath(f.SummaryJSON); err != nil {
			return nil, &UsageError{Msg: "--summary-json: " + err.Error()}
		}
	}
	if _, err := Maps(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// LoadState reads --state, checked against cfg; without one, or with one
// that does not exist yet or is empty (FirstRun), a run starts from the
// empty state.
func (f Files) LoadState(cfg *settings.Config) (*state.State, error) {
	return f.loadState(cfg, nil)
}

// loadState is LoadState with the streams read as a full table this run
// (nil: none).
func (f Files) loadState(cfg *settings.Config, fullTable func(stream string) bool) (*state.State, error) {
	if f.State == "" || f.FirstRun() != "" {
		st := state.New()
		st.UseCDK(cfg.CDKState)
		return st, nil
	}
	return state.LoadFor(f.State, cfg, fullTable)
}

// FirstRun says why --state starts a first run: the file does not exist
// yet, or holds nothing but white space ("" when it holds a state, or no
// --state was given). So the loop `tap --state s.json --state-out s.json`
// needs no first state written by hand, as the Singer tools' own loops
// do not.
func (f Files) FirstRun() string {
	if f.State == "" {
		return ""
	}
	fi, err := os.Stat(f.State)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "does not exist yet"
	case err != nil || !fi.Mode().IsRegular():
		return "" // read as a state, whose error names the file
	case fi.Size() == 0:
		return "is empty"
	case fi.Size() <= 4<<10:
		if b, err := inputfile.Read(f.State, 4<<10); err == nil && len(bytes.TrimSpace(b)) == 0 {
			return "is empty"
		}
	}
	return ""
}

// LogFirstRun says on log, once, that --state starts a first run.
func (f Files) LogFirstRun(log *slog.Logger) {
	if why := f.FirstRun(); why != "" {
		log.Info("state: " + f.State + " " + why + ": a first run, every stream from its start")
	}
}

// LoadRead reads the state and the configured catalog of `tap read`,
// checked against cfg: a stream the catalog syncs in full_refresh starts
// from no bookmark.
// The catalog is read first: a per-stream state applies to the stream of
// its name and namespace only.
func (f Files) LoadRead(cfg *settings.Config) (*state.State, *catalog.Selection, error) {
	if f.Catalog == "" {
		if _, err := f.LoadState(cfg); err != nil {
			return nil, nil, err
		}
		return nil, nil, &UsageError{Msg: "read needs --catalog CONFIGURED_CATALOG"}
	}
	m, err := Maps(cfg)
	if err != nil {
		return nil, nil, err
	}
	sel, fullRefresh, err := catalog.LoadConfigured(f.Catalog, cfg, m)
	if err != nil {
		return nil, nil, err
	}
	st := state.New()
	st.UseCDK(cfg.CDKState)
	if f.State != "" && f.FirstRun() == "" {
		if st, err = state.LoadMatching(f.State, cfg, sel.Namespace, func(s string) bool { return slices.Contains(fullRefresh, s) }); err != nil {
			return nil, nil, err
		}
	}
	for _, name := range fullRefresh {
		st.Reset(name)
	}
	if err := backfill.CheckStarts(cfg, st, sel); err != nil {
		return nil, nil, err
	}
	return st, sel, nil
}

// Maps is the config's stream maps, compiled on the first call and kept
// in cfg.Maps for every later one (the catalog, the engine); nil when the
// config has none (and no flattening). The catalog's stream names are the
// streams the maps write, so reading a catalog needs them.
func Maps(cfg *settings.Config) (*streammap.Mapper, error) {
	if len(cfg.StreamMaps) == 0 && !cfg.FlatteningEnabled {
		return nil, nil
	}
	if m := cfg.Maps; m != nil {
		if !m.Active() {
			return nil, nil
		}
		return m, nil
	}
	srcs := make(map[string]streammap.StreamSchema, len(cfg.Streams))
	for i := range cfg.Streams {
		d := &cfg.Streams[i]
		srcs[d.Name] = streammap.StreamSchema{Schema: cfg.Schemas[d.Name], KeyProperties: d.PrimaryKey}
	}
	m, err := streammap.NewMapper(streammap.MapConfig{
		StreamMaps:         cfg.StreamMaps,
		StreamMapConfig:    cfg.StreamMapConfig,
		FlatteningEnabled:  cfg.FlatteningEnabled,
		FlatteningMaxDepth: cfg.FlatteningMaxDepth,
	}, srcs)
	if err != nil {
		return nil, &settings.InputError{File: cfg.Path, Err: err}
	}
	cfg.Maps = m
	if !m.Active() {
		return nil, nil
	}
	return m, nil
}
