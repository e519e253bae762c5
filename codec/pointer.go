package codec

import (
	"strconv"
	"strings"
)

// Pointer follows an RFC 6901 JSON pointer ("/a/0/b~1c") into v, a
// decoded JSON value: "" is v itself. ok is false when the pointer does
// not start with "/" or names nothing in v.
func Pointer(v any, pointer string) (any, bool) {
	if pointer == "" {
		return v, true
	}
	if pointer[0] != '/' {
		return nil, false
	}
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := v.(type) {
		case map[string]any:
			next, ok := c[tok]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}
