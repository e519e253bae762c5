package keys

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func TestCompareKeys(t *testing.T) {
	n := func(s string) json.Number { return json.Number(s) }
	tests := []struct {
		a, b    any
		want    int
		wantErr string
	}{
		// times with different offsets and precisions
		{"2026-08-18T11:00:00+02:00", "2026-08-18T09:00:00Z", 0, ""},
		{"2026-08-18T09:00:00.5Z", "2026-08-18T09:00:00Z", 1, ""},
		{"2026-08-18T09:00:00.123456789Z", "2026-08-18T09:00:00.12345678Z", 1, ""},
		// lexically "2026-08-18T10..." > "2026-08-18T09...", as instants it is earlier
		{"2026-08-18T10:00:00+05:00", "2026-08-18T09:00:00Z", -1, ""},
		{"2026-08-18T09:00:00-01:00", "2026-08-18T09:59:59Z", 1, ""},
		// dates are midnight UTC
		{"2026-08-18", "2026-08-18T00:00:00Z", 0, ""},
		{"2026-08-18", "2026-08-18T01:00:00+02:00", 1, ""}, // 2026-08-17T23:00Z
		{"2026-08-19", "2026-08-18", 1, ""},
		{time.Date(2026, 8, 18, 9, 0, 0, 0, time.UTC), "2026-08-18T11:00:00+02:00", 0, ""},
		// numbers, exactly
		{n("9007199254740993"), n("9007199254740992"), 1, ""},
		{n("9007199254740993"), float64(9007199254740992), 1, ""},
		{n("123456789012345678901234567890"), n("123456789012345678901234567891"), -1, ""},
		{n("10"), n("9"), 1, ""},
		{n("0"), n("7"), -1, ""},
		{n("120"), n("119"), 1, ""},
		{n("007"), n("7"), 0, ""},
		{n("-10"), n("9"), -1, ""},
		{n("-10"), n("-9"), -1, ""},
		{n("1e3"), n("1000"), 0, ""},
		{n("1.10"), n("1.1"), 0, ""},
		{n("-2"), 1, -1, ""},
		{int64(5), uint64(5), 0, ""},
		{1.5, n("1.49999999999999999999"), 1, ""},
		// opaque strings compare lexically
		{"v10", "v9", -1, ""},
		{"b", "a", 1, ""},
		// nil is smaller than everything
		{nil, n("0"), -1, ""},
		{"2026-08-18", nil, 1, ""},
		{nil, nil, 0, ""},
		// errors
		{n("1755507600"), "2026-08-18T09:00:00Z", 0, "different kinds: a number (1755507600) and a time"},
		{"2026-08-18T09:00:00Z", n("5"), 0, "different kinds"},
		{"2026-08-18T09:00:00Z", "yesterday", 0, "different kinds: a time"},
		{n("5"), "5", 0, "different kinds"},
		{true, n("1"), 0, "must be a number, a time or a string"},
		{n("abc"), n("1"), 0, "not a number"},
		{n("1e999999999"), n("1"), 0, "not a number"},
		{math.NaN(), 1.0, 0, "not a finite number"},
	}
	for _, tt := range tests {
		got, err := Compare(tt.a, tt.b)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Compare(%#v, %#v) err = %v, want it to contain %q", tt.a, tt.b, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Compare(%#v, %#v) = %d, %v; want %d", tt.a, tt.b, got, err, tt.want)
		}
		// antisymmetry
		if back, err := Compare(tt.b, tt.a); err != nil || back != -tt.want {
			t.Errorf("Compare(%#v, %#v) = %d, %v; want %d", tt.b, tt.a, back, err, -tt.want)
		}
	}
}

func TestCompareDigits(t *testing.T) {
	tests := []struct {
		a, b string
		want int
		ok   bool
	}{
		{"0", "0", 0, true},
		{"7", "10", -1, true},
		{"120", "119", 1, true},
		{"1234567", "1234567", 0, true},
		{"1234568", "1234567", 1, true},
		{"99999999999999999999999", "100000000000000000000000", -1, true},
		{"", "1", 0, false},
		{"007", "7", 0, false},
		{"10", "01", 0, false},
		{"-1", "1", 0, false},
		{"1a", "12", 0, false},
		{"12", "1:", 0, false}, // ':' is '9'+1
		{"1/", "12", 0, false}, // '/' is '0'-1
		{"123", "1.5", 0, false},
		{"1e3", "100", 0, false},
	}
	for _, tt := range tests {
		c, ok := compareDigits(tt.a, tt.b)
		if ok != tt.ok || (ok && c != tt.want) {
			t.Errorf("compareDigits(%q, %q) = %d, %v; want %d, %v", tt.a, tt.b, c, ok, tt.want, tt.ok)
		}
		if back, ok := compareDigits(tt.b, tt.a); ok != tt.ok || (ok && back != -tt.want) {
			t.Errorf("compareDigits(%q, %q) = %d, %v; want %d, %v", tt.b, tt.a, back, ok, -tt.want, tt.ok)
		}
	}
}

func TestMaxKeyKeepsRepresentation(t *testing.T) {
	tests := []struct {
		a, b, want any
	}{
		{"2026-08-18T11:00:00+02:00", "2026-08-18T09:00:01Z", "2026-08-18T09:00:01Z"},
		{"2026-08-18T11:00:00+02:00", "2026-08-18T09:00:00Z", "2026-08-18T11:00:00+02:00"}, // equal: keep a
		{json.Number("9007199254740993"), json.Number("9007199254740992"), json.Number("9007199254740993")},
		{nil, "2026-01-01", "2026-01-01"},
		{json.Number("1.50"), json.Number("1.5"), json.Number("1.50")},
	}
	for _, tt := range tests {
		got, err := Max(tt.a, tt.b)
		if err != nil || got != tt.want {
			t.Errorf("Max(%#v, %#v) = %#v, %v; want %#v", tt.a, tt.b, got, err, tt.want)
		}
	}
	if _, err := Max(json.Number("1"), "2026-01-01"); err == nil {
		t.Error("Max of a number and a time: no error")
	}
}

func TestParseTimeKey(t *testing.T) {
	tests := []struct {
		in   any
		want time.Time
		ok   bool
	}{
		{"2026-08-18T09:00:00Z", time.Date(2026, 8, 18, 9, 0, 0, 0, time.UTC), true},
		{"2026-08-18T11:00:00.25+02:00", time.Date(2026, 8, 18, 9, 0, 0, 250e6, time.UTC), true},
		{"2026-08-18", time.Date(2026, 8, 18, 0, 0, 0, 0, time.UTC), true},
		{"2026-08-18 09:00:00", time.Time{}, false},
		{"2026-13-01", time.Time{}, false},
		{"abc", time.Time{}, false},
		{json.Number("1755507600"), time.Time{}, false},
		{1755507600.0, time.Time{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseTime(tt.in)
		if ok != tt.ok || !got.Equal(tt.want) {
			t.Errorf("ParseTime(%#v) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
