package interp

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Values while a template runs are Python's, held as: nil (None), bool,
// int64 (int), float64 (float), string, []any (list and tuple),
// map[string]any (dict), datetime, date, timedelta and undefined. What
// comes in from JSON is read through norm.

// undefined is Jinja's Undefined: a missing key or attribute. It prints
// as nothing and is false; most operations on it are an error
// (ErrUndefined).
type undefined struct{ name string }

func (u undefined) err() error {
	if u.name == "" {
		return ErrUndefined
	}
	return fmt.Errorf("%w: %s", ErrUndefined, u.name)
}

// datetime is Python's timezone-aware datetime.datetime (the CDK's
// macros make only aware ones).
type datetime struct{ t time.Time }

// date is Python's datetime.date.
type date struct{ t time.Time }

// timedelta is Python's datetime.timedelta, or isodate's Duration when
// months is not 0 (duration('P1M')).
type timedelta struct {
	months int
	d      time.Duration
}

// norm reads a value that came in from decoded JSON or Go code: a
// float64 with no fraction is the int JSON wrote (Python's json module
// reads 5 as an int), a json.Number is its int or float.
func norm(x any) any {
	switch v := x.(type) {
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int64(v)
		}
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return n
		}
		if f, err := v.Float64(); err == nil {
			return f
		}
		return string(v)
	case int:
		return int64(v)
	case int32:
		return int64(v)
	case float32:
		return norm(float64(v))
	case map[string]string:
		m := make(map[string]any, len(v))
		for k, s := range v {
			m[k] = s
		}
		return m
	case []string:
		l := make([]any, len(v))
		for i, s := range v {
			l[i] = s
		}
		return l
	case []map[string]any:
		l := make([]any, len(v))
		for i, m := range v {
			l[i] = m
		}
		return l
	}
	return x
}

func isFinite(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) }

func typeName(x any) string {
	switch x.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	case datetime:
		return "datetime.datetime"
	case date:
		return "datetime.date"
	case timedelta:
		return "datetime.timedelta"
	case undefined:
		return "Undefined"
	case boundMethod:
		return "builtin_function_or_method"
	}
	return fmt.Sprintf("%T", x)
}

func truthy(x any) bool {
	switch v := x.(type) {
	case nil, undefined:
		return false
	case bool:
		return v
	case int64:
		return v != 0
	case float64:
		return v != 0
	case string:
		return v != ""
	case []any:
		return len(v) != 0
	case map[string]any:
		return len(v) != 0
	case timedelta:
		return v.months != 0 || v.d != 0
	}
	return true
}

// number reads a bool, int or float as Python's arithmetic does.
func number(x any) (i int64, f float64, isInt, ok bool) {
	switch v := x.(type) {
	case bool:
		if v {
			return 1, 1, true, true
		}
		return 0, 0, true, true
	case int64:
		return v, float64(v), true, true
	case float64:
		return 0, v, false, true
	}
	return 0, 0, false, false
}

func equal(a, b any) bool {
	if ai, af, aInt, ok := number(a); ok {
		bi, bf, bInt, ok := number(b)
		if !ok {
			return false
		}
		if aInt && bInt {
			return ai == bi
		}
		return af == bf
	}
	switch av := a.(type) {
	case nil:
		return b == nil
	case string:
		bv, ok := b.(string)
		return ok && av == bv
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !equal(norm(av[i]), norm(bv[i])) {
				return false
			}
		}
		return true
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k, x := range av {
			y, ok := bv[k]
			if !ok || !equal(norm(x), norm(y)) {
				return false
			}
		}
		return true
	case datetime:
		bv, ok := b.(datetime)
		return ok && av.t.Equal(bv.t)
	case date:
		bv, ok := b.(date)
		return ok && av.t.Equal(bv.t)
	case timedelta:
		bv, ok := b.(timedelta)
		return ok && av == bv
	case undefined:
		_, ok := b.(undefined)
		return ok
	}
	return false
}

// order compares a and b as Python's < does: -1, 0 or 1, or the
// TypeError Python raises for values that have no order.
func order(a, b any) (int, error) {
	if u, ok := a.(undefined); ok {
		return 0, u.err()
	}
	if u, ok := b.(undefined); ok {
		return 0, u.err()
	}
	if ai, af, aInt, ok := number(a); ok {
		if bi, bf, bInt, ok := number(b); ok {
			if aInt && bInt {
				return cmp3(ai, bi), nil
			}
			return cmp3(af, bf), nil
		}
	}
	switch av := a.(type) {
	case string:
		if bv, ok := b.(string); ok {
			return strings.Compare(av, bv), nil
		}
	case []any:
		if bv, ok := b.([]any); ok {
			for i := 0; i < len(av) && i < len(bv); i++ {
				x, y := norm(av[i]), norm(bv[i])
				if equal(x, y) {
					continue
				}
				return order(x, y)
			}
			return cmp3(len(av), len(bv)), nil
		}
	case datetime:
		if bv, ok := b.(datetime); ok {
			return av.t.Compare(bv.t), nil
		}
	case date:
		if bv, ok := b.(date); ok {
			return av.t.Compare(bv.t), nil
		}
	case timedelta:
		if bv, ok := b.(timedelta); ok && av.months == 0 && bv.months == 0 {
			return cmp3(av.d, bv.d), nil
		}
	}
	return 0, fmt.Errorf("'<' not supported between instances of '%s' and '%s'", typeName(a), typeName(b))
}

func cmp3[T int | int64 | float64 | time.Duration](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Str is Python's str() of a value Eval gave (True, None, 1e+21, a
// dict's repr): what the CDK's components do with a result they want as
// text, as MinMaxDatetime does before it parses a start_datetime.
func Str(x any) string { return pyStr(x) }

// pyStr is Python's str(x), what {{ x }} prints.
func pyStr(x any) string {
	switch v := x.(type) {
	case string:
		return v
	case undefined:
		return ""
	case datetime:
		return v.str(" ")
	case date:
		return v.t.Format("2006-01-02")
	case timedelta:
		return v.str()
	}
	var b strings.Builder
	writeRepr(&b, x, false)
	return b.String()
}

// pyRepr is Python's repr(x).
func pyRepr(x any) string {
	var b strings.Builder
	writeRepr(&b, x, false)
	return b.String()
}

// writeRepr writes repr(x). nested: x is an item of a list or dict,
// which may come from decoded JSON as it is, where a float64 with no
// fraction is the int JSON wrote (norm); a float64 outside one was
// computed (JSON's values are read through norm), so 2.0 is "2.0".
func writeRepr(b *strings.Builder, x any, nested bool) {
	if nested {
		x = norm(x)
	}
	switch v := x.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if v {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case float64:
		b.WriteString(floatRepr(v))
	case string:
		quoteRepr(b, v)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e, true)
		}
		b.WriteByte(']')
	case map[string]any:
		// Go's maps have no order: the keys in sorted order, where
		// Python keeps the order they were written in.
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			quoteRepr(b, k)
			b.WriteString(": ")
			writeRepr(b, v[k], true)
		}
		b.WriteByte('}')
	case datetime:
		t := v.t
		fmt.Fprintf(b, "datetime.datetime(%d, %d, %d, %d, %d", t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute())
		if t.Second() != 0 || t.Nanosecond() >= 1000 {
			fmt.Fprintf(b, ", %d", t.Second())
		}
		if us := t.Nanosecond() / 1000; us != 0 {
			fmt.Fprintf(b, ", %d", us)
		}
		if _, off := t.Zone(); off == 0 {
			b.WriteString(", tzinfo=datetime.timezone.utc)")
		} else {
			fmt.Fprintf(b, ", tzinfo=datetime.timezone(datetime.timedelta(seconds=%d)))", off)
		}
	case date:
		fmt.Fprintf(b, "datetime.date(%d, %d, %d)", v.t.Year(), v.t.Month(), v.t.Day())
	case timedelta:
		days, secs, us := v.parts()
		var parts []string
		if days != 0 {
			parts = append(parts, fmt.Sprintf("days=%d", days))
		}
		if secs != 0 {
			parts = append(parts, fmt.Sprintf("seconds=%d", secs))
		}
		if us != 0 {
			parts = append(parts, fmt.Sprintf("microseconds=%d", us))
		}
		if len(parts) == 0 {
			parts = []string{"0"}
		}
		b.WriteString("datetime.timedelta(" + strings.Join(parts, ", ") + ")")
	case undefined:
		b.WriteString("Undefined")
	case boundMethod:
		b.WriteString("<built-in method " + v.name + " of dict object>")
	default:
		fmt.Fprint(b, v)
	}
}

// floatRepr is Python's repr of a float: the shortest text that reads
// back as it, with ".0" on a whole number and an exponent outside
// 1e-4 ≤ |f| < 1e16.
func floatRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, exps, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(exps)
	if exp < -4 || exp >= 16 {
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		return fmt.Sprintf("%se%s%02d", mant, sign, exp)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// quoteRepr writes Python's repr of a string: in single quotes, or
// double ones when it holds a single quote and no double one.
func quoteRepr(b *strings.Builder, s string) {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(q):
			b.WriteByte('\\')
			b.WriteByte(q)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(b, `\x%02x`, r)
		case r > 0x7f && !unicode.IsPrint(r):
			if r <= 0xff {
				fmt.Fprintf(b, `\x%02x`, r)
			} else if r <= 0xffff {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				fmt.Fprintf(b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
}

// LiteralEval reads s as Python's ast.literal_eval does, as the CDK reads
// a template's text: a number, string, True, False, None, or a list,
// tuple, set or dict of them. ok is false where Python raises (then the
// CDK keeps the text) and for a complex number, which the CDK keeps as
// text too. Tuples and sets are lists; an int past int64 is a
// json.Number.
func LiteralEval(s string) (v any, ok bool) {
	if s == "" {
		return nil, false
	}
	// Fast refusals: most text the CDK renders is a URL, a date or a
	// name, and none of them starts as a literal does.
	switch c := s[0]; {
	case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == '\'', c == '"',
		c == '[', c == '(', c == '{', c == ' ', c == '\t', c == '\n', c == '\r', c == 's',
		c == 'T' || c == 'F' || c == 'N' || c == 'r' || c == 'R' || c == 'u' || c == 'U' || c == 'b' || c == 'B':
	default:
		return nil, false
	}
	if c := s[0]; c >= '0' && c <= '9' && !numberAlone(s) {
		return nil, false // a date, a time, an id with letters: no literal
	}
	l := litParser{s: strings.TrimLeft(s, " \t\r\n\f")}
	if strings.TrimSpace(l.s) == "set()" {
		return []any{}, true
	}
	v, ok = l.tuple(0)
	if !ok {
		return nil, false
	}
	l.space(false)
	if l.i != len(l.s) {
		return nil, false
	}
	return v, true
}

// numberAlone: the number s starts with is followed by nothing a literal
// may have after a number (a comma of a tuple, white space, a comment).
// "2024-01-02" is refused here, before a number is parsed.
func numberAlone(s string) bool {
	i := 0
	for i < len(s) && (isAlnum(s[i]) || s[i] == '_' || s[i] == '.' ||
		(s[i] == '+' || s[i] == '-') && i > 0 && (s[i-1] == 'e' || s[i-1] == 'E')) {
		i++
	}
	if i == len(s) {
		return true
	}
	switch s[i] {
	case ',', ' ', '\t', '\n', '\r', '\f', '#', '\\':
		return true
	}
	return false
}

type litParser struct {
	s string
	i int
}

// space skips blanks and comments, and newlines inside brackets.
func (l *litParser) space(nested bool) {
	for l.i < len(l.s) {
		switch c := l.s[l.i]; {
		case c == ' ' || c == '\t' || c == '\f':
			l.i++
		case c == '\n' || c == '\r':
			if !nested && strings.TrimLeft(l.s[l.i:], " \t\f\r\n") != "" {
				return
			}
			l.i++
		case c == '\\' && l.i+1 < len(l.s) && l.s[l.i+1] == '\n':
			l.i += 2
		case c == '#':
			for l.i < len(l.s) && l.s[l.i] != '\n' {
				l.i++
			}
		default:
			return
		}
	}
}

func (l *litParser) peek() byte {
	if l.i < len(l.s) {
		return l.s[l.i]
	}
	return 0
}

// tuple reads a value, or values with commas between them (a tuple).
func (l *litParser) tuple(depth int) (any, bool) {
	v, ok := l.value(depth)
	if !ok {
		return nil, false
	}
	l.space(depth > 0)
	if l.peek() != ',' {
		return v, true
	}
	t := []any{v}
	for l.peek() == ',' {
		l.i++
		l.space(depth > 0)
		if c := l.peek(); c == 0 || c == ')' || c == ']' || c == '}' {
			break
		}
		v, ok := l.value(depth)
		if !ok {
			return nil, false
		}
		t = append(t, v)
		l.space(depth > 0)
	}
	return t, true
}

func (l *litParser) value(depth int) (any, bool) {
	if depth > 100 {
		return nil, false
	}
	l.space(depth > 0)
	if l.i >= len(l.s) {
		return nil, false
	}
	switch c := l.s[l.i]; {
	case c == '[':
		l.i++
		out := []any{}
		for {
			l.space(true)
			if l.peek() == ']' {
				l.i++
				return out, true
			}
			v, ok := l.value(depth + 1)
			if !ok {
				return nil, false
			}
			out = append(out, v)
			l.space(true)
			switch l.peek() {
			case ',':
				l.i++
			case ']':
			default:
				return nil, false
			}
		}
	case c == '(':
		l.i++
		l.space(true)
		if l.peek() == ')' {
			l.i++
			return []any{}, true
		}
		v, ok := l.value(depth + 1)
		if !ok {
			return nil, false
		}
		l.space(true)
		if l.peek() == ')' { // (x) is x
			l.i++
			return v, true
		}
		if l.peek() != ',' {
			return nil, false
		}
		t := []any{v}
		for l.peek() == ',' {
			l.i++
			l.space(true)
			if l.peek() == ')' {
				break
			}
			v, ok := l.value(depth + 1)
			if !ok {
				return nil, false
			}
			t = append(t, v)
			l.space(true)
		}
		if l.peek() != ')' {
			return nil, false
		}
		l.i++
		return t, true
	case c == '{':
		l.i++
		l.space(true)
		if l.peek() == '}' {
			l.i++
			return map[string]any{}, true
		}
		first, ok := l.value(depth + 1)
		if !ok {
			return nil, false
		}
		l.space(true)
		if l.peek() != ':' { // a set
			if !hashable(first) {
				return nil, false
			}
			set := []any{first}
			for l.peek() == ',' {
				l.i++
				l.space(true)
				if l.peek() == '}' {
					break
				}
				v, ok := l.value(depth + 1)
				if !ok {
					return nil, false
				}
				if !hashable(v) {
					return nil, false
				}
				if !slices.ContainsFunc(set, func(x any) bool { return equal(x, v) }) {
					set = append(set, v)
				}
				l.space(true)
			}
			if l.peek() != '}' {
				return nil, false
			}
			l.i++
			return set, true
		}
		m := map[string]any{}
		k := first
		for {
			l.i++ // :
			v, ok := l.value(depth + 1)
			if !ok {
				return nil, false
			}
			key, ok := k.(string)
			if !ok {
				if !hashable(k) {
					return nil, false
				}
				key = pyStr(k)
			}
			m[key] = v
			l.space(true)
			if l.peek() == ',' {
				l.i++
				l.space(true)
			}
			if l.peek() == '}' {
				l.i++
				return m, true
			}
			if k, ok = l.value(depth + 1); !ok {
				return nil, false
			}
			l.space(true)
			if l.peek() != ':' {
				return nil, false
			}
		}
	case c == '-' || c == '+':
		l.i++
		l.space(depth > 0)
		if c := l.peek(); !(c >= '0' && c <= '9' || c == '.') {
			return nil, false
		}
		v, ok := l.number()
		if !ok {
			return nil, false
		}
		if c == '+' {
			return v, true
		}
		switch n := v.(type) {
		case int64:
			return -n, true
		case float64:
			return -n, true
		case json.Number:
			return json.Number("-" + string(n)), true
		}
		return nil, false
	case c >= '0' && c <= '9' || c == '.':
		return l.number()
	}
	return l.wordOrString()
}

func (l *litParser) wordOrString() (any, bool) {
	start := l.i
	for l.i < len(l.s) && (l.s[l.i] == '_' || l.s[l.i] >= 'a' && l.s[l.i] <= 'z' || l.s[l.i] >= 'A' && l.s[l.i] <= 'Z' || l.s[l.i] >= '0' && l.s[l.i] <= '9') {
		l.i++
	}
	word := l.s[start:l.i]
	if l.i < len(l.s) && (l.s[l.i] == '\'' || l.s[l.i] == '"') {
		raw := false
		switch strings.ToLower(word) {
		case "":
		case "r":
			raw = true
		case "u":
		default:
			return nil, false // bytes, f-strings
		}
		var b strings.Builder
		for {
			if !l.str(&b, raw) {
				return nil, false
			}
			// 'a' 'b' is 'ab'
			save := l.i
			l.space(true)
			c := l.peek()
			raw = false
			if (c == 'r' || c == 'R') && l.i+1 < len(l.s) && (l.s[l.i+1] == '\'' || l.s[l.i+1] == '"') {
				raw = true
				l.i++
				c = l.peek()
			}
			if c != '\'' && c != '"' {
				l.i = save
				return b.String(), true
			}
		}
	}
	switch word {
	case "True":
		return true, true
	case "False":
		return false, true
	case "None":
		return nil, true
	}
	return nil, false
}

// str reads one quoted string into b.
func (l *litParser) str(b *strings.Builder, raw bool) bool {
	q := l.s[l.i : l.i+1]
	if strings.HasPrefix(l.s[l.i:], q+q+q) {
		q = q + q + q
	}
	l.i += len(q)
	for l.i < len(l.s) {
		if strings.HasPrefix(l.s[l.i:], q) {
			l.i += len(q)
			return true
		}
		c := l.s[l.i]
		if c == '\n' && len(q) == 1 {
			return false
		}
		if c == '\\' && l.i+1 < len(l.s) {
			if raw {
				b.WriteString(l.s[l.i : l.i+2])
				l.i += 2
				continue
			}
			if r, n, ok := unescape(l.s[l.i:]); ok {
				b.WriteString(r)
				l.i += n
				continue
			}
			b.WriteByte('\\') // Python keeps an unknown escape as it is
			l.i++
			b.WriteByte(l.s[l.i])
			l.i++
			continue
		}
		b.WriteByte(c)
		l.i++
	}
	return false
}

// number reads Python's int and float literals.
func (l *litParser) number() (any, bool) {
	s := l.s
	start := l.i
	if s[l.i] == '0' && l.i+1 < len(s) && strings.IndexByte("xXoObB", s[l.i+1]) >= 0 {
		base := 2
		switch s[l.i+1] | 0x20 {
		case 'x':
			base = 16
		case 'o':
			base = 8
		}
		l.i += 2
		for l.i < len(s) && (isAlnum(s[l.i]) || s[l.i] == '_') {
			l.i++
		}
		text := s[start+2 : l.i]
		if !underscoresOK(text) {
			return nil, false
		}
		n, err := strconv.ParseInt(strings.ReplaceAll(text, "_", ""), base, 64)
		if err != nil {
			return nil, false
		}
		return n, true
	}
	digits := func() bool {
		d := l.i
		for l.i < len(s) && (s[l.i] >= '0' && s[l.i] <= '9' || s[l.i] == '_') {
			l.i++
		}
		return underscoresOK(s[d:l.i])
	}
	if !digits() {
		return nil, false
	}
	intPart := s[start:l.i]
	isFloat := false
	if l.i < len(s) && s[l.i] == '.' {
		isFloat = true
		l.i++
		if l.i < len(s) && s[l.i] >= '0' && s[l.i] <= '9' && !digits() {
			return nil, false
		}
	}
	if l.i < len(s) && (s[l.i] == 'e' || s[l.i] == 'E') {
		isFloat = true
		l.i++
		if l.i < len(s) && (s[l.i] == '+' || s[l.i] == '-') {
			l.i++
		}
		if l.i >= len(s) || s[l.i] < '0' || s[l.i] > '9' || !digits() {
			return nil, false
		}
	}
	if l.i < len(s) && (s[l.i] == 'j' || s[l.i] == 'J' || isAlnum(s[l.i]) || s[l.i] == '_') {
		return nil, false // complex, or a name glued to the number
	}
	text := strings.ReplaceAll(s[start:l.i], "_", "")
	if text == "." {
		return nil, false
	}
	if isFloat {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil && !strings.Contains(err.Error(), "range") {
			return nil, false
		}
		return f, true
	}
	if len(intPart) > 1 && intPart[0] == '0' && strings.Trim(intPart, "0_") != "" {
		return nil, false // leading zeros are a SyntaxError
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return json.Number(strings.TrimLeft(text, "0")), true
	}
	return n, true
}

// hashable: a set's items and a dict's keys may not be lists, sets or
// dicts (tuples may, but they read as lists here: refused too).
func hashable(x any) bool {
	switch x.(type) {
	case []any, map[string]any:
		return false
	}
	return true
}

func underscoresOK(s string) bool {
	return !strings.HasPrefix(s, "_") && !strings.HasSuffix(s, "_") && !strings.Contains(s, "__")
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
