package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// Session configures Auth type "session": a login request whose answer
// holds the token the API's requests then carry, as a form, a login or an
// "auth/token" endpoint of an API hands it out (Airbyte's
// SessionTokenAuthenticator). The token is kept as an OAuth access token
// is: asked for before the first request, again when Lifetime has
// passed, and again once when the API refuses it with a 401.
type Session struct {
	URL         string      // absolute http(s) URL of the login
	Method      string      // GET or POST ["POST"]
	Header      http.Header // the login's own headers
	Query       url.Values  // its query parameters, besides URL's
	Body        []byte      // its body, of ContentType; nil: none
	ContentType string
	// Username and Password, when Username is set, log in with HTTP
	// Basic.
	Username, Password string
	TokenPath          string        // dotted path to the token in the JSON answer
	Lifetime           time.Duration // 0: until the API refuses it
	// Name and In say where the token goes: the header Name (In
	// "header"), the query parameter Name (In "query"), or, when Name is
	// "", Authorization: Bearer.
	Name, In string
}

// login sends the session's login request through the client (retries,
// Retry-After, breaker) and reads the token from its answer.
func (t *tokens) login(ctx context.Context) (*oauth2.Token, error) {
	s := t.c.cfg.Auth.Session
	u := *t.tokenU
	if len(s.Query) > 0 {
		q := u.Query()
		for k, vs := range s.Query {
			q[k] = vs
		}
		u.RawQuery = q.Encode()
	}
	h := s.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if s.ContentType != "" {
		h.Set("Content-Type", s.ContentType)
	}
	if s.Username != "" {
		basic := base64.StdEncoding.EncodeToString([]byte(s.Username + ":" + s.Password))
		h.Set("Authorization", "Basic "+basic)
		t.c.red.add(basic)
	}
	method := s.Method
	if method == "" {
		method = http.MethodPost
	}
	resp, err := t.c.Do(context.WithValue(ctx, tokenCall{}, true), Request{
		Stream: "auth", Method: method, URL: u.String(), Body: s.Body, Header: h,
	})
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(resp.Body))
	dec.UseNumber()
	var body any
	if err := dec.Decode(&body); err != nil {
		return nil, errors.New("the login answer is not JSON")
	}
	v := body
	for seg := range strings.SplitSeq(s.TokenPath, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			v = nil
			break
		}
		v = m[seg]
	}
	var token string
	switch x := v.(type) {
	case string:
		token = x
	case json.Number:
		token = x.String()
	}
	if token == "" {
		return nil, fmt.Errorf("the login answer holds no token at %q", s.TokenPath)
	}
	tok := &oauth2.Token{AccessToken: token}
	if s.Lifetime > 0 {
		tok.Expiry = time.Now().Add(s.Lifetime) // x/oauth2's wall clock, as token reads it
	}
	return tok, nil
}

// injectToken puts an access or session token on a request to BaseURL.
func (c *Client) injectToken(r *http.Request, token string) {
	a := c.cfg.Auth
	switch {
	case a.Type != "session" || a.Session.Name == "":
		r.Header.Set("Authorization", "Bearer "+token)
	case a.Session.In == "query":
		r.URL.RawQuery = setQueryParam(r.URL.RawQuery, a.Session.Name, token)
	default:
		r.Header.Set(a.Session.Name, token)
	}
}
