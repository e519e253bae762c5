package tap

import "strings"

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
