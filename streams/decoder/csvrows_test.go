package decoder

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// csvResult is what a reader made of a body: its rows, the error that
// ended it (io.EOF at the end), and InputOffset after each row.
type csvResult struct {
	Rows    [][]string
	Offsets []int64
	Err     string
}

func readEncodingCSV(body io.Reader, comma rune) csvResult {
	r := csv.NewReader(body)
	r.ReuseRecord, r.Comma = true, comma
	var res csvResult
	for i := 0; ; i++ {
		row, err := r.Read()
		if err != nil {
			res.Err = err.Error()
			return res
		}
		res.Rows = append(res.Rows, append([]string(nil), row...))
		res.Offsets = append(res.Offsets, r.InputOffset())
	}
}

func readCSVRows(body io.Reader, comma rune) csvResult {
	r := newCSVRows(body, comma)
	var res csvResult
	for {
		row, err := r.Read()
		if err != nil {
			res.Err = err.Error()
			return res
		}
		res.Rows = append(res.Rows, strs(row))
		res.Offsets = append(res.Offsets, r.InputOffset())
	}
}

var csvBodies = []string{
	"", "\n", "a", "a,b\n1,2\n", "a,b\r\n1,2\r\n", "a,b\n1,2", "a,b\n1,2\r", "a\r\nb\rc\n",
	"a,b\n\n\n1,2\n\n", "a,b\n1\n", "a,b\n1,2,3\n", `a,"b` + "\n", `a,"b""c",d` + "\n", `a,"b"c` + "\n", `a,b"c` + "\n",
	"a,\"multi\nline\r\nfield\",c\n1,2,3\n", `"` + "\n", `""` + "\n", `"",""` + "\n", `a,"` + "\n\n", "x,\"y\n\nz\"\n",
	",,\n,,\n", "a;b\n1;2\n", "\uFEFFa,b\n1,2\n", "é,ü\n\xff,\xfe\n", "a,b\n\"1\"x,2\n", "a,b\n1,\"2\n", `a,"b"` + "\r\n",
	"a,b\n1,\"2\"\"\"\n", "a,b\n" + strings.Repeat("x", 10000) + ",\"" + strings.Repeat("y\n", 3000) + "\"\n",
	strings.Repeat("q,", 3000) + "\n", "a,b\n1,2\n3,4,5\n6,7\n", "a\n\"b\n", "a,b\n c , \"d\"\n", "a,b\n1, \"2\"\n",
}

// csvRows reads as encoding/csv reads: the same rows, the same errors
// (line and column), the same offsets; with every delimiter the tap
// allows, and a body read a byte at a time.
func TestCSVRowsAsEncodingCSV(t *testing.T) {
	for i, body := range csvBodies {
		for _, comma := range []rune{',', ';', '\t', 'é', '"', 0} {
			want := readEncodingCSV(strings.NewReader(body), comma)
			got := readCSVRows(strings.NewReader(body), comma)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("body %d %q, comma %q (-encoding/csv +csvRows):\n%s", i, body, comma, d)
			}
			got = readCSVRows(iotest.OneByteReader(strings.NewReader(body)), comma)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("body %d, comma %q, a byte at a time (-encoding/csv +csvRows):\n%s", i, comma, d)
			}
		}
	}
}

func FuzzCSVRows(f *testing.F) {
	for _, b := range csvBodies {
		f.Add(b, ",")
	}
	f.Add("a\tb\n1\t2", "\t")
	f.Fuzz(func(t *testing.T, body, delim string) {
		comma := []rune(delim + ",")[0]
		want := readEncodingCSV(strings.NewReader(body), comma)
		got := readCSVRows(strings.NewReader(body), comma)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-encoding/csv +csvRows):\n%s", fmt.Sprintf("%q, %q", body, delim), d)
		}
	})
}
