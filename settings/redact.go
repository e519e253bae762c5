package settings

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tap-dev/tap/codec"
)

// Mask replaces a secret wherever the tap shows text: logs, errors, STATE,
// dead letters, drift reports.
const Mask = "REDACTED"

// MinSecretLen is the length, in bytes, below which a value cannot be
// masked safely: masking a secret "2024" or "T" in every text would alter
// dates, words and numbers that merely hold it (a STATE bookmark, a
// METRIC line, a record). A configured credential shorter than this is
// a config error; a shorter form of a secret learned while running, or a
// short string of an object of secrets (stream_map_config), is not
// masked, only its longer forms are.
const MinSecretLen = 8

// Redactor masks secrets in text. It knows the secret settings of the
// config, the credentials given in its headers block, and the secrets a
// run learns later (Add), each in the forms it may take on the wire and
// in what an API echoes of it: as is, query-escaped, path-escaped, each
// of those JSON-escaped as encoders write them (\" and \\, \u00e9 for
// non-ASCII, \u003c for <>&, \/ for /), and base64(user:password) for
// basic auth. It is safe for concurrent use; a nil *Redactor masks
// nothing.
type Redactor struct {
	mu sync.Mutex // held by Add, which replaces values
	// values are the forms, longest first, so that a secret holding
	// another is masked whole. A slice once stored is never changed:
	// every record's check reads it without a lock.
	values atomic.Pointer[[]string]
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
// of an OAuth client in the Authorization header, and the values of
// credential headers. A credential shorter than MinSecretLen is an error
// naming its field.
func newConfigRedactor(tree map[string]any) (*Redactor, error) {
	r := &Redactor{}
	var errs []error
	for _, s := range registry {
		if !s.Secret {
			continue
		}
		if parent, key, _ := parentOf(tree, s.Name); parent != nil {
			switch v := parent[key].(type) {
			case string:
				errs = append(errs, r.addSecret(s.Name, v))
			case map[string]any: // stream_map_config: every string it holds
				for _, e := range v {
					if e, ok := e.(string); ok {
						r.Add(e)
					}
				}
			}
		}
	}
	auth, _ := tree["auth"].(map[string]any)
	user, _ := auth["username"].(string)
	pass, _ := auth["password"].(string)
	if auth["type"] == "basic" && pass != "" {
		r.Add(base64.StdEncoding.EncodeToString([]byte(user + ":" + pass)))
	}
	// x/oauth2's header style: the id and secret query-escaped, then
	// base64 (RFC 6749 2.3.1).
	id, _ := auth["client_id"].(string)
	secret, _ := auth["client_secret"].(string)
	if auth["type"] == "oauth2" && auth["auth_style"] != "body" && secret != "" {
		r.Add(base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id) + ":" + url.QueryEscape(secret))))
	}
	headers, _ := tree["headers"].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(headers)) {
		if v, ok := headers[name].(string); ok && SensitiveHeader(name) {
			errs = append(errs, r.addHeader(name, v))
		}
	}
	login, _ := auth["login_headers"].(map[string]any) // a session's login
	for _, name := range slices.Sorted(maps.Keys(login)) {
		if v, ok := login[name].(string); ok && SensitiveHeader(name) {
			errs = append(errs, r.addHeader(name, v))
		}
	}
	// The redactor is whole even then: the error must not show a secret.
	return r, cmp.Or(errs...)
}

// tooShort is the error of a credential too short to mask.
func tooShort(field string, n int) error {
	return fmt.Errorf("%s: expected a secret of at least %d characters, got %d: a shorter one cannot be masked in logs, errors and STATE without altering other text", field, MinSecretLen, n)
}

// addSecret adds the value of the secret setting field; of a URL with a
// password (rate_limit.shared.redis_url) only the password, so that
// messages still say which host they are about.
func (r *Redactor) addSecret(field, v string) error {
	if u, err := url.Parse(v); err == nil && u.Scheme != "" && u.Host != "" {
		if p, ok := u.User.Password(); ok && p != "" {
			if len(p) < MinSecretLen {
				return tooShort(field+" (its password)", len(p))
			}
			r.Add(p)
			return nil
		}
		if u.User == nil {
			return nil // nothing secret in it
		}
	}
	if v != "" && len(v) < MinSecretLen {
		return tooShort(field, len(v))
	}
	r.Add(v)
	return nil
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
// cookie's value (a short one, such as theme=dark, is no credential).
func (r *Redactor) addHeader(name, v string) error {
	field := "headers." + name
	if len(v) < MinSecretLen {
		return tooShort(field, len(v))
	}
	r.Add(v)
	if strings.EqualFold(name, "cookie") {
		for _, c := range strings.Split(v, ";") {
			if _, val, ok := strings.Cut(c, "="); ok {
				r.Add(strings.TrimSpace(val))
			}
		}
		return nil
	}
	if _, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
		cred = strings.TrimSpace(cred)
		if len(cred) < MinSecretLen {
			return tooShort(field+" (its credentials after the scheme)", len(cred))
		}
		r.Add(cred)
	}
	return nil
}

// Add makes r mask secret from now on, in its raw, query-escaped and
// path-escaped forms and their JSON escapes. An empty secret is ignored,
// and so is a form shorter than MinSecretLen.
func (r *Redactor) Add(secret string) {
	if secret == "" {
		return
	}
	var forms []string
	for _, f := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret)} {
		forms = append(forms, f)
		forms = append(forms, jsonEscapes(f)...)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	values := slices.Clone(r.forms())
	for _, f := range forms {
		if len(f) >= MinSecretLen && !slices.Contains(values, f) {
			values = append(values, f)
		}
	}
	slices.SortStableFunc(values, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	r.values.Store(&values)
}

// forms are the forms of the secrets added so far.
func (r *Redactor) forms() []string {
	if v := r.values.Load(); v != nil {
		return *v
	}
	return nil
}

// jsonEscapes are the ways JSON encoders write s inside a string: the
// minimal escape (\" \\ and control bytes), Go's HTML-safe one (<>& as
// \u003c), the ASCII-only one of Python and others (\u00e9, in lower and
// upper case hex), and PHP's \/ for a slash.
func jsonEscapes(s string) []string {
	var out []string
	for _, o := range []struct{ html, ascii, upper, slash bool }{
		{}, {html: true}, {ascii: true}, {ascii: true, upper: true}, {slash: true}, {ascii: true, slash: true},
	} {
		var b strings.Builder
		for _, c := range s {
			switch {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteRune(c)
			case c == '/' && o.slash:
				b.WriteString(`\/`)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\t':
				b.WriteString(`\t`)
			case c < 0x20, o.html && (c == '<' || c == '>' || c == '&'),
				c == '\u2028' || c == '\u2029', o.ascii && c > 0x7f:
				writeUnicodeEscape(&b, c, o.upper)
			default:
				b.WriteRune(c)
			}
		}
		if e := b.String(); e != s && !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// writeUnicodeEscape writes c as \uXXXX, a surrogate pair past U+FFFF.
func writeUnicodeEscape(b *strings.Builder, c rune, upper bool) {
	units := []rune{c}
	if c > 0xffff {
		c -= 0x10000
		units = []rune{0xd800 + c>>10, 0xdc00 + c&0x3ff}
	}
	for _, u := range units {
		h := fmt.Sprintf("%04x", u)
		if upper {
			h = strings.ToUpper(h)
		}
		b.WriteString(`\u` + h)
	}
}

// Redact returns s with every secret replaced by Mask.
func (r *Redactor) Redact(s string) string {
	if r == nil {
		return s
	}
	for _, v := range r.forms() {
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

// Record masks the secrets found in the strings (and keys) of one
// encoded JSON record, which an API may have echoed a credential into. It
// returns rec itself, and no field, when no secret is in it: the check is
// a scan of the bytes for each form, so that records without one, nearly
// all, cost no decoding. Otherwise it returns the record re-encoded with
// those strings masked and the fields that held them ("meta.echo",
// "list[2]"). Numbers, and text that merely resembles a secret, are left
// as they are.
func (r *Redactor) Record(rec []byte) ([]byte, []string) {
	if r == nil {
		return rec, nil
	}
	if !r.Holds(rec) {
		return rec, nil
	}
	v, err := codec.Decode(rec)
	if err != nil {
		return rec, nil // not a record the tap encoded: nothing to mask in
	}
	var fields []string
	v = r.maskTree(v, "", &fields)
	if len(fields) == 0 {
		return rec, nil
	}
	out, err := codec.Marshal(v)
	if err != nil {
		return rec, nil
	}
	return out, fields
}

// Holds reports whether b (JSON text the tap encoded) may hold a
// secret: it holds one of the forms Redact masks (as sent, URL-escaped,
// JSON-escaped). A scan of the bytes, with no decoding: what holds none,
// nearly all, is written as it is.
func (r *Redactor) Holds(b []byte) bool {
	if r == nil {
		return false
	}
	for _, v := range r.forms() {
		if bytes.Contains(b, []byte(v)) {
			return true
		}
	}
	return false
}

// maskTree masks the strings of v, noting the path of each that held a
// secret in fields.
func (r *Redactor) maskTree(v any, path string, fields *[]string) any {
	switch v := v.(type) {
	case string:
		if m := r.Redact(v); m != v {
			*fields = append(*fields, path)
			return m
		}
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			mk := r.Redact(k)
			p := mk
			if path != "" {
				p = path + "." + mk
			}
			if mk != k {
				*fields = append(*fields, p)
			}
			out[mk] = r.maskTree(e, p, fields)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = r.maskTree(e, path+"["+strconv.Itoa(i)+"]", fields)
		}
		return out
	}
	return v
}

// Empty reports whether r has no secret to mask.
func (r *Redactor) Empty() bool {
	if r == nil {
		return true
	}
	return len(r.forms()) == 0
}
