package interp

import (
	"testing"
	"time"
)

// TestDatetimeFormat: the CDK's DatetimeParser, as Python 3.11 runs it
// (the expected values are its output, airbyte-python-cdk 9cc7b80).
func TestDatetimeFormat(t *testing.T) {
	utc := time.UTC
	for _, c := range []struct {
		in, format string
		want       time.Time // zero: an error
	}{
		{"1704164645", "%s", time.Date(2024, 1, 2, 3, 4, 5, 0, utc)},
		{"1704164645123", "%ms", time.Date(2024, 1, 2, 3, 4, 5, 123e6, utc)},
		{"1704164645.25", "%s_as_float", time.Date(2024, 1, 2, 3, 4, 5, 250e6, utc)},
		{"1704164645123456", "%epoch_microseconds", time.Date(2024, 1, 2, 3, 4, 5, 123456e3, utc)},
		{"2024-01-02T03:04:05Z", "%Y-%m-%dT%H:%M:%SZ", time.Date(2024, 1, 2, 3, 4, 5, 0, utc)},
		{"2024-01-02T03:04:05.123456+0000", "%Y-%m-%dT%H:%M:%S.%f%z", time.Date(2024, 1, 2, 3, 4, 5, 123456e3, utc)},
		{"2024-01-02T03:04:05.123+02:00", "%Y-%m-%dT%H:%M:%S.%_ms%z", time.Date(2024, 1, 2, 3, 4, 5, 123e6, time.FixedZone("", 7200))},
		{"2024-01-02", "%Y-%m-%d", time.Date(2024, 1, 2, 0, 0, 0, 0, utc)},
		{"02/01/2024 15:04", "%d/%m/%Y %H:%M", time.Date(2024, 1, 2, 15, 4, 0, 0, utc)},
		{"2024-01-02T03:04:05.5Z", "%Y-%m-%dT%H:%M:%S.%fZ", time.Date(2024, 1, 2, 3, 4, 5, 5e8, utc)},
		{"Tue, 02 Jan 2024 03:04:05 GMT", "%a, %d %b %Y %H:%M:%S %Z", time.Date(2024, 1, 2, 3, 4, 5, 0, utc)},
		{"2024-01-02 03:04:05 -0500", "%Y-%m-%d %H:%M:%S %z", time.Date(2024, 1, 2, 3, 4, 5, 0, time.FixedZone("", -5*3600))},
		{"2024-01-02T03:04:05", "%Y-%m-%dT%H:%M:%SZ", time.Time{}},
		{"2024-13-02", "%Y-%m-%d", time.Time{}},
		{"abc", "%s", time.Time{}},
	} {
		got, err := CompileDatetimeFormat(c.format).Parse(c.in)
		if c.want.IsZero() {
			if err == nil {
				t.Errorf("Parse(%q, %q) = %v, want an error", c.in, c.format, got)
			}
			continue
		}
		_, gotOff := got.Zone()
		_, wantOff := c.want.Zone()
		if err != nil || !got.Equal(c.want) || gotOff != wantOff {
			t.Errorf("Parse(%q, %q) = %v, %v; want %v", c.in, c.format, got, err, c.want)
		}
	}
	at := time.Date(2024, 1, 2, 3, 4, 5, 123456e3, utc)
	at2 := at.In(time.FixedZone("", 5*3600+1800))
	for _, c := range []struct{ format, want, want2 string }{
		{"%s", "1704164645", "1704164645"},
		{"%ms", "1704164645123", "1704164645123"},
		{"%s_as_float", "1704164645.123456", "1704164645.123456"},
		{"%epoch_microseconds", "1704164645123456", "1704164645123456"},
		{"%Y-%m-%dT%H:%M:%SZ", "2024-01-02T03:04:05Z", "2024-01-02T08:34:05Z"},
		{"%Y-%m-%dT%H:%M:%S.%f%z", "2024-01-02T03:04:05.123456+0000", "2024-01-02T08:34:05.123456+0530"},
		{"%Y-%m-%dT%H:%M:%S.%_msZ", "2024-01-02T03:04:05.123Z", "2024-01-02T08:34:05.123Z"},
		{"%d %b %Y %I:%M %p", "02 Jan 2024 03:04 AM", "02 Jan 2024 08:34 AM"},
		{"%Y-%m-%dT%H:%M:%S%:z", "2024-01-02T03:04:05%:z", "2024-01-02T08:34:05%:z"}, // Python 3.11 has no %:z
	} {
		f := CompileDatetimeFormat(c.format)
		if got := f.Format(at); got != c.want {
			t.Errorf("Format(%q) = %q, want %q", c.format, got, c.want)
		}
		if got := f.Format(at2); got != c.want2 {
			t.Errorf("Format(%q) at +05:30 = %q, want %q", c.format, got, c.want2)
		}
	}
}

func TestCanParse(t *testing.T) {
	for format, ok := range map[string]bool{"%Y-%m-%d": true, "%s": true, "%_ms": true, "%Y%:z": false, "%Y-%Q": false, "%": false} {
		if err := CompileDatetimeFormat(format).CanParse(); (err == nil) != ok {
			t.Errorf("CanParse(%q) = %v", format, err)
		}
	}
}

// TestParseDuration: isodate's durations, and a month added as isodate
// adds it (the day clamped to the month's last).
func TestParseDuration(t *testing.T) {
	start := time.Date(2024, 1, 31, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Time
	}{
		{"P1D", time.Date(2024, 2, 1, 12, 0, 0, 0, time.UTC)},
		{"PT1H30M", time.Date(2024, 1, 31, 13, 30, 0, 0, time.UTC)},
		{"P1W", time.Date(2024, 2, 7, 12, 0, 0, 0, time.UTC)},
		{"P1M", time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC)},
		{"P1Y1M", time.Date(2025, 2, 28, 12, 0, 0, 0, time.UTC)},
		{"-P1M", time.Date(2023, 12, 31, 12, 0, 0, 0, time.UTC)},
		{"PT0.5S", time.Date(2024, 1, 31, 12, 0, 0, 5e8, time.UTC)},
		{"P1DT1.5H", time.Date(2024, 2, 1, 13, 30, 0, 0, time.UTC)},
	} {
		months, d, err := ParseDuration(c.in)
		if err != nil {
			t.Errorf("ParseDuration(%q): %v", c.in, err)
			continue
		}
		if got := AddDuration(start, months, d); !got.Equal(c.want) {
			t.Errorf("%v + %s = %v, want %v", start, c.in, got, c.want)
		}
	}
	for _, bad := range []string{"", "P", "PT", "1D", "P1H", "P1.5M", "PxD"} {
		if _, _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) is no error", bad)
		}
	}
}
