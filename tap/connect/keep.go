package connect

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/tap-dev/tap/inputfile"
	"github.com/tap-dev/tap/settings"
)

// A Keeper keeps a rotated refresh token where the next run finds it. It
// is called before the new token's access token is used: the old refresh
// token may be void already.
type Keeper func(ctx context.Context, refreshToken string) error

// InFile is the Keeper of Singer mode: the config file is rewritten
// atomically with the new refresh token, every other byte as it was.
func InFile(cfg *settings.Config, log *slog.Logger) Keeper {
	return inFile(cfg, log, settings.WriteFileAtomic)
}

// inFile is InFile with the function that rewrites the config file.
//
// The start check (CheckRewritable) cannot promise the rewrite: the disk
// may fill, or the file be replaced, between it and a rotation. The old
// token is void by then, so when the rewrite fails the new one goes to a
// small file beside the config (Pending), where the next run takes it
// from, and the run stops: its access token is not used, as the only
// valid refresh token is not where the user expects it.
func inFile(cfg *settings.Config, log *slog.Logger, write func(path string, data []byte) error) Keeper {
	var mu sync.Mutex
	held := cfg.Auth.RefreshToken // the token the file holds
	return func(_ context.Context, rt string) error {
		mu.Lock()
		defer mu.Unlock()
		raw, err := inputfile.Read(cfg.Path, inputfile.MaxConfig)
		if err != nil {
			return fmt.Errorf("writing the rotated refresh token: %w", err)
		}
		out, ok, err := rotated(cfg, raw, rt, log)
		if !ok {
			return err
		}
		if err := write(cfg.Path, out); err != nil {
			side := Pending(cfg.Path)
			if serr := writePending(side, rt, held); serr != nil {
				return fmt.Errorf("the API rotated the refresh token, and it can be written neither to %s (%w) nor to %s (%v): the new token is lost, and %s needs a new one from the API's provider",
					cfg.Path, err, side, serr, cfg.RefreshTokenPath())
			}
			return fmt.Errorf("writing the rotated refresh token to %s: %w; the new token is kept in %s, and the next run moves it into the config once the file can be rewritten",
				cfg.Path, err, side)
		}
		held = rt
		log.Info("the API rotated the refresh token; the config file holds the new one", "config", cfg.Path)
		return nil
	}
}

// Pending is the file beside the config at path that holds a rotated
// refresh token the config file could not take.
func Pending(path string) string { return path + ".refresh_token.json" }

// pending is the content of a Pending file. Replaces is the SHA-256 of
// the token the config held when the new one came: a config edited since
// (a new token from the provider) holds another, and wins.
type pending struct {
	RefreshToken string `json:"refresh_token"`
	Replaces     string `json:"replaces_sha256"`
}

func digest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// writePending writes the Pending file at path, readable by its owner
// only, atomically.
func writePending(path, rt, replaces string) error {
	b, err := json.Marshal(pending{RefreshToken: rt, Replaces: digest(replaces)})
	if err != nil {
		return err
	}
	return settings.CreateFileAtomic(path, append(b, '\n'), 0o600) // a text file ends with a newline
}

// takePending moves the token of a Pending file left by an earlier run
// into the config file raw is the content of, and into cfg, before any
// token request: that token is the only valid one. A config that holds
// another token than the one the Pending file replaces was edited since,
// and keeps its own. The Pending file is removed once the config holds
// the token.
func takePending(cfg *settings.Config, raw []byte, log *slog.Logger) ([]byte, error) {
	side := Pending(cfg.Path)
	b, err := os.ReadFile(side)
	if errors.Is(err, os.ErrNotExist) {
		return raw, nil
	}
	if err != nil {
		return nil, &settings.InputError{File: side, Err: fmt.Errorf("cannot read the rotated refresh token an earlier run kept: %w", err)}
	}
	var p pending
	if err := json.Unmarshal(b, &p); err != nil || p.RefreshToken == "" {
		return nil, &settings.InputError{File: side, Err: fmt.Errorf("expected {\"refresh_token\": ..., \"replaces_sha256\": ...}, as a run writes it; move the token into %s by hand and remove the file", cfg.RefreshTokenPath())}
	}
	if digest(cfg.Auth.RefreshToken) != p.Replaces {
		log.Warn("the config's refresh token is not the one an earlier run found rotated: it was edited since, and is used; the kept token is removed", "config", cfg.Path, "kept", side)
		return raw, removeSynced(side)
	}
	out, err := settings.SetString(raw, cfg.RefreshTokenPath(), p.RefreshToken)
	if err != nil {
		return nil, &settings.InputError{File: cfg.Path, Err: fmt.Errorf("%s: cannot take the rotated refresh token an earlier run kept in %s: %w", cfg.RefreshTokenPath(), side, err)}
	}
	if err := settings.WriteFileAtomic(cfg.Path, out); err != nil {
		return nil, &settings.InputError{File: cfg.Path, Err: fmt.Errorf("%s: an earlier run kept the rotated refresh token in %s, and the config file must take it before any token request, but it cannot be rewritten (%w); free space or make its directory writable", cfg.RefreshTokenPath(), side, err)}
	}
	cfg.Auth.RefreshToken = p.RefreshToken
	if cfg.Redactor != nil {
		cfg.Redactor.Add(p.RefreshToken)
	}
	log.Info("the config file takes the rotated refresh token an earlier run kept beside it", "config", cfg.Path, "kept", side)
	return out, removeSynced(side)
}

// removeSynced removes path and syncs its directory, so that the removal
// outlives a crash.
func removeSynced(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// CheckRewritable makes sure, before any token request, that the config
// file can be rewritten when the API may rotate the refresh token it
// holds: the rotation voids the old token, so a new one that cannot be
// kept (a config mounted read-only, a full disk) would leave no valid
// token for any later run. It writes, syncs and removes a file of the
// config's size in its directory, as the rewrite does.
//
// A rotated token an earlier run could not write to the config (Pending)
// is moved into it first.
func CheckRewritable(cfg *settings.Config, log *slog.Logger) error {
	a := cfg.Auth
	if a.Type != "oauth2" || a.GrantType != "refresh_token" || cfg.Path == "" {
		return nil
	}
	raw, err := inputfile.Read(cfg.Path, inputfile.MaxConfig)
	if err != nil {
		return &settings.InputError{File: cfg.Path, Err: fmt.Errorf("cannot read the config: %w", err)}
	}
	if raw, err = takePending(cfg, raw, log); err != nil {
		return err
	}
	a = cfg.Auth
	if _, err := settings.SetString(raw, cfg.RefreshTokenPath(), a.RefreshToken); err != nil {
		return nil // read from the environment: a WARN at rotation says it cannot be kept
	}
	if err := tryWrite(cfg.Path, len(raw)+len(a.RefreshToken)); err != nil {
		return &settings.InputError{File: cfg.Path, Err: fmt.Errorf("%s: the API may rotate the refresh token, and the config file must be rewritten to keep the new one, but it cannot be (%w); make its directory writable, or read the token from the environment ({\"env\": \"NAME\"}) and update the variable yourself", cfg.RefreshTokenPath(), err)}
	}
	return nil
}

// tryWrite writes n bytes to a new file beside path, syncs and removes it.
func tryWrite(path string, n int) error {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.check")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(make([]byte, n))
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// ConfigSender sends a whole updated config for the platform to store: the
// Airbyte writer's CONTROL message of type CONNECTOR_CONFIG.
type ConfigSender interface {
	ConnectorConfig(config []byte) error
}

// InControl is the Keeper of Airbyte mode: the whole config, updated, goes
// to the platform through to. The file is left alone; the platform writes
// the next one.
func InControl(cfg *settings.Config, to ConfigSender, log *slog.Logger) Keeper {
	var mu sync.Mutex
	var current []byte // the config as last sent, for a second rotation
	return func(_ context.Context, rt string) error {
		mu.Lock()
		defer mu.Unlock()
		if current == nil {
			raw, err := inputfile.Read(cfg.Path, inputfile.MaxConfig)
			if err != nil {
				return fmt.Errorf("reading the config for the rotated refresh token: %w", err)
			}
			current = raw
		}
		out, ok, err := rotated(cfg, current, rt, log)
		if !ok {
			return err
		}
		if err := to.ConnectorConfig(out); err != nil {
			return fmt.Errorf("sending the rotated refresh token: %w", err)
		}
		current = out
		return nil
	}
}

// rotated edits the config file's bytes so that its refresh token field
// (auth.refresh_token, or a manifest's connector config's) is rt.
// ok is false, with a WARN, when the file holds an {"env": ...} reference
// there: the new token cannot be kept, and the next run will fail unless
// the variable is updated.
func rotated(cfg *settings.Config, raw []byte, rt string, log *slog.Logger) (out []byte, ok bool, err error) {
	out, err = settings.SetString(raw, cfg.RefreshTokenPath(), rt)
	if errors.Is(err, settings.ErrNotLiteral) {
		log.Warn("the API rotated the refresh token, but "+cfg.RefreshTokenPath()+" is read from the environment: the new one cannot be written back, and the next run fails unless the variable is updated by hand",
			"config", cfg.Path)
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("writing the rotated refresh token to %s: %w", cfg.Path, err)
	}
	return out, true, nil
}
