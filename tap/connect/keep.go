package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/tap-dev/tap/settings"
)

// A Keeper keeps a rotated refresh token where the next run finds it. It
// is called before the new token's access token is used: the old refresh
// token may be void already.
type Keeper func(ctx context.Context, refreshToken string) error

// InFile is the Keeper of Singer mode: the config file is rewritten
// atomically with the new refresh token, every other byte as it was.
func InFile(cfg *settings.Config, log *slog.Logger) Keeper {
	return func(_ context.Context, rt string) error {
		raw, err := os.ReadFile(cfg.Path)
		if err != nil {
			return fmt.Errorf("writing the rotated refresh token: %w", err)
		}
		out, ok, err := rotated(cfg, raw, rt, log)
		if !ok {
			return err
		}
		if err := settings.WriteFileAtomic(cfg.Path, out); err != nil {
			return fmt.Errorf("writing the rotated refresh token to %s: %w", cfg.Path, err)
		}
		log.Info("the API rotated the refresh token; the config file holds the new one", "config", cfg.Path)
		return nil
	}
}

// CheckRewritable makes sure, before any token request, that the config
// file can be rewritten when the API may rotate the refresh token it
// holds: the rotation voids the old token, so a new one that cannot be
// kept (a config mounted read-only, a full disk) would leave no valid
// token for any later run. It writes, syncs and removes a file of the
// config's size in its directory, as the rewrite does.
func CheckRewritable(cfg *settings.Config) error {
	a := cfg.Auth
	if a.Type != "oauth2" || a.GrantType != "refresh_token" || cfg.Path == "" {
		return nil
	}
	raw, err := os.ReadFile(cfg.Path)
	if err != nil {
		return &settings.InputError{File: cfg.Path, Err: fmt.Errorf("cannot read the config: %w", err)}
	}
	if _, err := settings.SetString(raw, "auth.refresh_token", a.RefreshToken); err != nil {
		return nil // read from the environment: a WARN at rotation says it cannot be kept
	}
	if err := tryWrite(cfg.Path, len(raw)+len(a.RefreshToken)); err != nil {
		return &settings.InputError{File: cfg.Path, Err: fmt.Errorf("auth.refresh_token: the API may rotate the refresh token, and the config file must be rewritten to keep the new one, but it cannot be (%w); make its directory writable, or read the token from the environment ({\"env\": \"NAME\"}) and update the variable yourself", err)}
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
			raw, err := os.ReadFile(cfg.Path)
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

// rotated edits the config file's bytes so that auth.refresh_token is rt.
// ok is false, with a WARN, when the file holds an {"env": ...} reference
// there: the new token cannot be kept, and the next run will fail unless
// the variable is updated.
func rotated(cfg *settings.Config, raw []byte, rt string, log *slog.Logger) (out []byte, ok bool, err error) {
	out, err = settings.SetString(raw, "auth.refresh_token", rt)
	if errors.Is(err, settings.ErrNotLiteral) {
		log.Warn("the API rotated the refresh token, but auth.refresh_token is read from the environment: the new one cannot be written back, and the next run fails unless the variable is updated by hand",
			"config", cfg.Path)
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("writing the rotated refresh token to %s: %w", cfg.Path, err)
	}
	return out, true, nil
}
