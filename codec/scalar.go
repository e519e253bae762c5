package codec

import "strings"

// Scalar reads the text of one JSON value, already checked (a walker's
// capture), as Decode would give it, without a decoder for the kinds a
// key usually is: a string without escapes is its value; a number is its
// text (Decode's json.Number), and number is true. ok is false for
// anything else — an escape, null, a boolean, an object, an array — which
// the caller decodes.
func Scalar(text string) (s string, number, ok bool) {
	if text == "" {
		return "", false, false
	}
	switch c := text[0]; {
	case c == '"' && len(text) >= 2 && strings.IndexByte(text, '\\') < 0:
		return text[1 : len(text)-1], false, true
	case c == '-' || (c >= '0' && c <= '9'):
		return text, true, true
	}
	return "", false, false
}
