package interp

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Python's datetime as the CDK's macros and its DatetimeParser use it:
// strftime and strptime with C's and Python's directives, dateutil's
// isoparse, isodate's ISO 8601 durations.

func (d datetime) str(sep string) string {
	t := d.t
	s := t.Format("2006-01-02") + sep + t.Format("15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s + offset(t, true)
}

// offset is the time's UTC offset as Python's %z (+0000) or, with colon,
// as isoformat writes it (+00:00).
func offset(t time.Time, colon bool) string {
	_, off := t.Zone()
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	h, m, s := off/3600, off/60%60, off%60
	sep := ""
	if colon {
		sep = ":"
	}
	out := fmt.Sprintf("%c%02d%s%02d", sign, h, sep, m)
	if s != 0 {
		out += fmt.Sprintf("%s%02d", sep, s)
	}
	return out
}

// parts are Python's normalised timedelta fields: days (signed),
// seconds in [0, 86400), microseconds in [0, 1e6).
func (td timedelta) parts() (days, secs, us int64) {
	total := td.d.Microseconds()
	const day = 86400 * 1e6
	days = total / day
	rest := total % day
	if rest < 0 {
		days--
		rest += day
	}
	return days, rest / 1e6, rest % 1e6
}

func (td timedelta) str() string {
	days, secs, us := td.parts()
	var parts []string
	if y, m := td.months/12, td.months%12; td.months != 0 {
		if y != 0 {
			parts = append(parts, fmt.Sprintf("%d years", y))
		}
		if m == 1 {
			parts = append(parts, "1 month")
		} else if m != 0 {
			parts = append(parts, fmt.Sprintf("%d months", m))
		}
	}
	s := ""
	if days != 0 {
		s = fmt.Sprintf("%d day, ", days)
		if days != 1 && days != -1 {
			s = fmt.Sprintf("%d days, ", days)
		}
	}
	s += fmt.Sprintf("%d:%02d:%02d", secs/3600, secs/60%60, secs%60)
	if us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return strings.Join(append(parts, s), ", ")
}

// addTo adds the duration to t as isodate does: months first, with the
// day clamped to the month's last, then the rest.
func (td timedelta) addTo(t time.Time) time.Time {
	if td.months != 0 {
		y, m, d := t.Date()
		m0 := int(m) - 1 + td.months
		y += m0 / 12
		if m0%12 < 0 {
			y--
		}
		m0 = ((m0 % 12) + 12) % 12
		last := time.Date(y, time.Month(m0+2), 0, 0, 0, 0, 0, time.UTC).Day()
		h, mi, s := t.Clock()
		t = time.Date(y, time.Month(m0+1), min(d, last), h, mi, s, t.Nanosecond(), t.Location())
	}
	return t.Add(td.d)
}

var (
	weekdays = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	months   = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
)

// strftime is Python's (glibc's) strftime. aware: the time has a zone
// (%z and %Z print it).
func strftime(t time.Time, f string, aware bool) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' || i+1 >= len(f) {
			b.WriteByte(c)
			continue
		}
		i++
		pad := byte(0) // the directive's own
		if f[i] == '-' || f[i] == '_' || f[i] == '0' {
			pad = f[i]
			if i+1 >= len(f) {
				b.WriteString(f[i-1:])
				break
			}
			i++
		}
		num := func(n, width int, def byte) {
			p := def
			if pad != 0 {
				p = pad
			}
			s := strconv.Itoa(n)
			switch p {
			case '-':
			case '_':
				s = strings.Repeat(" ", max(0, width-len(s))) + s
			default:
				s = strings.Repeat("0", max(0, width-len(s))) + s
			}
			b.WriteString(s)
		}
		switch f[i] {
		case 'a':
			b.WriteString(weekdays[t.Weekday()][:3])
		case 'A':
			b.WriteString(weekdays[t.Weekday()])
		case 'w':
			num(int(t.Weekday()), 1, '0')
		case 'u':
			num((int(t.Weekday())+6)%7+1, 1, '0')
		case 'd':
			num(t.Day(), 2, '0')
		case 'e':
			num(t.Day(), 2, '_')
		case 'b', 'h':
			b.WriteString(months[t.Month()-1][:3])
		case 'B':
			b.WriteString(months[t.Month()-1])
		case 'm':
			num(int(t.Month()), 2, '0')
		case 'y':
			num(t.Year()%100, 2, '0')
		case 'Y':
			num(t.Year(), 1, '0')
		case 'C':
			num(t.Year()/100, 2, '0')
		case 'G':
			y, _ := t.ISOWeek()
			num(y, 1, '0')
		case 'g':
			y, _ := t.ISOWeek()
			num(y%100, 2, '0')
		case 'V':
			_, w := t.ISOWeek()
			num(w, 2, '0')
		case 'H':
			num(t.Hour(), 2, '0')
		case 'k':
			num(t.Hour(), 2, '_')
		case 'I':
			num((t.Hour()+11)%12+1, 2, '0')
		case 'l':
			num((t.Hour()+11)%12+1, 2, '_')
		case 'p':
			b.WriteString(ampm(t, "AM", "PM"))
		case 'P':
			b.WriteString(ampm(t, "am", "pm"))
		case 'M':
			num(t.Minute(), 2, '0')
		case 'S':
			num(t.Second(), 2, '0')
		case 'f':
			fmt.Fprintf(&b, "%06d", t.Nanosecond()/1000)
		case 'j':
			num(t.YearDay(), 3, '0')
		case 'U':
			num((t.YearDay()+6-int(t.Weekday()))/7, 2, '0')
		case 'W':
			num((t.YearDay()+6-(int(t.Weekday())+6)%7)/7, 2, '0')
		case 'z':
			if aware {
				b.WriteString(offset(t, false))
			}
		case 'Z':
			if aware {
				name, off := t.Zone()
				switch {
				case off == 0:
					b.WriteString("UTC")
				case name != "" && !strings.HasPrefix(name, "+") && !strings.HasPrefix(name, "-"):
					b.WriteString(name)
				default:
					b.WriteString("UTC" + offset(t, true))
				}
			}
		case 's':
			// glibc's %s reads the fields as local time; the tap runs
			// in UTC, as Airbyte's images do.
			y, mo, d := t.Date()
			h, mi, s := t.Clock()
			fmt.Fprintf(&b, "%d", time.Date(y, mo, d, h, mi, s, 0, time.UTC).Unix())
		case 'c':
			b.WriteString(strftime(t, "%a %b %e %H:%M:%S %Y", aware))
		case 'x':
			b.WriteString(strftime(t, "%m/%d/%y", aware))
		case 'X', 'T':
			b.WriteString(strftime(t, "%H:%M:%S", aware))
		case 'D':
			b.WriteString(strftime(t, "%m/%d/%y", aware))
		case 'F':
			b.WriteString(strftime(t, "%Y-%m-%d", aware))
		case 'R':
			b.WriteString(strftime(t, "%H:%M", aware))
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '%':
			b.WriteByte('%')
		default:
			b.WriteString(f[i-1 : i+1])
		}
	}
	return b.String()
}

func ampm(t time.Time, am, pm string) string {
	if t.Hour() < 12 {
		return am
	}
	return pm
}

// A DatetimeFormat is a compiled datetime_format of the CDK's
// DatetimeParser: Python's strptime and strftime directives, and the
// whole-format directives %s (epoch seconds), %s_as_float, %ms (epoch
// milliseconds), %epoch_microseconds, and %_ms (milliseconds, three
// digits) within a format.
type DatetimeFormat struct {
	format string
	re     *regexp.Regexp // strptime's, nil for the epoch formats
	fields []byte         // the directive of each group of re
	reErr  error          // why the format cannot parse
}

// CompileDatetimeFormat compiles a datetime format for parsing and
// formatting. Every format formats (strftime passes what it does not
// know); one that strptime cannot read tells so by CanParse, and its
// Parse fails, as the CDK's does when it parses.
func CompileDatetimeFormat(format string) *DatetimeFormat {
	f := &DatetimeFormat{format: format}
	switch format {
	case "%s", "%s_as_float", "%ms", "%epoch_microseconds":
		return f
	}
	f.re, f.fields, f.reErr = strptimeRegexp(strings.ReplaceAll(format, "%_ms", "%f"))
	return f
}

// CanParse is nil when Parse can read the format, else why not.
func (f *DatetimeFormat) CanParse() error { return f.reErr }

// String is the format as written.
func (f *DatetimeFormat) String() string { return f.format }

// Parse reads s as the CDK's DatetimeParser.parse does: a time with no
// zone is UTC.
func (f *DatetimeFormat) Parse(s string) (time.Time, error) {
	switch f.format {
	case "%s", "%ms", "%epoch_microseconds":
		n, err := pyInt(s)
		if err != nil {
			return time.Time{}, fmt.Errorf("time data %q is not an integer for format %q", s, f.format)
		}
		switch f.format {
		case "%s":
			return time.Unix(n, 0).UTC(), nil
		case "%ms":
			return time.UnixMilli(n).UTC(), nil
		}
		return time.UnixMicro(n).UTC(), nil
	case "%s_as_float":
		x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("time data %q is not a number for format %q", s, f.format)
		}
		sec, frac := math.Modf(x)
		return time.Unix(int64(sec), int64(math.Round(frac*1e6))*1000).UTC(), nil
	}
	if f.reErr != nil {
		return time.Time{}, f.reErr
	}
	t, _, err := f.strptime(s)
	return t, err
}

// Format writes t as DatetimeParser.format does.
func (f *DatetimeFormat) Format(t time.Time) string {
	switch f.format {
	case "%s":
		return strconv.FormatInt(t.Unix(), 10)
	case "%s_as_float":
		return floatRepr(float64(t.UnixMicro()) / 1e6)
	case "%ms":
		return strconv.FormatInt(t.UnixMilli(), 10)
	case "%epoch_microseconds":
		return strconv.FormatInt(t.UnixMicro(), 10)
	}
	if strings.Contains(f.format, "%_ms") {
		// the CDK formats with %f, then replaces the microseconds by the
		// milliseconds
		s := strftime(t, strings.ReplaceAll(f.format, "%_ms", "%f"), true)
		us := fmt.Sprintf("%06d", t.Nanosecond()/1000)
		return strings.ReplaceAll(s, us, fmt.Sprintf("%03d", t.Nanosecond()/1e6))
	}
	return strftime(t, f.format, true)
}

// pyInt is Python's int() of a string.
func pyInt(s string) (int64, error) {
	s = strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	return strconv.ParseInt(s, 10, 64)
}

// The regular expressions of Python's _strptime, directive by
// directive. Go's regexp picks the match Python's backtracking one does.
var strptimeRE = map[byte]string{
	'd': `(3[01]|[12]\d|0[1-9]|[1-9]| [1-9])`,
	'f': `([0-9]{1,6})`,
	'H': `(2[0-3]|[0-1]\d|\d)`,
	'I': `(1[0-2]|0[1-9]|[1-9])`,
	'G': `(\d\d\d\d)`,
	'j': `(36[0-6]|3[0-5]\d|[12]\d\d|0[1-9]\d|00[1-9]|[1-9]\d|0[1-9]|[1-9])`,
	'm': `(1[0-2]|0[1-9]|[1-9])`,
	'M': `([0-5]\d|\d)`,
	'S': `(6[0-1]|[0-5]\d|\d)`,
	'U': `(5[0-3]|[0-4]\d|\d)`,
	'w': `([0-6])`,
	'u': `([1-7])`,
	'V': `(5[0-3]|0[1-9]|[1-4]\d|\d)`,
	'y': `(\d\d)`,
	'Y': `(\d\d\d\d)`,
	'z': `([+-]\d\d:?[0-5]\d(?::?[0-5]\d(?:\.\d{1,6})?)?|Z)`,
	'a': `(monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|wed|thu|fri|sat|sun)`,
	'A': `(monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|wed|thu|fri|sat|sun)`,
	'b': `(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)`,
	'B': `(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)`,
	'p': `(am|pm)`,
	'Z': `(utc|gmt)`,
	'W': `(5[0-3]|[0-4]\d|\d)`,
}

func strptimeRegexp(format string) (*regexp.Regexp, []byte, error) {
	format = expandComposite(format)
	var b strings.Builder
	var fields []byte
	b.WriteString(`(?i)^`)
	for i := 0; i < len(format); i++ {
		c := format[i]
		switch {
		case c == '%' && i+1 < len(format):
			i++
			d := format[i]
			switch d {
			case '%':
				b.WriteString("%")
				continue
			}
			re, ok := strptimeRE[d]
			if !ok {
				return nil, nil, fmt.Errorf("'%c' is a bad directive in format %q", d, format)
			}
			b.WriteString(re)
			fields = append(fields, d)
		case c == '%':
			return nil, nil, fmt.Errorf("stray %% in format %q", format)
		case c == ' ' || c == '\t' || c == '\n':
			for i+1 < len(format) && (format[i+1] == ' ' || format[i+1] == '\t' || format[i+1] == '\n') {
				i++
			}
			b.WriteString(`\s+`)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	re, err := regexp.Compile(b.String())
	return re, fields, err
}

// expandComposite writes out the directives that stand for others.
func expandComposite(format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 >= len(format) {
			b.WriteByte(format[i])
			continue
		}
		i++
		switch format[i] {
		case 'c':
			b.WriteString("%a %b %d %H:%M:%S %Y")
		case 'x', 'D':
			b.WriteString("%m/%d/%y")
		case 'X', 'T':
			b.WriteString("%H:%M:%S")
		case 'F':
			b.WriteString("%Y-%m-%d")
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}

// strptime is Python's datetime.strptime; aware tells whether the format
// read a zone. A time with no zone is UTC, as the CDK makes it.
func (f *DatetimeFormat) strptime(s string) (t time.Time, aware bool, err error) {
	m := f.re.FindStringSubmatchIndex(s)
	if m == nil {
		return time.Time{}, false, fmt.Errorf("time data %q does not match format %q", s, f.format)
	}
	if m[1] != len(s) {
		return time.Time{}, false, fmt.Errorf("unconverted data remains: %s", s[m[1]:])
	}
	year, month, day := 1900, 1, 1
	hour, minute, sec, us := 0, 0, 0, 0
	pm, hasP, hour12 := false, false, false
	yday, weekday, week, isoYear, isoWeek := -1, -1, -1, -1, -1
	weekStartsMonday := false
	loc := time.UTC
	for g, d := range f.fields {
		v := s[m[2+2*g]:m[3+2*g]]
		n, _ := strconv.Atoi(strings.TrimSpace(v))
		switch d {
		case 'Y':
			year = n
		case 'y':
			year = 1900 + n
			if n < 69 {
				year = 2000 + n
			}
		case 'm':
			month = n
		case 'b', 'B':
			for i, name := range months {
				if strings.EqualFold(v, name) || strings.EqualFold(v, name[:3]) {
					month = i + 1
				}
			}
		case 'd':
			day = n
		case 'H':
			hour = n
		case 'I':
			hour, hour12 = n, true
		case 'p':
			hasP, pm = true, strings.EqualFold(v, "pm")
		case 'M':
			minute = n
		case 'S':
			sec = n
		case 'f':
			us, _ = strconv.Atoi((v + "00000")[:6])
		case 'j':
			yday = n
		case 'a', 'A':
			for i, name := range weekdays {
				if strings.EqualFold(v, name) || strings.EqualFold(v, name[:3]) {
					weekday = (i + 6) % 7 // Monday is 0
				}
			}
		case 'w':
			weekday = (n + 6) % 7
		case 'u':
			weekday = n - 1
		case 'U':
			week = n
		case 'W':
			week, weekStartsMonday = n, true
		case 'G':
			isoYear = n
		case 'V':
			isoWeek = n
		case 'z':
			aware = true
			if v == "Z" || v == "z" {
				break
			}
			z := strings.ReplaceAll(v[1:], ":", "")
			hh, _ := strconv.Atoi(z[0:2])
			mm, _ := strconv.Atoi(z[2:4])
			ss := 0
			if len(z) >= 6 {
				ss, _ = strconv.Atoi(z[4:6])
			}
			off := hh*3600 + mm*60 + ss
			if v[0] == '-' {
				off = -off
			}
			if off != 0 {
				loc = time.FixedZone("", off)
			}
		}
	}
	if hour12 && hasP {
		hour %= 12
		if pm {
			hour += 12
		}
	}
	if sec == 61 {
		sec = 60
	}
	switch {
	case isoYear >= 0 && isoWeek >= 0 && weekday >= 0:
		jan4 := time.Date(isoYear, 1, 4, 0, 0, 0, 0, time.UTC)
		monday := jan4.AddDate(0, 0, -((int(jan4.Weekday()) + 6) % 7))
		d := monday.AddDate(0, 0, (isoWeek-1)*7+weekday)
		year, month, day = d.Year(), int(d.Month()), d.Day()
	case yday >= 0:
		d := time.Date(year, 1, yday, 0, 0, 0, 0, time.UTC)
		year, month, day = d.Year(), int(d.Month()), d.Day()
	case week >= 0 && weekday >= 0:
		jan1 := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC)
		first := (int(jan1.Weekday()) + 6) % 7 // Monday is 0
		var offsetDays int
		if weekStartsMonday {
			offsetDays = (7-first)%7 + (week-1)*7 + weekday
		} else {
			offsetDays = (6-first)%7 + (week-1)*7 + (weekday+1)%7
		}
		if week == 0 {
			offsetDays = weekday - first
			if !weekStartsMonday {
				offsetDays = (weekday+1)%7 - (first+1)%7
			}
		}
		d := jan1.AddDate(0, 0, offsetDays)
		year, month, day = d.Year(), int(d.Month()), d.Day()
	}
	t = time.Date(year, time.Month(month), day, hour, minute, sec, us*1000, loc)
	if t.Day() != day || int(t.Month()) != month {
		return time.Time{}, false, errors.New("day is out of range for month")
	}
	return t, aware, nil
}

// isoparse is dateutil's isoparse: a date (2022-01-14, 20220114,
// 2022-01, 2022, 2022-W02-5), optionally a separator of one character
// and a time (13, 13:45, 13:45:30, 134530, with a fraction after . or
// ,), and a zone (Z, ±HH, ±HHMM, ±HH:MM). aware is false when there is
// no zone.
func isoparse(s string) (t time.Time, aware bool, err error) {
	bad := func() (time.Time, bool, error) {
		return time.Time{}, false, fmt.Errorf("%q is not an ISO 8601 date and time", s)
	}
	digits := func(s string, n int) (int, bool) {
		if len(s) < n {
			return 0, false
		}
		v := 0
		for i := 0; i < n; i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, false
			}
			v = v*10 + int(s[i]-'0')
		}
		return v, true
	}
	year, ok := digits(s, 4)
	if !ok {
		return bad()
	}
	month, day := 1, 1
	pos := 4
	rest := s[4:]
	switch {
	case len(rest) >= 4 && rest[0] == '-' && (rest[1] == 'W' || rest[1] == 'w') || len(rest) >= 3 && (rest[0] == 'W' || rest[0] == 'w'):
		dash := rest[0] == '-'
		if dash {
			rest = rest[1:]
			pos++
		}
		w, ok := digits(rest[1:], 2)
		if !ok {
			return bad()
		}
		pos += 3
		rest = rest[3:]
		wd := 1
		if dash && len(rest) >= 2 && rest[0] == '-' {
			if wd, ok = digits(rest[1:], 1); !ok {
				return bad()
			}
			pos += 2
		} else if !dash && len(rest) >= 1 && rest[0] >= '0' && rest[0] <= '9' {
			wd = int(rest[0] - '0')
			pos++
		}
		jan4 := time.Date(year, 1, 4, 0, 0, 0, 0, time.UTC)
		monday := jan4.AddDate(0, 0, -((int(jan4.Weekday()) + 6) % 7))
		d := monday.AddDate(0, 0, (w-1)*7+wd-1)
		year, month, day = d.Year(), int(d.Month()), d.Day()
	case len(rest) >= 3 && rest[0] == '-':
		if month, ok = digits(rest[1:], 2); !ok {
			return bad()
		}
		pos += 3
		if len(rest) >= 6 && rest[3] == '-' {
			if day, ok = digits(rest[4:], 2); !ok {
				return bad()
			}
			pos += 3
		}
	case len(rest) >= 4 && rest[0] >= '0' && rest[0] <= '9':
		if month, ok = digits(rest, 2); !ok {
			return bad()
		}
		if day, ok = digits(rest[2:], 2); !ok {
			return bad()
		}
		pos += 4
	}
	hour, minute, sec, ns := 0, 0, 0, 0
	loc := time.UTC
	if pos < len(s) {
		rest = s[pos+1:] // dateutil takes any one character as the separator
		if hour, ok = digits(rest, 2); !ok {
			return bad()
		}
		rest = rest[2:]
		colon := len(rest) > 0 && rest[0] == ':'
		next := func(v *int) bool {
			r := rest
			if colon {
				if len(r) == 0 || r[0] != ':' {
					return false
				}
				r = r[1:]
			}
			n, ok := digits(r, 2)
			if !ok {
				return false
			}
			*v = n
			rest = r[2:]
			return true
		}
		if next(&minute) && next(&sec) && len(rest) > 0 && (rest[0] == '.' || rest[0] == ',') {
			j := 1
			for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
				j++
			}
			if j == 1 {
				return bad()
			}
			frac := rest[1:j]
			if len(frac) > 6 {
				frac = frac[:6] // dateutil keeps microseconds
			}
			us, _ := strconv.Atoi((frac + "00000")[:6])
			ns = us * 1000
			rest = rest[j:]
		}
		if rest != "" {
			switch {
			case rest == "Z" || rest == "z":
				aware = true
			case rest[0] == '+' || rest[0] == '-':
				z := strings.ReplaceAll(rest[1:], ":", "")
				hh, ok1 := digits(z, 2)
				mm := 0
				ok2 := true
				if len(z) == 4 {
					mm, ok2 = digits(z[2:], 2)
				} else if len(z) != 2 {
					return bad()
				}
				if !ok1 || !ok2 {
					return bad()
				}
				off := hh*3600 + mm*60
				if rest[0] == '-' {
					off = -off
				}
				aware = true
				if off != 0 {
					loc = time.FixedZone("", off)
				}
			default:
				return bad()
			}
		}
	}
	if hour == 24 && minute == 0 && sec == 0 && ns == 0 {
		t = time.Date(year, time.Month(month), day, 0, 0, 0, 0, loc).AddDate(0, 0, 1)
		return t, aware, nil
	}
	t = time.Date(year, time.Month(month), day, hour, minute, sec, ns, loc)
	if t.Day() != day || int(t.Month()) != month || hour > 23 || minute > 59 || sec > 59 {
		return bad()
	}
	return t, aware, nil
}

var durationRE = regexp.MustCompile(`^([+-])?P(?:(\d+(?:[,.]\d+)?)Y)?(?:(\d+(?:[,.]\d+)?)M)?(?:(\d+(?:[,.]\d+)?)W)?(?:(\d+(?:[,.]\d+)?)D)?(?:T(?:(\d+(?:[,.]\d+)?)H)?(?:(\d+(?:[,.]\d+)?)M)?(?:(\d+(?:[,.]\d+)?)S)?)?$`)

// ParseDuration reads an ISO 8601 duration as isodate's parse_duration
// does (P1D, PT1H30M, P1M, -P1W): a step or lookback_window of a
// DatetimeBasedCursor. months holds the years and months, which have no
// fixed length; add it with AddDuration.
func ParseDuration(s string) (months int, d time.Duration, err error) {
	td, err := parseDuration(s)
	return td.months, td.d, err
}

// AddDuration adds months, then d, to t as isodate adds a Duration to a
// datetime: the day clamped to the last of its month.
func AddDuration(t time.Time, months int, d time.Duration) time.Time {
	return timedelta{months: months, d: d}.addTo(t)
}

func parseDuration(s string) (timedelta, error) {
	m := durationRE.FindStringSubmatch(s)
	if m == nil || s == "P" || s == "PT" || strings.HasSuffix(s, "T") {
		return timedelta{}, fmt.Errorf("unable to parse duration string %q", s)
	}
	num := func(i int) float64 {
		if m[i] == "" {
			return 0
		}
		f, _ := strconv.ParseFloat(strings.ReplaceAll(m[i], ",", "."), 64)
		return f
	}
	var td timedelta
	years, months := num(2), num(3)
	if years != math.Trunc(years) || months != math.Trunc(months) {
		return timedelta{}, fmt.Errorf("fractional years or months in duration %q are not supported", s)
	}
	td.months = int(years)*12 + int(months)
	secs := num(4)*7*86400 + num(5)*86400 + num(6)*3600 + num(7)*60 + num(8)
	td.d = time.Duration(math.Round(secs*1e6)) * time.Microsecond
	if m[1] == "-" {
		td.months, td.d = -td.months, -td.d
	}
	return td, nil
}

func timeMethod(x any, name string, a args) (any, error) {
	switch v := x.(type) {
	case datetime:
		switch name {
		case "strftime":
			f, _, err := strArg(a, 0, "format")
			return strftime(v.t, f, true), err
		case "isoformat":
			sep, has, err := strArg(a, 0, "sep")
			if !has {
				sep = "T"
			}
			return v.str(sep), err
		case "timestamp":
			return float64(v.t.UnixMicro()) / 1e6, nil
		case "date":
			y, m, d := v.t.Date()
			return date{time.Date(y, m, d, 0, 0, 0, 0, time.UTC)}, nil
		case "weekday":
			return int64((v.t.Weekday() + 6) % 7), nil
		case "isoweekday":
			return int64((v.t.Weekday()+6)%7 + 1), nil
		}
	case date:
		switch name {
		case "strftime":
			f, _, err := strArg(a, 0, "format")
			return strftime(v.t, f, false), err
		case "isoformat":
			return v.t.Format("2006-01-02"), nil
		case "weekday":
			return int64((v.t.Weekday() + 6) % 7), nil
		case "isoweekday":
			return int64((v.t.Weekday()+6)%7 + 1), nil
		}
	case timedelta:
		if name == "total_seconds" && v.months == 0 {
			return float64(v.d.Microseconds()) / 1e6, nil
		}
	}
	return nil, noMethod(x, name)
}
