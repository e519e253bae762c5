package streams

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"net/url"
	"strconv"
	"strings"
)

// NewPaginator returns the Paginator of d's pagination type. It checks d
// first, so a definition with a missing pagination option is an error here
// rather than a strange request later.
//
// Every paginator is a small immutable value: all it needs to compute the
// next request is the request just made and its Response, so one Paginator
// may serve any number of walks (parent records, windows) at once.
//
// First is idempotent for every type: applying it to a request it already
// prepared gives the same request back.
func NewPaginator(d *Definition) (Paginator, error) {
	if d == nil {
		return nil, fmt.Errorf("streams: NewPaginator needs a definition")
	}
	if err := d.Check(); err != nil {
		return nil, err
	}
	p := d.Pagination
	switch p.Type {
	case "", PageNone:
		return nonePaginator{}, nil
	case PageOffset:
		return offsetPaginator{name: d.Name, p: p}, nil
	case PageNumber:
		return pageNumberPaginator{name: d.Name, p: p}, nil
	case PageKeyset:
		return keysetPaginator{name: d.Name, p: p}, nil
	case PageCursor:
		return cursorPaginator{name: d.Name, p: p}, nil
	case PageNextURL:
		return nextURLPaginator{name: d.Name, p: p}, nil
	case PageLinkHeader:
		return linkHeaderPaginator{name: d.Name}, nil
	case PageGraphQL:
		return graphQLPaginator{name: d.Name, p: p, gql: d.GraphQL}, nil
	}
	// Check already rejects unknown types; keep the switch total anyway.
	return nil, &FieldError{Stream: d.Name, Field: "pagination.type", Msg: fmt.Sprintf("unknown type %q", p.Type)}
}

// nonePaginator makes exactly one request.
type nonePaginator struct{}

func (nonePaginator) First(req Request) Request { return req }

func (nonePaginator) Next(Request, *Response) (Request, bool, error) {
	return Request{}, false, nil
}

// streamErr formats an error of stream name the way every error of this
// package reads: `stream "name": ...`.
func streamErr(name, format string, args ...any) error {
	return fmt.Errorf("stream %q: %s", name, fmt.Sprintf(format, args...))
}

// cloneValues returns a deep copy of v (nil stays nil).
func cloneValues(v url.Values) url.Values {
	if v == nil {
		return nil
	}
	c := make(url.Values, len(v))
	for k, vs := range v {
		c[k] = append([]string(nil), vs...)
	}
	return c
}

// withParams returns a copy of req whose Query also holds the given
// name/value pairs (replacing earlier values). The caller's Query map is
// never written to. Pairs with an empty name are skipped.
func withParams(req Request, kv ...string) Request {
	q := cloneValues(req.Query)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] == "" {
			continue
		}
		if q == nil {
			q = url.Values{}
		}
		q.Set(kv[i], kv[i+1])
	}
	req.Query = q
	return req
}

// pageSizeParam returns the page-size query pair, or nothing when the
// stream does not send a page size.
func pageSizeParam(p Pagination) []string {
	if p.PageSizeParam == "" || p.PageSize <= 0 {
		return nil
	}
	return []string{p.PageSizeParam, strconv.Itoa(p.PageSize)}
}

// jsonType names the JSON type of a decoded value, for error messages.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number, float64, float32, int, int64, int32, uint, uint64, uint32:
		return "number"
	}
	return fmt.Sprintf("%T", v)
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
	if isIntLiteral(s) {
		i, ok := new(big.Int).SetString(s, 10)
		return i, ok
	}
	r, ok := parseRat(s)
	if !ok || !r.IsInt() {
		return nil, false
	}
	return new(big.Int).Set(r.Num()), true
}

// isIntLiteral reports whether s is an optional '-' followed by digits.
func isIntLiteral(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isJSONNumber reports whether s is a number in JSON syntax.
func isJSONNumber(s string) bool {
	if s == "" {
		return false
	}
	return json.Valid([]byte(s)) && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9'))
}

// parseRat parses a JSON number exactly. math/big refuses exponents too
// large to expand (|exp| > 1e6), which keeps a hostile value cheap.
func parseRat(s string) (*big.Rat, bool) {
	if !isJSONNumber(s) {
		return nil, false
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > 10000 || e < -10000 {
			return nil, false
		}
	}
	return new(big.Rat).SetString(s)
}

// sameOrigin reports whether next may receive the credentials sent to
// base: same scheme and same host (default ports ignored).
func sameOrigin(base, next *url.URL) bool {
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
func followURL(name string, last Request, resp *Response, raw string) (Request, error) {
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
	if !sameOrigin(base, next) {
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
