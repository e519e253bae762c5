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

// OptionSet is p's options: those decoded, or the zero option set of its
// type when none were given (nil for a type without options).
func (p *Pagination) OptionSet() PageOptions {
	if p.Options != nil {
		return p.Options
	}
	if pt, ok := lookupPageType(p.Type); ok && pt.options != nil {
		return pt.options()
	}
	return nil
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
	if pt.options != nil {
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

// OffsetOptions are the options of pagination type offset.
type OffsetOptions struct {
	OffsetParam   string `json:"offset_param"`
	PageSizeParam string `json:"page_size_param"`
	PageSize      int    `json:"page_size"`
	// TotalPath, when the body has it, holds the number of rows in all.
	TotalPath string `json:"total_path"`
}

func (*OffsetOptions) pageType() string { return PageOffset }

func (o *OffsetOptions) check() (string, string) {
	switch {
	case o.OffsetParam == "":
		return "offset_param", requiredFor(PageOffset)
	case o.PageSizeParam == "":
		return "page_size_param", requiredFor(PageOffset)
	case o.PageSize <= 0:
		return "page_size", fmt.Sprintf("must be a positive integer for pagination type %q", PageOffset)
	}
	return "", ""
}

// PageNumberOptions are the options of pagination type page_number.
type PageNumberOptions struct {
	PageParam string `json:"page_param"`
	// StartPage is the number of the first page: 1 when unset, 0 for
	// zero-based APIs.
	StartPage      *int   `json:"start_page"`
	PageSizeParam  string `json:"page_size_param"`
	PageSize       int    `json:"page_size"`
	TotalPagesPath string `json:"total_pages_path"`
}

func (*PageNumberOptions) pageType() string { return PageNumber }

func (o *PageNumberOptions) check() (string, string) {
	switch {
	case o.PageParam == "":
		return "page_param", requiredFor(PageNumber)
	case o.PageSize < 0:
		return "page_size", fmt.Sprintf("must not be negative, got %d", o.PageSize)
	}
	return "", ""
}

// requiredFor is the message of a missing option of pagination type typ.
func requiredFor(typ string) string {
	return fmt.Sprintf("is required for pagination type %q", typ)
}

// CursorOptions are the options of pagination type cursor.
type CursorOptions struct {
	CursorParam    string `json:"cursor_param"`
	NextCursorPath string `json:"next_cursor_path"`
	HasMorePath    string `json:"has_more_path"`
	PageSizeParam  string `json:"page_size_param"`
	PageSize       int    `json:"page_size"`
	// NextCursorHeader reads the cursor from a response header instead
	// of the body.
	NextCursorHeader string `json:"next_cursor_header"`
	// CursorFromLastRecord takes the cursor from this field of the page's
	// last record (Stripe's starting_after=<last id>): the API lists
	// newest first, so the largest key, as keyset sends, would skip rows.
	CursorFromLastRecord string `json:"cursor_from_last_record"`
}

func (*CursorOptions) pageType() string { return PageCursor }

func (o *CursorOptions) check() (string, string) {
	switch {
	case o.CursorParam == "":
		return "cursor_param", requiredFor(PageCursor)
	case o.NextCursorPath == "" && o.NextCursorHeader == "" && o.CursorFromLastRecord == "":
		return "next_cursor_path", requiredFor(PageCursor) + " (or next_cursor_header, to read the cursor from a response header, or cursor_from_last_record, to take it from the page's last record)"
	case o.NextCursorPath != "" && o.NextCursorHeader != "":
		return "next_cursor_header", "takes the place of next_cursor_path; set one of them"
	case o.CursorFromLastRecord != "" && (o.NextCursorPath != "" || o.NextCursorHeader != ""):
		return "cursor_from_last_record", "takes the place of next_cursor_path and next_cursor_header; set one of them"
	case o.PageSize < 0:
		return "page_size", fmt.Sprintf("must not be negative, got %d", o.PageSize)
	}
	return "", ""
}

// NextURLOptions are the options of pagination type next_url.
type NextURLOptions struct {
	NextURLPath string `json:"next_url_path"`
}

func (*NextURLOptions) pageType() string { return PageNextURL }

func (o *NextURLOptions) check() (string, string) {
	if o.NextURLPath == "" {
		return "next_url_path", requiredFor(PageNextURL)
	}
	return "", ""
}

// KeysetOptions are the options of pagination type keyset.
type KeysetOptions struct {
	KeyParam      string `json:"key_param"`
	KeyField      string `json:"key_field"`
	PageSizeParam string `json:"page_size_param"`
	PageSize      int    `json:"page_size"`
}

func (*KeysetOptions) pageType() string { return PageKeyset }

func (o *KeysetOptions) check() (string, string) {
	switch {
	case o.KeyParam == "":
		return "key_param", requiredFor(PageKeyset)
	case o.KeyField == "":
		return "key_field", requiredFor(PageKeyset)
	case o.PageSize < 0:
		return "page_size", fmt.Sprintf("must not be negative, got %d", o.PageSize)
	}
	return "", ""
}

// GraphQLOptions are the options of pagination type graphql; the query
// and the connection are the stream's "graphql" block.
type GraphQLOptions struct {
	// PageSize is the variable "first" (50 when unset).
	PageSize int `json:"page_size"`
}

func (*GraphQLOptions) pageType() string { return PageGraphQL }

func (o *GraphQLOptions) check() (string, string) {
	if o.PageSize < 0 {
		return "page_size", fmt.Sprintf("must not be negative, got %d", o.PageSize)
	}
	return "", ""
}

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
