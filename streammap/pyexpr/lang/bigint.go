package lang

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
)

// Integers are Python's: exact at any size. An int that leaves int64 is
// a *big.Int held as Other, and back to Int once it fits again, so the
// arithmetic of small ints stays unboxed and checks only for overflow.
// As Python refuses to write an int of more than 4,300 digits
// (sys.get_int_max_str_digits), a result longer than that fails the
// record here rather than grow without end (2 ** 10 ** 9).

// MaxIntDigits bounds the digits of an integer a program makes.
const MaxIntDigits = 4300

// BigValue is b as a Value: an Int when it fits, else b held as Other;
// an error when it has more than MaxIntDigits digits.
func BigValue(b *big.Int) (Value, error) {
	if b.IsInt64() {
		return IntValue(int(b.Int64())), nil
	}
	if tooLong(b) {
		return Value{}, errTooLong
	}
	return other(b), nil
}

var errTooLong = fmt.Errorf("integer result has more than %d digits", MaxIntDigits)

// tooLong is whether b has more than MaxIntDigits digits: 4300 digits
// are 14,284 to 14,288 bits.
func tooLong(b *big.Int) bool {
	switch n := b.BitLen(); {
	case n < 14280:
		return false
	case n > 14290:
		return true
	}
	return len(new(big.Int).Abs(b).String()) > MaxIntDigits
}

// Big is v as a big integer, when it is an integer.
func (v Value) Big() (*big.Int, bool) {
	switch v.kind {
	case Int:
		return big.NewInt(int64(v.n)), true
	case Other:
		b, ok := (*(*any)(v.p)).(*big.Int)
		return b, ok
	}
	return nil, false
}

// isBig is whether v is an integer beyond int64.
func isBig(v Value) bool {
	if v.kind != Other {
		return false
	}
	_, ok := (*(*any)(v.p)).(*big.Int)
	return ok
}

// numeric is whether v is a number: an int, big or not, or a float64.
func numeric(v Value) bool { return v.kind == Int || v.kind == Float || isBig(v) }

// integer is whether v is an int, big or not.
func integer(v Value) bool { return v.kind == Int || isBig(v) }

// bigDiv is a / b, Python's true division, for ints of which one at
// least is big: correctly rounded.
func bigDiv(a, b Value) (Value, error) {
	x, _ := a.Big()
	y, _ := b.Big()
	if y.Sign() == 0 {
		return Value{}, fmt.Errorf("division by zero")
	}
	f, _ := new(big.Rat).SetFrac(x, y).Float64()
	if math.IsInf(f, 0) {
		return Value{}, fmt.Errorf("integer division result too large for a float")
	}
	return FloatValue(f), nil
}

// bigNeg is -v for an int, big or not.
func bigNeg(v Value) (Value, error) {
	x, _ := v.Big()
	return BigValue(new(big.Int).Neg(x))
}

// BigFloat is b as a float64, failing as Python does when it is beyond
// float64's range.
func BigFloat(b *big.Int) (float64, error) {
	f, _ := new(big.Float).SetInt(b).Float64()
	if math.IsInf(f, 0) {
		return 0, fmt.Errorf("int too large to convert to float")
	}
	return f, nil
}

// addInt, subInt and mulInt are x op y, or ok false when it leaves int.
func addInt(x, y int) (int, bool) {
	s := x + y
	return s, (s^x)&(s^y) >= 0
}

func subInt(x, y int) (int, bool) {
	d := x - y
	return d, (x^y)&(d^x) >= 0
}

func mulInt(x, y int) (int, bool) {
	if x == int(int32(x)) && y == int(int32(y)) {
		return x * y, true // 32 by 32 bits fit
	}
	neg := (x < 0) != (y < 0)
	hi, lo := bits.Mul64(absU(x), absU(y))
	switch {
	case hi != 0 || lo > 1<<63:
		return 0, false
	case lo == 1<<63:
		return math.MinInt64, neg
	case neg:
		return -int(lo), true
	}
	return int(lo), true
}

func absU(x int) uint64 {
	if x < 0 {
		return uint64(-x) // math.MinInt64 too: its bits are 1 << 63
	}
	return uint64(x)
}

// bigArith is a op b for integers of which one at least is big, or whose
// int result overflowed.
func bigArith(op string, a, b Value) (Value, error) {
	x, _ := a.Big()
	y, _ := b.Big()
	z := new(big.Int)
	switch op {
	case "+":
		z.Add(x, y)
	case "-":
		z.Sub(x, y)
	case "*":
		if x.BitLen()+y.BitLen() > 14291 {
			return Value{}, errTooLong
		}
		z.Mul(x, y)
	}
	return BigValue(z)
}

// bigNumber is v as a float64 for arithmetic with a float: an int or a
// float64, or a big int within float64's range.
func bigNumber(v Value) (float64, bool, error) {
	if f, ok := number(v); ok {
		return f, true, nil
	}
	if b, ok := v.Big(); ok {
		f, err := BigFloat(b)
		return f, true, err
	}
	return 0, false, nil
}

// cmpNumbers orders two numbers of which one at least is big, exactly;
// ok is false when either is NaN.
func cmpNumbers(a, b Value) (c int, ok bool) {
	toFloat := func(v Value) (*big.Float, bool) {
		if x, ok := v.Big(); ok {
			return new(big.Float).SetInt(x), true
		}
		f := v.Float()
		if math.IsNaN(f) {
			return nil, false
		}
		return big.NewFloat(f), true // ±inf compares as it should
	}
	if x, xok := a.Big(); xok {
		if y, yok := b.Big(); yok {
			return x.Cmp(y), true
		}
	}
	x, xok := toFloat(a)
	y, yok := toFloat(b)
	if !xok || !yok {
		return 0, false
	}
	return x.Cmp(y), true
}
