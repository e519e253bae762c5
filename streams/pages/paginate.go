package pages

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"net/url"
	"strconv"
	"strings"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams"
)

// New returns the Paginator of d's pagination type. It checks d
// first, so a definition with a missing pagination option is an error here
// rather than a strange request later.
//
// Every paginator is a small immutable value: all it needs to compute the
// next request is the request just made and its Response, so one Paginator
// may serve any number of walks (parent records, windows) at once.
//
// First is idempotent for every type: applying it to a request it already
// prepared gives the same request back.
func New(d *streams.Definition) (streams.Paginator, error) {
	if d == nil {
		return nil, fmt.Errorf("pages: New needs a definition")
	}
	if err := d.Check(); err != nil {
		return nil, err
	}
	opts := d.Pagination.OptionSet()
	switch {
	case opts != nil && d.Pagination.Inject != "" && d.Pagination.Inject != streams.InjectQuery:
		return injectPaginator{inner: paginator(opts, d), where: d.Pagination.Inject, params: streams.PageParams(opts)}, nil
	case opts != nil:
		return paginator(opts, d), nil
	case d.Pagination.Type == streams.PageLinkHeader:
		return linkHeaderPaginator{name: d.Name}, nil
	}
	return nonePaginator{}, nil
}

// nonePaginator makes exactly one request.
type nonePaginator struct{}

func (nonePaginator) First(req streams.Request) streams.Request { return req }

func (nonePaginator) Next(streams.Request, *streams.Response) (streams.Request, bool, error) {
	return streams.Request{}, false, nil
}

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
func followURL(name string, last streams.Request, resp *streams.Response, raw string) (streams.Request, error) {
	ref, err := url.Parse(raw)
	if err != nil {
		// Do not echo raw: it may carry a token in its query.
		return streams.Request{}, streamErr(name, "next page URL is not a valid URL")
	}
	base := resp.URL
	if base == nil {
		if !ref.IsAbs() {
			return streams.Request{}, streamErr(name, "next page URL is relative but the URL of the page it came from is unknown")
		}
		base = ref
	}
	next := base.ResolveReference(ref)
	if !sameOrigin(base, next) {
		if strings.EqualFold(originHost(base), originHost(next)) {
			return streams.Request{}, streamErr(name, "next page URL switches from %s to %s on %s; refusing to follow it so the credentials are not sent there",
				base.Scheme, next.Scheme, next.Host)
		}
		return streams.Request{}, streamErr(name, "next page URL points to another host (%s); refusing to follow it so the credentials are not sent there", next.Host)
	}
	next.Fragment = ""
	next.RawFragment = ""
	return streams.Request{Method: last.Method, URL: next.String(), Query: nil, Body: last.Body}, nil
}

// paginator is the Paginator of one pagination type and its options.
func paginator(opts streams.PageOptions, d *streams.Definition) streams.Paginator {
	switch o := opts.(type) {
	case *streams.CursorOptions:
		return cursorPaginator{name: d.Name, p: *o}
	case *streams.NextURLOptions:
		return nextURLPaginator{name: d.Name, p: *o}
	case *streams.GraphQLOptions:
		return graphQLPaginator{name: d.Name, p: *o, gql: d.GraphQL}
	case *streams.KeysetOptions:
		return keysetPaginator{name: d.Name, p: *o}
	case *streams.OffsetOptions:
		return offsetPaginator{name: d.Name, p: *o}
	case *streams.PageNumberOptions:
		return pageNumberPaginator{name: d.Name, p: *o}
	}
	return nonePaginator{}
}
