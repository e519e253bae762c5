package client

import (
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

// Redactor masks secret values in text. The tap gives the Client one that
// knows the secrets of its config and those it learns while running; it
// masks with the same word, REDACTED.
type Redactor interface {
	Redact(s string) string
}

// redactor masks credentials in URLs and text: the values of query
// parameters whose names look like credentials (the names above and the
// api_key name of the config), and every secret value its Redactor knows,
// so that an API echoing a credential does not leak it either.
type redactor struct {
	names  map[string]bool // extra parameter names, lower case
	values Redactor        // nil: no secret values known
}

func newRedactor(auth Auth, values Redactor) *redactor {
	r := &redactor{names: map[string]bool{}, values: values}
	if auth.Type == "api_key" && auth.Name != "" {
		r.names[strings.ToLower(auth.Name)] = true
	}
	return r
}

func (r *redactor) secretName(name string) bool {
	return SecretName(name) || r.names[strings.ToLower(name)]
}

// secretWords are the words that make a query parameter or header name
// one carrying a credential ("x-api-key", "session_id", "jwt"): the one
// list the run's redaction and tap init's placeholders share.
var secretWords = map[string]bool{
	"key": true, "apikey": true, "token": true, "secret": true, "password": true, "passwd": true,
	"pwd": true, "signature": true, "sig": true, "auth": true, "credential": true, "credentials": true, "session": true,
	"jwt": true, "cookie": true,
}

// pagingWords mark a paging parameter (page_token, next_key), which is
// no credential whatever else its name says.
var pagingWords = map[string]bool{"page": true, "cursor": true, "next": true, "offset": true}

// SecretName reports whether a query parameter or header of this name
// carries a credential: one of the well-known names (access_token,
// X-Amz-Signature, …), or a name with a word of secretWords in it
// ("session_id", "X-Api-Key", "apiKey", "credentials") and none of
// pagingWords. Words are split at '_', '-', '.' and lower-to-upper case
// changes, and compared whole: "tokens" or "monkey" is no credential.
func SecretName(name string) bool {
	if secretParams[strings.ToLower(name)] {
		return true
	}
	secret := false
	for _, w := range nameWords(name) {
		if pagingWords[w] {
			return false
		}
		secret = secret || secretWords[w]
	}
	return secret
}

// nameWords splits a parameter or header name into its lower-case words.
func nameWords(name string) []string {
	var words []string
	start := 0
	for i := 0; i <= len(name); i++ {
		split := i == len(name) || name[i] == '_' || name[i] == '-' || name[i] == '.'
		camel := i > 0 && i < len(name) && name[i] >= 'A' && name[i] <= 'Z' && name[i-1] >= 'a' && name[i-1] <= 'z'
		if split || camel {
			if i > start {
				words = append(words, strings.ToLower(name[start:i]))
			}
			start = i
			if split {
				start = i + 1
			}
		}
	}
	return words
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

// scrub replaces every known secret value found in s.
func (r *redactor) scrub(s string) string {
	if r.values == nil {
		return s
	}
	return r.values.Redact(s)
}

// add makes the Redactor mask secret from now on, when it can learn
// secrets (the tap's can): an access token, a rotated refresh token.
func (r *redactor) add(secret string) {
	if a, ok := r.values.(interface{ Add(string) }); ok {
		a.Add(secret)
	}
}
