package integration_test

import (
	"regexp"
	"strings"
	"testing"
)

// logTime is the time a log line starts with.
var logTime = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z `)

// summaryTable reads the per-stream table a Singer run ends its stderr
// with: each row's cells by column name, by stream.
func summaryTable(t *testing.T, stderr []byte) map[string]map[string]string {
	t.Helper()
	lines := strings.Split(logTime.ReplaceAllString(string(stderr), ""), "\n")
	start := -1
	for i, l := range lines {
		if l == "INFO run summary by stream:" {
			start = i + 1
		}
	}
	if start < 0 || start >= len(lines) {
		t.Fatalf("stderr has no summary table:\n%s", stderr)
	}
	header := strings.Fields(strings.TrimPrefix(lines[start], "INFO "))
	rows := map[string]map[string]string{}
	for _, l := range lines[start+1:] {
		cells := strings.Fields(strings.TrimPrefix(l, "INFO "))
		if !strings.HasPrefix(l, "INFO ") || len(cells) != len(header) {
			break
		}
		row := map[string]string{}
		for i, c := range cells {
			row[header[i]] = c
		}
		rows[cells[0]] = row
	}
	return rows
}
