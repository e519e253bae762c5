package lang

import (
	"math"
	"math/big"
	"testing"
)

// The int fast path's overflow checks agree with math/big on every pair
// of values near the edges of int64 and of 32 bits.
func TestIntOverflowChecks(t *testing.T) {
	edges := []int{0, 1, -1, 2, -2, 3, math.MaxInt32, math.MinInt32, math.MaxInt32 + 1, math.MinInt32 - 1,
		1 << 32, -(1 << 32), 3037000499, 3037000500, -3037000499, -3037000500, 1 << 62, -(1 << 62),
		math.MaxInt / 2, math.MinInt / 2, math.MaxInt, math.MinInt, math.MaxInt - 1, math.MinInt + 1}
	ops := []struct {
		name string
		fast func(x, y int) (int, bool)
		big  func(z, x, y *big.Int) *big.Int
	}{
		{"+", addInt, (*big.Int).Add},
		{"-", subInt, (*big.Int).Sub},
		{"*", mulInt, (*big.Int).Mul},
	}
	for _, op := range ops {
		for _, x := range edges {
			for _, y := range edges {
				want := op.big(new(big.Int), big.NewInt(int64(x)), big.NewInt(int64(y)))
				got, ok := op.fast(x, y)
				if ok != want.IsInt64() || ok && int64(got) != want.Int64() {
					t.Errorf("%d %s %d = %d, %v; want %s (fits: %v)", x, op.name, y, got, ok, want, want.IsInt64())
				}
			}
		}
	}
}
