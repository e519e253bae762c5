package codec

import (
	"bytes"
	"encoding/json"
)

// Marshal encodes v as encoding/json does, compactly and without escaping
// <, > and &: targets would store those escaped, and a GraphQL query may
// hold them. Map keys come out sorted, so equal values give equal bytes.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
