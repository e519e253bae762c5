package demoapi

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func tokenRequest(t *testing.T, base string, form url.Values, basic [2]string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/oauth/token", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic[0] != "" {
		req.SetBasicAuth(url.QueryEscape(basic[0]), url.QueryEscape(basic[1]))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

func getWith(t *testing.T, u, access string) int {
	t.Helper()
	return do(t, http.MethodGet, u, nil, http.Header{"Authorization": {"Bearer " + access}}).status
}

func TestOAuthGrants(t *testing.T) {
	s, base := start(t, Config{OAuth: &OAuth{ClientID: "c id", ClientSecret: "s&cret", RefreshToken: "first", TokenTTLS: 60}})
	now := time.Now()
	s.clock = func() time.Time { return now }
	cred := [2]string{"c id", "s&cret"}

	if got := do(t, http.MethodGet, base+"/v1/customers", nil, nil).status; got != 401 {
		t.Fatalf("no token: status %d", got)
	}
	status, body := tokenRequest(t, base, url.Values{"grant_type": {"client_credentials"}, "scope": {"read"}}, cred)
	if status != 200 || body["expires_in"] != 60.0 || body["scope"] != "read" || body["refresh_token"] != nil {
		t.Fatalf("client_credentials: %d %v", status, body)
	}
	access := body["access_token"].(string)
	if got := getWith(t, base+"/v1/customers", access); got != 200 {
		t.Errorf("with the access token: status %d", got)
	}
	now = now.Add(61 * time.Second)
	if got := getWith(t, base+"/v1/customers", access); got != 401 {
		t.Errorf("expired access token: status %d", got)
	}
	if got := getWith(t, base+"/v1/customers", access[:len(access)-2]+"AA"); got != 401 {
		t.Errorf("forged access token: status %d", got)
	}

	// Form fields, a wrong secret.
	status, _ = tokenRequest(t, base, url.Values{"grant_type": {"client_credentials"}, "client_id": {"c id"}, "client_secret": {"s&cret"}}, [2]string{})
	if status != 200 {
		t.Errorf("credentials in the body: status %d", status)
	}
	status, body = tokenRequest(t, base, url.Values{"grant_type": {"client_credentials"}}, [2]string{"c id", "wrong"})
	if status != 401 || body["error"] != "invalid_client" {
		t.Errorf("wrong secret: %d %v", status, body)
	}

	// Refresh tokens rotate and are single-use.
	rt := "first"
	for range 3 {
		status, body = tokenRequest(t, base, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}, cred)
		if status != 200 || body["refresh_token"] == rt {
			t.Fatalf("refresh: %d %v", status, body)
		}
		old := rt
		rt = body["refresh_token"].(string)
		status, body = tokenRequest(t, base, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {old}}, cred)
		if status != 400 || body["error"] != "invalid_grant" {
			t.Fatalf("reused refresh token: %d %v", status, body)
		}
	}
	// A rotated token is good for the next process (embedded://demo).
	_, base2 := start(t, Config{OAuth: &OAuth{ClientID: "c id", ClientSecret: "s&cret", RefreshToken: "first"}})
	if status, body = tokenRequest(t, base2, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}, cred); status != 200 {
		t.Errorf("rotated token on a new server: %d %v", status, body)
	}
	if status, body = tokenRequest(t, base, url.Values{"grant_type": {"password"}}, cred); status != 400 || body["error"] != "unsupported_grant_type" {
		t.Errorf("unknown grant: %d %v", status, body)
	}
}

func TestOAuthJWTBearer(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	pub := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	_, base := start(t, Config{OAuth: &OAuth{ClientSecret: "x", JWTPublicKey: pub, JWTIssuer: "svc", JWTAudience: "aud"}})
	sign := func(k *rsa.PrivateKey, claims map[string]any) string {
		enc := base64.RawURLEncoding
		h, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT"})
		c, _ := json.Marshal(claims)
		in := enc.EncodeToString(h) + "." + enc.EncodeToString(c)
		sum := sha256.Sum256([]byte(in))
		sig, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:])
		if err != nil {
			t.Fatal(err)
		}
		return in + "." + enc.EncodeToString(sig)
	}
	exp := time.Now().Add(time.Hour).Unix()
	tests := []struct {
		name   string
		key    *rsa.PrivateKey
		claims map[string]any
		ok     bool
	}{
		{"good", key, map[string]any{"iss": "svc", "aud": "aud", "exp": exp}, true},
		{"aud array", key, map[string]any{"iss": "svc", "aud": []string{"x", "aud"}, "exp": exp}, true},
		{"other key", other, map[string]any{"iss": "svc", "aud": "aud", "exp": exp}, false},
		{"wrong iss", key, map[string]any{"iss": "eve", "aud": "aud", "exp": exp}, false},
		{"wrong aud", key, map[string]any{"iss": "svc", "aud": "nope", "exp": exp}, false},
		{"expired", key, map[string]any{"iss": "svc", "aud": "aud", "exp": time.Now().Add(-time.Minute).Unix()}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := tokenRequest(t, base, url.Values{"grant_type": {jwtBearerGrant}, "assertion": {sign(tt.key, tt.claims)}}, [2]string{})
			if tt.ok {
				if status != 200 || getWith(t, base+"/v1/customers", body["access_token"].(string)) != 200 {
					t.Errorf("%d %v", status, body)
				}
				return
			}
			if status != 400 || body["error"] != "invalid_grant" {
				t.Errorf("%d %v", status, body)
			}
		})
	}
}
