package client

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// oauthServer is an API at /data wanting a Bearer token from its /token
// endpoint, which answers with answer (a status and a JSON body) and
// records every token request's form and Authorization header.
type oauthServer struct {
	*server
	mu     sync.Mutex
	forms  []map[string]string
	basics []string
	log    []string // "token" and "data <access token>", in order
	answer func(n int, form map[string]string) (int, string)
	valid  map[string]bool // access tokens /data accepts
	refuse bool            // /data refuses every token
}

func newOAuthServer(t *testing.T, answer func(n int, form map[string]string) (int, string)) *oauthServer {
	o := &oauthServer{answer: answer, valid: map[string]bool{}}
	o.server = newServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/token":
			if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
				t.Errorf("token request Content-Type %q", ct)
			}
			if err := r.ParseForm(); err != nil {
				t.Error(err)
			}
			form := map[string]string{}
			for k := range r.PostForm {
				form[k] = r.PostForm.Get(k)
			}
			o.mu.Lock()
			o.forms = append(o.forms, form)
			o.basics = append(o.basics, r.Header.Get("Authorization"))
			o.log = append(o.log, "token")
			n := len(o.forms)
			status, body := o.answer(n, form)
			var tok struct {
				AccessToken string `json:"access_token"`
			}
			if json.Unmarshal([]byte(body), &tok) == nil && tok.AccessToken != "" {
				o.valid[tok.AccessToken] = true
			}
			o.mu.Unlock()
			w.WriteHeader(status)
			fmt.Fprint(w, body)
		case "/data":
			tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			o.mu.Lock()
			o.log = append(o.log, "data "+tok)
			ok := o.valid[tok] && !o.refuse
			o.mu.Unlock()
			if !ok {
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprint(w, `{"error":"bad token"}`)
				return
			}
			fmt.Fprint(w, `{"ok":true}`)
		}
	})
	return o
}

func (o *oauthServer) revoke(tok string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.valid, tok)
}

func (o *oauthServer) events() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.log...)
}

func tokenAnswer(access string, expiresIn int, refresh string) string {
	b, _ := json.Marshal(map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": expiresIn, "refresh_token": refresh})
	return string(b)
}

// learnRedactor is a Redactor that learns secrets, as the tap's does.
type learnRedactor struct {
	mu      sync.Mutex
	secrets []string
}

func (r *learnRedactor) Add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = append(r.secrets, s)
}

func (r *learnRedactor) Redact(s string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.secrets {
		s = strings.ReplaceAll(s, v, "REDACTED")
	}
	return s
}

func oauthEnv(t *testing.T, o *oauthServer, a OAuth, mod func(*Config)) *env {
	a.TokenURL = o.URL + "/token"
	return newEnv(t, o.URL, func(c *Config) {
		c.Auth = Auth{Type: "oauth2", OAuth: a}
		if mod != nil {
			mod(c)
		}
	})
}

func TestOAuthClientCredentials(t *testing.T) {
	for _, style := range []string{"header", "body"} {
		t.Run(style, func(t *testing.T) {
			o := newOAuthServer(t, func(n int, _ map[string]string) (int, string) {
				return 200, tokenAnswer(fmt.Sprintf("at-%d", n), 3600, "")
			})
			red := &learnRedactor{}
			e := oauthEnv(t, o, OAuth{ClientID: "the id", ClientSecret: "s3cr&t", AuthStyle: style,
				Scopes: []string{"read", "write"}, Params: map[string]string{"audience": "api"}},
				func(c *Config) { c.Redactor = red })
			for range 3 {
				if _, err := e.c.Do(context.Background(), Request{URL: "/data"}); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff([]string{"token", "data at-1", "data at-1", "data at-1"}, o.events()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			want := map[string]string{"grant_type": "client_credentials", "scope": "read write", "audience": "api"}
			wantBasic := "Basic " + base64.StdEncoding.EncodeToString([]byte("the+id:s3cr%26t"))
			if style == "body" {
				want["client_id"], want["client_secret"] = "the id", "s3cr&t"
				wantBasic = ""
			}
			if diff := cmp.Diff(want, o.forms[0]); diff != "" {
				t.Errorf("token form (-want +got):\n%s", diff)
			}
			if o.basics[0] != wantBasic {
				t.Errorf("token Authorization = %q, want %q", o.basics[0], wantBasic)
			}
			if got := red.Redact("at-1"); got != "REDACTED" {
				t.Errorf("the access token is not redacted: %q", got)
			}
		})
	}
}

func TestOAuthRefreshBeforeExpiry(t *testing.T) {
	o := newOAuthServer(t, func(n int, _ map[string]string) (int, string) {
		return 200, tokenAnswer(fmt.Sprintf("at-%d", n), 100, "")
	})
	e := oauthEnv(t, o, OAuth{ClientID: "id", ClientSecret: "secret"}, nil)
	do := func() {
		t.Helper()
		if _, err := e.c.Do(context.Background(), Request{URL: "/data"}); err != nil {
			t.Fatal(err)
		}
	}
	do()
	e.clock.Sleep(context.Background(), 85*time.Second) // 15 s left: fresh
	do()
	e.clock.Sleep(context.Background(), 6*time.Second) // 9 s left: within the 10 s margin
	do()
	want := []string{"token", "data at-1", "data at-1", "token", "data at-2"}
	if diff := cmp.Diff(want, o.events()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestOAuth401GetsOneNewToken(t *testing.T) {
	o := newOAuthServer(t, func(n int, _ map[string]string) (int, string) {
		return 200, tokenAnswer(fmt.Sprintf("at-%d", n), 3600, "")
	})
	e := oauthEnv(t, o, OAuth{ClientID: "id", ClientSecret: "secret"}, nil)
	ctx := context.Background()
	if _, err := e.c.Do(ctx, Request{URL: "/data"}); err != nil {
		t.Fatal(err)
	}
	o.revoke("at-1")
	if _, err := e.c.Do(ctx, Request{URL: "/data"}); err != nil {
		t.Fatalf("a 401 with a revoked token: %v", err)
	}
	want := []string{"token", "data at-1", "data at-1", "token", "data at-2"}
	if diff := cmp.Diff(want, o.events()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}

	// A new token refused too: the 401 is the answer, no loop.
	o.mu.Lock()
	o.refuse = true
	o.mu.Unlock()
	_, err := e.c.Do(ctx, Request{URL: "/data"})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != http.StatusUnauthorized {
		t.Fatalf("err = %v, want a 401 StatusError", err)
	}
	want = append(want, "data at-2", "token", "data at-3")
	if diff := cmp.Diff(want, o.events()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestOAuthRotationKeptBeforeUse(t *testing.T) {
	o := newOAuthServer(t, func(n int, form map[string]string) (int, string) {
		if want := fmt.Sprintf("rt-%d", n-1); form["refresh_token"] != want {
			return 400, `{"error":"invalid_grant","error_description":"refresh token already used"}`
		}
		return 200, tokenAnswer(fmt.Sprintf("at-%d", n), 1, fmt.Sprintf("rt-%d", n))
	})
	var mu sync.Mutex
	var kept []string
	red := &learnRedactor{}
	e := oauthEnv(t, o, OAuth{GrantType: "refresh_token", ClientID: "id", ClientSecret: "secret", RefreshToken: "rt-0",
		OnRotate: func(_ context.Context, rt string) error {
			mu.Lock()
			defer mu.Unlock()
			kept = append(kept, rt)
			if n := len(o.events()); o.events()[n-1] != "token" {
				t.Errorf("rotation kept after the token was used: %q", o.events())
			}
			return nil
		}}, func(c *Config) { c.Redactor = red })
	for range 3 {
		if _, err := e.c.Do(context.Background(), Request{URL: "/data"}); err != nil {
			t.Fatal(err)
		}
		e.clock.Sleep(context.Background(), 2*time.Second) // every token expires
	}
	if diff := cmp.Diff([]string{"rt-1", "rt-2", "rt-3"}, kept); diff != "" {
		t.Errorf("rotated tokens kept (-want +got):\n%s", diff)
	}
	if got := red.Redact("rt-2 at-3"); got != "REDACTED REDACTED" {
		t.Errorf("redacted: %q", got)
	}
	if o.forms[2]["grant_type"] != "refresh_token" {
		t.Errorf("grant_type %q", o.forms[2]["grant_type"])
	}
}

func TestOAuthRotationNotKeptFailsTheRun(t *testing.T) {
	o := newOAuthServer(t, func(n int, _ map[string]string) (int, string) {
		return 200, tokenAnswer("at", 3600, "rt-new")
	})
	e := oauthEnv(t, o, OAuth{GrantType: "refresh_token", RefreshToken: "rt-old",
		OnRotate: func(context.Context, string) error { return errors.New("disk full") }}, nil)
	_, err := e.c.Do(context.Background(), Request{URL: "/data"})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v", err)
	}
	if diff := cmp.Diff([]string{"token"}, o.events()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestOAuthErrorIsFinalAndNamed(t *testing.T) {
	o := newOAuthServer(t, func(int, map[string]string) (int, string) {
		return 400, `{"error":"invalid_grant","error_description":"token revoked"}`
	})
	e := oauthEnv(t, o, OAuth{GrantType: "refresh_token", ClientID: "id", ClientSecret: "secret", RefreshToken: "rt-0"}, nil)
	for range 3 {
		_, err := e.c.Do(context.Background(), Request{Stream: "s", URL: "/data"})
		var te *TokenError
		if !errors.As(err, &te) || te.Code != "invalid_grant" || te.Status != 400 {
			t.Fatalf("err = %v, want a TokenError invalid_grant", err)
		}
		host := strings.TrimPrefix(o.URL, "http://")
		if want := "token request to " + host + " failed: invalid_grant (HTTP 400): token revoked"; !strings.Contains(err.Error(), want) {
			t.Errorf("err = %q, want it to hold %q", err, want)
		}
	}
	if diff := cmp.Diff([]string{"token"}, o.events()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestOAuthTokenEndpointRetried(t *testing.T) {
	o := newOAuthServer(t, func(n int, _ map[string]string) (int, string) {
		if n == 1 {
			return 503, `{"error":"busy"}`
		}
		return 200, tokenAnswer("at", 3600, "")
	})
	e := oauthEnv(t, o, OAuth{ClientID: "id"}, nil)
	if _, err := e.c.Do(context.Background(), Request{URL: "/data"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"token", "token", "data at"}, o.events()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// A token URL on another origin is outside the API's daily quota.
func TestOAuthTokenOutsideQuota(t *testing.T) {
	o := newOAuthServer(t, func(int, map[string]string) (int, string) { return 200, tokenAnswer("at", 3600, "") })
	api := newServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer at" {
			w.WriteHeader(401)
		}
	})
	e := newEnv(t, api.URL, func(c *Config) {
		c.Auth = Auth{Type: "oauth2", OAuth: OAuth{TokenURL: o.URL + "/token", ClientID: "id"}}
		c.Limit.DailyQuota = 1
	})
	if _, err := e.c.Do(context.Background(), Request{URL: "/data"}); err != nil {
		t.Fatal(err)
	}
	if got := o.basics[0]; got == "" {
		t.Error("the token request lost its client credentials on another origin")
	}
	_, err := e.c.Do(context.Background(), Request{URL: "/data"})
	var de *DeferError
	if !errors.As(err, &de) {
		t.Fatalf("second request: err = %v, want the quota's DeferError", err)
	}
}

func TestJWTBearer(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	var claims map[string]any
	var header map[string]any
	o := newOAuthServer(t, func(_ int, form map[string]string) (int, string) {
		parts := strings.Split(form["assertion"], ".")
		if form["grant_type"] != "urn:ietf:params:oauth:grant-type:jwt-bearer" || len(parts) != 3 {
			return 400, `{"error":"invalid_request"}`
		}
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
		if rsa.VerifyPKCS1v15(&key.PublicKey, crypto.SHA256, sum[:], sig) != nil {
			return 400, `{"error":"invalid_grant"}`
		}
		h, _ := base64.RawURLEncoding.DecodeString(parts[0])
		c, _ := base64.RawURLEncoding.DecodeString(parts[1])
		json.Unmarshal(h, &header)
		json.Unmarshal(c, &claims)
		return 200, tokenAnswer("jwt-at", 3600, "")
	})
	e := newEnv(t, o.URL, func(c *Config) {
		c.Auth = Auth{Type: "jwt", OAuth: OAuth{TokenURL: o.URL + "/token", Issuer: "svc@example", Subject: "user@example",
			Audience: "https://aud.example", PrivateKey: keyPEM, KeyID: "k1", Scopes: []string{"a", "b"}}}
	})
	if _, err := e.c.Do(context.Background(), Request{URL: "/data"}); err != nil {
		t.Fatal(err)
	}
	if claims["iss"] != "svc@example" || claims["sub"] != "user@example" || claims["aud"] != "https://aud.example" || claims["scope"] != "a b" {
		t.Errorf("claims = %v", claims)
	}
	if header["kid"] != "k1" || header["alg"] != "RS256" {
		t.Errorf("header = %v", header)
	}
	if diff := cmp.Diff([]string{"token", "data jwt-at"}, o.events()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// A run interrupted while the token endpoint is answering still keeps the
// rotated refresh token: the server may have voided the old one already.
func TestOAuthRotationKeptWhenInterrupted(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	o := newOAuthServer(t, func(int, map[string]string) (int, string) {
		close(arrived)
		<-release
		return 200, tokenAnswer("at", 3600, "rt-new")
	})
	var kept []string
	e := oauthEnv(t, o, OAuth{GrantType: "refresh_token", RefreshToken: "rt-old",
		OnRotate: func(_ context.Context, rt string) error { kept = append(kept, rt); return nil }}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := e.c.Do(ctx, Request{URL: "/data"})
		done <- err
	}()
	<-arrived
	cancel()
	close(release)
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want the run's cancellation", err)
	}
	if diff := cmp.Diff([]string{"rt-new"}, kept); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"token"}, o.events()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// A token URL on the API's origin shares its daily quota.
func TestOAuthTokenOnAPIOriginInQuota(t *testing.T) {
	o := newOAuthServer(t, func(int, map[string]string) (int, string) { return 200, tokenAnswer("at", 3600, "") })
	e := oauthEnv(t, o, OAuth{ClientID: "id"}, func(c *Config) { c.Limit.DailyQuota = 2 })
	if _, err := e.c.Do(context.Background(), Request{URL: "/data"}); err != nil {
		t.Fatal(err)
	}
	_, err := e.c.Do(context.Background(), Request{URL: "/data"})
	var de *DeferError
	if !errors.As(err, &de) {
		t.Fatalf("third request of the quota: err = %v, want the quota's DeferError", err)
	}
	if diff := cmp.Diff([]string{"token", "data at"}, o.events()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// listenOn is an httptest server on host (a loopback address such as
// 127.0.0.2, another host to the client than 127.0.0.1).
func listenOn(t *testing.T, host string, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", host+":0")
	if err != nil {
		t.Fatal(err)
	}
	s := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// A token endpoint redirecting to another origin would have the client
// secret and the refresh token sent there, and its tokens used (issue 29):
// the token request fails instead, and nothing reaches the other host.
func TestOAuthTokenRedirectToAnotherOriginRefused(t *testing.T) {
	for _, style := range []string{"header", "body"} {
		t.Run(style, func(t *testing.T) {
			var other sync.Mutex
			var otherHits int
			evil := listenOn(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {
				other.Lock()
				otherHits++
				other.Unlock()
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, tokenAnswer("evil-access", 3600, "evil-refresh"))
			})
			var sameHits int
			o := newOAuthServer(t, func(int, map[string]string) (int, string) { return 200, tokenAnswer("good", 3600, "") })
			mux := http.NewServeMux()
			mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, evil.URL+"/token", http.StatusTemporaryRedirect)
			})
			mux.HandleFunc("/same", func(w http.ResponseWriter, r *http.Request) {
				sameHits++
				http.Redirect(w, r, "/token", http.StatusTemporaryRedirect)
			})
			tokenSrv := httptest.NewServer(mux)
			t.Cleanup(tokenSrv.Close)
			var rotated []string
			e := newEnv(t, o.URL, func(c *Config) {
				c.Auth = Auth{Type: "oauth2", OAuth: OAuth{TokenURL: tokenSrv.URL + "/same", GrantType: "refresh_token",
					ClientID: "cid", ClientSecret: "the-client-secret", RefreshToken: "the-refresh-token", AuthStyle: style,
					OnRotate: func(_ context.Context, rt string) error { rotated = append(rotated, rt); return nil }}}
			})
			_, err := e.c.Do(context.Background(), Request{URL: "/data"})
			var te *TokenError
			if !errors.As(err, &te) || !strings.Contains(err.Error(), "redirect") || !strings.Contains(err.Error(), "127.0.0.2") {
				t.Fatalf("err = %v, want a TokenError naming the redirect to 127.0.0.2", err)
			}
			if sameHits != 1 {
				t.Errorf("a redirect on the token URL's own origin was not followed (%d hits)", sameHits)
			}
			other.Lock()
			defer other.Unlock()
			if otherHits != 0 {
				t.Errorf("the token request went to the other host %d times", otherHits)
			}
			if len(rotated) != 0 {
				t.Errorf("the other host's refresh token was kept: %q", rotated)
			}
			if ev := o.events(); len(ev) != 0 {
				t.Errorf("the API was called: %v", ev)
			}
		})
	}
}
