package codec

import (
	"encoding/json"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// formatSamples are strings of each format, valid and not.
var formatSamples = map[string][]string{
	"date-time": {"2026-10-02T00:00:00Z", "2024-02-29T23:59:59.123+05:30", "2023-02-29T00:00:00Z",
		"2026-10-02t00:00:00z", "2026-10-02T24:00:00Z", "2026-10-02T00:00:00+24:00", "2026-10-02 00:00:00Z",
		"2016-12-31T23:59:60Z", "2026-10-02T00:00:00.Z", "0000-01-01T00:00:00Z"},
	"date": {"2024-02-29", "2023-02-29", "2000-02-29", "1900-02-29", "2024-04-31", "2024-00-10",
		"2024-1-01", "20240101", "0000-02-29", "9999-12-31", "2024-12-32", "+024-01-01", "2024-01-0a"},
	"email": {"a@b", "a.b@c.d", "a+b@example.com", "x@-a.com", "x@a-.com", "x@a..com", ".a@b.c", "a.@b.c",
		"a..b@c.d", `"a b"@c.d`, "a@b.c.", "a@[1.2.3.4]", "a@b_c.d", "é@b.c", "a@é.c", "@b.c", "a@",
		strings.Repeat("a", 64) + "@b.c", strings.Repeat("a", 65) + "@b.c", "a@" + strings.Repeat("b", 63) + ".c",
		"a@" + strings.Repeat("b", 64) + ".c", "!#$%&'*+-/=?^_`{|}~@x.y", "a@b@c.d", "a b@c.d", "a@1.2.3.4"},
	"uuid": {"123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-426614174000",
		"123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400g",
		"123e4567-e89b-12d3-a456-4266141740000", "{123e4567-e89b-12d3-a456-426614174000}"},
	"ipv4": {"0.0.0.0", "255.255.255.255", "256.0.0.0", "1.2.3", "1.2.3.4.5", "01.2.3.4", "00.2.3.4",
		"+1.2.3.4", "1.2.3.-0", "1..3.4", "1.2.3.4 ", "١.2.3.4", "1000.2.3.4", "1.2.3.0004"},
}

// TestFormatsAgree holds each format check of the walker to the
// library's: every string it accepts, the library accepts; and it
// accepts the common spellings the library does.
func TestFormatsAgree(t *testing.T) {
	for name, samples := range formatSamples {
		f, lib := formats[name], jsonschema.Formats[name]
		own, libOK := 0, 0
		for _, s := range samples {
			mine, theirs := f.valid([]byte(s)), lib(s)
			if mine && !theirs {
				t.Errorf("%s %q: the walker accepts, the library does not", name, s)
			}
			if mine {
				own++
			}
			if theirs {
				libOK++
			}
		}
		if own == 0 || own == len(samples) {
			t.Errorf("%s: the walker accepts %d of %d samples (the library %d)", name, own, len(samples), libOK)
		}
	}
	// The strings of the common spelling, all of them.
	for name, s := range map[string]string{"date-time": "2026-10-02T00:00:00Z", "date": "2026-10-02",
		"email": "first.last+tag@mail.example.co.uk", "uuid": "123e4567-e89b-12d3-a456-426614174000", "ipv4": "192.168.0.1"} {
		if !formats[name].valid([]byte(s)) {
			t.Errorf("%s %q: the walker is not sure", name, s)
		}
	}
}

// TestFormatsMutated mutates the samples at random: the walker never
// accepts what the library refuses.
func TestFormatsMutated(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("0123456789abcdefABCDEF-.:@+TZtz _\"é\x00[]")
	for name, samples := range formatSamples {
		f, lib := formats[name], jsonschema.Formats[name]
		agree, n := 0, 20000
		for i := 0; i < n; i++ {
			b := []byte(samples[r.IntN(len(samples))])
			for k := 0; k < 1+r.IntN(2) && len(b) > 0; k++ {
				p := r.IntN(len(b))
				switch r.IntN(3) {
				case 0:
					b[p] = alphabet[r.IntN(len(alphabet))]
				case 1:
					b = append(b[:p], b[p+1:]...)
				default:
					b = append(b[:p], append([]byte{alphabet[r.IntN(len(alphabet))]}, b[p:]...)...)
				}
			}
			mine, theirs := f.valid(b), lib(string(b))
			if mine && !theirs {
				t.Fatalf("%s %q: the walker accepts, the library does not", name, b)
			}
			if mine == theirs {
				agree++
			}
		}
		if agree < n/2 {
			t.Errorf("%s: the walker agrees with the library on %d of %d mutated strings", name, agree, n)
		}
	}
}

func FuzzFormats(f *testing.F) {
	for _, samples := range formatSamples {
		for _, s := range samples {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, fm := range formats {
			if fm.valid([]byte(s)) && !jsonschema.Formats[name](s) {
				t.Errorf("%s %q: the walker accepts, the library does not", name, s)
			}
		}
	})
}

// TestBoundsExact compares numbers with bounds as math/big does, the
// library's arithmetic.
func TestBoundsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	num := func(exp bool) string {
		var b strings.Builder
		if r.IntN(2) == 0 {
			b.WriteByte('-')
		}
		if r.IntN(4) == 0 {
			b.WriteByte('0')
		} else {
			b.WriteByte(byte('1' + r.IntN(9)))
			for k := r.IntN(25); k > 0; k-- {
				b.WriteByte(byte('0' + r.IntN(10)))
			}
		}
		if r.IntN(2) == 0 {
			b.WriteByte('.')
			for k := 1 + r.IntN(25); k > 0; k-- {
				b.WriteByte("0009"[r.IntN(4)])
			}
		}
		if exp && r.IntN(2) == 0 {
			b.WriteString([]string{"e", "E-", "e+"}[r.IntN(3)])
			b.WriteString([]string{"0", "1", "17", "30"}[r.IntN(4)])
		}
		return b.String()
	}
	for i := 0; i < 200000; i++ {
		bs, vs := num(true), num(false)
		if i%3 == 0 {
			vs = strings.TrimPrefix(bs, "-") // equal values, spelt alike or not
			if e := strings.IndexAny(vs, "eE"); e >= 0 {
				vs = vs[:e]
			}
		}
		d, ok := parseDecimal(bs)
		if !ok {
			t.Fatalf("%s: not read", bs)
		}
		br, _ := new(big.Rat).SetString(bs)
		vr, _ := new(big.Rat).SetString(vs)
		neg, ip, fp := splitNumber([]byte(vs))
		if got, want := -d.compare(neg, ip, fp), br.Cmp(vr); got != want {
			t.Fatalf("bound %s against %s: %d, math/big %d", bs, vs, got, want)
		}
	}
	for _, bad := range []string{"1e401", "1e-401", "01", "1.", ".5", "--1", "1e", ""} {
		if _, ok := parseDecimal(bad); ok {
			t.Errorf("%q read as a decimal", bad)
		}
	}
}

// TestInBounds holds the walker's bound check, short whole numbers
// included, to math/big.
func TestInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	nums := []string{"0", "-0", "1", "-1", "5", "17", "-17", "999999999999999999", "-999999999999999999",
		"1000000000000000000", "12.5", "-12.5", "0.001", "123456789012345678901234567890", "4.0", "-4.00"}
	for i := 0; i < 50000; i++ {
		lo, hi, v := nums[r.IntN(len(nums))], nums[r.IntN(len(nums))], nums[r.IntN(len(nums))]
		m := map[string]any{"minimum": json.Number(lo), "maximum": json.Number(hi)}
		loEx, hiEx := r.IntN(2) == 0, r.IntN(2) == 0
		if loEx {
			m["exclusiveMinimum"] = true
		}
		if hiEx {
			m["exclusiveMaximum"] = json.Number(hi)
		}
		var n shapeNode
		if left := n.compileBounds(m); len(left) > 0 {
			t.Fatalf("%v: left %v", m, left)
		}
		rl, _ := new(big.Rat).SetString(lo)
		rh, _ := new(big.Rat).SetString(hi)
		rv, _ := new(big.Rat).SetString(v)
		want := rv.Cmp(rl) > 0 || !loEx && rv.Cmp(rl) == 0
		want = want && (rv.Cmp(rh) < 0 || !hiEx && rv.Cmp(rh) == 0)
		if got := n.inBounds([]byte(v)); got != want {
			t.Fatalf("%s against %v: %v, math/big says %v", v, m, got, want)
		}
	}
}

// TestMultipleExact holds multipleOf to math/big: what the walker calls
// a multiple is one, and of whole values and decimals it is exact.
func TestMultipleExact(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	ms := []string{"1", "0.01", "1e-38", "100", "1e2", "5", "7", "0.1", "10", "250", "1000000000000000000"}
	vs := []string{"0", "-0", "1", "5", "7", "35", "100", "-1200", "1250", "12.34", "12.345", "0.1", "2.50",
		"999999999999999999", "1000000000000000000", "123456789012345678901234567890", "0.00000000000000000000000000000000000001"}
	for i := 0; i < 20000; i++ {
		ms, vs := ms[r.IntN(len(ms))], vs[r.IntN(len(vs))]
		m, ok := schemaMultiple(json.Number(ms))
		if !ok {
			t.Fatalf("multipleOf %s not read", ms)
		}
		rm, _ := new(big.Rat).SetString(ms)
		rv, _ := new(big.Rat).SetString(vs)
		want := new(big.Rat).Quo(rv, rm).IsInt()
		got := m.of([]byte(vs))
		if got && !want {
			t.Fatalf("%s a multiple of %s: the walker says so, math/big not", vs, ms)
		}
		if exact := m.pow || len(vs) <= 18 && !strings.Contains(vs, "."); exact && got != want {
			t.Fatalf("%s a multiple of %s: %v, math/big %v", vs, ms, got, want)
		}
	}
	if _, ok := schemaMultiple(json.Number("2.5")); ok {
		t.Error("multipleOf 2.5 read: it is the library's")
	}
}

// patterns are schema patterns, simple and not.
var patterns = []string{`^/app/billing/[0-9]+/`, `^[A-Z]{2}-[0-9]+$`, `^[A-Z]{3}$`, `[0-9]+`, `^\d{4}-\d{2}-\d{2}$`,
	`^[a-z]+[0-9]*$`, `^[a-z]+a$`, `x?y`, `^.+@.+$`, `^(?i)abc$`, `^[^@\s]+@[^@\s]+\.[a-z]{2,}$`, `é+\w`, `^$`, `a|b`,
	`^[a-f0-9]{8}-[a-f0-9]{4}$`, `^\S+$`, `^a{2,3}b?c*$`, `.`, `^[[:alpha:]]+$`, `^\p{L}+$`, `(ab)+`, `^a*?b$`,
	`^é日/[0-9]+/x$`, `b日本[a-z]*x`, `^/products/\d+/overview$`}

// TestPatternsAgree holds the walker's pattern matcher to Go's regexp
// on mutated strings.
func TestPatternsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	samples := []string{"/app/billing/3727/activity", "é日/12/x", "ab日本語x", "/products/12/overview", "AB-12", "EUR", "2024-02-29", "abc123", "aba", "xy", "a@b.co",
		"ABC", "éé_", "", "a", "aab", "deadbeef-0a1b", "no spaces", "aaabcc", "ab", "日本語"}
	alphabet := []rune("aAbcxyz09-/@._ é\n日\xff")
	simpleCount := 0
	for _, p := range patterns {
		pt, err := compilePattern(p)
		if err != nil {
			t.Fatal(err)
		}
		if pt.simple != nil {
			simpleCount++
		}
		for i := 0; i < 5000; i++ {
			s := []rune(samples[r.IntN(len(samples))])
			for k := r.IntN(3); k > 0; k-- {
				at := r.IntN(len(s) + 1)
				s = append(s[:at], append([]rune{alphabet[r.IntN(len(alphabet))]}, s[at:]...)...)
			}
			b := []byte(string(s))
			if got, want := pt.match(b), pt.re.Match(b); got != want {
				t.Fatalf("%s on %q: %v, regexp %v", p, b, got, want)
			}
		}
	}
	if simpleCount < 8 {
		t.Errorf("%d of %d patterns simple", simpleCount, len(patterns))
	}
}

func FuzzPatterns(f *testing.F) {
	f.Add("/app/billing/3727/activity")
	f.Add("AB-12")
	var compiled []*pattern
	for _, p := range patterns {
		pt, _ := compilePattern(p)
		compiled = append(compiled, pt)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i, pt := range compiled {
			if got, want := pt.match([]byte(s)), pt.re.MatchString(s); got != want {
				t.Errorf("%s on %q: %v, regexp %v", patterns[i], s, got, want)
			}
		}
	})
}
