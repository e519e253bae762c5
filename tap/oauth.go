package tap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"sync"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/tap/output"
)

// keeper keeps a rotated refresh token where the next run finds it. It is
// called before the new token's access token is used: the old refresh
// token may be void already.
type keeper func(ctx context.Context, refreshToken string) error

// keepWith is a newClient option: rotated refresh tokens go to keep.
func keepWith(keep keeper) func(*client.Config) {
	return func(c *client.Config) { c.Auth.OAuth.OnRotate = keep }
}

// oauthOf is the client's OAuth block of the config. A token_url that is
// a path is on base's host (so embedded://demo can serve it).
func oauthOf(cfg *Config, base *url.URL, keep keeper) client.OAuth {
	a := cfg.Auth
	if a.Type != "oauth2" && a.Type != "jwt" {
		return client.OAuth{}
	}
	tokenURL := a.TokenURL
	if u, err := url.Parse(tokenURL); err == nil && !u.IsAbs() {
		tokenURL = base.ResolveReference(u).String()
	}
	return client.OAuth{
		TokenURL: tokenURL, GrantType: a.GrantType, ClientID: a.ClientID, ClientSecret: a.ClientSecret,
		RefreshToken: a.RefreshToken, AuthStyle: a.AuthStyle,
		Issuer: a.Issuer, Subject: a.Subject, Audience: a.Audience, PrivateKey: []byte(a.PrivateKey), KeyID: a.KeyID,
		Scopes: a.Scopes, Params: a.TokenParams, OnRotate: keep,
	}
}

// rotatedConfig edits the config file's bytes so that auth.refresh_token
// is rt, every other byte as it was. ok is false, with a WARN, when the
// file holds an {"env": ...} reference there: the new token cannot be
// kept, and the next run will fail unless the variable is updated.
func rotatedConfig(cfg *Config, raw []byte, rt string, log *slog.Logger) (out []byte, ok bool, err error) {
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

// keepInFile is the keeper of Singer mode: the config file is rewritten
// atomically with the new refresh token.
func keepInFile(cfg *Config, log *slog.Logger) keeper {
	return func(_ context.Context, rt string) error {
		raw, err := os.ReadFile(cfg.Path)
		if err != nil {
			return fmt.Errorf("writing the rotated refresh token: %w", err)
		}
		out, ok, err := rotatedConfig(cfg, raw, rt, log)
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

// keepInControl is the keeper of Airbyte mode: a CONTROL message of type
// CONNECTOR_CONFIG carries the whole updated config for the platform to
// store. The file is left alone; the platform writes the next one.
func keepInControl(cfg *Config, aw *output.Airbyte, log *slog.Logger) keeper {
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
		out, ok, err := rotatedConfig(cfg, current, rt, log)
		if !ok {
			return err
		}
		if err := aw.ConnectorConfig(out); err != nil {
			return fmt.Errorf("sending the rotated refresh token: %w", err)
		}
		current = out
		return nil
	}
}
