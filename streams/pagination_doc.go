package streams

import (
	"fmt"
	"reflect"
	"strings"
)

// PageDoc is a pagination type's line of the reference: how its next page
// is found and when its walk ends.
type PageDoc struct {
	Next, End string
}

// PageTypeInfo describes one pagination type from its unit.
type PageTypeInfo struct {
	Name    string
	Options []Option // its own options, in their order; the common ones are CommonPageOptions
	PageDoc
}

// PageTypes describes every pagination type, in the order of pageTypes.
func PageTypes() []PageTypeInfo {
	out := make([]PageTypeInfo, len(pageTypes))
	for i, pt := range pageTypes {
		opts := pt.options()
		out[i] = PageTypeInfo{Name: pt.name, Options: OptionsOf(reflect.TypeOf(opts).Elem()), PageDoc: opts.doc()}
	}
	return out
}

// CommonPageOptions describes the options every pagination type takes.
func CommonPageOptions() []Option {
	return OptionsOf(reflect.TypeFor[PageCommon]())
}

// Note is what the docs say of o after its name: "required, >= 1,
// default 50, variable first"; "" when its tags say nothing.
func (o Option) Note() string {
	var parts []string
	if o.Required {
		parts = append(parts, "required")
	}
	switch {
	case o.Min != nil && o.Max != nil:
		parts = append(parts, number(*o.Min)+" to "+number(*o.Max))
	case o.Min != nil && *o.Min != 0:
		parts = append(parts, ">= "+number(*o.Min))
	case o.Max != nil:
		parts = append(parts, "<= "+number(*o.Max))
	}
	if o.Enum != nil {
		parts = append(parts, strings.Join(o.Enum, ", "))
	}
	if o.Default != "" {
		parts = append(parts, "default "+o.Default)
	}
	if o.Doc != "" {
		parts = append(parts, o.Doc)
	}
	return strings.Join(parts, ", ")
}

// PaginationTable is the README's table of pagination types, generated
// from the types' units (a test keeps the README equal to it).
func PaginationTable() string {
	var b strings.Builder
	b.WriteString("| `type` | options | next page | end |\n|---|---|---|---|\n")
	for _, pt := range PageTypes() {
		opts := "—"
		if len(pt.Options) > 0 {
			names := make([]string, len(pt.Options))
			for i, o := range pt.Options {
				names[i] = "`" + o.Name + "`"
				if note := o.Note(); note != "" {
					names[i] += " (" + note + ")"
				}
			}
			opts = strings.Join(names, ", ")
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", pt.Name, opts, pt.Next, pt.End)
	}
	return b.String()
}
