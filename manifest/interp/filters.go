package interp

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// filterFunc is a filter: the CDK's filters.py and Jinja's own.
type filterFunc func(x any, a args) (any, error)

// testFunc is a Jinja test (`x is defined`).
type testFunc func(x any, a []any) (bool, error)

var (
	filters map[string]filterFunc
	tests   map[string]testFunc
)

func init() {
	// in init: map and select call back into the tables
	filters = map[string]filterFunc{
		// the CDK's
		"hash":                  hashFilter,
		"base64encode":          base64Encode,
		"base64decode":          base64Decode,
		"base64binascii_decode": base64Encode, // the CDK's encodes, despite its name
		"string":                stringFilter,
		"regex_search":          regexSearch,
		"regex_replace":         regexReplace,
		"hmac":                  hmacFilter,
		// Jinja's
		"abs":        absFilter,
		"attr":       func(x any, a args) (any, error) { return attr(x, pyStr(a.get(0, "name", ""))) },
		"capitalize": func(x any, a args) (any, error) { return strMethod(pyStr(x), "capitalize", args{}) },
		"count":      length,
		"default":    defaultFilter,
		"d":          defaultFilter,
		"dictsort":   dictsort,
		"escape":     escape,
		"e":          escape,
		"first":      func(x any, a args) (any, error) { return end(x, true) },
		"last":       func(x any, a args) (any, error) { return end(x, false) },
		"float":      floatFilter,
		"format":     func(x any, a args) (any, error) { return percentFormatArgs(pyStr(x), a) },
		"int":        intFilter,
		"items":      itemsFilter,
		"join":       join,
		"length":     length,
		"list":       listFilter,
		"lower":      func(x any, a args) (any, error) { return strings.ToLower(pyStr(x)), nil },
		"upper":      func(x any, a args) (any, error) { return strings.ToUpper(pyStr(x)), nil },
		"title":      titleFilter,
		"map":        mapFilter,
		"max":        func(x any, a args) (any, error) { return extremeFilter(x, a, 1) },
		"min":        func(x any, a args) (any, error) { return extremeFilter(x, a, -1) },
		"pprint":     func(x any, a args) (any, error) { return pyRepr(x), nil },
		"reject":     func(x any, a args) (any, error) { return selectFilter(x, a, false, false) },
		"rejectattr": func(x any, a args) (any, error) { return selectFilter(x, a, false, true) },
		"select":     func(x any, a args) (any, error) { return selectFilter(x, a, true, false) },
		"selectattr": func(x any, a args) (any, error) { return selectFilter(x, a, true, true) },
		"replace":    replaceFilter,
		"reverse":    reverse,
		"round":      roundFilter,
		"safe":       func(x any, a args) (any, error) { return x, nil },
		"sort":       sortFilter,
		"sum":        sumFilter,
		"tojson":     tojson,
		"trim": func(x any, a args) (any, error) {
			chars, has, err := strArg(a, 0, "chars")
			return strip(pyStr(x), chars, has, "strip"), err
		},
		"truncate":  truncate,
		"unique":    unique,
		"urlencode": urlencode,
		"wordcount": func(x any, a args) (any, error) { return int64(len(strings.Fields(pyStr(x)))), nil },
	}
	tests = map[string]testFunc{
		"defined":   func(x any, _ []any) (bool, error) { _, u := x.(undefined); return !u, nil },
		"undefined": func(x any, _ []any) (bool, error) { _, u := x.(undefined); return u, nil },
		"none":      func(x any, _ []any) (bool, error) { return x == nil, nil },
		"boolean":   func(x any, _ []any) (bool, error) { _, ok := x.(bool); return ok, nil },
		"true":      func(x any, _ []any) (bool, error) { return x == true, nil },
		"false":     func(x any, _ []any) (bool, error) { return x == false, nil },
		"integer":   func(x any, _ []any) (bool, error) { _, ok := x.(int64); return ok, nil },
		"float":     func(x any, _ []any) (bool, error) { _, ok := x.(float64); return ok, nil },
		"number": func(x any, _ []any) (bool, error) {
			switch x.(type) {
			case int64, float64, bool:
				return true, nil
			}
			return false, nil
		},
		"string":  func(x any, _ []any) (bool, error) { _, ok := x.(string); return ok, nil },
		"mapping": func(x any, _ []any) (bool, error) { _, ok := x.(map[string]any); return ok, nil },
		"sequence": func(x any, _ []any) (bool, error) {
			switch x.(type) {
			case string, []any, map[string]any:
				return true, nil
			}
			return false, nil
		},
		"iterable": func(x any, _ []any) (bool, error) {
			switch x.(type) {
			case string, []any, map[string]any, undefined:
				return true, nil
			}
			return false, nil
		},
		"callable": func(any, []any) (bool, error) { return false, nil },
		"escaped":  func(any, []any) (bool, error) { return false, nil },
		"sameas": func(x any, a []any) (bool, error) {
			if len(a) != 1 {
				return false, errors.New("takes one argument")
			}
			switch v := x.(type) {
			case nil, bool:
				return x == a[0], nil
			case int64:
				// CPython keeps one object per int from -5 to 256
				w, ok := a[0].(int64)
				return ok && v == w && v >= -5 && v <= 256, nil
			}
			return false, nil
		},
		"divisibleby": func(x any, a []any) (bool, error) {
			if len(a) != 1 {
				return false, errors.New("takes one argument")
			}
			m, err := binaryOp("%", x, a[0])
			if err != nil {
				return false, err
			}
			return equal(m, int64(0)), nil
		},
		"even": func(x any, _ []any) (bool, error) {
			n, ok := x.(int64)
			return ok && n%2 == 0, nil
		},
		"odd": func(x any, _ []any) (bool, error) {
			n, ok := x.(int64)
			return ok && n%2 != 0, nil
		},
		"lower": func(x any, _ []any) (bool, error) { s := pyStr(x); return s == strings.ToLower(s), nil },
		"upper": func(x any, _ []any) (bool, error) { s := pyStr(x); return s == strings.ToUpper(s), nil },
		"in": func(x any, a []any) (bool, error) {
			if len(a) != 1 {
				return false, errors.New("takes one argument")
			}
			return contains(a[0], x)
		},
		"filter": func(x any, _ []any) (bool, error) { _, ok := filters[pyStr(x)]; return ok, nil },
		"test":   func(x any, _ []any) (bool, error) { _, ok := tests[pyStr(x)]; return ok, nil },
	}
	for _, op := range []struct {
		op    string
		names []string
	}{
		{"==", []string{"eq", "equalto", "=="}},
		{"!=", []string{"ne", "!="}},
		{"<", []string{"lt", "lessthan", "<"}},
		{"<=", []string{"le", "<="}},
		{">", []string{"gt", "greaterthan", ">"}},
		{">=", []string{"ge", ">="}},
	} {
		for _, n := range op.names {
			tests[n] = func(x any, a []any) (bool, error) {
				if len(a) != 1 {
					return false, errors.New("takes one argument")
				}
				return compareOp(op.op, x, a[0])
			}
		}
	}
}

var wordBeginning = regexp.MustCompile(`([-\s({\[<]+)`)

// titleFilter is Jinja's title, not str.title: words begin after white
// space, -, (, {, [ or <, so "they're" stays "They're".
func titleFilter(x any, _ args) (any, error) {
	s := pyStr(x)
	var b strings.Builder
	last := 0
	for _, m := range append(wordBeginning.FindAllStringIndex(s, -1), []int{len(s), len(s)}) {
		if w := s[last:m[0]]; w != "" {
			r, n := utf8.DecodeRuneInString(w)
			b.WriteString(strings.ToUpper(string(r)) + strings.ToLower(w[n:]))
		}
		b.WriteString(s[m[0]:m[1]])
		last = m[1]
	}
	return b.String(), nil
}

func hashFilter(x any, a args) (any, error) {
	if err := a.check(2, "hash_type", "salt"); err != nil {
		return nil, err
	}
	algo := pyStr(a.get(0, "hash_type", "md5"))
	h := hasher(algo)
	if h == nil {
		return nil, fmt.Errorf("no hashing function named %s", algo)
	}
	h.Write([]byte(pyStr(x)))
	if salt := a.get(1, "salt", nil); truthy(salt) {
		h.Write([]byte(pyStr(salt)))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hasher(algo string) hash.Hash {
	switch algo {
	case "md5":
		return md5.New()
	case "sha1":
		return sha1.New()
	case "sha224":
		return sha256.New224()
	case "sha256":
		return sha256.New()
	case "sha384":
		return sha512.New384()
	case "sha512":
		return sha512.New()
	}
	return nil
}

func hmacFilter(x any, a args) (any, error) {
	if err := a.check(2, "key", "hash_type"); err != nil {
		return nil, err
	}
	if algo := pyStr(a.get(1, "hash_type", "sha256")); algo != "sha256" {
		return nil, fmt.Errorf("hash type %q is not allowed; allowed types: sha256", algo)
	}
	m := hmac.New(sha256.New, []byte(pyStr(a.get(0, "key", nil))))
	m.Write([]byte(pyStr(x)))
	return hex.EncodeToString(m.Sum(nil)), nil
}

func base64Encode(x any, _ args) (any, error) {
	s, ok := x.(string)
	if !ok {
		return nil, fmt.Errorf("'%s' object has no attribute 'encode'", typeName(x))
	}
	return base64.StdEncoding.EncodeToString([]byte(s)), nil
}

func base64Decode(x any, _ args) (any, error) {
	s, ok := x.(string)
	if !ok {
		return nil, fmt.Errorf("'%s' object has no attribute 'encode'", typeName(x))
	}
	// Python's b64decode drops characters outside the alphabet and
	// wants the padding.
	b, err := base64.StdEncoding.DecodeString(strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '/' || r == '=' {
			return r
		}
		return -1
	}, s))
	if err != nil {
		return nil, errors.New("incorrect padding or invalid base64")
	}
	if !utf8.Valid(b) {
		return nil, errors.New("the decoded bytes are not UTF-8")
	}
	return string(b), nil
}

// stringFilter is the CDK's string: a string as it is, anything else as
// JSON in triple quotes, so that the CDK's literal_eval gives the JSON
// text back as a string.
func stringFilter(x any, _ args) (any, error) {
	if s, ok := x.(string); ok {
		return s, nil
	}
	var b strings.Builder
	if err := writeJSON(&b, x, false); err != nil {
		return nil, err
	}
	return `"""` + b.String() + `"""`, nil
}

// pyRegexp compiles a Python regular expression; Go's syntax is
// Python's but for lookarounds and backreferences, which are an error.
func pyRegexp(re string) (*regexp.Regexp, error) {
	r, err := regexp.Compile(re)
	if err != nil {
		return nil, fmt.Errorf("regular expression %q: %w", re, err)
	}
	return r, nil
}

// filterRegexp is the filter's regular expression, compiled at Compile
// when it is a constant.
func filterRegexp(a args) (*regexp.Regexp, error) {
	if re, ok := a.prep.(*regexp.Regexp); ok {
		return re, nil
	}
	return pyRegexp(pyStr(a.get(0, "regex", "")))
}

func regexSearch(x any, a args) (any, error) {
	re, err := filterRegexp(a)
	if err != nil {
		return nil, err
	}
	s, ok := x.(string)
	if !ok {
		return nil, fmt.Errorf("expected string, got %s", typeName(x))
	}
	m := re.FindStringSubmatchIndex(s)
	if m == nil || len(m) < 4 {
		return "", nil
	}
	if m[2] < 0 {
		return nil, nil // the group took no part: Python's None
	}
	return s[m[2]:m[3]], nil
}

var pyGroupRef = regexp.MustCompile(`\\(\d+)|\\g<(\w+)>`)

func regexReplace(x any, a args) (any, error) {
	re, err := filterRegexp(a)
	if err != nil {
		return nil, err
	}
	s, ok := x.(string)
	if !ok {
		return nil, fmt.Errorf("expected string, got %s", typeName(x))
	}
	repl := strings.ReplaceAll(pyStr(a.get(1, "replacement", "")), "$", "$$")
	repl = pyGroupRef.ReplaceAllString(repl, "$${$1$2}")
	return re.ReplaceAllString(s, repl), nil
}

func absFilter(x any, _ args) (any, error) {
	i, f, isInt, ok := number(x)
	if !ok {
		if td, isTD := x.(timedelta); isTD {
			if td.d < 0 {
				td.d = -td.d
			}
			return td, nil
		}
		return nil, fmt.Errorf("bad operand type for abs(): '%s'", typeName(x))
	}
	if isInt {
		if i < 0 {
			return -i, nil
		}
		return i, nil
	}
	return math.Abs(f), nil
}

func length(x any, _ args) (any, error) {
	switch v := x.(type) {
	case string:
		return int64(utf8.RuneCountInString(v)), nil
	case []any:
		return int64(len(v)), nil
	case map[string]any:
		return int64(len(v)), nil
	case undefined:
		return int64(0), nil
	}
	return nil, fmt.Errorf("object of type '%s' has no len()", typeName(x))
}

func defaultFilter(x any, a args) (any, error) {
	if err := a.check(2, "default_value", "boolean"); err != nil {
		return nil, err
	}
	_, undef := x.(undefined)
	if undef || truthy(a.get(1, "boolean", false)) && !truthy(x) {
		return a.get(0, "default_value", ""), nil
	}
	return x, nil
}

func escape(x any, _ args) (any, error) {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(pyStr(x)), nil
}

// end is first (or last): the first item, or undefined when there is
// none.
func end(x any, first bool) (any, error) {
	if s, ok := x.(string); ok {
		if s == "" {
			return undefined{name: "no first item"}, nil
		}
		if first {
			r, _ := utf8.DecodeRuneInString(s)
			return string(r), nil
		}
		r, _ := utf8.DecodeLastRuneInString(s)
		return string(r), nil
	}
	items, err := iterate(x)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return undefined{name: "no first item"}, nil
	}
	if first {
		return norm(items[0]), nil
	}
	return norm(items[len(items)-1]), nil
}

// intFilter is Jinja's int: int(x), else int(float(x)), else the
// default (0).
func intFilter(x any, a args) (any, error) {
	if err := a.check(2, "default", "base"); err != nil {
		return nil, err
	}
	def := a.get(0, "default", int64(0))
	base, err := intArg(a, 1, "base", 10)
	if err != nil {
		return nil, err
	}
	switch v := x.(type) {
	case undefined:
		return nil, v.err()
	case string:
		s := strings.ReplaceAll(strings.TrimSpace(v), "_", "")
		if base == 16 || base == 8 || base == 2 {
			prefix := map[int64]string{16: "0x", 8: "0o", 2: "0b"}[base]
			s = strings.TrimPrefix(strings.TrimPrefix(s, prefix), strings.ToUpper(prefix))
		}
		if n, err := strconv.ParseInt(s, int(base), 64); err == nil {
			return n, nil
		}
		if f, ok := pyFloat(v); ok && isFinite(f) {
			return int64(f), nil
		}
		return def, nil
	}
	i, f, isInt, ok := number(x)
	switch {
	case ok && isInt:
		return i, nil
	case ok && isFinite(f):
		return int64(f), nil
	}
	return def, nil
}

// pyFloat is Python's float() of a string.
func pyFloat(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case "inf", "infinity", "nan":
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	}
	if strings.ContainsAny(s, "xXpP") || strings.Contains(s, "__") {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	return f, err == nil
}

func floatFilter(x any, a args) (any, error) {
	if err := a.check(1, "default"); err != nil {
		return nil, err
	}
	switch v := x.(type) {
	case undefined:
		return nil, v.err()
	case string:
		if f, ok := pyFloat(v); ok {
			return f, nil
		}
	default:
		if _, f, _, ok := number(x); ok {
			return f, nil
		}
	}
	return a.get(0, "default", 0.0), nil
}

func itemsFilter(x any, _ args) (any, error) {
	switch v := x.(type) {
	case map[string]any:
		return callMethod(v, "items", args{})
	case undefined:
		return []any{}, nil
	}
	return nil, fmt.Errorf("can only get item pairs from a mapping, not %s", typeName(x))
}

func join(x any, a args) (any, error) {
	if err := a.check(2, "d", "attribute"); err != nil {
		return nil, err
	}
	items, err := iterate(x)
	if err != nil {
		return nil, err
	}
	sep := pyStr(a.get(0, "d", ""))
	attrName, hasAttr := a.get(1, "attribute", nil).(string)
	parts := make([]string, len(items))
	for i, it := range items {
		it = norm(it)
		if hasAttr {
			if it, err = item(it, attrName); err != nil {
				return nil, err
			}
		}
		parts[i] = pyStr(it)
	}
	return strings.Join(parts, sep), nil
}

func listFilter(x any, _ args) (any, error) {
	items, err := iterate(x)
	if err != nil {
		return nil, err
	}
	return slices.Clone(items), nil
}

// mapFilter is map(attribute='name') or map('filter', args...).
func mapFilter(x any, a args) (any, error) {
	items, err := iterate(x)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(items))
	if name, ok := a.kw["attribute"]; ok {
		def, hasDef := a.kw["default"]
		for i, it := range items {
			v, err := item(norm(it), name)
			if err != nil {
				return nil, err
			}
			if _, u := v.(undefined); u && hasDef {
				v = def
			}
			out[i] = v
		}
		return out, nil
	}
	if len(a.pos) == 0 {
		return nil, errors.New("map needs a filter name or attribute=")
	}
	fname := pyStr(a.pos[0])
	fn, ok := filters[fname]
	if !ok {
		return nil, fmt.Errorf("unknown filter %q", fname)
	}
	rest := args{pos: a.pos[1:], kw: a.kw}
	for i, it := range items {
		if out[i], err = fn(norm(it), rest); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// selectFilter is select, reject (a test of each item) and selectattr,
// rejectattr (a test of an attribute of each item).
func selectFilter(x any, a args, keep, byAttr bool) (any, error) {
	items, err := iterate(x)
	if err != nil {
		return nil, err
	}
	pos := a.pos
	var attrName any
	if byAttr {
		if len(pos) == 0 {
			return nil, errors.New("needs an attribute name")
		}
		attrName, pos = pos[0], pos[1:]
	}
	test := func(v any) (bool, error) { return truthy(v), nil }
	if len(pos) > 0 {
		name := pyStr(pos[0])
		fn, ok := tests[name]
		if !ok {
			return nil, fmt.Errorf("unknown test %q", name)
		}
		targs := pos[1:]
		test = func(v any) (bool, error) { return fn(v, targs) }
	}
	out := []any{}
	for _, it := range items {
		v := norm(it)
		if byAttr {
			if v, err = item(v, attrName); err != nil {
				return nil, err
			}
		}
		ok, err := test(v)
		if err != nil {
			return nil, err
		}
		if ok == keep {
			out = append(out, it)
		}
	}
	return out, nil
}

func extremeFilter(x any, a args, sign int) (any, error) {
	items, err := iterate(x)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return undefined{name: "no largest item"}, nil
	}
	key := sortKey(a)
	best := norm(items[0])
	bk, err := key(best)
	if err != nil {
		return nil, err
	}
	for _, it := range items[1:] {
		v := norm(it)
		k, err := key(v)
		if err != nil {
			return nil, err
		}
		c, err := order(k, bk)
		if err != nil {
			return nil, err
		}
		if c*sign > 0 {
			best, bk = v, k
		}
	}
	return best, nil
}

// sortKey is the key sort, min, max and unique compare by: the item or
// its attribute, strings lower case unless case_sensitive.
func sortKey(a args) func(any) (any, error) {
	caseSensitive := truthy(a.kw["case_sensitive"])
	attrName, hasAttr := a.kw["attribute"]
	return func(v any) (any, error) {
		if hasAttr {
			var err error
			if v, err = item(v, attrName); err != nil {
				return nil, err
			}
		}
		if s, ok := v.(string); ok && !caseSensitive {
			return strings.ToLower(s), nil
		}
		return v, nil
	}
}

func replaceFilter(x any, a args) (any, error) {
	n := int64(-1)
	if c := a.get(2, "count", nil); c != nil {
		var err error
		if n, err = intArg(a, 2, "count", -1); err != nil {
			return nil, err
		}
	}
	return strings.Replace(pyStr(x), pyStr(a.get(0, "old", "")), pyStr(a.get(1, "new", "")), int(n)), nil
}

func reverse(x any, _ args) (any, error) {
	switch v := x.(type) {
	case string:
		r := []rune(v)
		slices.Reverse(r)
		return string(r), nil
	}
	items, err := iterate(x)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(items)
	slices.Reverse(out)
	return out, nil
}

// roundFilter is Jinja's round: method common (Python's round, half to
// even), ceil or floor; always a float.
func roundFilter(x any, a args) (any, error) {
	if err := a.check(2, "precision", "method"); err != nil {
		return nil, err
	}
	p, err := intArg(a, 0, "precision", 0)
	if err != nil {
		return nil, err
	}
	_, f, _, ok := number(x)
	if !ok {
		return nil, fmt.Errorf("type %s doesn't define __round__ method", typeName(x))
	}
	scale := math.Pow(10, float64(p))
	switch m := pyStr(a.get(1, "method", "common")); m {
	case "common":
		if i, ok := x.(int64); ok && p >= 0 {
			return i, nil // int.__round__ keeps an int
		}
		r, err := strconv.ParseFloat(strconv.FormatFloat(f, 'f', int(p), 64), 64)
		return r, err
	case "ceil":
		return math.Ceil(f*scale) / scale, nil
	case "floor":
		return math.Floor(f*scale) / scale, nil
	default:
		return nil, fmt.Errorf("method must be common, ceil or floor, not %q", m)
	}
}

func sortFilter(x any, a args) (any, error) {
	if len(a.pos) > 0 {
		a.kw = cloneKW(a.kw)
		a.kw["reverse"] = a.pos[0]
		if len(a.pos) > 1 {
			a.kw["case_sensitive"] = a.pos[1]
		}
		if len(a.pos) > 2 {
			a.kw["attribute"] = a.pos[2]
		}
	}
	items, err := iterate(x)
	if err != nil {
		return nil, err
	}
	key := sortKey(a)
	type kv struct{ k, v any }
	keyed := make([]kv, len(items))
	for i, it := range items {
		v := norm(it)
		k, err := key(v)
		if err != nil {
			return nil, err
		}
		keyed[i] = kv{k, v}
	}
	var cmpErr error
	slices.SortStableFunc(keyed, func(p, q kv) int {
		c, err := order(p.k, q.k)
		if err != nil && cmpErr == nil {
			cmpErr = err
		}
		return c
	})
	if cmpErr != nil {
		return nil, cmpErr
	}
	out := make([]any, len(keyed))
	for i, e := range keyed {
		out[i] = e.v
	}
	if truthy(a.kw["reverse"]) {
		slices.Reverse(out)
	}
	return out, nil
}

func cloneKW(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+3)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sumFilter(x any, a args) (any, error) {
	items, err := iterate(x)
	if err != nil {
		return nil, err
	}
	total := a.get(1, "start", int64(0))
	attrName, hasAttr := a.get(0, "attribute", nil), a.get(0, "attribute", nil) != nil
	for _, it := range items {
		v := norm(it)
		if hasAttr {
			if v, err = item(v, attrName); err != nil {
				return nil, err
			}
		}
		if total, err = binaryOp("+", total, v); err != nil {
			return nil, err
		}
	}
	return total, nil
}

// tojson is Jinja's tojson: json.dumps with sorted keys, and <, >, &
// and ' escaped for HTML.
func tojson(x any, a args) (any, error) {
	var b strings.Builder
	if err := writeJSON(&b, x, false); err != nil {
		return nil, err
	}
	return strings.NewReplacer("<", `\u003c`, ">", `\u003e`, "&", `\u0026`, "'", `\u0027`).Replace(b.String()), nil
}

func truncate(x any, a args) (any, error) {
	s := []rune(pyStr(x))
	n, err := intArg(a, 0, "length", 255)
	if err != nil {
		return nil, err
	}
	endS := pyStr(a.get(2, "end", "..."))
	leeway, err := intArg(a, 3, "leeway", 5)
	if err != nil {
		return nil, err
	}
	if int64(len(s)) <= n+leeway {
		return string(s), nil
	}
	cut := max(0, int(n)-len([]rune(endS)))
	if truthy(a.get(1, "killwords", false)) {
		return string(s[:cut]) + endS, nil
	}
	head := string(s[:cut])
	if i := strings.LastIndex(head, " "); i >= 0 {
		head = head[:i]
	}
	return head + endS, nil
}

func unique(x any, a args) (any, error) {
	items, err := iterate(x)
	if err != nil {
		return nil, err
	}
	key := sortKey(a)
	var seen []any
	out := []any{}
	for _, it := range items {
		v := norm(it)
		k, err := key(v)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(seen, func(s any) bool { return equal(s, k) }) {
			continue
		}
		seen = append(seen, k)
		out = append(out, v)
	}
	return out, nil
}

// urlencode is Jinja's: a string quoted for a path (/ kept), a dict or
// list of pairs as a query string.
func urlencode(x any, _ args) (any, error) {
	quote := func(s string, qs bool) string {
		q := url.PathEscape(s)
		q = strings.NewReplacer("%2F", "/", "+", "%2B", ":", "%3A", "@", "%40", "&", "%26", "=", "%3D", "$", "%24", ",", "%2C", ";", "%3B").Replace(q)
		if qs {
			q = strings.ReplaceAll(strings.ReplaceAll(q, "/", "%2F"), "%20", "+")
		}
		return q
	}
	switch v := x.(type) {
	case string:
		return quote(v, false), nil
	case map[string]any:
		var parts []string
		for _, k := range sortedKeys(v) {
			parts = append(parts, quote(k.(string), true)+"="+quote(pyStr(norm(v[k.(string)])), true))
		}
		return strings.Join(parts, "&"), nil
	case []any:
		var parts []string
		for _, p := range v {
			pair, ok := p.([]any)
			if !ok || len(pair) != 2 {
				return nil, errors.New("urlencode wants a dict or a list of pairs")
			}
			parts = append(parts, quote(pyStr(norm(pair[0])), true)+"="+quote(pyStr(norm(pair[1])), true))
		}
		return strings.Join(parts, "&"), nil
	}
	return quote(pyStr(x), false), nil
}

func dictsort(x any, a args) (any, error) {
	m, ok := x.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("dictsort wants a dict, not %s", typeName(x))
	}
	byValue := pyStr(a.get(1, "by", "key")) == "value"
	caseSensitive := truthy(a.get(0, "case_sensitive", false))
	pairs, _ := callMethod(m, "items", args{})
	items := pairs.([]any)
	var cmpErr error
	slices.SortStableFunc(items, func(p, q any) int {
		i := 0
		if byValue {
			i = 1
		}
		k1, k2 := norm(p.([]any)[i]), norm(q.([]any)[i])
		if !caseSensitive {
			if s, ok := k1.(string); ok {
				k1 = strings.ToLower(s)
			}
			if s, ok := k2.(string); ok {
				k2 = strings.ToLower(s)
			}
		}
		c, err := order(k1, k2)
		if err != nil && cmpErr == nil {
			cmpErr = err
		}
		return c
	})
	if truthy(a.get(2, "reverse", false)) {
		slices.Reverse(items)
	}
	return items, cmpErr
}

// writeJSON writes x as Python's json.dumps does: ", " and ": " between
// items, non-ASCII escaped, keys sorted (Go's maps keep no order);
// nested: x is inside a list or dict (see writeRepr).
func writeJSON(b *strings.Builder, x any, nested bool) error {
	if nested {
		x = norm(x) // see writeRepr
	}
	switch v := x.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case float64:
		switch {
		case math.IsNaN(v):
			b.WriteString("NaN")
		case math.IsInf(v, 1):
			b.WriteString("Infinity")
		case math.IsInf(v, -1):
			b.WriteString("-Infinity")
		default:
			b.WriteString(floatRepr(v))
		}
	case string:
		b.WriteByte('"')
		for _, r := range v {
			switch {
			case r == '"':
				b.WriteString(`\"`)
			case r == '\\':
				b.WriteString(`\\`)
			case r == '\n':
				b.WriteString(`\n`)
			case r == '\r':
				b.WriteString(`\r`)
			case r == '\t':
				b.WriteString(`\t`)
			case r == '\b':
				b.WriteString(`\b`)
			case r == '\f':
				b.WriteString(`\f`)
			case r < 0x20 || r > 0x7e:
				if r > 0xffff {
					r -= 0x10000
					fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
				} else {
					fmt.Fprintf(b, `\u%04x`, r)
				}
			default:
				b.WriteRune(r)
			}
		}
		b.WriteByte('"')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := writeJSON(b, e, true); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range sortedKeys(v) {
			if i > 0 {
				b.WriteString(", ")
			}
			writeJSON(b, k, true)
			b.WriteString(": ")
			if err := writeJSON(b, v[k.(string)], true); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case undefined:
		return v.err()
	default:
		return fmt.Errorf("object of type %s is not JSON serializable", typeName(v))
	}
	return nil
}

// percentFormatArgs is Jinja's format filter: s % args, or s % kwargs.
func percentFormatArgs(s string, a args) (any, error) {
	if len(a.kw) > 0 {
		return percentFormat(s, map[string]any(a.kw))
	}
	return percentFormat(s, a.pos)
}

// directives counts the % directives of a format (%% is none).
func directives(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			if i+1 < len(s) && s[i+1] == '%' {
				i++
				continue
			}
			n++
		}
	}
	return n
}

// percentFormat is Python's printf-style `s % x`: x a tuple (here a
// list) of arguments, a dict for %(name)s, or one value.
func percentFormat(s string, x any) (any, error) {
	pos, isList := x.([]any)
	dict, isDict := x.(map[string]any)
	if !isList || directives(s) == 1 && len(pos) != 1 {
		// a tuple is a list here: a list that cannot be the arguments
		// is the one argument, as Python's % takes a list
		pos = []any{x}
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			return nil, errors.New("incomplete format")
		}
		var arg any
		haveArg := false
		if s[i] == '(' {
			j := strings.IndexByte(s[i:], ')')
			if j < 0 || !isDict {
				return nil, errors.New("format requires a mapping")
			}
			v, ok := dict[s[i+1:i+j]]
			if !ok {
				return nil, fmt.Errorf("KeyError: %q", s[i+1:i+j])
			}
			arg, haveArg = norm(v), true
			i += j + 1
		}
		start := i
		for i < len(s) && strings.IndexByte("-+ #0123456789.", s[i]) >= 0 {
			i++
		}
		if i >= len(s) {
			return nil, errors.New("incomplete format")
		}
		spec, verb := s[start:i], s[i]
		if verb == '%' {
			b.WriteByte('%')
			continue
		}
		if !haveArg {
			if n >= len(pos) {
				return nil, errors.New("not enough arguments for format string")
			}
			arg = norm(pos[n])
			n++
		}
		switch verb {
		case 's':
			fmt.Fprintf(&b, "%"+spec+"s", pyStr(arg))
		case 'r', 'a':
			fmt.Fprintf(&b, "%"+spec+"s", pyRepr(arg))
		case 'd', 'i', 'u':
			ni, nf, isInt, ok := number(arg)
			if !ok {
				return nil, fmt.Errorf("%%%c format: a real number is required, not %s", verb, typeName(arg))
			}
			if !isInt {
				ni = int64(nf)
			}
			fmt.Fprintf(&b, "%"+spec+"d", ni)
		case 'f', 'F', 'e', 'E', 'g', 'G':
			_, nf, _, ok := number(arg)
			if !ok {
				return nil, fmt.Errorf("must be real number, not %s", typeName(arg))
			}
			if !strings.Contains(spec, ".") && verb != 'g' && verb != 'G' {
				spec += ".6"
			}
			fmt.Fprintf(&b, "%"+spec+string(verb), nf)
		case 'x', 'X', 'o':
			ni, _, isInt, ok := number(arg)
			if !ok || !isInt {
				return nil, fmt.Errorf("%%%c format: an integer is required, not %s", verb, typeName(arg))
			}
			fmt.Fprintf(&b, "%"+spec+string(verb), ni)
		case 'c':
			switch v := arg.(type) {
			case int64:
				b.WriteRune(rune(v))
			case string:
				b.WriteString(v)
			}
		default:
			return nil, fmt.Errorf("unsupported format character '%c'", verb)
		}
	}
	if !isDict && n < len(pos) {
		return nil, errors.New("not all arguments converted during string formatting")
	}
	return b.String(), nil
}
