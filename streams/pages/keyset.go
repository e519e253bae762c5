package pages

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/keys"
)

// keysetPaginator asks for the rows after the largest key seen:
// key_param = max(key_field) over the records of the page.
//
// The largest key is computed, never taken from the last row: an API that
// does not sort exactly by the key would otherwise skip rows. Integer keys
// compare as numbers, exactly (9007199254740993 > 9007199254740992);
// string keys compare lexically; a page mixing both is an error.
//
// It stops on an empty page, or on a page shorter than page_size when
// page_size is set.
//
// First never touches key_param when the request already has it: the
// incremental lower bound of the stream may live in the same parameter.
type keysetPaginator struct {
	name string
	p    streams.KeysetOptions
}

func (k keysetPaginator) First(req streams.Request) streams.Request {
	return req.WithParams(pageSizeParam(k.p.PageSizeParam, k.p.PageSize)...)
}

func (k keysetPaginator) Next(last streams.Request, resp *streams.Response) (streams.Request, bool, error) {
	n := len(resp.Records)
	if n == 0 || (k.p.PageSize > 0 && n < k.p.PageSize) {
		return streams.Request{}, false, nil
	}
	var maxKey key
	for i, rec := range resp.Records {
		v, ok, err := keyOf(rec, k.p.KeyField)
		if err != nil {
			return streams.Request{}, false, streamErr(k.name, "key_field %q: %v", k.p.KeyField, err)
		}
		if !ok {
			return streams.Request{}, false, streamErr(k.name, "record %d of the page has no key_field %q to page by", i, k.p.KeyField)
		}
		if i == 0 {
			maxKey = v
			continue
		}
		c, err := v.compare(maxKey)
		if err != nil {
			return streams.Request{}, false, streamErr(k.name, "key_field %q: %v", k.p.KeyField, err)
		}
		if c > 0 {
			maxKey = v
		}
	}
	return last.WithParams(k.p.KeyParam, maxKey.text), true, nil
}

// A key is a keyset key, held without boxing it (a page of spliced
// records allocates nothing per record): a string's value, or a number's
// exact text.
type key struct {
	text   string
	number bool
}

// keyOf reads rec's key_field; ok is false when it has none, or null.
func keyOf(rec any, field string) (_ key, ok bool, err error) {
	var v any
	if f, isFields := rec.(Fields); isFields {
		text, ok := f.Field(field)
		if !ok {
			return key{}, false, nil
		}
		if s, number, ok := codec.Scalar(text); ok {
			return key{s, number}, true, nil
		}
		if v, err = codec.Decode([]byte(text)); err != nil {
			return key{}, false, err
		}
	} else if v, ok = streams.Lookup(rec, field); !ok {
		return key{}, false, nil
	}
	switch x := v.(type) {
	case nil:
		return key{}, false, nil
	case string:
		return key{text: x}, true, nil
	}
	text, err := keysetText(v)
	return key{text, true}, true, err
}

// compare orders two keys: numbers numerically and exactly, strings
// lexically.
func (a key) compare(b key) (int, error) {
	switch {
	case !a.number && !b.number:
		return strings.Compare(a.text, b.text), nil
	case a.number && b.number:
		return keys.CompareNumberTexts(a.text, b.text)
	}
	return 0, fmt.Errorf("cannot order a JSON %s key against a JSON %s key", a.typeName(), b.typeName())
}

func (a key) typeName() string {
	if a.number {
		return "number"
	}
	return "string"
}

// keysetText is the query value of a key: a string as is, a number as its
// exact decimal text.
func keysetText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return string(x), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	}
	return "", fmt.Errorf("a key must be a string or a number, got a JSON %s", codec.TypeName(v))
}
