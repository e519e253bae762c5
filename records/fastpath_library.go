package records

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/tap-dev/tap/codec"
)

// residualKey is where, in a copy of the stream's schema, the library
// is given the sub-schemas the byte walker leaves to it: compiled there,
// their $refs resolve against the document as the whole schema's do.
const residualKey = "x-tap-library"

// Library is the schema library as the byte walker (codec.Shape) asks
// it: of the keywords of one node of v's schema, for that node's value
// only. It keeps the walker's answer to "certainly valid" or "not sure":
// a record whose value fails such a check takes the tree path, where
// the library judges the whole record and writes the errors.
func (v *Validator) Library() codec.Library {
	if v == nil {
		return nil
	}
	return func(subs []codec.Sub) ([]func(any) bool, error) {
		return compileSubs(v.stream, v.raw, subs)
	}
}

func compileSubs(stream string, schema map[string]any, subs []codec.Sub) ([]func(any) bool, error) {
	doc := maps.Clone(schema)
	list := make([]any, len(subs))
	for i, s := range subs {
		list[i] = s.Keywords
	}
	doc[residualKey] = list
	c, url, err := newCompiler(stream, doc)
	if err != nil {
		return nil, fmt.Errorf("stream %q: schema: %w", stream, err)
	}
	checks := make([]func(any) bool, len(subs))
	for i, s := range subs {
		if assertsNothing(s.Keywords) {
			continue
		}
		if f := formatOnly(s.Keywords); f != nil {
			checks[i] = f
			continue
		}
		sch, err := c.Compile(url + "#/" + residualKey + "/" + strconv.Itoa(i))
		if err != nil {
			return nil, fmt.Errorf("stream %q: schema at %q: %s", stream, s.Pointer,
				strings.TrimPrefix(err.Error(), "jsonschema: "))
		}
		checks[i] = func(v any) (ok bool) {
			defer func() {
				if recover() != nil {
					ok = false // a number math/big will not read: the tree path reports it
				}
			}()
			return sch.Validate(v) == nil
		}
	}
	return checks, nil
}

// assertsNothing: a format the library does not know is an annotation
// (singer.decimal, say).
func assertsNothing(kw map[string]any) bool {
	if len(kw) != 1 {
		return false
	}
	name, ok := kw["format"].(string)
	return ok && jsonschema.Formats[name] == nil
}

// formatOnly is the library's own function for a format it knows, when
// it is a sub-schema's one keyword: what validating the sub-schema would
// ask (the tap compiles with AssertFormat and registers no format of its
// own), without a validation's scopes and locations — a record left to
// the library for a format allocated ~1.8 KB per value through Validate.
func formatOnly(kw map[string]any) func(any) bool {
	if len(kw) != 1 {
		return nil
	}
	name, _ := kw["format"].(string)
	f := jsonschema.Formats[name]
	if f == nil {
		return nil
	}
	return func(v any) (ok bool) {
		defer func() {
			if recover() != nil {
				ok = false // the tree path reports it
			}
		}()
		return f(v)
	}
}
