package lang

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"unsafe"
)

// Kind is what a Value holds.
type Kind uint8

const (
	Nil Kind = iota
	Bool
	Int
	Float
	String
	Other // lists, maps and whatever else a function returns, boxed
)

// Value is a value a program computes with. Strings, integers, floats
// and booleans are held unboxed: a program runs once per record, and
// boxing each of them into an interface would cost an allocation each
// time a record's property is read or a result computed.
//
// It is three words, not a string and an interface side by side: the
// compiler keeps a struct of up to four words in registers, and copies a
// larger one through memory, where each copy of a value just returned
// waits on the stores that made it (a store-forwarding stall on every
// step of a program).
type Value struct {
	kind Kind
	n    int            // Int; Bool: 0 or 1; Float: its bits; String: its length
	p    unsafe.Pointer // String: its bytes; Other: an *any
}

// NilValue is None.
var NilValue = Value{}

// StringValue, IntValue, FloatValue and BoolValue make a Value.
func StringValue(s string) Value {
	return Value{kind: String, n: len(s), p: unsafe.Pointer(unsafe.StringData(s))}
}
func IntValue(n int) Value       { return Value{kind: Int, n: n} }
func FloatValue(f float64) Value { return Value{kind: Float, n: int(math.Float64bits(f))} }

// StringBytes is a String of b's bytes, not copied, for a caller that
// keeps neither it nor anything made of it (a program's result, an
// error) once b changes.
func StringBytes(b []byte) Value {
	if len(b) == 0 {
		return StringValue("")
	}
	return Value{kind: String, n: len(b), p: unsafe.Pointer(&b[0])}
}

func BoolValue(b bool) Value {
	v := Value{kind: Bool}
	if b {
		v.n = 1
	}
	return v
}

// Kind is what v holds; Str, Int, Float and Bool are its value when it
// holds that kind (Str is "" otherwise).
func (v Value) Kind() Kind     { return v.kind }
func (v Value) Int() int       { return v.n }
func (v Value) Float() float64 { return math.Float64frombits(uint64(v.n)) }
func (v Value) Bool() bool     { return v.kind == Bool && v.n != 0 }

func (v Value) Str() string {
	if v.kind != String {
		return ""
	}
	return unsafe.String((*byte)(v.p), v.n)
}

// Of is x as a Value: nil, bool, int, float64 and string unboxed, any
// other type (int64, json.Number, lists, maps) held as it is, so that
// Of(x).Any() is x.
func Of(x any) Value {
	switch x := x.(type) {
	case nil:
		return Value{}
	case bool:
		return BoolValue(x)
	case int:
		return IntValue(x)
	case float64:
		return FloatValue(x)
	case string:
		return StringValue(x)
	}
	return other(x)
}

// other is x held as Other.
func other(x any) Value { return Value{kind: Other, p: unsafe.Pointer(&x)} }

// Any is v boxed, as the functions of package pyexpr and its callers
// take values.
func (v Value) Any() any {
	switch v.kind {
	case Bool:
		return v.n != 0
	case Int:
		return v.n
	case Float:
		return v.Float()
	case String:
		return v.Str()
	case Other:
		return *(*any)(v.p)
	}
	return nil
}

// number is v as a float64 when it is an int or a float64.
func number(v Value) (float64, bool) {
	switch v.kind {
	case Int:
		return float64(v.n), true
	case Float:
		return v.Float(), true
	}
	return 0, false
}

// typeName is the name of v's type in an error a user reads: a record's
// values by their JSON names, not by the Go types that hold them.
func typeName(v Value) string {
	switch {
	case v.kind == Nil:
		return "nil"
	case isBig(v):
		return "int"
	}
	switch v.Any().(type) {
	case json.Number, int64:
		return "number"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	}
	return fmt.Sprintf("%T", v.Any())
}

func sameKind(a, b Value) bool {
	return a.kind == Nil || b.kind == Nil || numeric(a) && numeric(b) || reflect.TypeOf(a.Any()) == reflect.TypeOf(b.Any())
}

// equal is expr's ==: numbers by value whatever their type, lists
// element by element, anything else deeply.
func equal(a, b Value) bool {
	if isBig(a) || isBig(b) {
		c, ok := cmpNumbers(a, b)
		return ok && numeric(a) && numeric(b) && c == 0
	}
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	switch {
	case a.kind != b.kind:
		return false
	case a.kind == String:
		return a.Str() == b.Str()
	case a.kind == Bool:
		return a.n == b.n
	case a.kind == Nil:
		return true
	}
	ax, bx := a.Any(), b.Any()
	if x, ok := ax.([]any); ok {
		y, ok := bx.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(Of(x[i]), Of(y[i])) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(ax, bx)
}

func mismatched(op string, a, b Value) error {
	return fmt.Errorf("invalid operation: %s %s %s", typeName(a), op, typeName(b))
}

// binaryOps hold expr's meaning of the binary operators (but && ||),
// with Python's integers: exact at any size (bigint.go).
var binaryOps = map[string]func(a, b Value) (Value, error){
	"+": func(a, b Value) (Value, error) {
		switch {
		case a.kind == Int && b.kind == Int:
			if s, ok := addInt(a.n, b.n); ok {
				return IntValue(s), nil
			}
		case a.kind == String && b.kind == String:
			return StringValue(a.Str() + b.Str()), nil
		}
		return arith("+", a, b, func(x, y float64) float64 { return x + y })
	},
	"-": func(a, b Value) (Value, error) {
		if a.kind == Int && b.kind == Int {
			if d, ok := subInt(a.n, b.n); ok {
				return IntValue(d), nil
			}
		}
		return arith("-", a, b, func(x, y float64) float64 { return x - y })
	},
	"*": func(a, b Value) (Value, error) {
		if a.kind == Int && b.kind == Int {
			if p, ok := mulInt(a.n, b.n); ok {
				return IntValue(p), nil
			}
		}
		return arith("*", a, b, func(x, y float64) float64 { return x * y })
	},
	"/": func(a, b Value) (Value, error) {
		if isBig(a) && integer(b) || isBig(b) && integer(a) {
			return bigDiv(a, b)
		}
		return floatArith("/", a, b, func(x, y float64) float64 { return x / y })
	},
	"==": func(a, b Value) (Value, error) { return BoolValue(equal(a, b)), nil },
	"!=": func(a, b Value) (Value, error) { return BoolValue(!equal(a, b)), nil },
	"<":  ordered("<", func(c int) bool { return c < 0 }),
	"<=": ordered("<=", func(c int) bool { return c <= 0 }),
	">":  ordered(">", func(c int) bool { return c > 0 }),
	">=": ordered(">=", func(c int) bool { return c >= 0 }),
}

// arith applies an arithmetic operator to what its int fast path left:
// ints stay ints (exact, bigint.go), a float64 on either side makes both
// float64.
func arith(op string, a, b Value, f func(x, y float64) float64) (Value, error) {
	if integer(a) && integer(b) {
		return bigArith(op, a, b)
	}
	return floatArith(op, a, b, f)
}

// floatArith applies f to both operands as float64.
func floatArith(op string, a, b Value, f func(x, y float64) float64) (Value, error) {
	x, xok, err := bigNumber(a)
	if err != nil {
		return Value{}, err
	}
	y, yok, err := bigNumber(b)
	if err != nil {
		return Value{}, err
	}
	if !xok || !yok {
		return Value{}, mismatched(op, a, b)
	}
	return FloatValue(f(x, y)), nil
}

// ordered is a comparison of numbers with numbers, strings with strings.
func ordered(op string, holds func(c int) bool) func(a, b Value) (Value, error) {
	return func(a, b Value) (Value, error) {
		if a.kind == Int && b.kind == Int {
			return BoolValue(holds(cmpInt(a.n, b.n))), nil
		}
		if a.kind == String && b.kind == String {
			return BoolValue(holds(strings.Compare(a.Str(), b.Str()))), nil
		}
		if (isBig(a) || isBig(b)) && numeric(a) && numeric(b) {
			c, ok := cmpNumbers(a, b)
			return BoolValue(ok && holds(c)), nil // NaN compares false
		}
		x, xok := number(a)
		y, yok := number(b)
		if !xok || !yok {
			return Value{}, mismatched(op, a, b)
		}
		// NaN compares false every way, as in Go and expr.
		switch {
		case x < y:
			return BoolValue(holds(-1)), nil
		case x > y:
			return BoolValue(holds(1)), nil
		case x == y:
			return BoolValue(holds(0)), nil
		}
		return BoolValue(false), nil
	}
}

func cmpInt(x, y int) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}
