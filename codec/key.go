package codec

import (
	"encoding/binary"
	"fmt"
)

// AppendKey appends an exact identity of the values of fields in m: for
// each field, a tag — absent, a string, or another value — then, when
// present, the length of the string or of the value's JSON text, and it.
// The tag keeps the type ("7" is not 7, null is not a missing field) and
// the length prefix keeps one field's value from running into the next,
// so two records get the same key only when every field holds the same
// JSON value.
func AppendKey(b []byte, m map[string]any, fields []string) []byte {
	for _, f := range fields {
		v, ok := m[f]
		if !ok {
			b = append(b, 'a')
			continue
		}
		b = appendKeyValue(b, v)
	}
	return b
}

// A Fields is a record read without its tree (the tap's splice path):
// among a page's records, beside the decoded objects, a record that gives
// only the JSON text of the top-level properties the walk reads — every
// field of the primary key, and a keyset's key_field — so that a page of
// them allocates nothing per record. The paginators that read anything
// else of a record never see one.
type Fields interface {
	// Field returns the JSON text of the top-level property name; ok is
	// false when the record does not have it.
	Field(name string) (text string, ok bool)
}

// AppendFieldsKey is AppendKey of a record given as the JSON text of its
// fields: the bytes AppendKey gives the record's tree. A field's text is
// decoded only when it is not a plain string or a number.
func AppendFieldsKey(b []byte, f Fields, fields []string) ([]byte, error) {
	for _, name := range fields {
		text, ok := f.Field(name)
		if !ok {
			b = append(b, 'a')
			continue
		}
		if s, number, ok := Scalar(text); ok && !number {
			b = appendKeyText(b, 's', s)
			continue
		} else if ok {
			b = appendKeyText(b, 'p', text) // a json.Number's text
			continue
		}
		v, err := Decode([]byte(text))
		if err != nil {
			return b, err
		}
		b = appendKeyValue(b, v)
	}
	return b, nil
}

func appendKeyValue(b []byte, v any) []byte {
	if s, ok := v.(string); ok {
		return appendKeyText(b, 's', s)
	}
	text, err := Append(nil, v)
	if err != nil {
		text = fmt.Appendf(nil, "%T:%#v", v, v) // not JSON: still told apart by type and value
	}
	return appendKeyText(b, 'p', string(text))
}

func appendKeyText(b []byte, tag byte, text string) []byte {
	b = binary.AppendUvarint(append(b, tag), uint64(len(text)))
	return append(b, text...)
}
