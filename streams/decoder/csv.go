package decoder

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tap-dev/tap/codec"
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
	// collided is the pointer of the first header name that became
	// another once its invalid UTF-8 was repaired: every row would lose
	// one of the two values, so each is marked as a JSON record is
	// (codec.CollisionKey) and refused by the stream's validator.
	collided string
	err      error
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
	rec := make(map[string]any, len(c.names)+1)
	for i, v := range row {
		rec[c.names[i]] = c.shapes[i].coerceText(v)
	}
	if c.collided != "" {
		rec[codec.CollisionKey] = c.collided
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
	raw := make(map[string]string, len(first)) // repaired name → as the header had it
	for i, name := range first {
		if !header {
			name = "column_" + strconv.Itoa(i+1)
		} else if i == 0 {
			name = strings.TrimPrefix(name, "\uFEFF") // a byte order mark some exports start with
		}
		// A name is written as JSON writes it, each invalid byte a
		// U+FFFD; two names made one so are a collision, two names that
		// were one already a duplicate column (the last wins, as a
		// duplicate JSON key does).
		repaired := repairUTF8(name)
		if was, ok := raw[repaired]; ok && was != name && c.collided == "" {
			c.collided = "/" + pointerEscaper.Replace(repaired)
		}
		raw[repaired] = name
		c.names[i] = repaired
		c.shapes[i] = c.dec.shape.property(repaired)
	}
	return nil
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// repairUTF8 replaces each byte of s that is not valid UTF-8 by U+FFFD.
func repairUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s { // an invalid byte is one RuneError
		b.WriteRune(r)
	}
	return b.String()
}
