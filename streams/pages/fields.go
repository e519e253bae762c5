package pages

import (
	"hash/maphash"

	"github.com/tap-dev/tap/codec"
)

// Fields is a record of a page read without its tree (the tap's splice
// path): among Response.Records, beside the decoded objects, a record that
// gives only the JSON text of the top-level properties the walk reads —
// every field of the primary key, and a keyset's key_field — so that a
// page of them allocates nothing per record. The paginators that read
// anything else of a record never see one.
type Fields interface {
	// Field returns the JSON text of the top-level property name; ok is
	// false when the record does not have it.
	Field(name string) (text string, ok bool)
}

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
