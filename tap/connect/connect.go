// Package connect makes the connection a run makes from its config: the
// API it talks to and the client it talks through.
//
// The API is the config's base_url, or for embedded://demo the bundled
// demo API, started on loopback for the run and stopped with it. The
// client carries everything the config says about talking to it: auth
// (static credentials, or an OAuth or JWT grant whose token_url may be a
// path on the API), the retry and breaker rules, and the limits — the
// local bucket, or the bucket shared in Redis under rate_limit.shared, and
// the daily quota, whose count an earlier run of the same day left in
// STATE and every STATE of this run carries on.
//
// An API may rotate the refresh token of an OAuth grant; the old one may
// be void at once, so the new one is kept before it is used, where the
// next run finds it (a Keeper): in the config file in Singer mode, in a
// CONTROL message for the platform in Airbyte mode.
//
// Everything a run cannot do with the config is an *settings.InputError
// found before a request is sent: a Redis that cannot be reached, a demo
// API that cannot be built, a quota in STATE that cannot be read.
package connect

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/client/limit"
	"github.com/tap-dev/tap/client/trace"
	"github.com/tap-dev/tap/demoapi"
	"github.com/tap-dev/tap/settings"
)

// Quota is where the daily quota's count is carried from run to run: the
// run's STATE (*state.State).
type Quota interface {
	// Quota is the count an earlier run left; ok is false without one.
	Quota() (day string, used int, ok bool, err error)
	// SetQuotaSource makes every STATE written carry f's count.
	SetQuotaSource(f func() (day string, used int))
}

// Options of a connection: what comes from the run rather than from the
// config. The zero value is a connection that logs nowhere and keeps a
// rotated refresh token in the config file.
type Options struct {
	Log *slog.Logger
	// Keep keeps a rotated refresh token; nil keeps it in the config file
	// (InFile), once CheckRewritable has found that it can.
	Keep Keeper
	// Quota carries the daily quota's count when the config sets
	// rate_limit.daily_quota; nil starts the count at zero and carries it
	// nowhere.
	Quota Quota
	// OnAttempt and OnBreaker are the client's hooks of the same names:
	// a run's request metric and breaker metric lines.
	OnAttempt func(stream, method, path string, status int, d time.Duration)
	OnBreaker func(state string, openings int)
	// OnTrace is the client's hook of that name: a run's report. The
	// request trace (trace_path) is written besides.
	OnTrace func(client.Trace)
}

// Conn is a run's connection. Close it when the run is done.
type Conn struct {
	Client *client.Client
	// Base is the API's base URL without a final slash: the demo API's
	// loopback address for embedded://demo.
	Base string
	stop func()
}

// Open connects a run to the API of cfg: Redis first, as a shared limit
// that cannot be reached is bad input found before anything starts, then
// the demo API if cfg names it, then the client.
func Open(cfg *settings.Config, o Options) (*Conn, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Keep == nil {
		if err := CheckRewritable(cfg, o.Log); err != nil {
			return nil, err
		}
		o.Keep = InFile(cfg, o.Log)
	}
	shared, err := dialShared(cfg)
	if err != nil {
		return nil, err
	}
	// Until the client owns the Redis connection, a failure closes it.
	closeShared := func() {
		if shared != nil {
			shared.Close()
		}
	}
	base, stop, err := startAPI(cfg, o.Log)
	if err != nil {
		closeShared()
		return nil, err
	}
	cc, err := clientConfig(cfg, base, o)
	if err != nil {
		closeShared()
		stop()
		return nil, err
	}
	cc.Limit.Shared = shared
	if cfg.TracePath != "" {
		tw, err := trace.Create(cfg.TracePath)
		if err != nil {
			closeShared()
			stop()
			return nil, &settings.InputError{File: cfg.Path, Err: err}
		}
		cc.OnTrace = tw.Attempt
		if f := o.OnTrace; f != nil {
			cc.OnTrace = func(t client.Trace) { tw.Attempt(t); f(t) }
		}
		stopAPI := stop
		stop = func() { // after the client: its last attempts are in
			stopAPI()
			if err := tw.Close(); err != nil && o.Log != nil {
				o.Log.Warn("the request trace is incomplete", "trace_path", cfg.TracePath, "error", err.Error())
			}
		}
	}
	c, err := client.New(cc)
	if err != nil {
		closeShared()
		stop()
		return nil, &settings.InputError{File: cfg.Path, Err: err}
	}
	if o.Quota != nil && cfg.RateLimit.DailyQuota > 0 {
		o.Quota.SetQuotaSource(c.QuotaUsage)
	}
	return &Conn{Client: c, Base: strings.TrimRight(base.String(), "/"), stop: stop}, nil
}

// Close closes the client (and its Redis connection), then the request
// trace, and stops the demo API, if the connection started one.
func (c *Conn) Close() {
	c.Client.Close()
	c.stop()
}

// startAPI resolves the base URL, starting the bundled demo API on
// loopback for embedded://demo.
func startAPI(cfg *settings.Config, log *slog.Logger) (*url.URL, func(), error) {
	if cfg.BaseURL != settings.DemoURL {
		u, err := url.Parse(cfg.BaseURL)
		return u, func() {}, err
	}
	srv, err := demoapi.New(cfg.Demo)
	if err != nil {
		return nil, nil, &settings.InputError{File: cfg.Path, Err: err}
	}
	addr, err := srv.Start("127.0.0.1:0")
	if err != nil {
		return nil, nil, fmt.Errorf("starting the embedded demo API: %w", err)
	}
	log.Info("embedded demo API started", "url", addr)
	u, err := url.Parse(addr)
	return u, func() { srv.Close() }, err
}

// dialShared connects to the Redis of rate_limit.shared, if set; nil
// without it. Unreachable is an *InputError naming the setting.
func dialShared(cfg *settings.Config) (*limit.Shared, error) {
	sh := cfg.RateLimit.Shared
	if sh.RedisURL == "" {
		return nil, nil
	}
	s, err := limit.DialShared(context.Background(), sh.RedisURL, sh.Key)
	if err != nil {
		return nil, &settings.InputError{File: cfg.Path, Err: fmt.Errorf("rate_limit.shared.redis_url: cannot reach Redis at %s: %w", limit.RedactURL(sh.RedisURL), err)}
	}
	return s, nil
}

// clientConfig is the client's config for cfg's API at base, with the
// daily quota's count of earlier runs from o.Quota.
func clientConfig(cfg *settings.Config, base *url.URL, o Options) (client.Config, error) {
	r := cfg.Retry
	rl := cfg.RateLimit
	a := cfg.Auth
	cc := client.Config{
		BaseURL: base,
		Auth: client.Auth{Type: a.Type, Token: a.Token, Username: a.Username, Password: a.Password,
			Name: a.Name, Value: a.Value, In: a.In, OAuth: oauthOf(cfg, base, o.Keep), Session: sessionOf(cfg, base)},
		Headers: cfg.Headers,
		Limit: limit.Config{
			RequestsPerSecond: rl.RequestsPerSecond, Burst: rl.Burst, MaxInFlight: rl.MaxInFlight,
			DailyQuota: rl.DailyQuota, WeightPerMinute: rl.WeightPerMinute, UsedWeightHeader: rl.UsedWeightHeader,
			Cost: limit.Cost{Points: rl.Cost.Points, RestorePerS: rl.Cost.RestorePerS,
				ActualPath: rl.Cost.ActualPath, RemainingPath: rl.Cost.RemainingPath},
			MaxRetryAfter: time.Duration(r.MaxRetryAfterS) * time.Second,
		},
		FreeRetries:        !rl.RetriesSpendTokens,
		MaxAttempts:        r.MaxAttempts,
		BaseDelay:          time.Duration(r.BaseDelayMS) * time.Millisecond,
		MaxDelay:           time.Duration(r.MaxDelayMS) * time.Millisecond,
		MaxRetryTime:       time.Duration(r.MaxTotalS * float64(time.Second)),
		Timeout:            time.Duration(cfg.RequestTimeoutS * float64(time.Second)),
		BreakerThreshold:   cfg.CircuitBreaker.Threshold,
		BreakerCooldown:    time.Duration(cfg.CircuitBreaker.CooldownS * float64(time.Second)),
		BreakerMaxOpenings: cfg.CircuitBreaker.MaxOpenings,
		Redactor:           cfg.Redactor,
		Logger:             o.Log,
		OnAttempt:          o.OnAttempt,
		OnBreaker:          o.OnBreaker,
		OnTrace:            o.OnTrace,
	}
	if o.Quota != nil && rl.DailyQuota > 0 {
		day, used, ok, err := o.Quota.Quota()
		if err != nil {
			return cc, &settings.InputError{File: "state", Err: err}
		}
		if ok {
			cc.Limit.QuotaDay, cc.Limit.QuotaUsed = day, used
		}
	}
	return cc, nil
}

// sessionOf is the client's Session block of the config (auth type
// session). A login_url that is a path is on base's host.
func sessionOf(cfg *settings.Config, base *url.URL) client.Session {
	a := cfg.Auth
	if a.Type != "session" {
		return client.Session{}
	}
	s := client.Session{URL: onBase(base, a.LoginURL), Method: a.LoginMethod, Username: a.Username, Password: a.Password,
		TokenPath: a.TokenPath, Lifetime: time.Duration(a.ExpiresS * float64(time.Second)), Name: a.Name, In: a.In}
	for k, v := range a.LoginHeaders {
		if s.Header == nil {
			s.Header = http.Header{}
		}
		s.Header.Set(k, v)
	}
	for k, v := range a.LoginParams {
		if s.Query == nil {
			s.Query = url.Values{}
		}
		s.Query.Set(k, v)
	}
	switch {
	case len(a.LoginBody) > 0:
		s.Body, _ = json.Marshal(a.LoginBody) // a decoded JSON tree
		s.ContentType = "application/json"
	case len(a.LoginForm) > 0:
		form := url.Values{}
		for k, v := range a.LoginForm {
			form.Set(k, v)
		}
		s.Body, s.ContentType = []byte(form.Encode()), "application/x-www-form-urlencoded"
	}
	return s
}

// onBase is raw, an http(s) URL or a path on base's host, as an absolute
// URL (a token_url or login_url).
func onBase(base *url.URL, raw string) string {
	if u, err := url.Parse(raw); err == nil && !u.IsAbs() {
		return base.ResolveReference(u).String()
	}
	return raw
}

// oauthOf is the client's OAuth block of the config. A token_url that is
// a path is on base's host (so embedded://demo can serve it).
func oauthOf(cfg *settings.Config, base *url.URL, keep Keeper) client.OAuth {
	a := cfg.Auth
	if a.Type != "oauth2" && a.Type != "jwt" {
		return client.OAuth{}
	}
	return client.OAuth{
		TokenURL: onBase(base, a.TokenURL), GrantType: a.GrantType, ClientID: a.ClientID, ClientSecret: a.ClientSecret,
		RefreshToken: a.RefreshToken, AuthStyle: a.AuthStyle,
		Issuer: a.Issuer, Subject: a.Subject, Audience: a.Audience, PrivateKey: []byte(a.PrivateKey), KeyID: a.KeyID,
		Scopes: a.Scopes, Params: a.TokenParams, OnRotate: keep,
	}
}
