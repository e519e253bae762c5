package pyexpr

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tap-dev/tap/streammap/pyexpr/lang"
)

// The functions generated expressions call. Each keeps the meaning the
// Python built-in has in the SDK's expressions, and fails with Python's
// reason where Python would raise.

var pyFuncs = map[string]func(args ...any) (any, error){
	"py_truthy":     func(a ...any) (any, error) { return pyTruthy(a[0]), nil },
	"py_in":         pyIn,
	"py_floordiv":   pyFloorDiv,
	"py_mod":        pyMod,
	"py_pow":        pyPow,
	"py_attr":       pyAttr,
	"py_idx":        pyIdx,
	"py_slice":      pySlice,
	"py_str":        pyStrFunc,
	"py_int":        pyInt,
	"py_float":      pyFloat,
	"py_md5":        func(a ...any) (any, error) { return hashHex(a[0], "md5") },
	"py_sha256":     func(a ...any) (any, error) { return hashHex(a[0], "sha256") },
	"py_json_dumps": pyJSONDumps,
	"py_json_loads": pyJSONLoads,
	"py_datetime":   func(a ...any) (any, error) { return parseISO(a[0], false) },
	"py_date":       func(a ...any) (any, error) { return parseISO(a[0], true) },
	"py_method":     pyMethod,
}

// library is pyFuncs as programs call them, and the slots of the names
// they read. Most functions take their arguments boxed; the ones a map
// calls on every record (str(), md5(), sha256(), int(), float(), the
// truth of a value) take unboxed strings and numbers without allocating
// more than their result, and hand any other value to their boxed self.
var library = func() *lang.Library {
	lib := &lang.Library{Funcs: map[string]lang.Func{}, Unary: map[string]lang.Unary{}, Slot: slot}
	for name, f := range pyFuncs {
		lib.Funcs[name] = boxed(f)
	}
	for name, f := range map[string]func(slow lang.Func) lang.Unary{
		"py_truthy": unboxedTruthy,
		"py_str":    unboxedStr,
		"py_int":    unboxedInt,
		"py_float":  unboxedFloat,
		"py_md5":    unboxedHash("md5"),
		"py_sha256": unboxedHash("sha256"),
	} {
		lib.Unary[name] = f(lib.Funcs[name])
	}
	return lib
}()

// boxed is f called with boxed arguments.
func boxed(f func(args ...any) (any, error)) lang.Func {
	return func(args []lang.Value) (lang.Value, error) {
		a := make([]any, len(args))
		for i, v := range args {
			a[i] = v.Any()
		}
		r, err := f(a...)
		return lang.Of(r), err
	}
}

// slowly calls slow with v, boxed.
func slowly(slow lang.Func, v lang.Value) (lang.Value, error) { return slow([]lang.Value{v}) }

func unboxedTruthy(slow lang.Func) lang.Unary {
	return func(e *lang.Env, v lang.Value) (lang.Value, error) {
		switch v.Kind() {
		case lang.Nil:
			return lang.BoolValue(false), nil
		case lang.Bool:
			return v, nil
		case lang.Int:
			return lang.BoolValue(v.Int() != 0), nil
		case lang.Float:
			return lang.BoolValue(v.Float() != 0), nil
		case lang.String:
			return lang.BoolValue(v.Str() != ""), nil
		}
		return slowly(slow, v)
	}
}

func unboxedStr(slow lang.Func) lang.Unary {
	return func(e *lang.Env, v lang.Value) (lang.Value, error) {
		switch v.Kind() {
		case lang.String:
			return v, nil
		case lang.Int:
			return lang.StringValue(strconv.Itoa(v.Int())), nil
		case lang.Float:
			return lang.StringValue(pyFloatRepr(v.Float())), nil
		case lang.Nil, lang.Bool:
			return lang.StringValue(pyStr(v.Any())), nil // constants: no allocation
		}
		return slowly(slow, v)
	}
}

func unboxedInt(slow lang.Func) lang.Unary {
	return func(e *lang.Env, v lang.Value) (lang.Value, error) {
		switch v.Kind() {
		case lang.Int:
			return v, nil
		case lang.Float:
			if f := v.Float(); f >= -(1<<63) && f < 1<<63 {
				return lang.IntValue(int(f)), nil
			}
		}
		return slowly(slow, v)
	}
}

func unboxedFloat(slow lang.Func) lang.Unary {
	return func(e *lang.Env, v lang.Value) (lang.Value, error) {
		switch v.Kind() {
		case lang.Int:
			return lang.FloatValue(float64(v.Int())), nil
		case lang.Float:
			return v, nil
		}
		return slowly(slow, v)
	}
}

func unboxedHash(algo string) func(slow lang.Func) lang.Unary {
	size := 2 * md5.Size
	if algo == "sha256" {
		size = 2 * sha256.Size
	}
	return func(slow lang.Func) lang.Unary {
		return func(e *lang.Env, v lang.Value) (lang.Value, error) {
			if v.Kind() != lang.String {
				return slowly(slow, v) // it names the type
			}
			return lang.StringBytes(hexSum(e.Bytes(size)[:0], v.Str(), algo)), nil
		}
	}
}

// pyTime is a Python datetime (date false) or date (date true).
type pyTime struct {
	t     time.Time
	naive bool // no UTC offset was given
	date  bool
}

func (p pyTime) isoformat(sep byte) string {
	if p.date {
		return p.t.Format("2006-01-02")
	}
	layout := "2006-01-02T15:04:05"
	if sep != 'T' {
		layout = "2006-01-02 15:04:05"
	}
	if p.t.Nanosecond() != 0 {
		layout += ".000000"
	}
	if !p.naive {
		layout += "-07:00"
	}
	return p.t.Format(layout)
}

// Normalize turns a decoded JSON number into int (when integral and in
// range) or float64, the numbers expressions compute with. A number
// beyond float64 is ±inf, as Python's json reads it.
func Normalize(v any) any {
	switch n := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return int(i)
		}
		if len(n) > 18 { // ParseInt took every shorter integer
			if b, ok := bigInteger(string(n)); ok {
				return b // an integer beyond int64 is exact, as in Python
			}
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err == nil || math.IsInf(f, 0) {
			return f
		}
	case int64:
		return int(n)
	case *big.Int:
		if n.IsInt64() {
			return int(n.Int64())
		}
	case int32:
		return int(n)
	case float32:
		return float64(n)
	}
	return v
}

func pyTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int, *big.Int:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	case pyTime:
		return "datetime"
	case json.Number:
		return "number" // a record's number not yet made an int or float
	}
	return fmt.Sprintf("%T", v)
}

func pyTruthy(v any) bool {
	switch v := Normalize(v).(type) {
	case nil:
		return false
	case bool:
		return v
	case int:
		return v != 0
	case *big.Int:
		return v.Sign() != 0
	case float64:
		return v != 0
	case string:
		return v != ""
	case []any:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	}
	return true
}

func pyEqual(a, b any) bool {
	a, b = Normalize(a), Normalize(b)
	if isBig(a) || isBig(b) {
		return pyCompare(a, b) == 0
	}
	switch x := a.(type) {
	case int:
		switch y := b.(type) {
		case int:
			return x == y
		case float64:
			return float64(x) == y
		}
	case float64:
		switch y := b.(type) {
		case int:
			return x == float64(y)
		case float64:
			return x == y
		}
	case string, bool, nil:
		return a == b
	}
	return false
}

func pyIn(a ...any) (any, error) {
	x, coll := Normalize(a[0]), a[1]
	switch c := coll.(type) {
	case string:
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("'in <string>' requires string as left operand, not %s", pyTypeName(x))
		}
		return strings.Contains(c, s), nil
	case []any:
		return slices.ContainsFunc(c, func(e any) bool { return pyEqual(e, x) }), nil
	case map[string]any:
		s, ok := x.(string)
		if !ok {
			return false, nil
		}
		_, found := c[s]
		return found, nil
	}
	return nil, fmt.Errorf("argument of type '%s' is not iterable", pyTypeName(coll))
}

func numbers(op string, a, b any) (ai, bi int, af, bf float64, ints bool, err error) {
	a, b = Normalize(a), Normalize(b)
	switch x := a.(type) {
	case int:
		ai, af = x, float64(x)
	case float64:
		af = x
	case *big.Int:
		if af, err = lang.BigFloat(x); err != nil {
			return 0, 0, 0, 0, false, err
		}
	default:
		return 0, 0, 0, 0, false, fmt.Errorf("unsupported operand type(s) for %s: '%s' and '%s'", op, pyTypeName(a), pyTypeName(b))
	}
	switch y := b.(type) {
	case int:
		bi, bf = y, float64(y)
	case float64:
		bf = y
	case *big.Int:
		if bf, err = lang.BigFloat(y); err != nil {
			return 0, 0, 0, 0, false, err
		}
	default:
		return 0, 0, 0, 0, false, fmt.Errorf("unsupported operand type(s) for %s: '%s' and '%s'", op, pyTypeName(a), pyTypeName(b))
	}
	_, aInt := a.(int)
	_, bInt := b.(int)
	return ai, bi, af, bf, aInt && bInt, nil
}

func pyFloorDiv(a ...any) (any, error) {
	if x, y, ok := bigPair(a[0], a[1]); ok {
		if y.Sign() == 0 {
			return nil, fmt.Errorf("division by zero")
		}
		q, _ := floorDivMod(x, y)
		return bigResult(q)
	}
	ai, bi, af, bf, ints, err := numbers("//", a[0], a[1])
	if err != nil {
		return nil, err
	}
	if bf == 0 {
		return nil, fmt.Errorf("division by zero")
	}
	if ints && !(ai == math.MinInt && bi == -1) {
		q := ai / bi
		if (ai%bi != 0) && ((ai < 0) != (bi < 0)) {
			q--
		}
		return q, nil
	}
	if ints { // math.MinInt // -1 leaves int
		return bigResult(new(big.Int).Neg(big.NewInt(math.MinInt)))
	}
	return math.Floor(af / bf), nil
}

func pyMod(a ...any) (any, error) {
	if s, ok := a[0].(string); ok {
		return nil, fmt.Errorf("%%-formatting of strings is not supported: %q", s)
	}
	if x, y, ok := bigPair(a[0], a[1]); ok {
		if y.Sign() == 0 {
			return nil, fmt.Errorf("modulo by zero")
		}
		_, m := floorDivMod(x, y)
		return bigResult(m)
	}
	ai, bi, af, bf, ints, err := numbers("%", a[0], a[1])
	if err != nil {
		return nil, err
	}
	if bf == 0 {
		return nil, fmt.Errorf("modulo by zero")
	}
	if ints {
		m := ai % bi
		if m != 0 && (m < 0) != (bi < 0) {
			m += bi
		}
		return m, nil
	}
	m := math.Mod(af, bf)
	if m != 0 && (m < 0) != (bf < 0) {
		m += bf
	}
	return m, nil
}

func pyPow(a ...any) (any, error) {
	if x, y, ok := intPair(a[0], a[1]); ok && y.Sign() >= 0 {
		switch {
		case x.CmpAbs(big.NewInt(1)) <= 0: // 0, 1, -1: no size to fear
			if x.Sign() < 0 && y.Bit(0) == 0 {
				return 1, nil
			}
			if x.Sign() == 0 && y.Sign() == 0 {
				return 1, nil
			}
			return int(x.Int64()), nil
		case !y.IsInt64() || y.Int64() > 14290 || int64(x.BitLen()-1)*y.Int64() > 14290:
			// |x| ≥ 2: the result has at least (bits of x - 1) × y + 1 bits.
			return nil, fmt.Errorf("integer result has more than %d digits", lang.MaxIntDigits)
		}
		return bigResult(new(big.Int).Exp(x, y, nil))
	}
	_, _, af, bf, _, err := numbers("**", a[0], a[1])
	if err != nil {
		return nil, err
	}
	return math.Pow(af, bf), nil
}

// bigInteger is s as a big integer when it is one in JSON's syntax, of
// at most lang.MaxIntDigits digits (Python refuses more).
func bigInteger(s string) (*big.Int, bool) {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || len(digits) > lang.MaxIntDigits || strings.Trim(digits, "0123456789") != "" {
		return nil, false
	}
	return new(big.Int).SetString(s, 10)
}

// isBig is whether v is an integer beyond int64 (Normalize leaves only
// those as *big.Int).
func isBig(v any) bool {
	_, ok := v.(*big.Int)
	return ok
}

// intPair is a and b as big integers when both are ints.
func intPair(a, b any) (x, y *big.Int, ok bool) {
	toBig := func(v any) (*big.Int, bool) {
		switch v := Normalize(v).(type) {
		case int:
			return big.NewInt(int64(v)), true
		case *big.Int:
			return v, true
		}
		return nil, false
	}
	x, xok := toBig(a)
	y, yok := toBig(b)
	return x, y, xok && yok
}

// bigPair is intPair when one of a and b at least is beyond int64.
func bigPair(a, b any) (x, y *big.Int, ok bool) {
	if !isBig(Normalize(a)) && !isBig(Normalize(b)) {
		return nil, nil, false
	}
	return intPair(a, b)
}

// floorDivMod is Python's x // y and x % y: the quotient rounded down,
// the remainder of y's sign.
func floorDivMod(x, y *big.Int) (q, m *big.Int) {
	q, m = new(big.Int).QuoRem(x, y, new(big.Int))
	if m.Sign() != 0 && (m.Sign() < 0) != (y.Sign() < 0) {
		q.Sub(q, big.NewInt(1))
		m.Add(m, y)
	}
	return q, m
}

// bigResult is an integer result: an int when it fits, else z.
func bigResult(z *big.Int) (any, error) {
	v, err := lang.BigValue(z)
	return v.Any(), err
}

// pyCompare orders two numbers of which one at least is a big int,
// exactly: -1, 0 or 1, or 2 when either is NaN or not a number.
func pyCompare(a, b any) int {
	f := func(v any) (*big.Float, bool) {
		switch v := v.(type) {
		case int:
			return new(big.Float).SetInt64(int64(v)), true
		case *big.Int:
			return new(big.Float).SetInt(v), true
		case float64:
			if math.IsNaN(v) {
				return nil, false
			}
			return big.NewFloat(v), true
		}
		return nil, false
	}
	x, xok := f(a)
	y, yok := f(b)
	if !xok || !yok {
		return 2
	}
	return x.Cmp(y)
}

func pyAttr(a ...any) (any, error) {
	t, ok := a[0].(pyTime)
	name := a[1].(string)
	if !ok {
		return nil, fmt.Errorf("'%s' object has no attribute '%s'", pyTypeName(Normalize(a[0])), name)
	}
	if t.date && name != "year" && name != "month" && name != "day" {
		return nil, fmt.Errorf("'date' object has no attribute '%s'", name)
	}
	switch name {
	case "year":
		return t.t.Year(), nil
	case "month":
		return int(t.t.Month()), nil
	case "day":
		return t.t.Day(), nil
	case "hour":
		return t.t.Hour(), nil
	case "minute":
		return t.t.Minute(), nil
	case "second":
		return t.t.Second(), nil
	case "microsecond":
		return t.t.Nanosecond() / 1000, nil
	}
	return nil, fmt.Errorf("'datetime' object has no attribute '%s'", name)
}

func index(i, n int) (int, bool) {
	if i < 0 {
		i += n
	}
	return i, i >= 0 && i < n
}

// pyIdx is x[k]. A key missing from an object reads as None rather than
// failing the run: APIs leave out null properties.
func pyIdx(a ...any) (any, error) {
	x, k := a[0], Normalize(a[1])
	switch x := x.(type) {
	case map[string]any:
		s, ok := k.(string)
		if !ok {
			return nil, nil
		}
		return Normalize(x[s]), nil
	case []any:
		i, ok := k.(int)
		if !ok {
			return nil, fmt.Errorf("list indices must be integers, not %s", pyTypeName(k))
		}
		j, ok := index(i, len(x))
		if !ok {
			return nil, fmt.Errorf("list index out of range")
		}
		return Normalize(x[j]), nil
	case string:
		i, ok := k.(int)
		if !ok {
			return nil, fmt.Errorf("string indices must be integers, not %s", pyTypeName(k))
		}
		r := []rune(x)
		j, ok := index(i, len(r))
		if !ok {
			return nil, fmt.Errorf("string index out of range")
		}
		return string(r[j]), nil
	}
	return nil, fmt.Errorf("'%s' object is not subscriptable", pyTypeName(Normalize(x)))
}

func sliceBounds(lo, hi any, n int) (int, int, error) {
	bound := func(v any, def int) (int, error) {
		if v == nil {
			return def, nil
		}
		i, ok := Normalize(v).(int)
		if !ok {
			return 0, fmt.Errorf("slice indices must be integers or None")
		}
		if i < 0 {
			i += n
		}
		return min(max(i, 0), n), nil
	}
	l, err := bound(lo, 0)
	if err != nil {
		return 0, 0, err
	}
	h, err := bound(hi, n)
	if err != nil {
		return 0, 0, err
	}
	return l, max(l, h), nil
}

func pySlice(a ...any) (any, error) {
	switch x := a[0].(type) {
	case string:
		r := []rune(x)
		l, h, err := sliceBounds(a[1], a[2], len(r))
		if err != nil {
			return nil, err
		}
		return string(r[l:h]), nil
	case []any:
		l, h, err := sliceBounds(a[1], a[2], len(x))
		if err != nil {
			return nil, err
		}
		return slices.Clone(x[l:h]), nil
	}
	return nil, fmt.Errorf("'%s' object is not subscriptable", pyTypeName(Normalize(a[0])))
}

// pyFloatRepr writes a float as Python's repr does.
func pyFloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	if f != 0 {
		if exp := math.Floor(math.Log10(math.Abs(f))); exp < -4 || exp >= 16 {
			s := strconv.FormatFloat(f, 'e', -1, 64)
			return s
		}
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// pyStrFunc is str(); a string comes back as it was given, not boxed
// again.
func pyStrFunc(a ...any) (any, error) {
	if _, ok := a[0].(string); ok {
		return a[0], nil
	}
	return pyStr(a[0]), nil
}

func pyStr(v any) string {
	switch v := Normalize(v).(type) {
	case string:
		return v
	case nil:
		return "None"
	case bool:
		if v {
			return "True"
		}
		return "False"
	case int:
		return strconv.Itoa(v)
	case *big.Int:
		return v.String()
	case float64:
		return pyFloatRepr(v)
	case pyTime:
		return v.isoformat(' ')
	case []any, map[string]any:
		return pyRepr(v)
	case json.Number:
		return string(v) // not a number Normalize reads
	default:
		// Not pyRepr, which comes back here for whatever it does not
		// know.
		return fmt.Sprint(v)
	}
}

func pyRepr(v any) string {
	switch v := Normalize(v).(type) {
	case string:
		return "'" + strings.ReplaceAll(strings.ReplaceAll(v, `\`, `\\`), "'", `\'`) + "'"
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := slices.Sorted(maps.Keys(v))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = pyRepr(k) + ": " + pyRepr(v[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	default:
		return pyStr(v)
	}
}

func pyInt(a ...any) (any, error) {
	switch v := Normalize(a[0]).(type) {
	case int, *big.Int:
		return v, nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("cannot convert float %s to integer", pyFloatRepr(v))
		}
		if v >= -(1<<63) && v < 1<<63 {
			return int(v), nil
		}
		z, _ := big.NewFloat(v).Int(nil) // an integer already: exact
		return bigResult(z)
	case bool:
		if v {
			return 1, nil
		}
		return 0, nil
	case string:
		text := strings.TrimPrefix(strings.ReplaceAll(strings.TrimSpace(v), "_", ""), "+")
		if i, err := strconv.Atoi(text); err == nil {
			return i, nil
		}
		if z, ok := bigInteger(text); ok {
			return bigResult(z)
		}
		return nil, fmt.Errorf("invalid literal for int() with base 10: %s", pyRepr(v))
	case nil:
		return nil, fmt.Errorf("int() argument must be a string or a real number, not 'NoneType'")
	default:
		return nil, fmt.Errorf("int() argument must be a string or a real number, not '%s'", pyTypeName(v))
	}
}

func pyFloat(a ...any) (any, error) {
	switch v := Normalize(a[0]).(type) {
	case int:
		return float64(v), nil
	case *big.Int:
		return lang.BigFloat(v)
	case float64:
		return v, nil
	case bool:
		if v {
			return 1.0, nil
		}
		return 0.0, nil
	case string:
		f, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(v), "_", ""), 64)
		if err != nil {
			return nil, fmt.Errorf("could not convert string to float: %s", pyRepr(v))
		}
		return f, nil
	default:
		return nil, fmt.Errorf("float() argument must be a string or a real number, not '%s'", pyTypeName(v))
	}
}

func hashHex(v any, algo string) (any, error) {
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("%s() needs a string, got '%s' (wrap it in str())", algo, pyTypeName(Normalize(v)))
	}
	var text [2 * sha256.Size]byte
	return string(hexSum(text[:0], s, algo)), nil
}

// hexSum appends the md5 or sha256 of s in hex to dst.
func hexSum(dst []byte, s, algo string) []byte {
	if algo == "md5" {
		sum := md5.Sum([]byte(s))
		return appendHex(dst, sum[:])
	}
	sum := sha256.Sum256([]byte(s))
	return appendHex(dst, sum[:])
}

// appendHex is hex.AppendEncode, without its growing and general loop:
// a hash per record, where they cost more than the hash's tail does.
func appendHex(dst, b []byte) []byte {
	const digits = "0123456789abcdef"
	for len(b) >= 4 {
		dst = append(dst, digits[b[0]>>4], digits[b[0]&15], digits[b[1]>>4], digits[b[1]&15],
			digits[b[2]>>4], digits[b[2]&15], digits[b[3]>>4], digits[b[3]&15])
		b = b[4:]
	}
	for _, c := range b {
		dst = append(dst, digits[c>>4], digits[c&15])
	}
	return dst
}

// pyJSONDumps writes JSON as Python's json.dumps does by default: ", "
// and ": " separators, non-ASCII escaped. Object keys come sorted: the
// decoded record keeps no order.
func pyJSONDumps(a ...any) (any, error) {
	var b strings.Builder
	if err := appendPyJSON(&b, a[0]); err != nil {
		return nil, err
	}
	return b.String(), nil
}

func appendPyJSON(b *strings.Builder, v any) error {
	switch v := v.(type) {
	case json.Number:
		b.WriteString(string(v))
		return nil
	case pyTime:
		// json.dumps(x, default=str)
		v1 := pyStr(v)
		return appendPyJSON(b, v1)
	}
	switch v := Normalize(v).(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case int:
		b.WriteString(strconv.Itoa(v))
	case *big.Int:
		b.WriteString(v.String())
	case float64:
		switch {
		case math.IsNaN(v):
			b.WriteString("NaN")
		case math.IsInf(v, 1):
			b.WriteString("Infinity")
		case math.IsInf(v, -1):
			b.WriteString("-Infinity")
		default:
			b.WriteString(pyFloatRepr(v))
		}
	case string:
		b.WriteByte('"')
		for _, r := range v {
			switch {
			case r == '"' || r == '\\':
				b.WriteByte('\\')
				b.WriteRune(r)
			case r == '\n':
				b.WriteString(`\n`)
			case r == '\r':
				b.WriteString(`\r`)
			case r == '\t':
				b.WriteString(`\t`)
			case r < 0x20 || r >= 0x7f:
				if r > 0xffff {
					r1, r2 := utf16Pair(r)
					fmt.Fprintf(b, `\u%04x\u%04x`, r1, r2)
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
			if err := appendPyJSON(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := appendPyJSON(b, k); err != nil {
				return err
			}
			b.WriteString(": ")
			if err := appendPyJSON(b, v[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("object of type %s is not JSON serializable", pyTypeName(v))
	}
	return nil
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

func pyJSONLoads(a ...any) (any, error) {
	s, ok := a[0].(string)
	if !ok {
		return nil, fmt.Errorf("the JSON object must be str, not %s", pyTypeName(Normalize(a[0])))
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("json.loads: %v", err)
	}
	return Normalize(v), nil
}

var isoLayouts = []struct {
	layout string
	naive  bool
}{
	{"2006-01-02T15:04:05.999999999Z07:00", false},
	{"2006-01-02T15:04:05.999999999", true},
	{"2006-01-02 15:04:05.999999999Z07:00", false},
	{"2006-01-02 15:04:05.999999999", true},
	{"2006-01-02T15:04Z07:00", false},
	{"2006-01-02T15:04", true},
	{"2006-01-02", true},
}

// parseISO is datetime.fromisoformat (or date.fromisoformat).
func parseISO(v any, dateOnly bool) (any, error) {
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("fromisoformat: argument must be str, not %s", pyTypeName(Normalize(v)))
	}
	if dateOnly {
		t, err := time.Parse("2006-01-02", s)
		if err != nil {
			return nil, fmt.Errorf("Invalid isoformat string: %s", pyRepr(s))
		}
		return pyTime{t: t, naive: true, date: true}, nil
	}
	for _, l := range isoLayouts {
		if t, err := time.Parse(l.layout, s); err == nil {
			return pyTime{t: t, naive: l.naive}, nil
		}
	}
	return nil, fmt.Errorf("Invalid isoformat string: %s", pyRepr(s))
}

func pyMethod(a ...any) (any, error) {
	recv, name, args := a[0], a[1].(string), a[2:]
	strArg := func(i int) (string, error) {
		s, ok := args[i].(string)
		if !ok {
			return "", fmt.Errorf(".%s() argument must be str, not %s", name, pyTypeName(Normalize(args[i])))
		}
		return s, nil
	}
	switch r := recv.(type) {
	case string:
		switch name {
		case "lower":
			return strings.ToLower(r), nil
		case "upper":
			return strings.ToUpper(r), nil
		case "title":
			return pyTitle(r), nil
		case "strip", "lstrip", "rstrip":
			if len(args) == 0 || args[0] == nil {
				switch name {
				case "strip":
					return strings.TrimSpace(r), nil
				case "lstrip":
					return strings.TrimLeftFunc(r, unicode.IsSpace), nil
				}
				return strings.TrimRightFunc(r, unicode.IsSpace), nil
			}
			cut, err := strArg(0)
			if err != nil {
				return nil, err
			}
			switch name {
			case "strip":
				return strings.Trim(r, cut), nil
			case "lstrip":
				return strings.TrimLeft(r, cut), nil
			}
			return strings.TrimRight(r, cut), nil
		case "split":
			var parts []string
			limit := -1
			if len(args) == 2 {
				n, ok := Normalize(args[1]).(int)
				if !ok {
					return nil, fmt.Errorf(".split() maxsplit must be an integer")
				}
				if n >= 0 {
					limit = n + 1
				}
			}
			if len(args) == 0 || args[0] == nil {
				parts = strings.Fields(r)
				if limit > 0 && len(parts) > limit {
					// Python keeps the rest of the string whole.
					rest := r
					parts = parts[:0]
					for range limit - 1 {
						rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
						i := strings.IndexFunc(rest, unicode.IsSpace)
						parts = append(parts, rest[:i])
						rest = rest[i:]
					}
					parts = append(parts, strings.TrimLeftFunc(rest, unicode.IsSpace))
				}
			} else {
				sep, err := strArg(0)
				if err != nil {
					return nil, err
				}
				if sep == "" {
					return nil, fmt.Errorf("empty separator")
				}
				parts = strings.SplitN(r, sep, limit)
			}
			out := make([]any, len(parts))
			for i, p := range parts {
				out[i] = p
			}
			return out, nil
		case "startswith", "endswith":
			s, err := strArg(0)
			if err != nil {
				return nil, err
			}
			if name == "startswith" {
				return strings.HasPrefix(r, s), nil
			}
			return strings.HasSuffix(r, s), nil
		case "replace":
			old, err := strArg(0)
			if err != nil {
				return nil, err
			}
			repl, err := strArg(1)
			if err != nil {
				return nil, err
			}
			return strings.ReplaceAll(r, old, repl), nil
		case "join":
			items, ok := args[0].([]any)
			if !ok {
				return nil, fmt.Errorf("can only join a list")
			}
			parts := make([]string, len(items))
			for i, it := range items {
				s, ok := it.(string)
				if !ok {
					return nil, fmt.Errorf("sequence item %d: expected str instance, %s found", i, pyTypeName(Normalize(it)))
				}
				parts[i] = s
			}
			return strings.Join(parts, r), nil
		}
	case map[string]any:
		if name == "get" {
			k, ok := args[0].(string)
			v, found := r[k]
			if !ok || !found {
				if len(args) == 2 {
					return args[1], nil
				}
				return nil, nil
			}
			return Normalize(v), nil
		}
	case pyTime:
		switch name {
		case "date":
			return pyTime{t: time.Date(r.t.Year(), r.t.Month(), r.t.Day(), 0, 0, 0, 0, time.UTC), naive: true, date: true}, nil
		case "timestamp":
			if r.date {
				break
			}
			return float64(r.t.UnixNano()) / 1e9, nil
		case "isoformat":
			return r.isoformat('T'), nil
		case "strftime":
			f, err := strArg(0)
			if err != nil {
				return nil, err
			}
			return strftime(r, f)
		}
	}
	return nil, fmt.Errorf("'%s' object has no attribute '%s'", pyTypeName(Normalize(recv)), name)
}

func pyTitle(s string) string {
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
		} else {
			b.WriteRune(r)
			prev = false
		}
	}
	return b.String()
}

// strftime formats with C's directives, the ones Python documents as
// portable.
func strftime(p pyTime, f string) (string, error) {
	var b bytes.Buffer
	t := p.t
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' || i+1 == len(f) {
			b.WriteByte(c)
			continue
		}
		i++
		switch f[i] {
		case 'Y':
			fmt.Fprintf(&b, "%04d", t.Year())
		case 'y':
			fmt.Fprintf(&b, "%02d", t.Year()%100)
		case 'm':
			fmt.Fprintf(&b, "%02d", int(t.Month()))
		case 'd':
			fmt.Fprintf(&b, "%02d", t.Day())
		case 'H':
			fmt.Fprintf(&b, "%02d", t.Hour())
		case 'I':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			fmt.Fprintf(&b, "%02d", h)
		case 'M':
			fmt.Fprintf(&b, "%02d", t.Minute())
		case 'S':
			fmt.Fprintf(&b, "%02d", t.Second())
		case 'f':
			fmt.Fprintf(&b, "%06d", t.Nanosecond()/1000)
		case 'p':
			b.WriteString(t.Format("PM"))
		case 'j':
			fmt.Fprintf(&b, "%03d", t.YearDay())
		case 'a':
			b.WriteString(t.Format("Mon"))
		case 'A':
			b.WriteString(t.Format("Monday"))
		case 'b':
			b.WriteString(t.Format("Jan"))
		case 'B':
			b.WriteString(t.Format("January"))
		case 'z':
			if !p.naive {
				b.WriteString(t.Format("-0700"))
			}
		case 'Z':
			if !p.naive {
				b.WriteString(t.Format("MST"))
			}
		case '%':
			b.WriteByte('%')
		default:
			return "", fmt.Errorf("strftime directive %%%c is not supported", f[i])
		}
	}
	if !utf8.Valid(b.Bytes()) {
		return "", fmt.Errorf("strftime produced invalid UTF-8")
	}
	return b.String(), nil
}

// RuntimeError keeps the first line of a runtime error.
func RuntimeError(err error) error {
	return errors.New(firstLine(strings.TrimPrefix(err.Error(), "runtime error: ")))
}

// Value turns an expression's result into a record value as the
// decoder makes them (json.Number for numbers), dates into ISO text.
func Value(v any) (any, error) {
	switch v := v.(type) {
	case int:
		return json.Number(strconv.Itoa(v)), nil
	case *big.Int:
		return json.Number(v.String()), nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("result %s is not a JSON number", pyFloatRepr(v))
		}
		return json.Number(pyFloatRepr(v)), nil
	case pyTime:
		return v.isoformat('T'), nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			var err error
			if out[i], err = Value(e); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			var err error
			if out[k], err = Value(e); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return v, nil
}
