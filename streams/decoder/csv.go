package decoder

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// csvReader reads a CSV body row by row (encoding/csv). Each row is one
// record: property names from the header row (or column_1, column_2, …
// without one), values strings unless the stream's schema types them. A
// row takes at most maxRecordText bytes of the body.
type csvReader struct {
	dec    *Decoder
	in     *budget
	r      *csv.Reader
	rows   int // rows read, the header among them
	names  []string
	shapes []*shape
	err    error
}

func newCSVReader(dec *Decoder, body io.Reader) *csvReader {
	in := &budget{r: body, err: errRecordTooLarge}
	r := csv.NewReader(in)
	r.ReuseRecord = true
	if d := dec.csv.Delimiter; d != "" {
		r.Comma, _ = utf8.DecodeRuneInString(d)
	}
	return &csvReader{dec: dec, in: in, r: r}
}

func (c *csvReader) Read() (any, error) {
	if c.err != nil {
		return nil, c.err
	}
	row, err := c.row()
	if err == nil && c.names == nil {
		err = c.start(row)
		if err == nil && (c.dec.csv.Header == nil || *c.dec.csv.Header) {
			row, err = c.row()
		}
	}
	if err != nil {
		var pe *csv.ParseError
		switch {
		case errors.Is(err, errRecordTooLarge):
			err = fmt.Errorf("stream %q: row %d of the csv body is larger than %d MiB", c.dec.stream, c.rows+1, c.dec.maxRecord>>20)
		case errors.Is(err, io.EOF):
		case errors.As(err, &pe):
			err = fmt.Errorf("stream %q: the csv body is not CSV: %w", c.dec.stream, pe)
		}
		c.err = err
		return nil, err
	}
	rec := make(map[string]any, len(c.names))
	for i, v := range row {
		rec[c.names[i]] = c.shapes[i].coerceText(v)
	}
	return rec, nil
}

// row reads the next row, at most maxRecordText bytes of the body.
func (c *csvReader) row() ([]string, error) {
	c.in.allow(c.r.InputOffset(), c.dec.maxRecord)
	row, err := c.r.Read()
	if err == nil {
		c.rows++
	}
	return row, err
}

// start takes the column names from the first row.
func (c *csvReader) start(first []string) error {
	c.names = make([]string, len(first))
	c.shapes = make([]*shape, len(first))
	header := c.dec.csv.Header == nil || *c.dec.csv.Header
	for i, name := range first {
		if !header {
			name = "column_" + strconv.Itoa(i+1)
		} else if i == 0 {
			name = strings.TrimPrefix(name, "\uFEFF") // a byte order mark some exports start with
		}
		c.names[i] = name
		c.shapes[i] = c.dec.shape.property(name)
	}
	return nil
}
