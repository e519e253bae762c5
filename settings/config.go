// Package settings is the tap's configuration: the config file and its
// streams file read, checked and completed, the table of every setting
// (which --about and the Airbyte spec print), and the redactor built from
// the secrets among them.
package settings

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tap-dev/tap/demoapi"
	"github.com/tap-dev/tap/inputfile"
	"github.com/tap-dev/tap/records"
	"github.com/tap-dev/tap/streammap"
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
	PathParams         map[string]string    `json:"path_params"`
	Definitions        map[string]any       `json:"definitions"`
	StartDate          string               `json:"start_date"`
	EndDate            string               `json:"end_date"`
	Streams            []streams.Definition `json:"streams"`
	StreamsFile        string               `json:"streams_file"`
	RateLimit          RateLimit            `json:"rate_limit"`
	Retry              Retry                `json:"retry"`
	OnStatus           map[string]string    `json:"on_status"`
	CircuitBreaker     CircuitBreaker       `json:"circuit_breaker"`
	Feed               FeedLimits           `json:"feed"`
	RequestTimeoutS    float64              `json:"request_timeout_s"`
	MaxParallelStreams int                  `json:"max_parallel_streams"`
	MaxPages           int                  `json:"max_pages"`
	MaxPartitions      int                  `json:"max_partitions"`
	OnSchemaViolation  string               `json:"on_schema_violation"`
	DeadLetterPath     string               `json:"dead_letter_path"`
	DeadLetterAlert    int                  `json:"dead_letter_alert"`
	TracePath          string               `json:"trace_path"`
	ReportPath         string               `json:"report_path"`
	SummaryJSONPath    string               `json:"summary_json_path"`
	LogLevel           string               `json:"log_level"`
	MetricsLogLevel    string               `json:"metrics_log_level"`
	Demo               demoapi.Config       `json:"demo"`

	// Stream maps and flattening, as the Meltano SDK reads them; package
	// records compiles and checks them.
	StreamMaps         map[string]any `json:"stream_maps"`
	StreamMapConfig    map[string]any `json:"stream_map_config"`
	FlatteningEnabled  bool           `json:"flattening_enabled"`
	FlatteningMaxDepth *int           `json:"flattening_max_depth"`

	// Path is the file the config was read from; relative paths in it
	// resolve against its directory.
	Path string `json:"-"`
	// StreamsPath is the file the stream definitions were read from:
	// Path, or streams_file resolved.
	StreamsPath string `json:"-"`
	// UnsetEnv holds, by stream, the {"env"} placeholders it reads whose
	// variable is not set ("field: NAME"); see CheckEnv.
	UnsetEnv map[string][]string `json:"-"`
	// Start is StartDate parsed (the zero time when unset).
	Start time.Time `json:"-"`
	// End is EndDate parsed (the zero time when unset: now).
	End time.Time `json:"-"`
	// Schemas holds each stream's decoded schema by stream name.
	Schemas map[string]map[string]any `json:"-"`
	// CDKState, by stream, is how a stream compiled from an Airbyte
	// manifest keeps its cursor in Airbyte's state as the CDK does, so
	// that a connection moves between the CDK and the tap without a
	// resync (nil: the tap's own shape only). Set by that front end.
	CDKState map[string]CDKCursor `json:"-"`
	// RefreshTokenField is the config file's dotted field that holds the
	// OAuth refresh token, where a rotated one is written back ("":
	// auth.refresh_token). A front end sets it: a manifest's connector
	// config keeps its token in a field of its own.
	RefreshTokenField string `json:"-"`
	// Redactor masks the config's secrets; a run adds the secrets it
	// learns (access tokens) to it.
	Redactor *Redactor `json:"-"`
	// Maps is the stream maps compiled, once per run (inputs.Maps); nil
	// before, and for a config without stream maps or flattening.
	Maps *streammap.Mapper `json:"-"`
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

	// oauth2 and jwt. ClientSecret, RefreshToken and PrivateKey are
	// secrets.
	TokenURL     string            `json:"token_url"`
	GrantType    string            `json:"grant_type"`
	ClientID     string            `json:"client_id"`
	ClientSecret string            `json:"client_secret"`
	RefreshToken string            `json:"refresh_token"`
	AuthStyle    string            `json:"auth_style"`
	Scopes       []string          `json:"scopes"`
	TokenParams  map[string]string `json:"token_params"`
	Issuer       string            `json:"issuer"`
	Subject      string            `json:"subject"`
	Audience     string            `json:"audience"`
	PrivateKey   string            `json:"private_key"`
	KeyID        string            `json:"key_id"`

	// session: a login request whose answer holds the token. Username
	// and Password, when set, log in with HTTP Basic; Name and In say
	// where the token goes (Authorization: Bearer when Name is unset).
	LoginURL     string            `json:"login_url"`
	LoginMethod  string            `json:"login_method"`
	LoginBody    map[string]any    `json:"login_body"`
	LoginForm    map[string]string `json:"login_form"`
	LoginParams  map[string]string `json:"login_params"`
	LoginHeaders map[string]string `json:"login_headers"`
	TokenPath    string            `json:"token_path"`
	ExpiresS     float64           `json:"expires_s"`
}

// RateLimit is the rate_limit block.
type RateLimit struct {
	RequestsPerSecond float64 `json:"requests_per_second"`
	Burst             int     `json:"burst"`
	MaxInFlight       int     `json:"max_in_flight"`
	DailyQuota        int     `json:"daily_quota"`
	WeightPerMinute   int     `json:"weight_per_minute"`
	UsedWeightHeader  string  `json:"used_weight_header"`
	Cost              Cost    `json:"cost"`
	Shared            Shared  `json:"shared"`

	RetriesSpendTokens bool `json:"retries_spend_tokens"`
}

// Shared is the rate_limit.shared block: a rate limit kept in Redis.
// RedisURL is a secret (its password, at least).
type Shared struct {
	RedisURL string `json:"redis_url"`
	Key      string `json:"key"`
}

// Cost is the rate_limit.cost block: a GraphQL cost budget.
type Cost struct {
	Points        float64 `json:"points"`
	RestorePerS   float64 `json:"restore_per_s"`
	ActualPath    string  `json:"actual_path"`
	RemainingPath string  `json:"remaining_path"`
}

// FeedLimits is the feed block: the limits of every feed stream that
// its own feed block does not set.
type FeedLimits struct {
	IdleTimeoutS  float64 `json:"idle_timeout_s"`
	MaxReconnects int     `json:"max_reconnects"`
}

// CircuitBreaker is the circuit_breaker block.
type CircuitBreaker struct {
	Threshold   int     `json:"threshold"`
	CooldownS   float64 `json:"cooldown_s"`
	MaxOpenings int     `json:"max_openings"`
}

// Retry is the retry block.
type Retry struct {
	MaxAttempts    int     `json:"max_attempts"`
	BaseDelayMS    int     `json:"base_delay_ms"`
	MaxDelayMS     int     `json:"max_delay_ms"`
	MaxRetryAfterS int     `json:"max_retry_after_s"`
	MaxTotalS      float64 `json:"max_total_s"`
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
	raw, err := ReadJSONFile(path, "config", inputfile.MaxConfig)
	if err != nil {
		return nil, err
	}
	return load(path, raw, prepare)
}

// FromTree loads a config given as a decoded JSON tree, as Load loads a
// file's: what a front end of the tap's own language writes (an Airbyte
// manifest, compiled for a run). file names the input in errors, and
// schema paths are read relative to it; secrets are more values to mask
// than the tree's credentials (the connector's own secret fields).
// attach, when not nil, is given the decoded config before it is
// checked, to set what the front end computes in Go rather than in JSON
// (streams.Pagination.Compute).
func FromTree(file string, tree map[string]any, attach func(*Config) error, secrets ...string) (*Config, error) {
	var prepare func(*Config, string) error
	if attach != nil {
		prepare = func(c *Config, _ string) error { return attach(c) }
	}
	cfg, err := load(file, tree, prepare)
	if err != nil {
		return nil, err
	}
	for _, s := range secrets {
		cfg.Redactor.Add(s)
	}
	return cfg, nil
}

func load(path string, raw any, prepare func(c *Config, streamsPath string) error) (*Config, error) {
	tree, unset, err := resolveEnv(raw, "")
	if err != nil {
		return nil, inputErr(path, err)
	}
	obj, ok := tree.(map[string]any)
	if !ok {
		return nil, inputErr(path, errors.New("expected a JSON object at the top level"))
	}
	stringifyValues(obj["headers"])
	stringifyValues(obj["path_params"])
	defaultViolation(obj)
	if err := applyRegistry(obj); err != nil {
		return nil, inputErr(path, err)
	}
	var cfg Config
	if err := decodeWithStreams(obj, &cfg, &cfg.Streams); err != nil {
		return nil, inputErr(path, err)
	}
	cfg.Path = path
	// A credential too short to mask is reported after the checks of
	// its shape (line breaks, header names), which say more.
	var redactErr error
	cfg.Redactor, redactErr = newConfigRedactor(obj)
	streamsPath := path
	if cfg.StreamsFile != "" {
		if len(cfg.Streams) > 0 {
			return nil, inputErr(path, errors.New("streams_file: set either streams or streams_file, not both"))
		}
		streamsPath = cfg.StreamsFile
		if !filepath.IsAbs(streamsPath) {
			streamsPath = filepath.Join(filepath.Dir(path), streamsPath)
		}
		raw, err := ReadJSONFile(streamsPath, "streams file", inputfile.MaxConfig)
		if err != nil {
			return nil, err
		}
		tree, fileUnset, err := resolveEnv(raw, "")
		if err != nil {
			return nil, inputErr(streamsPath, err)
		}
		var file struct {
			Streams     []streams.Definition `json:"streams"`
			Definitions map[string]any       `json:"definitions"`
		}
		if err := decodeWithStreams(tree, &file, &cfg.Streams); err != nil {
			return nil, inputErr(streamsPath, err)
		}
		if file.Definitions != nil {
			if cfg.Definitions != nil {
				return nil, inputErr(path, errors.New("definitions: set them in the config or in the streams file, not both"))
			}
			cfg.Definitions = file.Definitions
		}
		unset = append(unset, fileUnset...) // the config's own has no stream
	}
	cfg.StreamsPath = streamsPath
	// A stream's own headers are masked as the config's are.
	for i := range cfg.Streams {
		h := cfg.Streams[i].Headers
		for _, name := range slices.Sorted(maps.Keys(h)) {
			if SensitiveHeader(name) {
				redactErr = cmp.Or(redactErr, cfg.Redactor.addHeader(name, h[name]))
			}
		}
	}
	params := map[string]string{} // a path parameter whose variable is not set
	for _, u := range unset {
		switch {
		case u.param != "":
			params[u.param] = u.String()
		case u.stream < len(cfg.Streams):
			cfg.addUnsetEnv(cfg.Streams[u.stream].Name, u.String())
		}
	}
	for i := range cfg.Streams {
		d := &cfg.Streams[i]
		for _, name := range fillPathParams(d, cfg.PathParams) {
			if u, ok := params[name]; ok {
				cfg.addUnsetEnv(d.Name, u)
			}
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
	if redactErr != nil {
		return nil, inputErr(path, redactErr)
	}
	if err := cfg.checkStreams(streamsPath); err != nil {
		return nil, inputErr(streamsPath, err)
	}
	return &cfg, nil
}

// defaultViolation sets on_schema_violation when the config leaves it
// out: dead_letter when the config names a dead_letter_path, else emit.
// A record that fails its schema is never set aside in a file the user
// did not ask for: next to a config that Meltano writes in a temporary
// folder, or inside a container, it would be lost with the run.
func defaultViolation(obj map[string]any) {
	if _, set := obj["on_schema_violation"]; set {
		return
	}
	obj["on_schema_violation"] = ViolationEmit
	if p, set := obj["dead_letter_path"]; set && p != nil {
		obj["on_schema_violation"] = ViolationDeadLetter
	}
}

// check checks what the registry cannot: the shape of values and the
// rules between settings. The registry has checked types and bounds.
func (c *Config) check() error {
	if c.BaseURL != DemoURL {
		u, err := url.Parse(c.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errors.New(`base_url: expected an http(s) URL such as "https://api.example.com", or "embedded://demo"`)
		}
		if u.User != nil {
			return errors.New("base_url: must not hold credentials; use the auth block")
		}
	}
	if err := c.checkAuth(); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(c.Headers)) {
		if !validHeaderName(k) {
			return fmt.Errorf("headers: %q is not a valid header name", k)
		}
		if strings.ContainsAny(c.Headers[k], "\r\n\x00") {
			return fmt.Errorf("headers.%s: must not contain line breaks or NUL", k)
		}
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
	if err := c.checkThrottling(); err != nil {
		return err
	}
	if c.EndDate != "" {
		t, err := time.Parse(time.RFC3339, c.EndDate)
		if err != nil {
			return fmt.Errorf("end_date: expected an RFC 3339 time such as 2025-01-01T00:00:00Z, got %q", c.EndDate)
		}
		c.End = t.UTC()
		if !c.Start.IsZero() && !c.Start.Before(c.End) {
			return fmt.Errorf("end_date: expected a time after start_date (%s), got %q", c.StartDate, c.EndDate)
		}
	}
	if r := c.Retry; r.MaxDelayMS < r.BaseDelayMS {
		return fmt.Errorf("retry.max_delay_ms: must be >= retry.base_delay_ms (%d), got %d", r.BaseDelayMS, r.MaxDelayMS)
	}
	if !filepath.IsAbs(c.DeadLetterPath) {
		c.DeadLetterPath = filepath.Join(filepath.Dir(c.Path), c.DeadLetterPath)
	}
	if c.TracePath != "" {
		if !filepath.IsAbs(c.TracePath) {
			c.TracePath = filepath.Join(filepath.Dir(c.Path), c.TracePath)
		}
		if err := checkWritable(c.TracePath); err != nil {
			return fmt.Errorf("trace_path: %w", err)
		}
	}
	for _, p := range []struct {
		name string
		path *string
	}{{"report_path", &c.ReportPath}, {"summary_json_path", &c.SummaryJSONPath}} {
		if *p.path == "" {
			continue
		}
		if !filepath.IsAbs(*p.path) {
			*p.path = filepath.Join(filepath.Dir(c.Path), *p.path)
		}
		if err := checkWritable(*p.path); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}
	if c.OnSchemaViolation == ViolationDeadLetter || c.requestDeadLetters() {
		if err := checkWritable(c.DeadLetterPath); err != nil {
			return fmt.Errorf("dead_letter_path: %w", err)
		}
	}
	if c.BaseURL == DemoURL {
		if _, err := demoapi.New(c.Demo); err != nil {
			return err
		}
	}
	return nil
}

// SetTracePath sets trace_path to path, a --trace flag's: relative to the
// current folder, checked writable.
func (c *Config) SetTracePath(path string) error { return setPath(&c.TracePath, path) }

// SetReportPath sets report_path to path, a --report flag's, as
// SetTracePath does.
func (c *Config) SetReportPath(path string) error { return setPath(&c.ReportPath, path) }

// SetSummaryJSONPath sets summary_json_path to path, a --summary-json
// flag's, as SetTracePath does.
func (c *Config) SetSummaryJSONPath(path string) error { return setPath(&c.SummaryJSONPath, path) }

func setPath(field *string, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if err := checkWritable(abs); err != nil {
		return err
	}
	*field = abs
	return nil
}

// requestDeadLetters reports whether a request may become a dead letter:
// a stream has on_request_failure dead_letter, or an on_status rule says
// dead_letter.
func (c *Config) requestDeadLetters() bool {
	if slices.Contains(slices.Collect(maps.Values(c.OnStatus)), streams.StatusDeadLetter) {
		return true
	}
	for _, d := range c.Streams {
		if d.OnRequestFailure == streams.RequestFailureDeadLetter || slices.Contains(slices.Collect(maps.Values(d.OnStatus)), streams.StatusDeadLetter) {
			return true
		}
	}
	return false
}

// checkAuth checks that the auth block holds what its type needs, in a
// form a request can carry.
func (c *Config) checkAuth() error {
	a := c.Auth
	switch a.Type {
	case "bearer":
		if a.Token == "" {
			return errors.New("auth.token: is required for auth type bearer")
		}
		if strings.ContainsAny(a.Token, "\r\n\x00") {
			return errors.New("auth.token: must not contain line breaks or NUL")
		}
	case "basic":
		if a.Username == "" {
			return errors.New("auth.username: is required for auth type basic")
		}
	case "oauth2", "jwt":
		return c.checkOAuth()
	case "session":
		return c.checkSession()
	case "api_key":
		if a.Name == "" || a.Value == "" {
			return errors.New("auth: name and value are required for auth type api_key")
		}
		if a.In == "header" {
			if !validHeaderName(a.Name) {
				return fmt.Errorf("auth.name: %q is not a valid header name", a.Name)
			}
			if strings.ContainsAny(a.Value, "\r\n\x00") {
				return errors.New("auth.value: must not contain line breaks or NUL")
			}
		}
	}
	return nil
}

// validHeaderName reports whether s is an HTTP token (RFC 9110 5.1).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}

// checkWritable checks that records can be appended to the file at path,
// without leaving a file behind that was not there.
func checkWritable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Probe the folder with a file of our own: creating and removing
		// path itself would race with another process checking it too
		// (shards, or runs sharing a dead-letter file).
		f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".probe-*")
		if err != nil {
			return fmt.Errorf("cannot create %s: %v", path, unwrapPathError(err))
		}
		f.Close()
		return os.Remove(f.Name())
	case err == nil && !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", path, unwrapPathError(err))
	}
	defer f.Close()
	// An empty write reaches the file system, which refuses it for files
	// that take no writes (/proc/version), even for root.
	if _, err := f.Write(nil); err != nil {
		return fmt.Errorf("cannot write %s: %v", path, unwrapPathError(err))
	}
	return nil
}

// Schema-violation policies, as package records names them.
const (
	ViolationFail       = string(records.Fail)
	ViolationDeadLetter = string(records.DeadLetter)
	ViolationEmit       = string(records.Emit)
)

// checkThrottling checks the settings of the rate limits and the status
// rules that the registry cannot: rules between settings and the keys of
// on_status.
// isDatabasePath reports whether a Redis URL's path is empty or names a
// database by number, the only paths the shared limiter's client reads.
func isDatabasePath(p string) bool {
	db := strings.TrimPrefix(p, "/")
	if db == "" {
		return true
	}
	n, err := strconv.Atoi(db)
	return err == nil && n >= 0
}

func (c *Config) checkThrottling() error {
	if _, err := streams.ParseOnStatus(c.OnStatus); err != nil {
		return fmt.Errorf("on_status.%w", err)
	}
	r := c.RateLimit
	if sh := r.Shared; sh.RedisURL != "" || sh.Key != "" {
		u, err := url.Parse(sh.RedisURL)
		switch {
		case sh.RedisURL == "":
			return errors.New("rate_limit.shared.redis_url: is required when rate_limit.shared.key is set")
		case err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" ||
			u.RawQuery != "" || u.Fragment != "" || !isDatabasePath(u.Path):
			return errors.New("rate_limit.shared.redis_url: want redis://[:password@]host:port[/db] or rediss://..., with no query and a database number as its path")
		case sh.Key == "":
			return errors.New("rate_limit.shared.key: is required when rate_limit.shared.redis_url is set")
		}
	}
	if r.Cost.Points > 0 && r.Cost.RestorePerS <= 0 {
		return errors.New("rate_limit.cost.restore_per_s: must be > 0 when rate_limit.cost.points is set")
	}
	if h := r.UsedWeightHeader; h != "" {
		if !validHeaderName(h) {
			return fmt.Errorf("rate_limit.used_weight_header: %q is not a valid header name", h)
		}
		if r.WeightPerMinute == 0 {
			return errors.New("rate_limit.used_weight_header: needs rate_limit.weight_per_minute")
		}
	}
	if r.WeightPerMinute > 0 {
		for _, d := range c.Streams {
			if d.Weight > r.WeightPerMinute {
				return fmt.Errorf("stream %q: weight: must be at most rate_limit.weight_per_minute (%d), got %d", d.Name, r.WeightPerMinute, d.Weight)
			}
		}
	}
	return nil
}

// placeholder is a {name} of a stream's path.
var placeholder = regexp.MustCompile(`\{([^{}]*)\}`)

// fillPathParams replaces each {placeholder} of d.Path that vals names,
// and that the parent does not fill, by its value, path-escaped: the
// config's path_params, such as GitHub's {owner} and {repo}, are the same
// for every request of the run. A malformed path is left for its check.
// It returns the names it filled.
func fillPathParams(d *streams.Definition, vals map[string]string) (filled []string) {
	if len(vals) == 0 {
		return nil
	}
	d.Path = placeholder.ReplaceAllStringFunc(d.Path, func(m string) string {
		name := m[1 : len(m)-1]
		v, ok := vals[name]
		if !ok || (d.Parent != nil && (name == d.Parent.Key || name == d.Parent.As)) {
			return m
		}
		filled = append(filled, name)
		return streams.EscapePathValue(v)
	})
	return filled
}

// addUnsetEnv notes that stream reads an {"env"} placeholder whose
// variable is not set ("field: NAME").
func (c *Config) addUnsetEnv(stream, entry string) {
	if c.UnsetEnv == nil {
		c.UnsetEnv = map[string][]string{}
	}
	if !slices.Contains(c.UnsetEnv[stream], entry) {
		c.UnsetEnv[stream] = append(c.UnsetEnv[stream], entry)
	}
}

// CheckEnv is the error naming, at once, every {"env"} placeholder whose
// variable is not set that the streams walked read; nil when there is
// none. Those of the config as a whole were an error at Load; those of a
// stream the run does not walk are none.
func (c *Config) CheckEnv(walked func(stream string) bool) error {
	var missing []string
	for stream, entries := range c.UnsetEnv {
		if walked(stream) {
			for _, e := range entries {
				if !slices.Contains(missing, e) {
					missing = append(missing, e)
				}
			}
		}
	}
	if err := missingEnv(missing); err != nil {
		return &InputError{File: c.Path, Err: err}
	}
	return nil
}

// CDKCursor is a stream's cursor in the state shape of Airbyte's
// declarative CDK: {"<Field>": "<value in Format>"}, or for a substream
// {"states": [{"partition": {"<Partition>": key, ...}, "cursor":
// {"<Field>": value}}]}.
type CDKCursor struct {
	Field string
	// Format is the tap's format of the value (rfc3339, date, unix,
	// unix_ms or a Go time layout): the manifest's datetime_format.
	Format string
	// Partition is the name of a partitioned stream's key in the tap's
	// partitions (parent.as, else parent.key; "": not partitioned).
	Partition string
	// CDKPartition is the name of that key in the CDK's partitions (the
	// router's partition_field or cursor_field), when not Partition.
	CDKPartition string
	// List says the partitions are a ListPartitionRouter's, which the
	// CDK writes without a substream's "parent_slice".
	List bool
}

// PartitionField is the name of the partition's key in the CDK's state.
func (c CDKCursor) PartitionField() string { return cmp.Or(c.CDKPartition, c.Partition) }

// RefreshTokenPath is the config file's field that holds the OAuth
// refresh token: RefreshTokenField, or auth.refresh_token.
func (c *Config) RefreshTokenPath() string {
	if c.RefreshTokenField != "" {
		return c.RefreshTokenField
	}
	return "auth.refresh_token"
}
