package tap

import (
	"strings"
	"unicode/utf8"
)

// redactor removes the config's secrets from what leaves the tap through
// a side door — dead letters, error messages, logs — where an API that
// echoes a credential back would otherwise carry it.
type redactor []string

// text returns s with every secret replaced by REDACTED.
func (r redactor) text(s string) string {
	for _, secret := range r {
		if secret != "" && strings.Contains(s, secret) {
			s = strings.ReplaceAll(s, secret, "REDACTED")
		}
	}
	return s
}

// value returns v with secrets removed from every string in it, copying
// only what changes.
func (r redactor) value(v any) any {
	if len(r) == 0 {
		return v
	}
	switch v := v.(type) {
	case string:
		return r.text(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[r.text(k)] = r.value(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = r.value(e)
		}
		return out
	}
	return v
}

// shorten cuts s to at most n bytes on a character boundary.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
