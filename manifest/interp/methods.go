package interp

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// The Python methods a template may call on its values (Jinja's sandbox
// lets a template call a str's, a dict's, a list's and a datetime's
// public methods); the ones manifests call.
var methodNames = []string{
	// str
	"split", "rsplit", "join", "strip", "lstrip", "rstrip", "lower", "upper",
	"replace", "startswith", "endswith", "title", "capitalize", "find", "count",
	"isdigit", "isalpha", "isalnum", "isnumeric", "zfill", "splitlines", "format",
	// dict
	"get", "items", "keys", "values", "update",
	// list
	"index", "append", "extend",
	// datetime, date, timedelta
	"strftime", "isoformat", "timestamp", "date", "weekday", "isoweekday", "total_seconds",
}

func knownMethod(name string) bool { return slices.Contains(methodNames, name) }

func callMethod(x any, name string, a args) (any, error) {
	switch v := x.(type) {
	case undefined:
		return nil, undefined{name: v.name + "." + name}.err()
	case string:
		return strMethod(v, name, a)
	case map[string]any:
		switch name {
		case "get":
			if err := a.check(2); err != nil {
				return nil, err
			}
			if len(a.pos) == 0 {
				return nil, errors.New("get expected at least 1 argument, got 0")
			}
			k, ok := a.pos[0].(string)
			if !ok {
				k = pyStr(a.pos[0])
			}
			if e, ok := v[k]; ok {
				return norm(e), nil
			}
			return a.get(1, "", nil), nil
		case "keys":
			return sortedKeys(v), nil
		case "update":
			return nil, errors.New("only a dict held in a {% set %} variable can change")
		case "values", "items":
			keys := sortedKeys(v)
			out := make([]any, len(keys))
			for i, k := range keys {
				if name == "values" {
					out[i] = v[k.(string)]
				} else {
					out[i] = []any{k, v[k.(string)]}
				}
			}
			return out, nil
		}
	case []any:
		switch name {
		case "index":
			for i, e := range v {
				if equal(norm(e), a.get(0, "", nil)) {
					return int64(i), nil
				}
			}
			return nil, fmt.Errorf("%s is not in list", pyRepr(a.get(0, "", nil)))
		case "count":
			n := int64(0)
			for _, e := range v {
				if equal(norm(e), a.get(0, "", nil)) {
					n++
				}
			}
			return n, nil
		}
	case datetime, date, timedelta:
		return timeMethod(x, name, a)
	}
	return nil, noMethod(x, name)
}

// noMethod: Jinja's getattr of a method the value lacks is undefined,
// and calling it an UndefinedError.
func noMethod(x any, name string) error {
	return fmt.Errorf("%w: '%s' object has no attribute '%s'", ErrUndefined, typeName(x), name)
}

func strArg(a args, i int, name string) (string, bool, error) {
	x := a.get(i, name, nil)
	if x == nil {
		return "", false, nil
	}
	s, ok := x.(string)
	if !ok {
		return "", false, fmt.Errorf("argument %d must be str, not %s", i+1, typeName(x))
	}
	return s, true, nil
}

func intArg(a args, i int, name string, def int64) (int64, error) {
	x := a.get(i, name, def)
	n, ok := x.(int64)
	if !ok {
		if b, isBool := x.(bool); isBool {
			if b {
				return 1, nil
			}
			return 0, nil
		}
		return 0, fmt.Errorf("argument %d must be int, not %s", i+1, typeName(x))
	}
	return n, nil
}

func strMethod(s, name string, a args) (any, error) {
	switch name {
	case "split", "rsplit":
		sep, hasSep, err := strArg(a, 0, "sep")
		if err != nil {
			return nil, err
		}
		n, err := intArg(a, 1, "maxsplit", -1)
		if err != nil {
			return nil, err
		}
		return split(s, sep, hasSep, int(n), name == "rsplit")
	case "join":
		items, err := iterate(a.get(0, "", nil))
		if err != nil {
			return nil, err
		}
		parts := make([]string, len(items))
		for i, it := range items {
			p, ok := it.(string)
			if !ok {
				return nil, fmt.Errorf("sequence item %d: expected str instance, %s found", i, typeName(norm(it)))
			}
			parts[i] = p
		}
		return strings.Join(parts, s), nil
	case "strip", "lstrip", "rstrip":
		chars, has, err := strArg(a, 0, "chars")
		if err != nil {
			return nil, err
		}
		return strip(s, chars, has, name), nil
	case "lower":
		return strings.ToLower(s), nil
	case "upper":
		return strings.ToUpper(s), nil
	case "title":
		return title(s), nil
	case "capitalize":
		if s == "" {
			return s, nil
		}
		r := []rune(strings.ToLower(s))
		r[0] = unicode.ToUpper(r[0])
		return string(r), nil
	case "replace":
		old, _, err := strArg(a, 0, "old")
		if err != nil {
			return nil, err
		}
		repl, _, err := strArg(a, 1, "new")
		if err != nil {
			return nil, err
		}
		n, err := intArg(a, 2, "count", -1)
		if err != nil {
			return nil, err
		}
		return strings.Replace(s, old, repl, int(n)), nil
	case "startswith", "endswith":
		var prefixes []any
		switch p := a.get(0, "", nil).(type) {
		case string:
			prefixes = []any{p}
		case []any:
			prefixes = p
		default:
			return nil, fmt.Errorf("%s first arg must be str or a tuple of str, not %s", name, typeName(p))
		}
		for _, p := range prefixes {
			ps, _ := p.(string)
			if name == "startswith" && strings.HasPrefix(s, ps) || name == "endswith" && strings.HasSuffix(s, ps) {
				return true, nil
			}
		}
		return false, nil
	case "find", "count":
		sub, _, err := strArg(a, 0, "sub")
		if err != nil {
			return nil, err
		}
		if name == "count" {
			return int64(strings.Count(s, sub)), nil
		}
		i := strings.Index(s, sub)
		if i > 0 {
			i = len([]rune(s[:i]))
		}
		return int64(i), nil
	case "isdigit", "isnumeric", "isalpha", "isalnum":
		if s == "" {
			return false, nil
		}
		for _, r := range s {
			ok := false
			switch name {
			case "isdigit", "isnumeric":
				ok = unicode.IsDigit(r)
			case "isalpha":
				ok = unicode.IsLetter(r)
			case "isalnum":
				ok = unicode.IsLetter(r) || unicode.IsDigit(r)
			}
			if !ok {
				return false, nil
			}
		}
		return true, nil
	case "zfill":
		w, err := intArg(a, 0, "width", 0)
		if err != nil {
			return nil, err
		}
		n := int(w) - len([]rune(s))
		if n <= 0 {
			return s, nil
		}
		if s != "" && (s[0] == '-' || s[0] == '+') {
			return s[:1] + strings.Repeat("0", n) + s[1:], nil
		}
		return strings.Repeat("0", n) + s, nil
	case "splitlines":
		lines := strings.FieldsFunc(strings.ReplaceAll(s, "\r\n", "\n"), func(r rune) bool { return r == '\n' || r == '\r' })
		out := make([]any, len(lines))
		for i, l := range lines {
			out[i] = l
		}
		return out, nil
	case "format":
		return strFormat(s, a)
	}
	return nil, noMethod(s, name)
}

// split is Python's str.split and str.rsplit: with no separator, on runs
// of white space.
func split(s, sep string, hasSep bool, n int, fromRight bool) (any, error) {
	var parts []string
	switch {
	case !hasSep:
		parts = strings.Fields(s)
		if n >= 0 && len(parts) > n+1 {
			if fromRight {
				// keep the first part whole, as Python does
				head := s
				for range n {
					head = strings.TrimRightFunc(head, unicode.IsSpace)
					i := strings.LastIndexFunc(head, unicode.IsSpace)
					head = head[:i+1]
				}
				rest := parts[len(parts)-n:]
				parts = append([]string{strings.TrimSpace(head)}, rest...)
			} else {
				rest := s
				for range n {
					rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
					i := strings.IndexFunc(rest, unicode.IsSpace)
					rest = rest[i:]
				}
				parts = append(parts[:n:n], strings.TrimLeftFunc(rest, unicode.IsSpace))
			}
		}
	case sep == "":
		return nil, errors.New("empty separator")
	case fromRight && n >= 0:
		parts = strings.Split(s, sep)
		if len(parts) > n+1 {
			k := len(parts) - n
			parts = append([]string{strings.Join(parts[:k], sep)}, parts[k:]...)
		}
	default:
		parts = strings.SplitN(s, sep, max(n+1, -1))
		if n < 0 {
			parts = strings.Split(s, sep)
		}
	}
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out, nil
}

func strip(s, chars string, has bool, how string) string {
	cut := unicode.IsSpace
	if has {
		cut = func(r rune) bool { return strings.ContainsRune(chars, r) }
	}
	switch how {
	case "lstrip":
		return strings.TrimLeftFunc(s, cut)
	case "rstrip":
		return strings.TrimRightFunc(s, cut)
	}
	return strings.TrimFunc(s, cut)
}

// title is Python's str.title: each run of letters starts upper case.
func title(s string) string {
	var b strings.Builder
	prev := false
	for _, r := range s {
		if unicode.IsLetter(r) {
			if prev {
				b.WriteRune(unicode.ToLower(r))
			} else {
				b.WriteRune(unicode.ToUpper(r))
			}
			prev = true
			continue
		}
		prev = false
		b.WriteRune(r)
	}
	return b.String()
}

// strFormat is str.format with {}, {0} and {name} fields (no format
// specs but what %-formatting would write).
func strFormat(s string, a args) (any, error) {
	var b strings.Builder
	auto := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '{' && i+1 < len(s) && s[i+1] == '{' || c == '}' && i+1 < len(s) && s[i+1] == '}' {
			b.WriteByte(c)
			i++
			continue
		}
		if c != '{' {
			b.WriteByte(c)
			continue
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return nil, errors.New("single '{' encountered in format string")
		}
		field, _, _ := strings.Cut(s[i+1:i+j], ":")
		var x any
		switch n, err := strconv.Atoi(field); {
		case field == "":
			x = a.get(auto, "", undefined{})
			auto++
		case err == nil:
			x = a.get(n, "", undefined{})
		default:
			x = a.get(1<<30, field, undefined{})
		}
		if _, ok := x.(undefined); ok {
			return nil, fmt.Errorf("no argument for field {%s}", field)
		}
		b.WriteString(pyStr(x))
		i += j
	}
	return b.String(), nil
}
