package taptest

import (
	"slices"
	"strings"
	"testing"
)

// Table is a summary table read back: the header and, per stream, its
// cells by column name.
type Table struct {
	Header []string
	Rows   map[string]map[string]string
}

// ReadTable parses the lines of a run's summary table (tap/metrics.Table) and checks their alignment:
// the stream column starts every line, and every other column ends where
// its header ends.
func ReadTable(t *testing.T, lines []string) Table {
	t.Helper()
	if len(lines) == 0 {
		t.Fatal("no table")
	}
	header := strings.Fields(lines[0])
	ends := columnEnds(lines[0])
	tb := Table{Header: header, Rows: map[string]map[string]string{}}
	for _, line := range lines[1:] {
		cells := strings.Fields(line)
		if len(cells) != len(header) {
			t.Fatalf("row %q has %d cells, the header %d", line, len(cells), len(header))
		}
		if got := columnEnds(line); !slices.Equal(got[1:], ends[1:]) || strings.HasPrefix(line, " ") {
			t.Errorf("row %q is not aligned with the header %q", line, lines[0])
		}
		row := map[string]string{}
		for i, c := range cells {
			row[header[i]] = c
		}
		tb.Rows[cells[0]] = row
	}
	return tb
}

// columnEnds is the offset past the end of each word of line.
func columnEnds(line string) []int {
	var ends []int
	for i := 0; i < len(line); i++ {
		if line[i] != ' ' && (i+1 == len(line) || line[i+1] == ' ') {
			ends = append(ends, i+1)
		}
	}
	return ends
}
