package connect

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/internal/taptest"
	"github.com/tap-dev/tap/settings"
)

// demoConfig loads the demo's config, patched.
func demoConfig(t *testing.T, patch func(cfg map[string]any)) *settings.Config {
	t.Helper()
	_, path := taptest.DemoConfig(t, patch)
	cfg, err := settings.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestOpenDemo: embedded://demo is served on loopback while the
// connection is open, with the config's auth, and not after Close.
func TestOpenDemo(t *testing.T) {
	cfg := demoConfig(t, nil)
	conn, err := Open(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(conn.Base, "http://127.0.0.1:") || strings.HasSuffix(conn.Base, "/") {
		t.Errorf("Base = %q, want the loopback address without a final slash", conn.Base)
	}
	resp, err := conn.Client.Do(context.Background(), client.Request{Stream: "customers", URL: "/v1/customers"})
	if err != nil {
		t.Fatalf("a request through the connection: %v", err)
	}
	if resp.Status != http.StatusOK {
		t.Errorf("status %d, want 200", resp.Status)
	}
	conn.Close()
	if r, err := http.Get(conn.Base + "/v1/customers"); err == nil {
		r.Body.Close()
		t.Errorf("the demo API still answers after Close: %d", r.StatusCode)
	}
}

// quota is a STATE's daily quota count.
type quota struct {
	day    string
	used   int
	ok     bool
	err    error
	source func() (string, int)
}

func (q *quota) Quota() (string, int, bool, error)              { return q.day, q.used, q.ok, q.err }
func (q *quota) SetQuotaSource(f func() (day string, used int)) { q.source = f }

// TestOpenQuota: the count STATE carries is where the client's count
// starts on the same UTC day, and the client's count is what every STATE
// carries on; without daily_quota STATE is left alone. In a bubble, today
// is 2000-01-01.
func TestOpenQuota(t *testing.T) {
	for _, c := range []struct {
		name      string
		quota     int
		q         quota
		wantTrack bool // STATE carries the client's count
		wantUsed  int  // the count carried on for 2000-01-01
		wantErr   string
	}{
		{"count carried on", 100, quota{day: "2000-01-01", used: 40, ok: true}, true, 40, ""},
		{"count of another day", 100, quota{day: "1999-12-31", used: 40, ok: true}, true, 0, ""},
		{"no count yet", 100, quota{}, true, 0, ""},
		{"no daily quota", 0, quota{day: "2000-01-01", used: 40, ok: true}, false, 0, ""},
		{"bad count", 100, quota{err: errors.New("quota: expected {day, used}")}, false, 0, "state: quota: expected {day, used}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := demoConfig(t, func(cfg map[string]any) {
				cfg["base_url"] = "http://127.0.0.1:9" // no request is sent
				cfg["rate_limit"].(map[string]any)["daily_quota"] = c.quota
			})
			synctest.Test(t, func(t *testing.T) {
				q := c.q
				conn, err := Open(cfg, Options{Quota: &q})
				if c.wantErr != "" {
					var ie *settings.InputError
					if !errors.As(err, &ie) || err.Error() != c.wantErr {
						t.Fatalf("err = %v, want the input error %q", err, c.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				if (q.source != nil) != c.wantTrack {
					t.Fatalf("STATE carries the client's count: %v, want %v", q.source != nil, c.wantTrack)
				}
				if !c.wantTrack {
					return
				}
				if day, used := q.source(); day != "2000-01-01" || used != c.wantUsed {
					t.Errorf("count carried on = %s %d, want 2000-01-01 %d", day, used, c.wantUsed)
				}
			})
		})
	}
}

// TestOpenRedisUnreachable: a shared bucket whose Redis cannot be reached
// is bad input naming the setting, its password masked, and no demo API
// is left running.
func TestOpenRedisUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	cfg := demoConfig(t, func(cfg map[string]any) {
		cfg["rate_limit"].(map[string]any)["shared"] = map[string]any{"redis_url": "redis://:hunter2-pw@" + addr + "/0", "key": "k"}
	})
	_, err = Open(cfg, Options{})
	var ie *settings.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v, want an input error", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "rate_limit.shared.redis_url: cannot reach Redis at") || strings.Contains(msg, "hunter2-pw") {
		t.Errorf("err = %q, want one naming the setting without the password", msg)
	}
}

// TestOAuthOf: a token_url that is a path is on the API's host; an
// absolute one is kept; static auth has no OAuth block.
func TestOAuthOf(t *testing.T) {
	base, _ := url.Parse("http://127.0.0.1:8765/api")
	for _, c := range []struct{ typ, tokenURL, want string }{
		{"oauth2", "/oauth/token", "http://127.0.0.1:8765/oauth/token"},
		{"jwt", "https://auth.example.com/token", "https://auth.example.com/token"},
		{"bearer", "/oauth/token", ""},
	} {
		cfg := &settings.Config{}
		cfg.Auth.Type, cfg.Auth.TokenURL = c.typ, c.tokenURL
		if got := oauthOf(cfg, base, nil).TokenURL; got != c.want {
			t.Errorf("%s %s: token URL %q, want %q", c.typ, c.tokenURL, got, c.want)
		}
	}
}

// TestOpenOAuth: with an OAuth grant whose token_url is a path, the token
// comes from the demo API's own host, and the refresh token the API
// rotates reaches the Keeper before the request is sent.
func TestOpenOAuth(t *testing.T) {
	cfg := demoConfig(t, func(cfg map[string]any) {
		demo := cfg["demo"].(map[string]any)
		demo["token"] = ""
		demo["oauth"] = map[string]any{"client_id": "cid", "client_secret": "csecret-0123456789", "refresh_token": "rt-first"}
		cfg["auth"] = map[string]any{"type": "oauth2", "token_url": "/oauth/token", "grant_type": "refresh_token",
			"client_id": "cid", "client_secret": "csecret-0123456789", "refresh_token": "rt-first"}
	})
	var kept []string
	keep := func(_ context.Context, rt string) error { kept = append(kept, rt); return nil }
	conn, err := Open(cfg, Options{Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Client.Do(context.Background(), client.Request{Stream: "customers", URL: "/v1/customers"}); err != nil {
		t.Fatalf("a request with the OAuth grant: %v", err)
	}
	if len(kept) != 1 || kept[0] == "" || kept[0] == "rt-first" {
		t.Errorf("kept %q, want the one rotated refresh token", kept)
	}
}

// TestClientDefaultsFromOnePlace: the defaults of the client's settings
// are written once, in the registry of settings; the client fills in none
// of them (client.TestNewValidation). A config that sets none of them
// hands the client the registry's values, unit for unit.
func TestClientDefaultsFromOnePlace(t *testing.T) {
	path := t.TempDir() + "/config.json"
	if err := os.WriteFile(path, []byte(`{"base_url": "https://api.example.com", "streams": [{"name": "s", "path": "/s", "schema": {"type": "object", "properties": {"id": {"type": "integer"}}}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := settings.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := clientConfig(cfg, &url.URL{Scheme: "https", Host: "api.example.com"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	def := map[string]float64{}
	for _, s := range settings.Settings() {
		switch v := s.Default.(type) {
		case int:
			def[s.Name] = float64(v)
		case float64:
			def[s.Name] = v
		}
	}
	for _, tt := range []struct {
		setting string
		got     float64 // in the setting's unit
	}{
		{"rate_limit.requests_per_second", cc.Limit.RequestsPerSecond},
		{"rate_limit.burst", float64(cc.Limit.Burst)},
		{"rate_limit.max_in_flight", float64(cc.Limit.MaxInFlight)},
		{"rate_limit.daily_quota", float64(cc.Limit.DailyQuota)},
		{"rate_limit.weight_per_minute", float64(cc.Limit.WeightPerMinute)},
		{"rate_limit.cost.points", cc.Limit.Cost.Points},
		{"retry.max_retry_after_s", cc.Limit.MaxRetryAfter.Seconds()},
		{"retry.max_attempts", float64(cc.MaxAttempts)},
		{"retry.base_delay_ms", float64(cc.BaseDelay.Milliseconds())},
		{"retry.max_delay_ms", float64(cc.MaxDelay.Milliseconds())},
		{"retry.max_total_s", cc.MaxRetryTime.Seconds()},
		{"request_timeout_s", cc.Timeout.Seconds()},
		{"circuit_breaker.threshold", float64(cc.BreakerThreshold)},
		{"circuit_breaker.cooldown_s", cc.BreakerCooldown.Seconds()},
		{"circuit_breaker.max_openings", float64(cc.BreakerMaxOpenings)},
	} {
		want, ok := def[tt.setting]
		if !ok {
			t.Errorf("%s: the registry shows no default", tt.setting)
		} else if tt.got != want {
			t.Errorf("%s unset: the client is given %v, the registry's default is %v", tt.setting, tt.got, want)
		}
	}
	if cc.FreeRetries {
		t.Error("rate_limit.retries_spend_tokens unset (default true): the client is told retries are free")
	}
	if _, err := client.New(cc); err != nil {
		t.Errorf("the client refuses the registry's defaults: %v", err)
	}
}
