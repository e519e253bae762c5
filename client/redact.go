package client

import (
	"encoding/base64"
	"net/url"
	"strings"
)

// redactedValue replaces a credential in URLs, errors and logs.
const redactedValue = "REDACTED"

// secretParams are query parameter names (lower case) whose values are
// masked wherever a URL is shown.
var secretParams = map[string]bool{
	"token": true, "access_token": true, "api_key": true, "apikey": true, "key": true,
	"secret": true, "password": true, "signature": true, "sig": true, "client_secret": true,
	// common spellings of the same thing
	"refresh_token": true, "id_token": true, "auth": true, "auth_token": true,
	"private_token": true, "passwd": true, "x-amz-signature": true,
	"x-amz-credential": true, "x-amz-security-token": true,
}

// minSecretLen: shorter configured secrets are not searched for in free
// text (error messages), which would mangle it for no protection.
const minSecretLen = 4

// redactor masks credentials in URLs and text. It knows the secret
// parameter names above, the api_key name of the config, and the secret
// values of the config (token, password, api key value, sensitive default
// headers), so that an API echoing a credential does not leak it either.
type redactor struct {
	names  map[string]bool // extra parameter names, lower case
	values []string        // secret values, as sent and as URL-escaped
}

func newRedactor(auth Auth, headers map[string]string) *redactor {
	r := &redactor{names: map[string]bool{}}
	if auth.Type == "api_key" && auth.Name != "" {
		r.names[strings.ToLower(auth.Name)] = true
	}
	add := func(v string) {
		if len(v) < minSecretLen {
			return
		}
		r.values = append(r.values, v)
		if e := url.QueryEscape(v); e != v {
			r.values = append(r.values, e)
		}
		if e := url.PathEscape(v); e != v {
			r.values = append(r.values, e)
		}
	}
	add(auth.Token)
	add(auth.Password)
	add(auth.Value)
	if auth.Type == "basic" && auth.Password != "" {
		// What the Authorization header carries, should an API echo it.
		add(base64.StdEncoding.EncodeToString([]byte(auth.Username + ":" + auth.Password)))
	}
	for k, v := range headers {
		if sensitiveHeader(k) {
			add(v)
			if _, tok, ok := strings.Cut(v, " "); ok { // "Bearer xyz"
				add(tok)
			}
		}
	}
	return r
}

// sensitiveHeader guesses whether a default header carries a credential.
func sensitiveHeader(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"auth", "key", "token", "secret", "password", "cookie", "signature"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

func (r *redactor) secretName(name string) bool {
	n := strings.ToLower(name)
	return secretParams[n] || r.names[n]
}

// query masks the values of credential parameters in a raw query string,
// keeping the order and the encoding of everything else.
func (r *redactor) query(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		k, _, _ := strings.Cut(p, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if r.secretName(name) {
			parts[i] = k + "=" + redactedValue
		}
	}
	return r.scrub(strings.Join(parts, "&"))
}

// pathQuery is u's escaped path and masked query: what errors show.
func (r *redactor) pathQuery(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + r.query(u.RawQuery)
	}
	return r.scrub(p)
}

// url is u without userinfo or fragment and with credentials masked: what
// logs show.
func (r *redactor) url(u *url.URL) string {
	if u == nil {
		return ""
	}
	if u.Scheme == "" && u.Host == "" {
		return r.pathQuery(u)
	}
	return r.scrub(u.Scheme+"://"+u.Host) + r.pathQuery(u)
}

// scrub replaces every configured secret value found in s.
func (r *redactor) scrub(s string) string {
	for _, v := range r.values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, redactedValue)
		}
	}
	return s
}

// RedactURL returns u as it may be shown in logs and errors: no userinfo,
// no fragment, and the values of query parameters that look like
// credentials (token, access_token, api_key, apikey, key, secret, password,
// signature, sig, client_secret, ... and the extra names given, compared
// case-insensitively) replaced by REDACTED.
func RedactURL(u *url.URL, extraSecretParams ...string) string {
	r := &redactor{names: map[string]bool{}}
	for _, n := range extraSecretParams {
		r.names[strings.ToLower(n)] = true
	}
	return r.url(u)
}
