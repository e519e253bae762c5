package tap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/demoapi"
)

// Options of one sync.
type Options struct {
	Config    *Config
	Selection *Selection // nil syncs every stream
	State     *State
	Writer    Writer
	Log       *slog.Logger
	// ProgressEvery is the period of progress lines [10s].
	ProgressEvery time.Duration
}

// Sync runs one sync: every selected stream, records then STATE, through
// o.Writer. The last STATE written is valid whatever error it returns.
func Sync(ctx context.Context, o Options) error {
	if o.State == nil {
		o.State = NewState()
	}
	base, stop, err := startAPI(o.Config, o.Log)
	if err != nil {
		return err
	}
	defer stop()
	e, err := newEngine(o.Config, o.Selection, o.State, o.Writer, o.Log)
	if err != nil {
		return err
	}
	if e.client, err = newClient(o.Config, base, o.Log, e.requestMetric); err != nil {
		return err
	}
	defer e.dead.Close()
	every := o.ProgressEvery
	if every == 0 {
		every = 10 * time.Second
	}
	stopProgress := e.progress(every)
	start := time.Now()
	err = e.run(ctx)
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
	if ferr := o.Writer.Flush(); ferr != nil && err == nil {
		err = ferr
	}
	return err
}

// startAPI resolves the base URL, starting the bundled demo API on
// loopback for embedded://demo.
func startAPI(cfg *Config, log *slog.Logger) (*url.URL, func(), error) {
	if cfg.BaseURL != DemoURL {
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

func newClient(cfg *Config, base *url.URL, log *slog.Logger, onAttempt func(stream, method, path string, status int, d time.Duration)) (*client.Client, error) {
	r := cfg.Retry
	c, err := client.New(client.Config{
		BaseURL: base,
		Auth: client.Auth{Type: cfg.Auth.Type, Token: cfg.Auth.Token, Username: cfg.Auth.Username, Password: cfg.Auth.Password,
			Name: cfg.Auth.Name, Value: cfg.Auth.Value, In: cfg.Auth.In},
		Headers:           cfg.Headers,
		RequestsPerSecond: *cfg.RateLimit.RequestsPerSecond,
		Burst:             cfg.RateLimit.Burst,
		MaxInFlight:       cfg.RateLimit.MaxInFlight,
		DailyQuota:        cfg.RateLimit.DailyQuota,
		MaxAttempts:       r.MaxAttempts,
		BaseDelay:         time.Duration(r.BaseDelayMS) * time.Millisecond,
		MaxDelay:          time.Duration(r.MaxDelayMS) * time.Millisecond,
		MaxRetryAfter:     time.Duration(r.MaxRetryAfterS) * time.Second,
		Timeout:           time.Duration(*cfg.RequestTimeoutS * float64(time.Second)),
		Logger:            log,
		OnAttempt:         onAttempt,
	})
	if err != nil {
		return nil, &InputError{File: cfg.Path, Err: err}
	}
	return c, nil
}

// requestMetric logs Singer's http_request_duration timer for an attempt.
func (e *engine) requestMetric(stream, method, path string, status int, d time.Duration) {
	result := "succeeded"
	if status == 0 || status >= 400 {
		result = "failed"
	}
	e.metric("timer", "http_request_duration", d.Seconds(), map[string]any{
		"endpoint": stream, "http_status_code": status, "status": result,
	})
}

// progress logs a line per running stream every period until stopped.
func (e *engine) progress(every time.Duration) (stop func()) {
	done := make(chan struct{})
	ticker := time.NewTicker(every)
	go func() {
		defer ticker.Stop()
		for {
			select {
			case <-done:
				return
			case <-ticker.C:
				wait := e.client.Stats().WaitBucket
				for _, n := range e.nodes {
					if !n.running.Load() {
						continue
					}
					recs := n.records.Load()
					secs := time.Since(n.started).Seconds()
					e.log.Info("progress", "stream", n.def.Name, "records", recs, "pages", n.pages.Load(),
						"records_per_s", fmt.Sprintf("%.0f", float64(recs)/max(secs, 0.001)),
						"quota_wait_s", fmt.Sprintf("%.1f", wait.Seconds()))
					e.metric("counter", "record_count", recs, map[string]any{"endpoint": n.def.Name})
				}
			}
		}
	}()
	return func() { close(done) }
}

// summary logs what the run did: per stream, the client's requests and
// waits, and the drift of every stream.
func (e *engine) summary(elapsed time.Duration) {
	st := e.client.Stats()
	var total int64
	for _, n := range e.nodes {
		if n.selected {
			total += n.records.Load()
		}
	}
	statuses := make([]int, 0, len(st.ByStatus))
	for s := range st.ByStatus {
		statuses = append(statuses, s)
	}
	sort.Ints(statuses)
	var by strings.Builder
	for i, s := range statuses {
		if i > 0 {
			by.WriteByte(',')
		}
		fmt.Fprintf(&by, "%d:%d", s, st.ByStatus[s])
	}
	e.log.Info("run summary",
		"records", total, "seconds", fmt.Sprintf("%.1f", elapsed.Seconds()),
		"requests", st.Requests, "by_status", by.String(), "retries", st.Retries, "ignored", st.Ignored,
		"wait_bucket_s", fmt.Sprintf("%.1f", st.WaitBucket.Seconds()),
		"wait_retry_after_s", fmt.Sprintf("%.1f", st.WaitRetryAfter.Seconds()),
		"wait_backoff_s", fmt.Sprintf("%.1f", st.WaitBackoff.Seconds()),
		"dead_letters", e.dead.count)
	for _, n := range e.nodes {
		if !n.selected {
			continue
		}
		for _, d := range n.check.drift.entries(n.def.Name) {
			e.log.Warn("schema drift: " + d.text)
			e.metric("counter", "schema_drift", d.count, map[string]any{"endpoint": n.def.Name, "kind": d.kind, "field": d.field})
		}
	}
}
