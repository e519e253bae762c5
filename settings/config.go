// Package settings is the tap's configuration: the config file and its
// streams file read, checked and completed, the table of every setting
// (which --about and the Airbyte spec print), and the redactor built from
// the secrets among them.
package settings

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"github.com/tap-dev/tap/demoapi"
	"github.com/tap-dev/tap/streams"
)

// DemoURL as base_url starts the bundled demo API in-process on loopback.
const DemoURL = "embedded://demo"

// Config is the --config file, with defaults applied and every stream's
// schema resolved.
type Config struct {
	BaseURL            string               `json:"base_url"`
	Auth               Auth                 `json:"auth"`
	Headers            map[string]string    `json:"headers"`
	StartDate          string               `json:"start_date"`
	Streams            []streams.Definition `json:"streams"`
	StreamsFile        string               `json:"streams_file"`
	RateLimit          RateLimit            `json:"rate_limit"`
	Retry              Retry                `json:"retry"`
	RequestTimeoutS    *float64             `json:"request_timeout_s"`
	MaxParallelStreams *int                 `json:"max_parallel_streams"`
	MaxPages           int                  `json:"max_pages"`
	OnSchemaViolation  string               `json:"on_schema_violation"`
	DeadLetterPath     string               `json:"dead_letter_path"`
	Demo               demoapi.Config       `json:"demo"`

	// Path is the file the config was read from; relative paths in it
	// resolve against its directory.
	Path string `json:"-"`
	// Start is StartDate parsed (the zero time when unset).
	Start time.Time `json:"-"`
	// Schemas holds each stream's decoded schema by stream name.
	Schemas map[string]map[string]any `json:"-"`
}

// Auth is the auth block. Token, Password and Value are secrets.
type Auth struct {
	Type     string `json:"type"`
	Token    string `json:"token"`
	Username string `json:"username"`
	Password string `json:"password"`
	Name     string `json:"name"`
	Value    string `json:"value"`
	In       string `json:"in"`
}

// RateLimit is the rate_limit block. Pointers tell "unset" (default) from
// an explicit zero (off).
type RateLimit struct {
	RequestsPerSecond *float64 `json:"requests_per_second"`
	Burst             int      `json:"burst"`
	MaxInFlight       int      `json:"max_in_flight"`
	DailyQuota        int      `json:"daily_quota"`
}

// Retry is the retry block.
type Retry struct {
	MaxAttempts    int `json:"max_attempts"`
	BaseDelayMS    int `json:"base_delay_ms"`
	MaxDelayMS     int `json:"max_delay_ms"`
	MaxRetryAfterS int `json:"max_retry_after_s"`
}

// Secrets returns the secret values of the config, so that output can be
// checked (and scrubbed) for them.
func (c *Config) Secrets() []string {
	var out []string
	add := func(s string) {
		if s == "" {
			return
		}
		out = append(out, s)
		// The forms a secret takes on the wire, should an API echo it.
		for _, e := range []string{url.QueryEscape(s), url.PathEscape(s)} {
			if e != s {
				out = append(out, e)
			}
		}
	}
	for _, s := range []string{c.Auth.Token, c.Auth.Password, c.Auth.Value, c.Demo.Token} {
		add(s)
	}
	if c.Auth.Type == "basic" && c.Auth.Password != "" {
		add(base64.StdEncoding.EncodeToString([]byte(c.Auth.Username + ":" + c.Auth.Password)))
	}
	return out
}

// Stream returns the definition named name.
func (c *Config) Stream(name string) *streams.Definition {
	for i := range c.Streams {
		if c.Streams[i].Name == name {
			return &c.Streams[i]
		}
	}
	return nil
}

// Load reads, checks and completes the config at path. Every error
// is an *InputError naming the file and the field.
func Load(path string) (*Config, error) { return LoadWith(path, nil) }

// LoadWith is Load with a hook that may amend the decoded
// config (definitions decoded, nothing checked yet) before it is checked;
// --infer-schema uses it for schemas not written yet. prepare's error is
// returned as is.
func LoadWith(path string, prepare func(c *Config, streamsPath string) error) (*Config, error) {
	raw, err := ReadJSONFile(path, "config")
	if err != nil {
		return nil, err
	}
	tree, err := resolveEnv(raw, "")
	if err != nil {
		return nil, inputErr(path, err)
	}
	var cfg Config
	if err := decodeWithStreams(tree, &cfg, &cfg.Streams); err != nil {
		return nil, inputErr(path, err)
	}
	cfg.Path = path
	streamsPath := path
	if cfg.StreamsFile != "" {
		if len(cfg.Streams) > 0 {
			return nil, inputErr(path, errors.New("streams_file: set either streams or streams_file, not both"))
		}
		streamsPath = filepath.Join(filepath.Dir(path), cfg.StreamsFile)
		raw, err := ReadJSONFile(streamsPath, "streams file")
		if err != nil {
			return nil, err
		}
		tree, err := resolveEnv(raw, "")
		if err != nil {
			return nil, inputErr(streamsPath, err)
		}
		var file struct {
			Streams []streams.Definition `json:"streams"`
		}
		if err := decodeWithStreams(tree, &file, &cfg.Streams); err != nil {
			return nil, inputErr(streamsPath, err)
		}
	}
	if prepare != nil {
		if err := prepare(&cfg, streamsPath); err != nil {
			return nil, err
		}
	}
	if err := cfg.check(); err != nil {
		return nil, inputErr(path, err)
	}
	if err := cfg.checkStreams(streamsPath); err != nil {
		return nil, inputErr(streamsPath, err)
	}
	return &cfg, nil
}

func (c *Config) check() error {
	if c.BaseURL == "" {
		return errors.New(`base_url: is required (e.g. "https://api.example.com" or "embedded://demo")`)
	}
	if c.BaseURL != DemoURL {
		u, err := url.Parse(c.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errors.New(`base_url: expected an http(s) URL such as "https://api.example.com", or "embedded://demo"`)
		}
	}
	switch c.Auth.Type {
	case "", "none":
	case "bearer":
		if c.Auth.Token == "" {
			return errors.New("auth.token: is required for auth type bearer")
		}
	case "basic":
		if c.Auth.Username == "" {
			return errors.New("auth.username: is required for auth type basic")
		}
	case "api_key":
		if c.Auth.Name == "" || c.Auth.Value == "" {
			return errors.New("auth: name and value are required for auth type api_key")
		}
		if c.Auth.In != "" && c.Auth.In != "header" && c.Auth.In != "query" {
			return fmt.Errorf("auth.in: expected header or query, got %q", c.Auth.In)
		}
	default:
		return fmt.Errorf("auth.type: expected none, bearer, basic or api_key, got %q", c.Auth.Type)
	}
	if c.StartDate != "" {
		t, err := time.Parse(time.RFC3339, c.StartDate)
		if err != nil {
			if t, err = time.Parse(time.DateOnly, c.StartDate); err != nil {
				return fmt.Errorf("start_date: expected an RFC 3339 time such as 2024-01-01T00:00:00Z, got %q", c.StartDate)
			}
		}
		c.Start = t.UTC()
	}
	rl := &c.RateLimit
	if rl.RequestsPerSecond == nil {
		rl.RequestsPerSecond = ptr(10.0)
	} else if *rl.RequestsPerSecond < 0 {
		return fmt.Errorf("rate_limit.requests_per_second: expected a number >= 0 (0 = unlimited), got %v", *rl.RequestsPerSecond)
	}
	if err := defaultInt(&rl.Burst, 1, 1, "rate_limit.burst"); err != nil {
		return err
	}
	if err := defaultInt(&rl.MaxInFlight, 4, 1, "rate_limit.max_in_flight"); err != nil {
		return err
	}
	if rl.DailyQuota < 0 {
		return fmt.Errorf("rate_limit.daily_quota: expected an integer >= 0 (0 = off), got %d", rl.DailyQuota)
	}
	r := &c.Retry
	for _, f := range []struct {
		v        *int
		def, min int
		name     string
	}{
		{&r.MaxAttempts, 6, 1, "retry.max_attempts"},
		{&r.BaseDelayMS, 500, 1, "retry.base_delay_ms"},
		{&r.MaxDelayMS, 30000, 1, "retry.max_delay_ms"},
		{&r.MaxRetryAfterS, 300, 1, "retry.max_retry_after_s"},
	} {
		if err := defaultInt(f.v, f.def, f.min, f.name); err != nil {
			return err
		}
	}
	if r.MaxDelayMS < r.BaseDelayMS {
		return fmt.Errorf("retry.max_delay_ms: must be >= retry.base_delay_ms (%d), got %d", r.BaseDelayMS, r.MaxDelayMS)
	}
	if c.RequestTimeoutS == nil {
		c.RequestTimeoutS = ptr(30.0)
	} else if *c.RequestTimeoutS <= 0 {
		return fmt.Errorf("request_timeout_s: expected a number of seconds > 0, got %v", *c.RequestTimeoutS)
	}
	if c.MaxParallelStreams == nil {
		c.MaxParallelStreams = ptr(2)
	} else if *c.MaxParallelStreams < 1 {
		return fmt.Errorf("max_parallel_streams: expected an integer >= 1, got %d", *c.MaxParallelStreams)
	}
	if c.MaxPages < 0 {
		return fmt.Errorf("max_pages: expected an integer >= 0 (0 = unlimited), got %d", c.MaxPages)
	}
	switch c.OnSchemaViolation {
	case "":
		c.OnSchemaViolation = ViolationDeadLetter
	case ViolationFail, ViolationDeadLetter, ViolationEmit:
	default:
		return fmt.Errorf("on_schema_violation: expected fail, dead_letter or emit, got %q", c.OnSchemaViolation)
	}
	if c.DeadLetterPath == "" {
		c.DeadLetterPath = "dead_letter.jsonl"
	}
	if !filepath.IsAbs(c.DeadLetterPath) {
		c.DeadLetterPath = filepath.Join(filepath.Dir(c.Path), c.DeadLetterPath)
	}
	if c.BaseURL == DemoURL {
		if _, err := demoapi.New(c.Demo); err != nil {
			return err
		}
	}
	return nil
}

// Schema-violation policies.
const (
	ViolationFail       = "fail"
	ViolationDeadLetter = "dead_letter"
	ViolationEmit       = "emit"
)

func defaultInt(v *int, def, min int, name string) error {
	if *v == 0 {
		*v = def
		return nil
	}
	if *v < min {
		return fmt.Errorf("%s: expected an integer >= %d, got %d", name, min, *v)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
