package streams

import (
	"fmt"
	"strings"

	"github.com/tap-dev/tap/codec"
)

// Where a paginator's parameters go (pagination.inject).
const (
	InjectQuery  = "query"
	InjectBody   = "body"
	InjectHeader = "header"
)

// PageParam is one parameter a paginator sets.
type PageParam struct {
	Name string
	// Number: sent in a JSON body as a number (offsets, page numbers,
	// sizes; a numeric key), not as a string.
	Number func(text string) bool
}

func isCount(text string) bool   { return codec.IsInteger(text) }
func isNumeric(text string) bool { return codec.IsNumber(text) }
func never(string) bool          { return false }

// PageParams lists the parameters the paginator of opts sets.
func PageParams(opts PageOptions) []PageParam {
	var ps []PageParam
	add := func(name string, number func(string) bool) {
		if name != "" {
			ps = append(ps, PageParam{name, number})
		}
	}
	switch o := opts.(type) {
	case *OffsetOptions:
		add(o.OffsetParam, isCount)
		add(o.PageSizeParam, isCount)
	case *PageNumberOptions:
		add(o.PageParam, isCount)
		add(o.PageSizeParam, isCount)
	case *KeysetOptions:
		add(o.KeyParam, isNumeric)
		add(o.PageSizeParam, isCount)
	case *CursorOptions:
		add(o.CursorParam, never)
		add(o.PageSizeParam, isCount)
	}
	return ps
}

// checkInject checks pagination.inject against the stream.
func (d *Definition) checkInject() error {
	p := d.Pagination
	bad := func(format string, args ...any) error {
		return &FieldError{Stream: d.Name, Field: "pagination.inject", Msg: fmt.Sprintf(format, args...)}
	}
	switch p.Inject {
	case "", InjectQuery:
		return nil
	case InjectBody, InjectHeader:
	default:
		return bad("must be query, body or header, got %q", p.Inject)
	}
	if len(PageParams(p.Options)) == 0 {
		return bad("pagination type %q sets no parameters to inject", p.Type)
	}
	if p.Inject == InjectBody {
		if d.GraphQL != nil {
			return bad("a GraphQL stream pages with variables; use pagination type graphql")
		}
		if !strings.EqualFold(d.Method, "POST") {
			return bad("\"body\" needs method POST, got %q", d.Method)
		}
		if b := strings.TrimSpace(string(d.Body)); b != "" && b != "null" {
			if v, err := codec.Decode(d.Body); err != nil || jsonType(v) != "object" {
				return &FieldError{Stream: d.Name, Field: "body", Msg: "must be a JSON object when pagination.inject is \"body\""}
			}
		}
	}
	return nil
}
