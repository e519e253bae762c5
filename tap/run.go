package tap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/client/limit"
	"github.com/tap-dev/tap/demoapi"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/tap/catalog"
	"github.com/tap-dev/tap/tap/output"
	"github.com/tap-dev/tap/tap/state"
)

// Options of one sync.
type Options struct {
	Config    *Config
	Selection *catalog.Selection // nil syncs every stream
	State     *state.State
	Writer    output.Writer
	Log       *slog.Logger
	// Shard reads one shard of the chunked streams' windows, and the
	// streams that are not chunked only in shard 0 (--shard I/N).
	Shard keys.Shard
	// ProgressEvery is the period of progress lines [10s].
	ProgressEvery time.Duration
	// RecordLimit > 0 stops each stream after that many records and
	// writes no STATE: a test run (--test) must not move a bookmark.
	RecordLimit int64
	// Tree sends every record through the tree path (decode, validate,
	// encode), none spliced from the page's bytes: the splice path's
	// reference in tests.
	Tree bool
}

// Sync runs one sync: every selected stream, records then STATE, through
// o.Writer. The last STATE written is valid whatever error it returns.
func Sync(ctx context.Context, o Options) error {
	if o.State == nil {
		o.State = state.New()
	}
	o.State.SetRedactor(o.Config.Redactor)
	// Redis first: a shared limit that cannot be reached is bad input,
	// found before anything starts.
	sh, err := dialShared(o.Config)
	if err != nil {
		return err
	}
	var opts0 []func(*client.Config)
	base, stop, err := startAPI(o.Config, o.Log)
	if err != nil {
		if sh != nil {
			sh.Close()
		}
		return err
	}
	defer stop()
	if sh != nil {
		opts0 = append(opts0, func(c *client.Config) { c.Shared = sh })
	}
	e, err := newEngine(o.Config, o.Selection, o.State, o.Writer, o.Log)
	if err != nil {
		return err
	}
	e.recordLimit = o.RecordLimit
	e.tree = o.Tree
	e.shard = o.Shard
	e.base = strings.TrimRight(base.String(), "/")
	opts, err := e.clientOptions(o.State)
	if err != nil {
		return err
	}
	if aw, ok := o.Writer.(*output.Airbyte); ok {
		opts = append(opts, keepWith(keepInControl(o.Config, aw, o.Log)))
	}
	if e.client, err = newClient(o.Config, base, o.Log, e.requestMetric, append(opts0, opts...)...); err != nil {
		return err
	}
	defer e.client.Close()
	e.trackQuota(o.State)
	defer e.dead.Close()
	every := o.ProgressEvery
	if every == 0 {
		every = 10 * time.Second
	}
	return e.sync(ctx, every)
}

// sync runs the engine with progress lines every period, then checkpoints
// a paused run, logs the summary and flushes the writer.
func (e *engine) sync(ctx context.Context, every time.Duration) error {
	stopProgress := e.progress(every)
	start := time.Now()
	err := e.run(ctx)
	stopProgress()
	var de *client.DeferError
	deferred := errors.As(err, &de)
	if deferred {
		e.log.Warn("deferring the rest of the run: "+de.Error(), "retry_at", de.RetryAt.UTC().Format(time.RFC3339))
	}
	if deferred || errors.Is(err, context.Canceled) {
		// A pause, not a failure: checkpoint every stream that started,
		// so the last line out is the STATE to resume from.
		for _, n := range e.nodes {
			if n.selected && n.schemaSent {
				err = errors.Join(err, e.checkpoint(n))
			}
		}
	}
	if ctx.Err() != nil {
		err = errors.New("interrupted; the last STATE written is where the next run resumes")
	}
	e.summary(time.Since(start))
	e.reportDeadLetters()
	if ferr := e.out.Flush(); ferr != nil && err == nil {
		err = ferr
	}
	return err
}

// startAPI resolves the base URL, starting the bundled demo API on
// loopback for embedded://demo.
func startAPI(cfg *Config, log *slog.Logger) (*url.URL, func(), error) {
	if cfg.BaseURL != settings.DemoURL {
		u, err := url.Parse(cfg.BaseURL)
		return u, func() {}, err
	}
	srv, err := demoapi.New(cfg.Demo)
	if err != nil {
		return nil, nil, &InputError{File: cfg.Path, Err: err}
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
func dialShared(cfg *Config) (*limit.Shared, error) {
	sh := cfg.RateLimit.Shared
	if sh.RedisURL == "" {
		return nil, nil
	}
	s, err := limit.DialShared(context.Background(), sh.RedisURL, sh.Key)
	if err != nil {
		return nil, &InputError{File: cfg.Path, Err: fmt.Errorf("rate_limit.shared.redis_url: cannot reach Redis at %s: %w", limit.RedactURL(sh.RedisURL), err)}
	}
	return s, nil
}

// newClient builds the run's client. A rotated refresh token is kept in
// the config file unless an option (keepWith) says otherwise.
func newClient(cfg *Config, base *url.URL, log *slog.Logger, onAttempt func(stream, method, path string, status int, d time.Duration), opts ...func(*client.Config)) (*client.Client, error) {
	r := cfg.Retry
	rl := cfg.RateLimit
	cc := client.Config{
		BaseURL: base,
		Auth: client.Auth{Type: cfg.Auth.Type, Token: cfg.Auth.Token, Username: cfg.Auth.Username, Password: cfg.Auth.Password,
			Name: cfg.Auth.Name, Value: cfg.Auth.Value, In: cfg.Auth.In, OAuth: oauthOf(cfg, base, keepInFile(cfg, log))},
		Headers:           cfg.Headers,
		RequestsPerSecond: cfg.RateLimit.RequestsPerSecond,
		Burst:             cfg.RateLimit.Burst,
		MaxInFlight:       cfg.RateLimit.MaxInFlight,
		FreeRetries:       !rl.RetriesSpendTokens,
		DailyQuota:        rl.DailyQuota,
		WeightPerMinute:   rl.WeightPerMinute,
		UsedWeightHeader:  rl.UsedWeightHeader,
		Cost: limit.Cost{Points: rl.Cost.Points, RestorePerS: rl.Cost.RestorePerS,
			ActualPath: rl.Cost.ActualPath, RemainingPath: rl.Cost.RemainingPath},
		MaxAttempts:        r.MaxAttempts,
		BaseDelay:          time.Duration(r.BaseDelayMS) * time.Millisecond,
		MaxDelay:           time.Duration(r.MaxDelayMS) * time.Millisecond,
		MaxRetryAfter:      time.Duration(r.MaxRetryAfterS) * time.Second,
		MaxRetryTime:       time.Duration(r.MaxTotalS * float64(time.Second)),
		Timeout:            time.Duration(cfg.RequestTimeoutS * float64(time.Second)),
		BreakerThreshold:   cfg.CircuitBreaker.Threshold,
		BreakerCooldown:    time.Duration(cfg.CircuitBreaker.CooldownS * float64(time.Second)),
		BreakerMaxOpenings: cfg.CircuitBreaker.MaxOpenings,
		Redactor:           cfg.Redactor,
		Logger:             log,
		OnAttempt:          onAttempt,
	}
	for _, o := range opts {
		o(&cc)
	}
	if cc.Shared == nil {
		s, err := dialShared(cfg)
		if err != nil {
			return nil, err
		}
		cc.Shared = s
	}
	c, err := client.New(cc)
	if err != nil {
		if cc.Shared != nil {
			cc.Shared.Close()
		}
		return nil, &InputError{File: cfg.Path, Err: err}
	}
	return c, nil
}
