package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
	"golang.org/x/oauth2/jwt"
)

// OAuth configures Auth types "oauth2" and "jwt": where and how access
// tokens are obtained. x/oauth2 builds and parses the token requests; they
// are sent through the Client (retries, Retry-After, breaker), and through
// its rate limiter and daily quota only when TokenURL is on BaseURL's
// origin.
type OAuth struct {
	TokenURL string // absolute http(s) URL

	// oauth2
	GrantType    string // "client_credentials" [default] or "refresh_token"
	ClientID     string
	ClientSecret string
	RefreshToken string
	AuthStyle    string // "header" [default]: HTTP Basic; "body": form fields

	// jwt (RFC 7523 JWT-bearer grant)
	Issuer, Subject, Audience string
	PrivateKey                []byte // PEM, PKCS #8 or PKCS #1 RSA
	KeyID                     string

	Scopes []string
	Params map[string]string // extra form fields of every token request

	// OnRotate, when set, is called with a refresh token the server has
	// replaced the old one with, before the new access token is used: the
	// old refresh token may already be void, so the new one must be kept
	// first. Its error ends the run.
	OnRotate func(ctx context.Context, refreshToken string) error
}

// TokenError is a failed token request. Code is the OAuth error code of
// the answer (invalid_client, invalid_grant, ...), empty when the answer
// had none. The error never holds a credential.
type TokenError struct {
	Host        string // of the token URL
	Status      int    // HTTP status; 0 when no answer came
	Code        string
	Description string
	Err         error // the cause when no OAuth error answer came
}

func (e *TokenError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "token request to %s failed", e.Host)
	switch {
	case e.Code != "":
		fmt.Fprintf(&b, ": %s (HTTP %d)", e.Code, e.Status)
		if e.Description != "" {
			fmt.Fprintf(&b, ": %s", e.Description)
		}
	case e.Err != nil:
		fmt.Fprintf(&b, ": %v", e.Err)
	case e.Status != 0:
		fmt.Fprintf(&b, ": HTTP %d", e.Status)
	}
	return b.String()
}

func (e *TokenError) Unwrap() error { return e.Err }

// tokens holds the access token of a Client and gets a new one when it is
// missing, about to expire, or refused with a 401. One fetch at a time: a
// rotating refresh token is single-use, so two concurrent refreshes would
// void each other.
type tokens struct {
	c       *Client
	o       OAuth
	tokenU  *url.URL
	hc      *http.Client // x/oauth2's, sending through c
	sem     chan struct{}
	mu      sync.Mutex // guards tok, exp, life
	tok     *oauth2.Token
	exp     time.Time     // by the Client's clock; zero: no expiry given
	life    time.Duration // tok's lifetime when it came
	refresh string        // the current refresh token (grant refresh_token)
	err     error         // a failed fetch: the run does not ask again
}

func newTokens(c *Client, o OAuth) (*tokens, error) {
	u, err := url.Parse(o.TokenURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("client: OAuth.TokenURL must be an http(s) URL with a host and no userinfo")
	}
	t := &tokens{c: c, o: o, tokenU: u, sem: make(chan struct{}, 1), refresh: o.RefreshToken}
	t.hc = &http.Client{Transport: tokenTransport{t: t}}
	return t, nil
}

// token returns an access token valid for a while yet, fetching one if
// needed.
func (t *tokens) token(ctx context.Context) (string, error) {
	select {
	case t.sem <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	defer func() { <-t.sem }()
	if t.err != nil {
		return "", t.err
	}
	t.mu.Lock()
	tok, exp, life := t.tok, t.exp, t.life
	t.mu.Unlock()
	if tok != nil && t.fresh(exp, life) {
		return tok.AccessToken, nil
	}
	tok, err := t.fetch(ctx)
	if err != nil {
		if ctx.Err() == nil {
			t.err = err
		}
		return "", err
	}
	t.mu.Lock()
	t.tok, t.exp, t.life = tok, time.Time{}, 0
	if !tok.Expiry.IsZero() {
		// x/oauth2 dates the expiry by the wall clock; the Client's clock
		// may be another (tests).
		t.life = time.Until(tok.Expiry)
		t.exp = t.c.now().Add(t.life)
	}
	t.mu.Unlock()
	return tok.AccessToken, nil
}

// fresh reports whether a token expiring at exp after a lifetime of life
// is good for a request now: before exp less a tenth of its lifetime, at
// most 10 s, so that a request sent with it does not arrive after it
// ended. A zero exp never expires.
func (t *tokens) fresh(exp time.Time, life time.Duration) bool {
	if exp.IsZero() {
		return true
	}
	margin := min(10*time.Second, life/10)
	return t.c.now().Before(exp.Add(-margin))
}

// invalidate drops access, which the API refused, unless a newer token
// replaced it already.
func (t *tokens) invalidate(access string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tok != nil && t.tok.AccessToken == access {
		t.tok = nil
	}
}

// fetch asks the token endpoint for a new token. A new refresh token is
// handed to OnRotate before the access token is returned.
func (t *tokens) fetch(ctx context.Context) (*oauth2.Token, error) {
	o := t.o
	// A token request in flight when the run is interrupted gets one
	// Timeout more to finish: the server may have rotated the refresh
	// token already, and the answer is the only place the new one is.
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(t.c.cfg.Timeout, cancel) })
	defer stop()
	ctx = context.WithValue(fctx, oauth2.HTTPClient, t.hc)
	style := oauth2.AuthStyleInHeader
	if o.AuthStyle == "body" {
		style = oauth2.AuthStyleInParams
	}
	var (
		tok *oauth2.Token
		err error
	)
	switch {
	case t.c.cfg.Auth.Type == "session":
		tok, err = t.login(ctx)
	case t.c.cfg.Auth.Type == "jwt":
		cfg := &jwt.Config{Email: o.Issuer, Subject: o.Subject, Audience: o.Audience, PrivateKey: o.PrivateKey,
			PrivateKeyID: o.KeyID, Scopes: o.Scopes, TokenURL: o.TokenURL}
		tok, err = cfg.TokenSource(ctx).Token()
	case o.GrantType == "refresh_token":
		cfg := &oauth2.Config{ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: o.Scopes,
			Endpoint: oauth2.Endpoint{TokenURL: o.TokenURL, AuthStyle: style}}
		// A token with no access token is expired: Token refreshes it.
		tok, err = cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: t.refresh}).Token()
	default:
		cfg := &clientcredentials.Config{ClientID: o.ClientID, ClientSecret: o.ClientSecret, TokenURL: o.TokenURL,
			Scopes: o.Scopes, AuthStyle: style}
		tok, err = cfg.Token(ctx)
	}
	if err != nil {
		return nil, t.tokenError(ctx, err)
	}
	// "Bearer <token>" too: an access token too short to mask alone is
	// masked in the header form the API may echo.
	t.c.red.add(tok.AccessToken)
	t.c.red.add("Bearer " + tok.AccessToken)
	if rt := tok.RefreshToken; o.GrantType == "refresh_token" && rt != "" && rt != t.refresh {
		t.c.red.add(rt)
		if o.OnRotate != nil {
			if err := o.OnRotate(ctx, rt); err != nil {
				return nil, &TokenError{Host: t.tokenU.Host, Err: fmt.Errorf("keeping the rotated refresh token: %w", err)}
			}
		}
		t.refresh = rt
	}
	if tok.AccessToken == "" {
		return nil, &TokenError{Host: t.tokenU.Host, Err: errors.New("the answer holds no access_token")}
	}
	return tok, nil
}

// tokenError turns an x/oauth2 error into a TokenError with the OAuth
// error code of the answer, which the jwt package does not parse.
func (t *tokens) tokenError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	e := &TokenError{Host: t.tokenU.Host}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		if re.Response != nil {
			e.Status = re.Response.StatusCode
		}
		e.Code, e.Description = re.ErrorCode, re.ErrorDescription
		if e.Code == "" {
			var body struct {
				Code        string `json:"error"`
				Description string `json:"error_description"`
			}
			if json.Unmarshal(re.Body, &body) == nil {
				e.Code, e.Description = body.Code, body.Description
			}
		}
		e.Code = t.c.red.scrub(clip(e.Code))
		e.Description = t.c.red.scrub(clip(e.Description))
		return e
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	// Any other text of x/oauth2 may quote the answer: scrubbed.
	e.Err = errors.New(t.c.red.scrub(clip(err.Error())))
	if isOurs(err) {
		e.Err = err
	}
	return e
}

// tokenCall marks the context of a token request: the transport sends it
// as x/oauth2 built it, with no API credentials, and outside the API's
// rate limit unless it goes to BaseURL's origin.
type tokenCall struct{}

func isTokenCall(ctx context.Context) bool { return ctx.Value(tokenCall{}) != nil }

// errTokenRedirect marks a token request redirected to another origin.
var errTokenRedirect = errors.New("the token URL redirected to another origin")

// checkRedirect is the http.Client's redirect policy: at most 10 hops, as
// net/http's, and a token request only on its token URL's origin. A 307
// or 308 re-sends the body, the client secret and refresh token in it, and
// the answer would be trusted as ours: another host gets neither.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if isTokenCall(req.Context()) && !sameOrigin(req.URL, via[0].URL) {
		return fmt.Errorf("%w (%s://%s); a token request goes to its own origin only", errTokenRedirect, req.URL.Scheme, req.URL.Host)
	}
	return nil
}

// tokenTransport is the RoundTripper of x/oauth2's http.Client: it sends a
// token request through Client.Do.
type tokenTransport struct{ t *tokens }

func (tt tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t := tt.t
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, err
	}
	if len(t.o.Params) > 0 {
		for k, v := range t.o.Params {
			if !form.Has(k) {
				form.Set(k, v)
			}
		}
		body = []byte(form.Encode())
	}
	// Every credential as it is sent, so that an answer echoing it is
	// masked whatever form it took: the Basic header of the client id
	// and secret, the form's secrets, a JWT assertion.
	if h := req.Header.Get("Authorization"); h != "" {
		t.c.red.add(h)
		if _, cred, ok := strings.Cut(h, " "); ok {
			t.c.red.add(cred)
		}
	}
	for _, k := range []string{"client_secret", "refresh_token", "assertion", "client_assertion", "password"} {
		if v := form.Get(k); v != "" {
			t.c.red.add(v)
		}
	}
	ctx := context.WithValue(req.Context(), tokenCall{}, true)
	resp, err := t.c.Do(ctx, Request{
		Stream: "auth",
		Method: req.Method,
		URL:    req.URL.String(),
		Body:   body,
		Header: req.Header.Clone(),
		// OAuth error answers: x/oauth2 reads their code.
		IgnoreStatuses: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden},
	})
	if err != nil {
		return nil, err
	}
	status := resp.Status
	return &http.Response{
		Status:     fmt.Sprintf("%d %s", status, http.StatusText(status)),
		StatusCode: status,
		Header:     resp.Header,
		Body:       io.NopCloser(bytes.NewReader(resp.Body)),
		Request:    req,
	}, nil
}
