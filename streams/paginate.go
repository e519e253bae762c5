package streams

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/tap-dev/tap/codec"
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
	pt, _ := lookupPageType(d.Pagination.Type) // Check rejects unknown types
	switch opts := d.Pagination.Options; {
	case opts != nil && d.Pagination.Inject != "" && d.Pagination.Inject != InjectQuery:
		return injectPaginator{inner: opts.paginator(d), where: d.Pagination.Inject, params: pageParams(opts)}, nil
	case opts != nil:
		return opts.paginator(d), nil
	case pt.options != nil:
		// Options left unset whose zero value Check accepts (graphql).
		return pt.options().paginator(d), nil
	case pt.name == PageLinkHeader:
		return linkHeaderPaginator{name: d.Name}, nil
	}
	return nonePaginator{}, nil
}

// pageType is one pagination type: its name and a constructor of its
// option set (nil for a type that takes only the common options).
type pageType struct {
	name    string
	options func() PageOptions
}

// pageTypes lists every pagination type, in the order messages name them.
var pageTypes = []pageType{
	{PageNone, nil},
	{PageOffset, func() PageOptions { return new(OffsetOptions) }},
	{PageNumber, func() PageOptions { return new(PageNumberOptions) }},
	{PageKeyset, func() PageOptions { return new(KeysetOptions) }},
	{PageCursor, func() PageOptions { return new(CursorOptions) }},
	{PageNextURL, func() PageOptions { return new(NextURLOptions) }},
	{PageLinkHeader, nil},
	{PageGraphQL, func() PageOptions { return new(GraphQLOptions) }},
}

// lookupPageType finds the pagination type called name; "" is none.
func lookupPageType(name string) (pageType, bool) {
	if name == "" {
		name = PageNone
	}
	for _, pt := range pageTypes {
		if pt.name == name {
			return pt, true
		}
	}
	return pageType{}, false
}

// optionNames lists the JSON names of the options pt accepts: its own, then
// the common ones.
func (pt pageType) optionNames() []string {
	var names []string
	if pt.options != nil {
		names = jsonFieldNames(reflect.TypeOf(pt.options()).Elem())
	}
	return append(names, jsonFieldNames(reflect.TypeFor[PageCommon]())...)
}

func jsonFieldNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

func unknownTypeMsg(name string) string {
	names := make([]string, len(pageTypes))
	for i, pt := range pageTypes {
		names[i] = pt.name
	}
	return fmt.Sprintf("unknown type %q (expected one of %s)", name, strings.Join(names, ", "))
}

// UnmarshalJSON decodes {"type": T, ...options of T}. An option that T
// does not take is an error naming the option, the types it belongs to and
// the options T accepts.
func (p *Pagination) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		var v any
		if json.Unmarshal(b, &v) != nil {
			return &FieldError{Field: "pagination", Msg: "expected an object"}
		}
		return &FieldError{Field: "pagination", Msg: "expected an object, got " + jsonType(v)}
	}
	var out Pagination
	if t, ok := raw["type"]; ok {
		if err := json.Unmarshal(t, &out.Type); err != nil {
			return &FieldError{Field: "pagination.type", Msg: "expected a string"}
		}
	}
	pt, ok := lookupPageType(out.Type)
	if !ok {
		return &FieldError{Field: "pagination.type", Msg: unknownTypeMsg(out.Type)}
	}
	accepted := pt.optionNames()
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if k != "type" && !slices.Contains(accepted, k) {
			return &FieldError{Field: "pagination." + k, Msg: foreignOptionMsg(k, pt, accepted)}
		}
	}
	if err := decodeOptions(b, &out.PageCommon); err != nil {
		return err
	}
	if pt.options != nil {
		out.Options = pt.options()
		if err := decodeOptions(b, out.Options); err != nil {
			return err
		}
	}
	*p = out
	return nil
}

// foreignOptionMsg says why option k is refused for type pt.
func foreignOptionMsg(k string, pt pageType, accepted []string) string {
	var owners []string
	for _, other := range pageTypes {
		if slices.Contains(other.optionNames(), k) {
			owners = append(owners, strconv.Quote(other.name))
		}
	}
	takes := fmt.Sprintf("type %q accepts %s", pt.name, strings.Join(accepted, ", "))
	if len(owners) == 0 {
		return "unknown pagination option; " + takes
	}
	return fmt.Sprintf("is an option of pagination type %s, not of %q; %s", strings.Join(owners, ", "), pt.name, takes)
}

// decodeOptions decodes the options object b into dst, whose unknown
// fields were refused already.
func decodeOptions(b []byte, dst any) error {
	err := json.Unmarshal(b, dst)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		// Name the JSON type given, never the value: it may be a secret.
		return &FieldError{Field: "pagination." + te.Field, Msg: fmt.Sprintf("expected %s, got %s", kindName(te.Type), te.Value)}
	}
	if err != nil {
		return &FieldError{Field: "pagination", Msg: err.Error()}
	}
	return nil
}

func kindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	}
	return t.String()
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
func pageSizeParam(param string, size int) []string {
	if param == "" || size <= 0 {
		return nil
	}
	return []string{param, strconv.Itoa(size)}
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
	if codec.IsInteger(s) {
		i, ok := new(big.Int).SetString(s, 10)
		return i, ok
	}
	r, ok := parseRat(s)
	if !ok || !r.IsInt() {
		return nil, false
	}
	return new(big.Int).Set(r.Num()), true
}

// parseRat parses a JSON number exactly. math/big refuses exponents too
// large to expand (|exp| > 1e6), which keeps a hostile value cheap.
func parseRat(s string) (*big.Rat, bool) {
	if !codec.IsNumber(s) {
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
