package settings

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
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
	r := NewRedactor("hunter2")
	v := map[string]any{"note": "pw hunter2", "hunter2": []any{"x hunter2", 3.5, nil}}
	got := r.Value(v)
	want := map[string]any{"note": "pw REDACTED", "REDACTED": []any{"x REDACTED", 3.5, nil}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Value = %v, want %v", got, want)
	}
	if v["note"] != "pw hunter2" {
		t.Errorf("Value changed its input")
	}
	var none *Redactor
	if none.Redact("hunter2") != "hunter2" || none.Value("x") != "x" || !none.Empty() {
		t.Errorf("a nil Redactor masks something")
	}
}

// A secret that holds another is masked whole, whatever the order added.
func TestRedactorLongestFirst(t *testing.T) {
	r := NewRedactor("abcd", "xxabcdyy")
	if got := r.Redact("token xxabcdyy"); got != "token REDACTED" {
		t.Errorf("Redact = %q", got)
	}
}

// Runtime secrets (access tokens) are added while other goroutines redact.
func TestRedactorAddConcurrently(t *testing.T) {
	r := NewRedactor("first")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			r.Add(fmt.Sprintf("token-%d", i))
		}()
		go func() {
			defer wg.Done()
			_ = r.Redact("first token-1 token-2")
		}()
	}
	wg.Wait()
	for i := range 8 {
		if got := r.Redact(fmt.Sprintf("<token-%d>", i)); got != "<REDACTED>" {
			t.Errorf("token-%d not masked: %q", i, got)
		}
	}
}
