package interp

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"
)

// macroFunc is a macro of the CDK's macros.py (or a Jinja global).
type macroFunc func(v *Vars, a args) (any, error)

var macros map[string]macroFunc

// clockMacros read the time (or chance): a template that calls one is
// not constant.
var clockMacros = map[string]bool{"now_utc": true, "today_utc": true, "today_with_timezone": true, "day_delta": true, "generate_uuid": true}

func init() {
	// in init: the table's functions refer to the table's neighbours
	macros = map[string]macroFunc{
		"now_utc": func(v *Vars, a args) (any, error) {
			return datetime{v.now()}, a.check(0)
		},
		"today_utc": func(v *Vars, a args) (any, error) {
			y, m, d := v.now().Date()
			return date{time.Date(y, m, d, 0, 0, 0, 0, time.UTC)}, a.check(0)
		},
		"today_with_timezone": func(v *Vars, a args) (any, error) {
			name, _, err := strArg(a, 0, "timezone")
			if err != nil {
				return nil, err
			}
			loc, err := time.LoadLocation(name)
			if err != nil {
				return nil, fmt.Errorf("unknown time zone %q", name)
			}
			y, m, d := v.now().In(loc).Date()
			return date{time.Date(y, m, d, 0, 0, 0, 0, time.UTC)}, a.check(1, "timezone")
		},
		"timestamp":       timestampMacro,
		"str_to_datetime": strToDatetime,
		"max":             func(_ *Vars, a args) (any, error) { return extreme(a, 1) },
		"min":             func(_ *Vars, a args) (any, error) { return extreme(a, -1) },
		"day_delta": func(v *Vars, a args) (any, error) {
			if err := a.check(2, "num_days", "format"); err != nil {
				return nil, err
			}
			n, _, _, ok := number(a.get(0, "num_days", nil))
			if !ok {
				return nil, errors.New("num_days must be an int")
			}
			format, ok := a.get(1, "format", "%Y-%m-%dT%H:%M:%S.%f%z").(string)
			if !ok {
				return nil, errors.New("format must be a string")
			}
			return strftime(v.now().AddDate(0, 0, int(n)), format, true), nil
		},
		"duration": func(_ *Vars, a args) (any, error) {
			s, _, err := strArg(a, 0, "datestring")
			if err != nil {
				return nil, err
			}
			return parseDuration(s)
		},
		"format_datetime": formatDatetime,
		"sanitize_url": func(_ *Vars, a args) (any, error) {
			s, _, err := strArg(a, 0, "value")
			return url.QueryEscape(s), err
		},
		"camel_case_to_snake_case": func(_ *Vars, a args) (any, error) {
			s, _, err := strArg(a, 0, "value")
			var b strings.Builder
			for i, r := range s {
				if i > 0 && r >= 'A' && r <= 'Z' {
					b.WriteByte('_')
				}
				b.WriteRune(unicode.ToLower(r))
			}
			return b.String(), err
		},
		"generate_uuid": func(_ *Vars, a args) (any, error) {
			return uuid4(), a.check(0)
		},
		// Jinja's own global
		"dict": func(_ *Vars, a args) (any, error) {
			if len(a.pos) > 0 {
				return nil, errors.New("dict() takes keyword arguments only here")
			}
			out := make(map[string]any, len(a.kw))
			for k, x := range a.kw {
				out[k] = x
			}
			return out, nil
		},
	}
}

// prepareMacro does at Compile what a call would do with its constant
// arguments: format_datetime's input_format becomes its strptime.
func prepareMacro(m *macroCall) error {
	if m.name != "format_datetime" {
		return nil
	}
	var in node
	if len(m.args) > 2 {
		in = m.args[2]
	}
	for _, k := range m.kw {
		if k.name == "input_format" {
			in = k.x
		}
	}
	lit, ok := in.(*literal)
	if !ok {
		return nil
	}
	s, ok := lit.v.(string)
	if !ok {
		return nil
	}
	switch s {
	case "%s", "%ms", "%s_as_float", "%epoch_microseconds":
		return nil // epochs: for a number; a string with them fails at run
	}
	re, fields, err := strptimeRegexp(s)
	if err != nil {
		return err
	}
	m.prep = &DatetimeFormat{format: s, re: re, fields: fields}
	return nil
}

func uuid4() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// timestamp(dt): a number truncated to an int; a string read as
// str_to_datetime reads it, as a float of seconds.
func timestampMacro(v *Vars, a args) (any, error) {
	if err := a.check(1, "dt"); err != nil {
		return nil, err
	}
	x := a.get(0, "dt", nil)
	if i, f, isInt, ok := number(x); ok {
		if isInt {
			return i, nil
		}
		return int64(f), nil
	}
	d, err := strToDatetime(v, a)
	if err != nil {
		return nil, err
	}
	t := d.(datetime).t
	return float64(t.UnixMicro()) / 1e6, nil
}

// str_to_datetime(s): dateutil's isoparse, UTC when s has no zone, in
// UTC.
func strToDatetime(_ *Vars, a args) (any, error) {
	x := a.get(0, "s", nil)
	s, ok := x.(string)
	if !ok {
		return nil, fmt.Errorf("expected a string, got %s", typeName(x))
	}
	t, _, err := isoparse(s)
	if err != nil {
		return nil, err
	}
	return datetime{t.UTC()}, nil
}

// format_datetime(dt, format, input_format=None).
func formatDatetime(_ *Vars, a args) (any, error) {
	if err := a.check(3, "dt", "format", "input_format"); err != nil {
		return nil, err
	}
	format, ok := a.get(1, "format", nil).(string)
	if !ok {
		return nil, errors.New("format must be a string")
	}
	input, _ := a.get(2, "input_format", nil).(string)
	var t time.Time
	switch dt := a.get(0, "dt", nil).(type) {
	case datetime:
		return strftime(dt.t, format, true), nil
	case int64:
		if input == "" {
			input = "%s"
		}
		var err error
		if t, err = CompileDatetimeFormat(input).Parse(fmt.Sprint(dt)); err != nil {
			return nil, err
		}
	case string:
		if input == "" {
			d, err := strToDatetime(nil, args{pos: []any{dt}})
			if err != nil {
				return nil, err
			}
			t = d.(datetime).t
			break
		}
		in, ok := a.prep.(*DatetimeFormat)
		if !ok || in.format != input {
			re, fields, err := strptimeRegexp(input)
			if err != nil {
				return nil, err
			}
			in = &DatetimeFormat{format: input, re: re, fields: fields}
		}
		var err error
		if t, _, err = in.strptime(dt); err != nil {
			return nil, err
		}
	case undefined:
		return nil, dt.err()
	default:
		return nil, fmt.Errorf("cannot format %s as a datetime", typeName(dt))
	}
	// Format needs no strptime: a format that could not parse (strftime
	// knows more directives) formats all the same.
	return (&DatetimeFormat{format: format}).Format(t), nil
}

// extreme is max (sign 1) or min (-1) of the arguments, or of the one
// iterable argument.
func extreme(a args, sign int) (any, error) {
	items := a.pos
	if len(items) == 1 {
		var err error
		if items, err = iterate(items[0]); err != nil {
			return nil, err
		}
	}
	if len(items) == 0 {
		if d, ok := a.kw["default"]; ok {
			return d, nil
		}
		return nil, errors.New("arg is an empty sequence")
	}
	best := norm(items[0])
	for _, it := range items[1:] {
		it = norm(it)
		c, err := order(it, best)
		if err != nil {
			return nil, err
		}
		if c*sign > 0 {
			best = it
		}
	}
	return best, nil
}
