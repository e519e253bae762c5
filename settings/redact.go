package settings

import (
	"cmp"
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/tap-dev/tap/codec"
)

// Mask replaces a secret wherever the tap shows text: logs, errors, STATE,
// dead letters, drift reports.
const Mask = "REDACTED"

// Redactor masks secrets in text. It knows the secret settings of the
// config, the credentials given in its headers block, and the secrets a
// run learns later (Add), each in the forms it may take on the wire: as
// is, query-escaped, path-escaped, and base64(user:password) for basic
// auth. It is safe for concurrent use; a nil *Redactor masks nothing.
type Redactor struct {
	mu     sync.RWMutex
	values []string // longest first, so a secret holding another is masked whole
}

// NewRedactor returns a Redactor that masks secrets.
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		r.Add(s)
	}
	return r
}

// newConfigRedactor collects the secrets of a config tree the registry has
// checked: every secret setting, the base64 credentials of basic auth and
// the values of credential headers.
func newConfigRedactor(tree map[string]any) *Redactor {
	r := &Redactor{}
	for _, s := range registry {
		if !s.Secret {
			continue
		}
		if parent, key, _ := parentOf(tree, s.Name); parent != nil {
			switch v := parent[key].(type) {
			case string:
				r.addSecret(v)
			case map[string]any: // stream_map_config: every string it holds
				for _, e := range v {
					if e, ok := e.(string); ok {
						r.Add(e)
					}
				}
			}
		}
	}
	if auth, _ := tree["auth"].(map[string]any); auth["type"] == "basic" {
		user, _ := auth["username"].(string)
		pass, _ := auth["password"].(string)
		if pass != "" {
			r.Add(base64.StdEncoding.EncodeToString([]byte(user + ":" + pass)))
		}
	}
	headers, _ := tree["headers"].(map[string]any)
	for name, v := range headers {
		if v, ok := v.(string); ok && SensitiveHeader(name) {
			r.addHeader(name, v)
		}
	}
	return r
}

// addSecret adds a secret setting's value; of a URL with a password
// (rate_limit.shared.redis_url) only the password, so that messages still
// say which host they are about.
func (r *Redactor) addSecret(v string) {
	if u, err := url.Parse(v); err == nil && u.Scheme != "" && u.Host != "" {
		if p, ok := u.User.Password(); ok && p != "" {
			r.Add(p)
			return
		}
		if u.User == nil {
			return // nothing secret in it
		}
	}
	r.Add(v)
}

// SensitiveHeader reports whether a request header carries a credential:
// Authorization, Proxy-Authorization, Cookie, X-Api-Key, or any name
// holding key, token, secret, auth, session, signature or password.
func SensitiveHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "x-api-key":
		return true
	}
	for _, s := range []string{"key", "token", "secret", "auth", "session", "signature", "password"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// addHeader adds a credential header's value and its parts an API may
// echo alone: the credentials after the scheme ("Bearer xyz") and each
// cookie's value.
func (r *Redactor) addHeader(name, v string) {
	r.Add(v)
	if _, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
		r.Add(strings.TrimSpace(cred))
	}
	if strings.EqualFold(name, "cookie") {
		for _, c := range strings.Split(v, ";") {
			if _, val, ok := strings.Cut(c, "="); ok {
				r.Add(strings.TrimSpace(val))
			}
		}
	}
}

// Add makes r mask secret from now on, in its raw, query-escaped and
// path-escaped forms. An empty secret is ignored.
func (r *Redactor) Add(secret string) {
	if secret == "" {
		return
	}
	forms := []string{secret, url.QueryEscape(secret), url.PathEscape(secret)}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range forms {
		if !slices.Contains(r.values, f) {
			r.values = append(r.values, f)
		}
	}
	slices.SortStableFunc(r.values, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
}

// Redact returns s with every secret replaced by Mask.
func (r *Redactor) Redact(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, v := range r.values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Mask)
		}
	}
	return s
}

// Value returns v with secrets masked in every string of it, keys
// included, copying only the containers.
func (r *Redactor) Value(v any) any {
	if r == nil {
		return v
	}
	return codec.MapStrings(v, r.Redact)
}

// Empty reports whether r has no secret to mask.
func (r *Redactor) Empty() bool {
	if r == nil {
		return true
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.values) == 0
}
