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

// PageOption describes one option of a pagination type, for the docs and
// for generators of a schema of the stream definition.
type PageOption struct {
	Name string // its JSON name
	Type string // its JSON type: string, integer or boolean
	Note string // what the docs add after its name ("required, > 0"), or ""
}

// PageTypeInfo describes one pagination type from its unit.
type PageTypeInfo struct {
	Name    string
	Options []PageOption // its own options, in their order; the common ones are CommonPageOptions
	PageDoc
}

// PageTypes describes every pagination type, in the order of pageTypes.
func PageTypes() []PageTypeInfo {
	out := make([]PageTypeInfo, len(pageTypes))
	for i, pt := range pageTypes {
		opts := pt.options()
		out[i] = PageTypeInfo{Name: pt.name, Options: describeOptions(reflect.TypeOf(opts).Elem()), PageDoc: opts.doc()}
	}
	return out
}

// CommonPageOptions describes the options every pagination type takes.
func CommonPageOptions() []PageOption {
	return describeOptions(reflect.TypeFor[PageCommon]())
}

func describeOptions(t reflect.Type) []PageOption {
	var out []PageOption
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out = append(out, PageOption{Name: name, Type: jsonKind(f.Type), Note: f.Tag.Get("doc")})
	}
	return out
}

func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "integer"
	case reflect.Bool:
		return "boolean"
	}
	return "string"
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
				if o.Note != "" {
					names[i] += " (" + o.Note + ")"
				}
			}
			opts = strings.Join(names, ", ")
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", pt.Name, opts, pt.Next, pt.End)
	}
	return b.String()
}
