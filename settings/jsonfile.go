package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/inputfile"
	"github.com/tap-dev/tap/streams"
)

// resolveEnv replaces every {"env": "NAME"} object of the decoded tree by
// the value of that environment variable. Every placeholder of the config
// as a whole whose variable is not set is named in one error, so that a
// user sets them all at once rather than one run at a time; the error
// names those of the streams too. One that
// belongs to a stream (under streams[i], or path_params.X, which only the
// streams whose path holds {X} read) becomes "" and is returned in
// unset instead: it is an error only for a run that walks that stream
// (Config.CheckEnv).
func resolveEnv(v any, path string) (out any, unset []unsetEnv, err error) {
	var missing []unsetEnv
	out, err = resolveEnvIn(v, path, &missing)
	if err != nil {
		return nil, nil, err
	}
	var global []string
	for _, m := range missing {
		if m.stream < 0 && m.param == "" {
			global = append(global, m.String())
			continue
		}
		unset = append(unset, m)
	}
	if err := missingEnv(global); err != nil {
		// Those of the streams too, so that one error names all a
		// user may have to set (which streams need them: their field).
		var more []string
		for _, u := range unset {
			more = append(more, u.String())
		}
		if len(more) > 0 {
			slices.Sort(more)
			err = fmt.Errorf("%w; and, needed only by a run that walks the streams reading them: %s", err, strings.Join(more, ", "))
		}
		return nil, nil, err
	}
	return out, unset, nil
}

// missingEnv is the error naming every placeholder of entries ("field:
// NAME") whose variable is not set, sorted; nil for none.
func missingEnv(entries []string) error {
	switch len(entries) {
	case 0:
		return nil
	case 1:
		field, name, _ := strings.Cut(entries[0], ": ")
		return fmt.Errorf("%s: environment variable %s is not set", field, name)
	}
	slices.Sort(entries)
	return fmt.Errorf("%d environment variables are not set: %s", len(entries), strings.Join(entries, ", "))
}

// unsetEnv is an {"env"} placeholder whose variable is not set.
type unsetEnv struct {
	field, name string
	stream      int    // the index of the stream it is in, or -1
	param       string // the path parameter it is the value of, or ""
}

func (u unsetEnv) String() string { return u.field + ": " + u.name }

func resolveEnvIn(v any, path string, missing *[]unsetEnv) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		if name, ok := v["env"].(string); ok && len(v) == 1 {
			val, set := os.LookupEnv(name)
			if !set {
				u := unsetEnv{field: fieldName(path), name: name, stream: -1}
				if _, err := fmt.Sscanf(path, "streams[%d]", &u.stream); err != nil {
					u.stream = -1
				}
				if p, ok := strings.CutPrefix(path, "path_params."); ok && !strings.Contains(p, ".") {
					u.param = p
				}
				*missing = append(*missing, u)
				if u.stream >= 0 || u.param != "" {
					return "", nil
				}
				return v, nil
			}
			if !utf8.ValidString(val) {
				return nil, fmt.Errorf("%s: environment variable %s is not UTF-8 text", fieldName(path), name)
			}
			return val, nil
		}
		for k, e := range v {
			r, err := resolveEnvIn(e, join(path, k), missing)
			if err != nil {
				return nil, err
			}
			v[k] = r
		}
	case []any:
		for i, e := range v {
			r, err := resolveEnvIn(e, fmt.Sprintf("%s[%d]", path, i), missing)
			if err != nil {
				return nil, err
			}
			v[i] = r
		}
	}
	return v, nil
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func fieldName(path string) string {
	if path == "" {
		return "(top level)"
	}
	return path
}

// decodeWithStreams decodes a config or streams file into out, and its
// "streams" array into defs one definition at a time, so that an error
// names the stream it is in.
func decodeWithStreams(tree any, out any, defs *[]streams.Definition) error {
	obj, ok := tree.(map[string]any)
	if !ok {
		return errors.New("expected a JSON object at the top level")
	}
	list, has := obj["streams"]
	delete(obj, "streams")
	stringifyValues(obj["headers"])
	if err := decodeStrict(obj, out); err != nil {
		return err
	}
	if !has || list == nil {
		return nil
	}
	items, ok := list.([]any)
	if !ok {
		return fmt.Errorf("streams: expected an array, got %s", kind(list))
	}
	*defs = make([]streams.Definition, len(items))
	for i, item := range items {
		if m, ok := item.(map[string]any); ok {
			stringifyValues(m["params"])
		}
		if err := decodeStrict(item, &(*defs)[i]); err != nil {
			if m, ok := item.(map[string]any); ok {
				if name, ok := m["name"].(string); ok && name != "" {
					return fmt.Errorf("stream %q: %w", name, err)
				}
			}
			return fmt.Errorf("streams[%d]: %w", i, err)
		}
	}
	return nil
}

// stringifyValues turns the numbers and booleans of a string map (query
// parameters, headers) into their text: {"limit": 100} means "100".
func stringifyValues(v any) {
	m, _ := v.(map[string]any)
	for k, e := range m {
		switch e := e.(type) {
		case json.Number:
			m[k] = e.String()
		case bool:
			m[k] = fmt.Sprint(e)
		}
	}
}

// decodeStrict decodes a resolved tree into out, refusing unknown fields so
// that a typo in a setting is an error rather than a silent default.
func decodeStrict(tree any, out any) error {
	b, err := json.Marshal(tree)
	if err != nil {
		return err
	}
	if _, ok := tree.(map[string]any); !ok {
		return errors.New("expected a JSON object at the top level")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			name = strings.Trim(name, `"`)
			return fmt.Errorf("unknown field %q%s", name, didYouMean(name, jsonFieldNames(reflect.TypeOf(out))))
		}
		return DescribeDecodeError(err)
	}
	return nil
}

// DescribeDecodeError turns encoding/json's errors into "field: expected
// X, got Y" without quoting the value, which may be a secret.
func DescribeDecodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("%s: expected %s, got %s", fieldName(te.Field), goTypeName(te.Type.String()), te.Value)
	}
	if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("unknown field %s", msg)
	}
	return err
}

func goTypeName(t string) string {
	t = strings.TrimPrefix(t, "*")
	switch {
	case strings.HasPrefix(t, "[]"):
		return "an array"
	case strings.HasPrefix(t, "map["), strings.Contains(t, "."):
		return "an object"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	}
	return t
}

// ReadJSONFile reads and decodes a JSON file, a regular one of at most
// limit bytes (package inputfile), naming line and column on a syntax
// error.
func ReadJSONFile(path, what string, limit int64) (any, error) {
	b, err := inputfile.Read(path, limit)
	if err != nil {
		return nil, &InputError{File: path, Err: fmt.Errorf("cannot read %s: %v", what, err)}
	}
	if err := checkUTF8(b); err != nil {
		return nil, &InputError{File: path, Err: err}
	}
	v, err := codec.Decode(b)
	if err != nil {
		return nil, &InputError{File: path, Err: describeSyntax(b, err)}
	}
	return v, nil
}

func describeSyntax(b []byte, err error) error {
	var se *codec.SyntaxError
	if errors.As(err, &se) {
		if at := trailingComma(b, int64(se.Offset)); at >= 0 {
			line, col := lineCol(b, at)
			return fmt.Errorf("invalid JSON at line %d, column %d: a comma after the last member: JSON allows none; delete it", line, col)
		}
		line, col := lineCol(b, int64(se.Offset))
		return fmt.Errorf("invalid JSON at line %d, column %d: %s", line, col, se.Msg)
	}
	return fmt.Errorf("invalid JSON: %v", err)
}

// trailingComma is the offset of a comma just before the '}' or ']' at
// which a syntax error was found (off is at that bracket or just past it,
// as decoders differ), -1 when the error is no such comma: a trailing
// comma is then reported where it is, not at the next line's bracket.
func trailingComma(b []byte, off int64) int64 {
	for _, at := range []int64{off, off - 1} {
		if at < 0 || at >= int64(len(b)) || (b[at] != '}' && b[at] != ']') {
			continue
		}
		i := at - 1
		for i >= 0 && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i--
		}
		if i >= 0 && b[i] == ',' {
			return i
		}
	}
	return -1
}

func lineCol(b []byte, off int64) (line, col int) {
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	line, col = 1, 1
	for _, c := range b[:off] {
		if c == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// checkUTF8 refuses text that is not UTF-8, which encoding/json would
// otherwise turn silently into U+FFFD (a path /v1/tick\ufffdets).
func checkUTF8(b []byte) error {
	if utf8.Valid(b) {
		return nil
	}
	off := 0
	for off < len(b) {
		r, size := utf8.DecodeRune(b[off:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		off += size
	}
	line, col := lineCol(b, int64(off))
	return fmt.Errorf("invalid UTF-8 at line %d, column %d: the file must be UTF-8 text", line, col)
}
