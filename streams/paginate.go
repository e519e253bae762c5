package streams

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"net/url"
	"strconv"
	"strings"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams/keys"
)

// pageSizeParam returns the page-size query pair, or nothing when the
// stream does not send a page size.
func pageSizeParam(param string, size int) []string {
	if param == "" || size <= 0 {
		return nil
	}
	return []string{param, strconv.Itoa(size)}
}

// intValue reads a whole number from a decoded JSON value (json.Number,
// float64 without fraction, an integer type, or a string of digits).
func intValue(v any) (*big.Int, bool) {
	switch n := v.(type) {
	case json.Number:
		return parseBigInt(string(n))
	case string:
		return parseBigInt(strings.TrimSpace(n))
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return nil, false
		}
		f := big.NewFloat(n)
		if !f.IsInt() {
			return nil, false
		}
		i, _ := f.Int(nil)
		return i, true
	case int:
		return big.NewInt(int64(n)), true
	case int64:
		return big.NewInt(n), true
	case int32:
		return big.NewInt(int64(n)), true
	case uint64:
		return new(big.Int).SetUint64(n), true
	}
	return nil, false
}

// parseBigInt parses a decimal integer literal ("-12", "9007199254740993").
// A number such as "1e3" or "2.0" is also accepted when it is whole.
func parseBigInt(s string) (*big.Int, bool) {
	if codec.IsInteger(s) {
		i, ok := new(big.Int).SetString(s, 10)
		return i, ok
	}
	r, ok := codec.ParseRat(s)
	if !ok || !r.IsInt() {
		return nil, false
	}
	return new(big.Int).Set(r.Num()), true
}

// SameOrigin reports whether next may receive the credentials sent to
// base: same scheme and same host (default ports ignored). A next URL is
// held to it, and so is a resume position read back from STATE
// (pages.Resume.CheckOrigin).
func SameOrigin(base, next *url.URL) bool {
	return strings.EqualFold(base.Scheme, next.Scheme) && originHost(base) == originHost(next)
}

func originHost(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	switch {
	case port == "",
		port == "80" && strings.EqualFold(u.Scheme, "http"),
		port == "443" && strings.EqualFold(u.Scheme, "https"):
		return host
	}
	return host + ":" + port
}

// followURL resolves the next-page link raw (absolute or relative) against
// the URL of the page it came from and refuses links that leave its origin,
// so the credentials of the stream are never sent to another host.
func followURL(name string, last Request, resp *Page, raw string) (Request, error) {
	ref, err := url.Parse(raw)
	if err != nil {
		// Do not echo raw: it may carry a token in its query.
		return Request{}, streamErr(name, "next page URL is not a valid URL")
	}
	base := resp.URL
	if base == nil {
		if !ref.IsAbs() {
			return Request{}, streamErr(name, "next page URL is relative but the URL of the page it came from is unknown")
		}
		base = ref
	}
	next := base.ResolveReference(ref)
	if !SameOrigin(base, next) {
		if strings.EqualFold(originHost(base), originHost(next)) {
			return Request{}, streamErr(name, "next page URL switches from %s to %s on %s; refusing to follow it so the credentials are not sent there",
				base.Scheme, next.Scheme, next.Host)
		}
		return Request{}, streamErr(name, "next page URL points to another host (%s); refusing to follow it so the credentials are not sent there", next.Host)
	}
	next.Fragment = ""
	next.RawFragment = ""
	return Request{Method: last.Method, URL: next.String(), Query: nil, Body: last.Body}, nil
}

// A key is a record's value a paginator pages by (a keyset key, a cursor
// from the last record), held without boxing it (a page of spliced
// records allocates nothing per record): a string's value, or a number's
// exact text.
type key struct {
	text   string
	number bool
}

// keyOf reads rec's key_field; ok is false when it has none, or null.
func keyOf(rec any, field string) (_ key, ok bool, err error) {
	var v any
	if f, isFields := rec.(codec.Fields); isFields {
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
	} else if v, ok = Lookup(rec, field); !ok {
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
