package settings

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// withStreams is a config body (without braces) plus one valid stream.
func withStreams(body string) string {
	if body != "" {
		body += ", "
	}
	return `{"base_url": "https://api.example.com", ` + body + `"streams": [` + customersStream + `]}`
}

// Every check the registry and the config make at load: one line naming
// the file and the field, an *InputError (exit 2), nothing left behind.
func TestLoadChecks(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		config string // written as config.json in dir; raw bytes
		want   string // "" = loads
	}{
		{"defaults", withStreams(""), ""},
		{"unknown top-level field", withStreams(`"rate_limt": {}`), `unknown field "rate_limt"`},
		{"unknown nested field", withStreams(`"retry": {"max_atempts": 3}`), `unknown field "retry.max_atempts"`},
		{"group of the wrong type", withStreams(`"retry": 3`), "retry: expected an object, got number"},
		{"base_url missing", `{"streams": [` + customersStream + `]}`, "base_url: is required"},
		{"base_url with credentials", `{"base_url": "https://me:pw@api.example.com", "streams": [` + customersStream + `]}`, "base_url: must not hold credentials"},
		{"enum", withStreams(`"auth": {"type": "oauth"}`), `auth.type: expected none, bearer, basic, api_key, oauth2, jwt or session, got "oauth"`},
		{"empty enum is the default", withStreams(`"auth": {"type": ""}`), ""},
		{"a session", withStreams(`"auth": {"type": "session", "login_url": "/auth/login", "login_body": {"user": "me", "password": "pass-word-1"}, "token_path": "data.token", "name": "X-Session"}`), ""},
		{"a session without login_url", withStreams(`"auth": {"type": "session", "token_path": "t"}`), "auth.login_url: is required for auth type session"},
		{"a session without token_path", withStreams(`"auth": {"type": "session", "login_url": "https://a.example/login"}`), "auth.token_path: is required for auth type session"},
		{"a session login of two bodies", withStreams(`"auth": {"type": "session", "login_url": "/l", "token_path": "t", "login_body": {"a": "b"}, "login_form": {"a": "b"}}`), "auth.login_form: give login_body (JSON) or login_form, not both"},
		{"a session login GET with a body", withStreams(`"auth": {"type": "session", "login_url": "/l", "token_path": "t", "login_method": "GET", "login_form": {"a": "b"}}`), "auth.login_method: a login with a body is sent with POST"},
		{"a session login URL with credentials", withStreams(`"auth": {"type": "session", "login_url": "https://me:pw@a.example/l", "token_path": "t"}`), "auth.login_url: expected an http(s) URL with no credentials"},
		{"integer as exponent", withStreams(`"retry": {"max_attempts": 1e1}`), ""},
		{"integer with a fraction", withStreams(`"retry": {"max_attempts": 2.5}`), "retry.max_attempts: expected an integer, got number 2.5"},
		{"integer far out of bounds", withStreams(`"retry": {"max_attempts": 1e12}`), "retry.max_attempts: expected an integer >= 1 and <= 100, got 1e12"},
		{"integer beyond float range", withStreams(`"retry": {"max_attempts": 1e400}`), "retry.max_attempts: expected an integer >= 1 and <= 100, got 1e400"},
		{"integer below bounds", withStreams(`"rate_limit": {"burst": 0}`), "rate_limit.burst: expected an integer >= 1 and <= 1000000, got 0"},
		{"timeout out of bounds", withStreams(`"request_timeout_s": 1e12`), "request_timeout_s: expected a number >= 0.001 and <= 86400, got 1e12"},
		{"timeout zero", withStreams(`"request_timeout_s": 0`), "request_timeout_s: expected a number >= 0.001"},
		{"number of the wrong type", withStreams(`"request_timeout_s": "30s"`), "request_timeout_s: expected a number, got string"},
		{"max_delay below base", withStreams(`"retry": {"base_delay_ms": 900, "max_delay_ms": 800}`), "retry.max_delay_ms: must be >= retry.base_delay_ms (900), got 800"},
		{"header name", withStreams(`"headers": {"Bad Name": "x"}`), `headers: "Bad Name" is not a valid header name`},
		{"header line break", withStreams(`"headers": {"X-Trace": "a\r\nInjected: 1"}`), "headers.X-Trace: must not contain line breaks or NUL"},
		{"header NUL", withStreams(`"headers": {"X-Trace": "a\u0000b"}`), "headers.X-Trace: must not contain line breaks or NUL"},
		{"header number is its text", withStreams(`"headers": {"X-Version": 2}`), ""},
		{"bearer token line break", withStreams(`"auth": {"type": "bearer", "token": "t\nX: y"}`), "auth.token: must not contain line breaks or NUL"},
		{"api_key header name", withStreams(`"auth": {"type": "api_key", "name": "X Key", "value": "v"}`), `auth.name: "X Key" is not a valid header name`},
		{"api_key value line break", withStreams(`"auth": {"type": "api_key", "name": "X-Key", "value": "v\r\n"}`), "auth.value: must not contain line breaks or NUL"},
		{"api_key in query takes any name", withStreams(`"auth": {"type": "api_key", "name": "api key", "value": "the-api-key", "in": "query"}`), ""},
		{"log_level", withStreams(`"log_level": "verbose"`), `log_level: expected debug, info, warn or error, got "verbose"`},
		{"metrics_log_level", withStreams(`"metrics_log_level": "trace"`), `metrics_log_level: expected debug, info, warn or error, got "trace"`},
		{"dead_letter_path a directory", withStreams(`"dead_letter_path": "adir"`), "dead_letter_path: " + filepath.Join(dir, "adir") + " is not a regular file"},
		{"dead_letter_path in a missing folder", withStreams(`"dead_letter_path": "no/such/d.jsonl"`), "dead_letter_path: cannot create " + filepath.Join(dir, "no/such/d.jsonl") + ": no such file or directory"},
		{"dead_letter_path a file that takes no writes", withStreams(`"dead_letter_path": "/proc/version"`), "dead_letter_path: cannot write /proc/version"},
		{"dead_letter_path unchecked without dead letters", withStreams(`"dead_letter_path": "adir", "on_schema_violation": "fail"`), ""},
		{"invalid UTF-8", "{\"base_url\": \"https://api.example.com\",\n \"streams\": [{\"name\": \"c\", \"path\": \"/v1/tick\xffets\"}]}", "invalid UTF-8 at line 2, column 45"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "config.json")
			if err := os.WriteFile(path, []byte(tt.config), 0o644); err != nil {
				t.Fatal(err)
			}
			before := listDir(t, dir)
			_, err := Load(path)
			if after := listDir(t, dir); !cmp.Equal(before, after) {
				t.Errorf("Load left files behind: %v, was %v", after, before)
			}
			if tt.want == "" {
				if err != nil {
					t.Fatalf("want no error, got %v", err)
				}
				return
			}
			if err == nil || err.Error() != path+": "+tt.want && !strings.HasPrefix(err.Error(), path+": "+tt.want) {
				t.Fatalf("error\n %v\nwant it to start with\n %s: %s", err, path, tt.want)
			}
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Errorf("error spans lines: %q", err)
			}
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Errorf("error %T, want an *InputError (exit 2)", err)
			}
		})
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// An existing dead-letter file is kept as it is.
func TestCheckWritableKeepsAnExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dead.jsonl")
	if err := os.WriteFile(path, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkWritable(path); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "{}\n" {
		t.Errorf("file changed: %q", b)
	}
}

// Invalid UTF-8 is refused in the streams file and in a schema file too.
func TestLoadRefusesInvalidUTF8(t *testing.T) {
	tests := []struct {
		name, file, content, want string
	}{
		{"streams file", "streams.json", "{\"streams\": [{\"name\": \"c\xc3(\"}]}", "streams.json: invalid UTF-8 at line 1, column 25"},
		{"schema file", "c.json", "{\"type\": \"object\", \"properties\": {\"\xe2\x82\": {}}}", `stream "c": schema c.json: invalid UTF-8 at line 1, column 36`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			streams := `{"streams": [{"name": "c", "path": "/c", "schema": "c.json"}]}`
			schema := `{"type": "object", "properties": {"id": {}}}`
			if tt.file == "streams.json" {
				streams = tt.content
			} else {
				schema = tt.content
			}
			os.WriteFile(filepath.Join(dir, "streams.json"), []byte(streams), 0o644)
			os.WriteFile(filepath.Join(dir, "c.json"), []byte(schema), 0o644)
			path := filepath.Join(dir, "config.json")
			os.WriteFile(path, []byte(`{"base_url": "https://api.example.com", "streams_file": "streams.json"}`), 0o644)
			_, err := Load(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// A value read from the environment must be UTF-8 too.
func TestLoadRefusesEnvNotUTF8(t *testing.T) {
	t.Setenv("TAP_TEST_BAD_UTF8", "tok\xffen")
	path := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(path, []byte(withStreams(`"auth": {"type": "bearer", "token": {"env": "TAP_TEST_BAD_UTF8"}}`)), 0o644)
	_, err := Load(path)
	if want := path + ": auth.token: environment variable TAP_TEST_BAD_UTF8 is not UTF-8 text"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
}

// Every default of the registry reaches the loaded config.
func TestLoadAppliesRegistryDefaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(path, []byte(withStreams(`"retry": {"max_attempts": null}`)), 0o644)
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{
		"auth.type": cfg.Auth.Type, "auth.in": cfg.Auth.In,
		"auth.grant_type": cfg.Auth.GrantType, "auth.auth_style": cfg.Auth.AuthStyle, "auth.login_method": cfg.Auth.LoginMethod,
		"rate_limit.requests_per_second": cfg.RateLimit.RequestsPerSecond, "rate_limit.burst": cfg.RateLimit.Burst,
		"rate_limit.max_in_flight": cfg.RateLimit.MaxInFlight, "rate_limit.daily_quota": cfg.RateLimit.DailyQuota, "rate_limit.retries_spend_tokens": cfg.RateLimit.RetriesSpendTokens,
		"retry.max_attempts": cfg.Retry.MaxAttempts, "retry.base_delay_ms": cfg.Retry.BaseDelayMS,
		"retry.max_delay_ms": cfg.Retry.MaxDelayMS, "retry.max_retry_after_s": cfg.Retry.MaxRetryAfterS,
		"request_timeout_s": cfg.RequestTimeoutS, "max_parallel_streams": cfg.MaxParallelStreams, "max_pages": cfg.MaxPages, "max_partitions": cfg.MaxPartitions,
		"on_schema_violation": cfg.OnSchemaViolation, "dead_letter_path": filepath.Base(cfg.DeadLetterPath), "dead_letter_alert": cfg.DeadLetterAlert,
		"log_level": cfg.LogLevel, "metrics_log_level": cfg.MetricsLogLevel,
		"flattening_enabled":           cfg.FlatteningEnabled,
		"rate_limit.weight_per_minute": cfg.RateLimit.WeightPerMinute, "rate_limit.cost.points": cfg.RateLimit.Cost.Points,
		"rate_limit.cost.restore_per_s": cfg.RateLimit.Cost.RestorePerS, "rate_limit.cost.actual_path": cfg.RateLimit.Cost.ActualPath,
		"rate_limit.cost.remaining_path": cfg.RateLimit.Cost.RemainingPath, "retry.max_total_s": cfg.Retry.MaxTotalS,
		"circuit_breaker.threshold": cfg.CircuitBreaker.Threshold, "circuit_breaker.cooldown_s": cfg.CircuitBreaker.CooldownS,
		"circuit_breaker.max_openings": cfg.CircuitBreaker.MaxOpenings,
		"feed.idle_timeout_s":          cfg.Feed.IdleTimeoutS, "feed.max_reconnects": cfg.Feed.MaxReconnects,
	}
	for _, s := range Settings() {
		if s.Default == nil {
			continue
		}
		v, ok := got[s.Name]
		if !ok {
			t.Errorf("setting %s has a default the test does not read", s.Name)
			continue
		}
		if f, isFloat := v.(float64); isFloat {
			v = int(f)
		}
		if v != s.Default {
			t.Errorf("%s = %v, want the default %v", s.Name, v, s.Default)
		}
	}
}

// Processes that share a dead-letter file (shards, say) check it at the
// same time; one's probe file must not make another's check fail.
func TestCheckWritableConcurrently(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dead_letter.jsonl")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 300 {
				if err := checkWritable(path); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestFromTreeNumbers: a tree a front end wrote (an Airbyte manifest's
// lowering) holds Go numbers, not decoded JSON's json.Number: the
// registry reads them as numbers, and checks their bounds.
func TestFromTreeNumbers(t *testing.T) {
	tree := func(expires any, attempts any) map[string]any {
		return map[string]any{"base_url": "https://api.example.com",
			"auth":  map[string]any{"type": "session", "login_url": "/login", "token_path": "t", "expires_s": expires},
			"retry": map[string]any{"max_attempts": attempts},
			"streams": []any{map[string]any{"name": "s", "path": "/s",
				"schema": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}}}}}}
	}
	cfg, err := FromTree("c.json", tree(3600.0, 3), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Auth.ExpiresS != 3600 || cfg.Retry.MaxAttempts != 3 {
		t.Errorf("expires_s %v, max_attempts %d", cfg.Auth.ExpiresS, cfg.Retry.MaxAttempts)
	}
	if _, err := FromTree("c.json", tree(3600.0, 1000), nil); err == nil || !strings.Contains(err.Error(), "retry.max_attempts: expected an integer >= 1 and <= 100, got 1000") {
		t.Errorf("err = %v, want the bounds of retry.max_attempts", err)
	}
}
