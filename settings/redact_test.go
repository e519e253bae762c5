package settings

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

const secretValue = "s3cr3t/T0k+n=x"

// The redactor built from a config masks every secret setting and the
// credentials of the headers block, in every form they take on the wire,
// and nothing else.
func TestConfigRedactor(t *testing.T) {
	tests := []struct {
		name   string
		config string
		leaks  []string // must be masked
		keeps  []string // must stay
	}{
		{"bearer", `"auth": {"type": "bearer", "token": "` + secretValue + `"}`,
			[]string{secretValue, url.QueryEscape(secretValue), url.PathEscape(secretValue), "Bearer " + secretValue}, nil},
		{"basic", `"auth": {"type": "basic", "username": "me", "password": "` + secretValue + `"}`,
			[]string{secretValue, base64.StdEncoding.EncodeToString([]byte("me:" + secretValue))}, []string{"me"}},
		{"api_key", `"auth": {"type": "api_key", "name": "X-Key", "value": "` + secretValue + `"}`,
			[]string{secretValue, url.QueryEscape(secretValue)}, []string{"X-Key"}},
		{"demo token", `"demo": {"token": "` + secretValue + `"}`, []string{secretValue}, nil},
		{"Authorization header", `"headers": {"Authorization": "Token ` + secretValue + `"}`,
			[]string{"Token " + secretValue, secretValue, url.QueryEscape(secretValue)}, []string{"Token"}},
		{"X-Api-Key header", `"headers": {"X-Api-Key": "` + secretValue + `"}`, []string{secretValue}, nil},
		{"Proxy-Authorization header", `"headers": {"Proxy-Authorization": "Basic ` + secretValue + `"}`, []string{secretValue}, nil},
		{"Cookie header", `"headers": {"Cookie": "sid=abcd1234; theme=dark"}`, []string{"abcd1234", "sid=abcd1234; theme=dark"}, []string{"sid", "theme"}},
		{"header named like a credential", `"headers": {"x-session-id": "` + secretValue + `", "X-SIGNATURE": "sig-987654"}`,
			[]string{secretValue, "sig-987654"}, nil},
		{"plain headers are no secret", `"headers": {"User-Agent": "tap-test/1.0", "Accept": "application/json"}`,
			nil, []string{"tap-test/1.0", "application/json"}},
		// x/oauth2 sends the client id and secret query-escaped, then
		// base64, as HTTP Basic (issue 29: this form leaked).
		{"oauth2 client in the header", `"auth": {"type": "oauth2", "token_url": "https://auth.example.com/t", "client_id": "c id", "client_secret": "` + secretValue + `"}`,
			[]string{secretValue, base64.StdEncoding.EncodeToString([]byte("c+id:" + url.QueryEscape(secretValue)))}, []string{"c id"}},
		{"secret read from the environment", `"auth": {"type": "bearer", "token": {"env": "TAP_REDACT_TEST"}}`, []string{"from-env-42"}, nil},
	}
	t.Setenv("TAP_REDACT_TEST", "from-env-42")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "config.json")
			os.WriteFile(path, []byte(withStreams(tt.config)), 0o644)
			cfg, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.leaks {
				text := fmt.Sprintf("GET /v1/x?q=%s failed: %s", s, s)
				if got := cfg.Redactor.Redact(text); strings.Contains(got, s) || !strings.Contains(got, Mask) {
					t.Errorf("%q not masked: %q", s, got)
				}
			}
			for _, s := range tt.keeps {
				if got := cfg.Redactor.Redact(s); got != s {
					t.Errorf("%q is no secret but became %q", s, got)
				}
			}
		})
	}
}

func TestRedactorValueAndNil(t *testing.T) {
	r := NewRedactor("hunter22")
	v := map[string]any{"note": "pw hunter22", "hunter22": []any{"x hunter22", 3.5, nil}}
	got := r.Value(v)
	want := map[string]any{"note": "pw REDACTED", "REDACTED": []any{"x REDACTED", 3.5, nil}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Value = %v, want %v", got, want)
	}
	if v["note"] != "pw hunter22" {
		t.Errorf("Value changed its input")
	}
	var none *Redactor
	if none.Redact("hunter22") != "hunter22" || none.Value("x") != "x" || !none.Empty() {
		t.Errorf("a nil Redactor masks something")
	}
}

// A secret that holds another is masked whole, whatever the order added.
func TestRedactorLongestFirst(t *testing.T) {
	r := NewRedactor("abcdefgh", "xxabcdefghyy")
	if got := r.Redact("token xxabcdefghyy"); got != "token REDACTED" {
		t.Errorf("Redact = %q", got)
	}
}

// Runtime secrets (access tokens) are added while other goroutines redact.
func TestRedactorAddConcurrently(t *testing.T) {
	r := NewRedactor("first-token")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			r.Add(fmt.Sprintf("the-token-%d", i))
		}()
		go func() {
			defer wg.Done()
			_ = r.Redact("first-token the-token-1 the-token-2")
		}()
	}
	wg.Wait()
	for i := range 8 {
		if got := r.Redact(fmt.Sprintf("<the-token-%d>", i)); got != "<REDACTED>" {
			t.Errorf("token-%d not masked: %q", i, got)
		}
	}
}

// An API echoing a secret in JSON escapes it as its encoder does; each
// such form is masked too (issue 29: they survived in dead letters'
// response bodies).
func TestRedactorJSONEscapedForms(t *testing.T) {
	tests := []struct{ secret, echoed string }{
		{`tok"en-123`, `tok\"en-123`},
		{`tok\en-123`, `tok\\en-123`},
		{"kéy-12345", `k\u00e9y-12345`},
		{"kéy-12345", `k\u00E9y-12345`},
		{"k😀y-12345", `k\ud83d\ude00y-12345`},
		{"a/b/c/d-123", `a\/b\/c\/d-123`},
		{"a<b>c&d-123", `a\u003cb\u003ec\u0026d-123`},
		{"tab\tin-123", `tab\tin-123`},
	}
	for _, tt := range tests {
		r := NewRedactor(tt.secret)
		body := `{"error": "bad key ` + tt.echoed + `"}`
		if got := r.Redact(body); got != `{"error": "bad key REDACTED"}` {
			t.Errorf("secret %q echoed as %s: %s", tt.secret, tt.echoed, got)
		}
	}
}

// A form shorter than MinSecretLen is not masked: masking "T" or "2024"
// would alter every text that holds the letter or the year (issue 29).
func TestRedactorSkipsShortForms(t *testing.T) {
	r := NewRedactor("T", "2024", "Bearer T")
	for _, s := range []string{"METRIC", `{"updated_at": "2024-05-01T09:00:00Z"}`} {
		if got := r.Redact(s); got != s {
			t.Errorf("Redact(%q) = %q", s, got)
		}
	}
	if got := r.Redact("Authorization: Bearer T"); got != "Authorization: REDACTED" {
		t.Errorf("the long form is not masked: %q", got)
	}
}

// A configured credential too short to mask is a config error naming its
// field; a short cookie value (theme=dark) and a short string of
// stream_map_config are not credentials.
func TestShortSecretsRefused(t *testing.T) {
	tests := []struct{ name, config, wantErr string }{
		{"bearer token", `"auth": {"type": "bearer", "token": "T"}`, "auth.token: expected a secret of at least 8 characters, got 1"},
		{"basic password", `"auth": {"type": "basic", "username": "me", "password": "2024"}`, "auth.password: expected a secret of at least 8 characters, got 4"},
		{"api key", `"auth": {"type": "api_key", "name": "X-Key", "value": "abc"}`, "auth.value: expected a secret of at least 8 characters, got 3"},
		{"client secret", `"auth": {"type": "oauth2", "token_url": "https://a.example.com/t", "client_id": "cid", "client_secret": "s"}`,
			"auth.client_secret: expected a secret of at least 8 characters, got 1"},
		{"credential header", `"headers": {"X-Api-Key": "k1"}`, "headers.X-Api-Key: expected a secret of at least 8 characters, got 2"},
		{"credential after the scheme", `"headers": {"Authorization": "Token abc"}`,
			"headers.Authorization (its credentials after the scheme): expected a secret of at least 8 characters, got 3"},
		{"redis password", `"rate_limit": {"shared": {"redis_url": "redis://:pw@127.0.0.1:6379/0", "key": "k"}}`,
			"rate_limit.shared.redis_url (its password): expected a secret of at least 8 characters, got 2"},
		{"long enough", `"auth": {"type": "basic", "username": "me", "password": "12345678"}`, ""},
		{"short cookie value", `"headers": {"Cookie": "sid=abcd1234; theme=dark"}`, ""},
		{"short stream_map_config string", `"stream_map_config": {"stage": "prod"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			os.WriteFile(path, []byte(withStreams(tt.config)), 0o644)
			cfg, err := Load(path)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := cfg.Redactor.Redact("theme=dark env=prod"); got != "theme=dark env=prod" {
					t.Errorf("short non-credentials masked: %q", got)
				}
				return
			}
			var ie *InputError
			if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), path+": "+tt.wantErr) {
				t.Fatalf("error %v, want an InputError %s: %s", err, path, tt.wantErr)
			}
		})
	}
}

// Record masks a secret in the strings and keys of an encoded record,
// naming the fields, and leaves a record without one untouched, numbers
// holding its digits included.
func TestRedactorRecord(t *testing.T) {
	r := NewRedactor("sk-live-123456", "98765432")
	tests := []struct {
		rec, want string
		fields    []string
	}{
		{`{"id":98765432,"name":"x"}`, `{"id":98765432,"name":"x"}`, nil},
		{`{"id":1,"meta":{"echo":"Bearer sk-live-123456"}}`, `{"id":1,"meta":{"echo":"Bearer REDACTED"}}`, []string{"meta.echo"}},
		{`{"id":1,"list":["a","k\u003dsk-live-123456"]}`, `{"id":1,"list":["a","k=REDACTED"]}`, []string{"list[1]"}},
		{`{"id":1,"sk-live-123456":true,"pin":"98765432"}`, `{"REDACTED":true,"id":1,"pin":"REDACTED"}`, []string{"REDACTED", "pin"}},
	}
	for _, tt := range tests {
		got, fields := r.Record([]byte(tt.rec))
		slices.Sort(fields)
		if string(got) != tt.want || !slices.Equal(fields, tt.fields) {
			t.Errorf("Record(%s) = %s %q, want %s %q", tt.rec, got, fields, tt.want, tt.fields)
		}
	}
}

// The check every record gets: a record without a secret, three secrets
// known (a bearer token, a client secret, an access token).
func BenchmarkRedactorRecordClean(b *testing.B) {
	r := NewRedactor("SENTINEL-SECRET-7f3a", "the-client-secret-42", "Bearer at-0123456789abcdef")
	rec := []byte(`{"id":12345,"name":"Customer 12345","email":"c12345@example.com","updated_at":"2026-01-05T10:00:00Z","plan":"pro","tags":["a","b","c"],"address":{"city":"Lyon","zip":"69001"},"balance":1234.56,"active":true}`)
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	for b.Loop() {
		if _, f := r.Record(rec); f != nil {
			b.Fatal(f)
		}
	}
}

// TestStreamHeadersAreMasked: a stream's own header that names a
// credential is masked as the config's headers are.
func TestStreamHeadersAreMasked(t *testing.T) {
	cfg, err := FromTree("c.json", map[string]any{
		"base_url": "https://api.example.com",
		"streams": []any{map[string]any{"name": "s", "path": "/s", "records_path": "",
			"headers": map[string]any{"X-Api-Key": "stream-key-5e1c9", "Accept": "application/json"},
			"schema":  map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}}}}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Redactor.Redact("sent X-Api-Key: stream-key-5e1c9, Accept: application/json"); strings.Contains(got, "stream-key-5e1c9") || !strings.Contains(got, "application/json") {
		t.Errorf("redacted: %s", got)
	}
}

// TestSessionLoginIsMasked: a session login's body, form and parameters
// are secrets, and of its headers those that name a credential.
func TestSessionLoginIsMasked(t *testing.T) {
	cfg, err := FromTree("c.json", map[string]any{
		"base_url": "https://api.example.com",
		"auth": map[string]any{"type": "session", "login_url": "/login", "token_path": "token",
			"login_body":    map[string]any{"user": "me@example.com", "password": "login-pass-7a1c"},
			"login_params":  map[string]any{"key": "login-param-99d2"},
			"login_headers": map[string]any{"X-Api-Key": "login-key-3e8f", "Accept": "application/json"}},
		"streams": []any{map[string]any{"name": "s", "path": "/s",
			"schema": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}}}}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Redactor.Redact("login-pass-7a1c login-param-99d2 login-key-3e8f Accept: application/json")
	for _, secret := range []string{"login-pass-7a1c", "login-param-99d2", "login-key-3e8f"} {
		if strings.Contains(got, secret) {
			t.Errorf("%s is not masked: %s", secret, got)
		}
	}
	if !strings.Contains(got, "application/json") {
		t.Errorf("a header that names no credential is masked: %s", got)
	}
}
