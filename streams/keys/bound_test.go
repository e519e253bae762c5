package keys

import (
	"encoding/json"
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	ts := time.Date(2026, 8, 18, 11, 0, 7, 987654321, time.FixedZone("CEST", 2*3600))
	tests := []struct {
		v      any
		format string
		want   string
	}{
		{ts, "", "2026-08-18T09:00:07Z"},
		{ts, "rfc3339", "2026-08-18T09:00:07Z"},
		{ts, "date", "2026-08-18"},
		{ts, "unix", "1787043607"},
		{ts, "unix_ms", "1787043607987"},
		{ts, "2006-01-02 15:04:05", "2026-08-18 09:00:07"},
		{ts, "20060102T150405Z0700", "20260818T090007Z"},
		{time.Date(2026, 8, 18, 0, 30, 0, 0, time.FixedZone("", 2*3600)), "date", "2026-08-17"},
		{"2026-08-18T11:00:07+02:00", "unix", "1787043607"},
		{json.Number("9007199254740993"), "rfc3339", "9007199254740993"},
		{json.Number("1.50"), "unix", "1.50"},
		{float64(1.5), "", "1.5"},
		{int64(42), "", "42"},
		{"v0042", "date", "v0042"},
		{nil, "", ""},
	}
	for _, tt := range tests {
		if got := Format(tt.v, tt.format); got != tt.want {
			t.Errorf("Format(%#v, %q) = %q, want %q", tt.v, tt.format, got, tt.want)
		}
	}
}

func TestInclusiveEnd(t *testing.T) {
	end := time.Date(2026, 1, 4, 0, 0, 0, 0, time.UTC)
	for format, want := range map[string]string{
		"date": "2026-01-03", "rfc3339": "2026-01-03T23:59:59Z", "": "2026-01-03T23:59:59Z",
		"unix": "1767484799", "unix_ms": "1767484799999",
	} {
		if got := Format(InclusiveEnd(end, format), format); got != want {
			t.Errorf("%q: %s, want %s", format, got, want)
		}
	}
}

func TestTimeOf(t *testing.T) {
	for _, tt := range []struct {
		v      any
		format string
		want   string // "" when it does not read
	}{
		{json.Number("1714557600"), "unix", "2024-05-01T10:00:00Z"},
		{"1714557600", "unix", "2024-05-01T10:00:00Z"},
		{float64(1714557600), "unix", "2024-05-01T10:00:00Z"},
		{json.Number("1714557600123"), "unix_ms", "2024-05-01T10:00:00.123Z"},
		{"2024-05-01 10:00:00", "2006-01-02 15:04:05", "2024-05-01T10:00:00Z"},
		{"2024-05-01T12:00:00.5+0200", "2006-01-02T15:04:05.999999Z0700", "2024-05-01T10:00:00.5Z"},
		{"2024-05-01", "date", "2024-05-01T00:00:00Z"},
		{json.Number("1.5"), "unix", ""},
		{"yesterday", "2006-01-02", ""},
		{"2024050110", "20060102|2006010215", "2024-05-01T10:00:00Z"}, // the second of two layouts
		{"20240501", "20060102|2006010215", "2024-05-01T00:00:00Z"},
		{"2024-05", "20060102|2006010215", ""},
		{true, "unix", ""},
	} {
		got, ok := TimeOf(tt.v, tt.format)
		if ok != (tt.want != "") || got != tt.want {
			t.Errorf("TimeOf(%#v, %q) = %q, %v; want %q", tt.v, tt.format, got, ok, tt.want)
		}
	}
}
