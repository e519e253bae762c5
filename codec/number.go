package codec

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// IsInteger reports whether s is an optional '-' followed by digits.
func IsInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// IsNumber reports whether s is a number in JSON syntax.
func IsNumber(s string) bool {
	if s == "" {
		return false
	}
	return json.Valid([]byte(s)) && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9'))
}

// TypeName names the JSON type of a decoded value, for error messages.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number, float64, float32, int, int64, int32, uint, uint64, uint32:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// ParseRat parses a JSON number exactly. math/big refuses exponents too
// large to expand (|exp| > 1e6), which keeps a hostile value cheap.
func ParseRat(s string) (*big.Rat, bool) {
	if !IsNumber(s) {
		return nil, false
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > 10000 || e < -10000 {
			return nil, false
		}
	}
	return new(big.Rat).SetString(s)
}
