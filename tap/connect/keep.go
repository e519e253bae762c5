package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
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
