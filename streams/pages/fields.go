package pages

import (
	"hash/maphash"

	"github.com/tap-dev/tap/codec"
)

// writeText writes the JSON text of a value to h as writeValue writes the
// value decoded.
func writeText(h *maphash.Hash, seed maphash.Seed, text string) {
	if s, number, ok := codec.Scalar(text); ok {
		if number {
			h.WriteByte('d')
		} else {
			h.WriteByte('s')
		}
		writeLen(h, len(s))
		h.WriteString(s)
		return
	}
	v, err := codec.Decode([]byte(text))
	if err != nil {
		// Not a value: its text, apart from any value's.
		h.WriteByte('?')
		writeLen(h, len(text))
		h.WriteString(text)
		return
	}
	writeValue(h, seed, v)
}
