package codec

import (
	"encoding/binary"
	"fmt"
)

// AppendKey appends an exact identity of the values of fields in m: for
// each field, a tag — absent, or present — then, when present, the
// length of the value's JSON text and that text. JSON text keeps the type
// ("7" is not 7, null is not a missing field) and the length prefix keeps
// one field's value from running into the next, so two records get the
// same key only when every field holds the same JSON value.
func AppendKey(b []byte, m map[string]any, fields []string) []byte {
	for _, f := range fields {
		v, ok := m[f]
		if !ok {
			b = append(b, 'a')
			continue
		}
		text, err := Append(nil, v)
		if err != nil {
			text = fmt.Appendf(nil, "%T:%#v", v, v) // not JSON: still told apart by type and value
		}
		b = binary.AppendUvarint(append(b, 'p'), uint64(len(text)))
		b = append(b, text...)
	}
	return b
}
