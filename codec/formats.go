package codec

import "bytes"

// A format is one of the formats the walker checks itself. Each check
// accepts only strings the schema library's format function (with
// AssertFormat, as the tap compiles) accepts too; a string it refuses
// goes to the library's own function (shapeNode.fallback). The tests
// hold each to the library, string by string and by fuzzing.
type format uint8

const (
	fNone format = iota
	fDateTime
	fDate
	fEmail
	fUUID
	fIPv4
)

var formats = map[string]format{
	"date-time": fDateTime, "date": fDate, "email": fEmail, "uuid": fUUID, "ipv4": fIPv4,
}

func (f format) valid(s []byte) bool {
	switch f {
	case fDateTime:
		return dateTime(s)
	case fDate:
		return len(s) == 10 && date(s)
	case fEmail:
		return email(s)
	case fUUID:
		return uuid(s)
	case fIPv4:
		return ipv4(s)
	}
	return true
}

// digits2 reads two decimal digits at s[i]; -1 if they are not.
func digits2(s []byte, i int) int {
	a, c := s[i]-'0', s[i+1]-'0'
	if a > 9 || c > 9 {
		return -1
	}
	return int(a)*10 + int(c)
}

// date checks YYYY-MM-DD at the start of s (len(s) >= 10): the
// library's time.Parse("2006-01-02"), a day that the month has.
func date(s []byte) bool {
	if s[4] != '-' || s[7] != '-' {
		return false
	}
	y1, y2, mo, d := digits2(s, 0), digits2(s, 2), digits2(s, 5), digits2(s, 8)
	if y1 < 0 || y2 < 0 || mo < 1 || mo > 12 || d < 1 {
		return false
	}
	y := y1*100 + y2
	days := [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[mo]
	if mo == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return d <= days
}

// dateTime accepts a strict subset of the library's date-time:
// YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM), seconds 00-59. false means
// "ask the library".
func dateTime(s []byte) bool {
	if len(s) < 20 || (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':' || !date(s) {
		return false
	}
	h, mi, sec := digits2(s, 11), digits2(s, 14), digits2(s, 17)
	if h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 {
		return false
	}
	r := s[19:]
	if r[0] == '.' {
		i := 1
		for i < len(r) && r[i] >= '0' && r[i] <= '9' {
			i++
		}
		if i == 1 {
			return false
		}
		r = r[i:]
	}
	switch {
	case len(r) == 1:
		return r[0] == 'Z' || r[0] == 'z'
	case len(r) == 6 && (r[0] == '+' || r[0] == '-') && r[3] == ':':
		zh, zm := digits2(r, 1), digits2(r, 4)
		return zh >= 0 && zh <= 23 && zm >= 0 && zm <= 59
	}
	return false
}

// atext are the characters of an unquoted local part (RFC 5322) but
// the dot.
var atext = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range []byte("!#$%&'*+-/=?^_`{|}~") {
		t[c] = true
	}
	return t
}()

// email accepts local@domain with a dot-atom of ASCII atext as the local
// part (at most 64 bytes) and a host name of letters, digits and inner
// hyphens as the domain, at most 254 bytes in all: a subset of what the
// library's check (its own rules, then net/mail) accepts.
func email(s []byte) bool {
	at := bytes.LastIndexByte(s, '@')
	if len(s) > 254 || at < 1 || at > 64 {
		return false
	}
	local, domain := s[:at], s[at+1:]
	dot := true // a dot may not start the local part
	for _, c := range local {
		if c == '.' {
			if dot {
				return false
			}
			dot = true
			continue
		}
		if !atext[c] {
			return false
		}
		dot = false
	}
	return !dot && hostname(domain)
}

// hostname accepts labels of 1 to 63 letters, digits and hyphens, none
// at either end of a label, joined by dots.
func hostname(s []byte) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	for len(s) > 0 {
		i := bytes.IndexByte(s, '.')
		label := s
		if i >= 0 {
			label, s = s[:i], s[i+1:]
			if len(s) == 0 {
				return false // a trailing dot
			}
		} else {
			s = nil
		}
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// uuid is the library's check: hex groups of 8, 4, 4, 4 and 12 joined
// by hyphens.
func uuid(s []byte) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHex(c) {
				return false
			}
		}
	}
	return true
}

// ipv4 accepts four dot-separated numbers 0-255 without leading zeros
// (the library also takes a sign, and "00").
func ipv4(s []byte) bool {
	for g := 0; g < 4; g++ {
		i := 0
		v := 0
		for i < len(s) && i < 4 && s[i] >= '0' && s[i] <= '9' {
			v = v*10 + int(s[i]-'0')
			i++
		}
		if i == 0 || i > 3 || v > 255 || i > 1 && s[0] == '0' {
			return false
		}
		s = s[i:]
		if g < 3 {
			if len(s) == 0 || s[0] != '.' {
				return false
			}
			s = s[1:]
		}
	}
	return len(s) == 0
}
