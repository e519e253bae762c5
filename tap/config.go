package tap

import (
	"errors"
	"io/fs"
	"sort"

	"github.com/tap-dev/tap/settings"
)

// Config is the loaded config (see package settings); the alias keeps the
// signatures of a run short.
type Config = settings.Config

// DemoURL as base_url starts the bundled demo API in-process on loopback.
const DemoURL = settings.DemoURL

// Schema-violation policies.
const (
	ViolationFail       = settings.ViolationFail
	ViolationDeadLetter = settings.ViolationDeadLetter
	ViolationEmit       = settings.ViolationEmit
)

// sortedKeys returns the keys of m in order, so that output is stable.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func typeIncludes(t any, want string) bool {
	switch t := t.(type) {
	case string:
		return t == want
	case []any:
		for _, e := range t {
			if e == want {
				return true
			}
		}
	}
	return false
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
