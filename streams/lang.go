package streams

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// The stream language is stated once, on the fields of the definition's
// Go types (Definition, the blocks it holds, each pagination type's
// options): a field's JSON name and type are the option's, and its tags
// say the rest.
//
//	lang:"required"        set: a string with a non-space, a list or map with an item, a block given
//	lang:"loader"          checked by the config's loader, not Check (the schema, resolved from a file)
//	lang:"min=N,max=N"     bounds of a number (of each item of a list of numbers)
//	lang:"enum=a|b"        the values a string takes; "fold": in any case
//	lang:"default=V"       its value when unset (what the docs and the spec say)
//	eg:"V"                 an example, named when the option is missing
//	title:"T" doc:"D"      its title and description in the spec and the docs
//
// Check enforces each option's tags (checkOptions); the rules that tie
// options together are the rows of rules (rules.go), each with its check
// and its JSON Schema. The Airbyte spec, --about, the Meltano file and
// docs/reference/streams.md are made from the same tags (Language), so
// the spec refuses what a run refuses.

// Option is one option of the stream language, as its tags state it.
type Option struct {
	Name     string // its JSON name
	Type     string // its JSON type: string, integer, number, boolean, array, object; "" any
	Title    string
	Doc      string
	Required bool
	Min, Max *float64
	Enum     []string
	Fold     bool // enum values match in any case
	Loader   bool // the config's loader checks it (settings.LoadSchema), not Check
	Default  string
	Example  string
	field    []int // where the option is in its Go type
}

// Index is where o is in the Go type it is an option of
// (reflect.Type.FieldByIndex).
func (o Option) Index() []int { return o.field }

// Block is one block of the language: the options of a Go type, in their
// order.
type Block struct {
	Name    string // "" for the definition; "incremental", "async.poll", …
	Options []Option
}

// Language is the whole stream language: the definition's options, then
// each block it holds, depth first, in field order. A pagination block is
// stated by PageTypes and CommonPageOptions.
func Language() []Block {
	var out []Block
	var walk func(name string, t reflect.Type)
	walk = func(name string, t reflect.Type) {
		opts := OptionsOf(t)
		out = append(out, Block{Name: name, Options: opts})
		for _, o := range opts {
			ft := t.FieldByIndex(o.field).Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && ft != paginationType {
				walk(strings.TrimPrefix(name+"."+o.Name, "."), ft)
			}
		}
	}
	walk("", reflect.TypeFor[Definition]())
	return out
}

// OptionsOf states the options of struct type t, in field order; the
// fields of an embedded struct are its own.
func OptionsOf(t reflect.Type) []Option {
	var out []Option
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			for _, o := range OptionsOf(f.Type) {
				o.field = append([]int{i}, o.field...)
				out = append(out, o)
			}
			continue
		}
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		o, err := parseOption(f)
		if err != nil {
			panic(err) // a tag of this package: TestLanguageTags reads every one
		}
		o.field = []int{i}
		out = append(out, o)
	}
	return out
}

// parseOption reads the tags of field f.
func parseOption(f reflect.StructField) (Option, error) {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	o := Option{Name: name, Type: jsonKind(f.Type), Title: f.Tag.Get("title"), Doc: f.Tag.Get("doc"), Example: f.Tag.Get("eg")}
	tag := f.Tag.Get("lang")
	if tag == "" {
		return o, nil
	}
	for _, part := range strings.Split(tag, ",") {
		key, val, _ := strings.Cut(part, "=")
		switch key {
		case "required":
			o.Required = true
		case "fold":
			o.Fold = true
		case "loader":
			o.Loader = true
		case "min", "max":
			n, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return o, fmt.Errorf("streams: field %s: lang %s=%q is not a number", f.Name, key, val)
			}
			if key == "min" {
				o.Min = &n
			} else {
				o.Max = &n
			}
		case "enum":
			o.Enum = strings.Split(val, "|")
		case "default":
			o.Default = val
		default:
			return o, fmt.Errorf("streams: field %s: unknown lang tag %q", f.Name, key)
		}
	}
	return o, nil
}

var (
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	jsonNumberType = reflect.TypeFor[json.Number]()
)

// jsonKind is the JSON type of a Go value of type t; "" for any JSON
// value.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == rawMessageType:
		return ""
	case t == jsonNumberType:
		return "number"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return ""
}

// checkOptions checks the options of the struct v holds (a pointer to
// it, or it) against their tags, then those of the blocks it holds, in
// field order: the first one that is missing, out of bounds or not one of
// its values, as a FieldError of stream at prefix (a dotted path ending
// in "."). of says whose the options are, after "is required" ("for
// pagination type \"offset\""), or "".
func checkOptions(stream, prefix, of string, v reflect.Value) error {
	if err := checkOwn(stream, prefix, of, v); err != nil {
		return err
	}
	return checkBlocks(stream, prefix, v)
}

// checkOwn checks the options of the struct v holds, not its blocks'.
func checkOwn(stream, prefix, of string, v reflect.Value) error {
	v = reflect.Indirect(v)
	if !v.IsValid() {
		return nil // a block not given
	}
	if v.Type() == paginationType {
		return checkPagination(stream, prefix, v.Addr().Interface().(*Pagination))
	}
	for _, o := range OptionsOf(v.Type()) {
		if o.Loader {
			continue
		}
		if err := o.check(v.FieldByIndex(o.field)); err != nil {
			return &FieldError{Stream: stream, Field: prefix + o.Name, Msg: o.missing(err, of)}
		}
	}
	return nil
}

// checkBlocks checks the blocks the struct v holds, in field order.
func checkBlocks(stream, prefix string, v reflect.Value) error {
	v = reflect.Indirect(v)
	if !v.IsValid() || v.Type() == paginationType {
		return nil
	}
	for _, o := range OptionsOf(v.Type()) {
		if f := v.FieldByIndex(o.field); isBlock(f.Type()) {
			if err := checkOptions(stream, prefix+o.Name+".", "", f); err != nil {
				return err
			}
		}
	}
	return nil
}

var paginationType = reflect.TypeFor[Pagination]()

// isBlock reports whether a field of type t is a block of options.
func isBlock(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct
}

// checkPagination checks p's type, its type's options and the common
// ones.
func checkPagination(stream, prefix string, p *Pagination) error {
	pt, ok := lookupPageType(p.Type)
	if !ok {
		return &FieldError{Stream: stream, Field: prefix + "type", Msg: unknownTypeMsg(p.Type)}
	}
	if opts := p.Options; opts != nil && opts.pageType() != pt.name {
		return &FieldError{Stream: stream, Field: strings.TrimSuffix(prefix, "."), Msg: fmt.Sprintf("holds the options of type %q but its type is %q", opts.pageType(), pt.name)}
	}
	if err := checkOptions(stream, prefix, fmt.Sprintf("for pagination type %q", pt.name), reflect.ValueOf(p.OptionSet())); err != nil {
		return err
	}
	return checkOptions(stream, prefix, "", reflect.ValueOf(&p.PageCommon))
}

// errMissing says an option is required and not set.
var errMissing = fmt.Errorf("missing")

// missing is the message of err, the problem of o's value.
func (o Option) missing(err error, of string) string {
	if err != errMissing {
		return err.Error()
	}
	msg := "is required"
	if of != "" {
		msg += " " + of
	}
	if why := strings.TrimSuffix(o.Doc, "."); why != "" && o.Example != "" {
		msg += ": " + strings.ToLower(why[:1]) + why[1:]
	}
	if o.Example != "" {
		msg += ", e.g. " + o.Example
	}
	return msg
}

// check checks one value of o: errMissing when required and unset.
func (o Option) check(v reflect.Value) error {
	if o.Required && unset(v) {
		return errMissing
	}
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() == reflect.Slice && v.Type() != rawMessageType {
		for i := range v.Len() {
			if err := o.bounds(v.Index(i)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := o.bounds(v); err != nil {
		return err
	}
	if s, ok := v.Interface().(string); ok && s != "" && o.Enum != nil && !o.allows(s) {
		return fmt.Errorf("must be %s, got %q", oneOf(o.Enum), s)
	}
	return nil
}

// allows reports whether s is one of o's values.
func (o Option) allows(s string) bool {
	for _, e := range o.Enum {
		if s == e || o.Fold && strings.EqualFold(s, e) {
			return true
		}
	}
	return false
}

// bounds checks a number against o's min and max.
func (o Option) bounds(v reflect.Value) error {
	if o.Min == nil && o.Max == nil {
		return nil
	}
	var n float64
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n = float64(v.Int())
	case reflect.Float32, reflect.Float64:
		n = v.Float()
	case reflect.String: // a json.Number
		s := v.String()
		if s == "" {
			return nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("must be a number, got %q", s)
		}
		n = f
	default:
		return nil
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	if o.Min != nil {
		lo = *o.Min
	}
	if o.Max != nil {
		hi = *o.Max
	}
	if n >= lo && n <= hi {
		return nil
	}
	got := number(n)
	switch {
	case o.Max != nil && o.Min != nil:
		return fmt.Errorf("must be from %s to %s, got %s", number(*o.Min), number(*o.Max), got)
	case o.Max != nil:
		return fmt.Errorf("must be at most %s, got %s", number(*o.Max), got)
	case *o.Min == 0:
		return fmt.Errorf("must not be negative, got %s", got)
	default:
		return fmt.Errorf("must be at least %s, got %s", number(*o.Min), got)
	}
}

// number writes n as a person does: 1000000, 0.5.
func number(n float64) string {
	if n == math.Trunc(n) && math.Abs(n) < 1e15 {
		return strconv.FormatFloat(n, 'f', -1, 64)
	}
	return strconv.FormatFloat(n, 'g', -1, 64)
}

// unset reports whether v is an option's zero: an empty or blank string,
// an empty list or map, a nil pointer, 0.
func unset(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		return strings.TrimSpace(v.String()) == ""
	case reflect.Slice, reflect.Map:
		return v.Len() == 0 || v.Type() == rawMessageType && string(v.Bytes()) == "null"
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	}
	return v.IsZero()
}

// oneOf lists values as a message does: `"a"`, `"a" or "b"`, `"a", "b"
// or "c"`.
func oneOf(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = strconv.Quote(v)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
