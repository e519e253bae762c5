package streams

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/tap-dev/tap/codec"
)

// A pagination type is one unit: its file (page_<type>.go) holds its name,
// its options and their checks, the parameters its paginator sets, the
// options that read a JSON body, what it reads of a record (whether the
// stream's records may be spliced), whether its pages may repeat rows, its
// paginator and its line of the docs. pageTypes registers it: adding a
// type is its file and its row.

// pageTypes lists every pagination type, in the order messages and the
// docs name them, each with a constructor of its zero option set.
var pageTypes = []pageType{
	{PageNone, func() PageOptions { return new(noneOptions) }},
	{PageOffset, func() PageOptions { return new(OffsetOptions) }},
	{PageNumber, func() PageOptions { return new(PageNumberOptions) }},
	{PageKeyset, func() PageOptions { return new(KeysetOptions) }},
	{PageCursor, func() PageOptions { return new(CursorOptions) }},
	{PageNextURL, func() PageOptions { return new(NextURLOptions) }},
	{PageLinkHeader, func() PageOptions { return new(linkHeaderOptions) }},
	{PageGraphQL, func() PageOptions { return new(GraphQLOptions) }},
}

// pageType is one row of pageTypes.
type pageType struct {
	name    string
	options func() PageOptions
}

// PageOptions is the option set of one pagination type. A type may also
// answer the optional questions below; one that does not sets no
// parameters, reads no body, splices nothing, never repeats rows and
// bounds by the query.
type PageOptions interface {
	// pageType is the pagination type the options belong to.
	pageType() string
	// paginator builds the type's Paginator for stream d, which has been
	// checked.
	paginator(d *Definition) Paginator
	// doc is the type's line of the pagination reference.
	doc() PageDoc
}

// The optional questions a PageOptions may answer.
type (
	// paramSetter lists the parameters the paginator sets
	// (pagination.inject moves them).
	paramSetter interface{ params() []PageParam }
	// bodyReader lists the options set that read a JSON body: refused
	// for a body of another format.
	bodyReader interface{ bodyFields() []string }
	// pageReader says what of a page the paginator reads, so the
	// records may be spliced; a type that is none reads the body's tree.
	pageReader interface{ readsPage(d *Definition) PageReads }
	// rowRepeater: the pages may repeat rows when the source shifts
	// under the walk, so the run drops them by primary key; pageSize is
	// the rows of a page.
	rowRepeater interface{ repeatsRows() (pageSize int) }
	// variableBounds: the incremental bounds go into the body's GraphQL
	// variables instead of the query.
	variableBounds interface{ boundsInVariables() bool }
)

// pageParams lists the named parameters of pairs (name, number), skipping
// those without a name.
func pageParams(pairs ...any) []PageParam {
	var ps []PageParam
	for i := 0; i+1 < len(pairs); i += 2 {
		if name := pairs[i].(string); name != "" {
			ps = append(ps, PageParam{name, pairs[i+1].(func(string) bool)})
		}
	}
	return ps
}

// setFields lists the option names of pairs (name, value) whose value is
// set.
func setFields(pairs ...string) []string {
	var names []string
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			names = append(names, pairs[i])
		}
	}
	return names
}

// OptionSet is p's options: those decoded, or the zero option set of its
// type when none were given; nil for an unknown type.
func (p *Pagination) OptionSet() PageOptions {
	if p.Options != nil {
		return p.Options
	}
	if pt, ok := lookupPageType(p.Type); ok {
		return pt.options()
	}
	return nil
}

// Paginator is the Paginator of d's pagination type, its parameters
// moved where pagination.inject says. d has been checked (Check).
func (d *Definition) Paginator() Paginator {
	opts := d.Pagination.OptionSet()
	if opts == nil {
		return nonePaginator{}
	}
	p := opts.paginator(d)
	if in := d.Pagination.Inject; in != "" && in != InjectQuery {
		return injectPaginator{inner: p, where: in, params: PageParams(opts)}
	}
	return p
}

// PageReads is what a paginator reads of a page besides its records'
// count and its headers: the top-level record fields (of any record),
// and the paths of the body's values outside the records (Page.Values).
// A stream whose paginator says so may splice its records: the page scan
// captures both as it passes.
type PageReads struct {
	Fields   []string
	Envelope []string
}

// PageReads is what d's paginator reads of a page; ok is false when it
// reads the body's tree, so the records cannot be spliced.
func (d *Definition) PageReads() (_ PageReads, ok bool) {
	if t, ok := d.Pagination.OptionSet().(interface{ readsTree() bool }); ok && t.readsTree() {
		return PageReads{}, false
	}
	if r, ok := d.Pagination.OptionSet().(pageReader); ok {
		return r.readsPage(d), true
	}
	return PageReads{}, false
}

// RepeatsRows reports whether p's pages may repeat rows when the source
// shifts under the walk, so that the run drops them by primary key, and
// how many rows a page holds.
func (p *Pagination) RepeatsRows() (pageSize int, ok bool) {
	r, ok := p.OptionSet().(rowRepeater)
	if !ok {
		return 0, false
	}
	return r.repeatsRows(), true
}

// boundsInVariables reports whether the incremental bounds go into the
// body's GraphQL variables.
func (p *Pagination) boundsInVariables() bool {
	v, ok := p.OptionSet().(variableBounds)
	return ok && v.boundsInVariables()
}

// bodyFields lists p's options set that read a JSON body.
func (p *Pagination) bodyFields() []string {
	if r, ok := p.OptionSet().(bodyReader); ok {
		return r.bodyFields()
	}
	return nil
}

// defaultPageType is the type of a pagination not given.
func defaultPageType() string {
	pt, _ := lookupPageType("")
	return pt.name
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

// ownNames lists the JSON names of pt's own options.
func (pt pageType) ownNames() []string {
	return jsonFieldNames(reflect.TypeOf(pt.options()).Elem())
}

// optionNames lists the JSON names of the options pt accepts: its own, then
// the common ones.
func (pt pageType) optionNames() []string {
	return append(pt.ownNames(), jsonFieldNames(reflect.TypeFor[PageCommon]())...)
}

func jsonFieldNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		if name := jsonFieldName(t.Field(i)); name != "" {
			names = append(names, name)
		}
	}
	return names
}

// jsonFieldName is f's name in JSON, "" for a field JSON does not see.
func jsonFieldName(f reflect.StructField) string {
	if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "-" {
		return name
	}
	return ""
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
	if len(pt.ownNames()) > 0 {
		out.Options = pt.options()
		if err := decodeOptions(b, out.Options); err != nil {
			return err
		}
	}
	*p = out
	return nil
}

// MarshalJSON writes p as UnmarshalJSON reads it: {"type": T, ...the
// options of T}, leaving out the options at their zero value (a start_page
// of 0, which is set, is written).
func (p Pagination) MarshalJSON() ([]byte, error) {
	t, err := json.Marshal(p.Type)
	var b bytes.Buffer
	b.WriteString(`{"type":` + string(t))
	for _, v := range []any{p.PageCommon, p.Options} {
		if v == nil {
			continue
		}
		rv := reflect.Indirect(reflect.ValueOf(v))
		for i := 0; i < rv.NumField() && err == nil; i++ {
			if f, name := rv.Field(i), jsonFieldName(rv.Type().Field(i)); name != "" && !f.IsZero() {
				var val []byte
				val, err = json.Marshal(f.Interface())
				fmt.Fprintf(&b, ",%q:%s", name, val) // the names are plain ASCII
			}
		}
	}
	b.WriteByte('}')
	return b.Bytes(), err
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

// jsonType names the JSON type of a decoded value, for error messages.
func jsonType(v any) string { return codec.TypeName(v) }

// GraphQLBody decodes a GraphQL POST body into its top-level object
// (empty for an empty body).
func GraphQLBody(b []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return map[string]any{}, nil
	}
	v, err := codec.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("request body: %w", err)
	}
	switch m := v.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		if vars, ok := m["variables"]; ok && vars != nil {
			if _, ok := vars.(map[string]any); !ok {
				return nil, fmt.Errorf("request body: \"variables\" is a JSON %s, expected an object", jsonType(vars))
			}
		}
		return m, nil
	}
	return nil, fmt.Errorf("request body is a JSON %s, expected an object", jsonType(v))
}
