package tap

import (
	"log/slog"

	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/tap/backfill"
	"github.com/tap-dev/tap/tap/catalog"
	"github.com/tap-dev/tap/tap/state"
)

// Files are the paths given on the command line; empty means not given.
type Files struct {
	Config, State, Catalog string
	LogLevel               string     // --log-level: debug, info, warn or error; "" = the config's log_level
	Shard                  keys.Shard // --shard I/N: this process's part of the chunked backfills
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

// Level is the level of a run's log: --log-level when given, else the
// config's log_level.
func (f Files) Level(cfg *Config) slog.Level {
	name := cfg.LogLevel
	if f.LogLevel != "" {
		name = f.LogLevel
	}
	l, _ := settings.Level(name) // both checked: the flag by CheckLogLevel, the config by its registry
	return l
}

// Load reads the config, then the state and the catalog, so that every
// input is checked before anything is sent or written.
func (f Files) Load() (*Config, *state.State, *catalog.Selection, error) {
	if f.Config == "" {
		return nil, nil, nil, &UsageError{Msg: "--config is required"}
	}
	cfg, err := f.LoadConfig()
	if err != nil {
		return nil, nil, nil, err
	}
	st, err := f.LoadState(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	var sel *catalog.Selection
	if f.Catalog != "" {
		m, err := CompileMaps(cfg)
		if err != nil {
			return nil, nil, nil, err
		}
		if sel, err = catalog.Load(f.Catalog, cfg, m); err != nil {
			return nil, nil, nil, err
		}
	}
	if err := backfill.CheckStarts(cfg, st, sel); err != nil {
		return nil, nil, nil, err
	}
	return cfg, st, sel, nil
}

// LoadState reads --state, checked against cfg; without one, a run starts
// from the empty state.
func (f Files) LoadState(cfg *Config) (*state.State, error) {
	if f.State == "" {
		return state.New(), nil
	}
	return state.LoadFor(f.State, cfg)
}

// LoadConfig reads the config, its streams and stream maps.
func (f Files) LoadConfig() (*Config, error) { return loadConfig(f.Config) }

// LoadRead reads the state and the configured catalog of `tap read`,
// checked against cfg: a stream the catalog syncs in full_refresh starts
// from no bookmark.
func (f Files) LoadRead(cfg *Config) (*state.State, *catalog.Selection, error) {
	st, err := f.LoadState(cfg)
	if err != nil {
		return nil, nil, err
	}
	if f.Catalog == "" {
		return nil, nil, &UsageError{Msg: "read needs --catalog CONFIGURED_CATALOG"}
	}
	m, err := CompileMaps(cfg)
	if err != nil {
		return nil, nil, err
	}
	sel, fullRefresh, err := catalog.LoadConfigured(f.Catalog, cfg, m)
	if err != nil {
		return nil, nil, err
	}
	for _, name := range fullRefresh {
		st.Reset(name)
	}
	if err := backfill.CheckStarts(cfg, st, sel); err != nil {
		return nil, nil, err
	}
	return st, sel, nil
}
