package settings

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadChecksOAuth(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	pkcs1 := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)}))
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKCS8PrivateKey(ecKey)
	ec := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER}))
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	const cc = `"type": "oauth2", "token_url": "https://auth.example.com/token", "client_id": "id", "client_secret": "SECRET-1"`
	jwt := func(key string) string {
		return `"type": "jwt", "token_url": "/oauth/token", "issuer": "svc", "private_key": ` + q(key)
	}
	tests := []struct{ name, auth, want string }{
		{"client credentials", cc, ""},
		{"refresh token", cc + `, "grant_type": "refresh_token", "refresh_token": "the-refresh-token"`, ""},
		{"scopes and params", cc + `, "scopes": ["a", "b"], "token_params": {"audience": "x"}, "auth_style": "body"`, ""},
		{"jwt pkcs1", jwt(pkcs1), ""},
		{"no token_url", `"type": "oauth2", "client_id": "id"`, "auth.token_url: is required for auth type oauth2"},
		{"token_url not a URL", `"type": "oauth2", "client_id": "id", "token_url": "ftp://x/token"`, "auth.token_url: expected an http(s) URL"},
		{"no client_id", `"type": "oauth2", "token_url": "/t"`, "auth.client_id: is required for grant_type client_credentials"},
		{"no refresh token", cc + `, "grant_type": "refresh_token"`, "auth.refresh_token: is required for grant_type refresh_token"},
		{"bad grant", cc + `, "grant_type": "password"`, `auth.grant_type: expected client_credentials or refresh_token, got "password"`},
		{"bad auth_style", cc + `, "auth_style": "query"`, `auth.auth_style: expected header or body, got "query"`},
		{"scope with a space", cc + `, "scopes": ["a b"]`, "auth.scopes[0]: expected a scope with no spaces"},
		{"no issuer", `"type": "jwt", "token_url": "/t", "private_key": ` + q(pkcs1), "auth.issuer: is required for auth type jwt"},
		{"no key", `"type": "jwt", "token_url": "/t", "issuer": "svc"`, "auth.private_key: is required for auth type jwt"},
		{"key not PEM", jwt("SECRET-KEY-TEXT"), "auth.private_key: expected a PEM block"},
		{"key not RSA", jwt(ec), "auth.private_key: expected an RSA private key (RS256)"},
		{"key garbage in PEM", jwt("-----BEGIN PRIVATE KEY-----\nU0VDUkVULUtFWQ==\n-----END PRIVATE KEY-----\n"), "auth.private_key: expected an RSA private key in PKCS #8 or PKCS #1 form"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			if err := os.WriteFile(path, []byte(withStreams(`"auth": {`+tt.auth+`}`)), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := Load(path)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(cfg.Redactor.Redact("SECRET-1 "+cfg.Auth.PrivateKey), Mask) {
					t.Errorf("secrets not known to the redactor")
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), path+": "+tt.want) {
				t.Fatalf("error\n %v\nwant it to start with\n %s: %s", err, path, tt.want)
			}
			for _, s := range []string{"SECRET", "U0VDUkVU"} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("the error quotes the key: %v", err)
				}
			}
		})
	}
}
