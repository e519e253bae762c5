package decoder

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/tap-dev/tap/codec"
)

// csvReader reads a CSV body row by row (encoding/csv). Each row is one
// record: property names from the header row (or column_1, column_2, …
// without one), values strings unless the stream's schema types them. A
// row takes at most maxRecordText bytes of the body.
type csvReader struct {
	dec    *Decoder
	in     *budget
	r      *csv.Reader // Read's rows
	texts  *csvRows    // next's rows: the same, in place
	rows   int         // rows read, the header among them
	names  []string
	shapes []*shape
	// collided is the pointer of the first header name that is there
	// twice, as written or once its invalid UTF-8 was repaired: every row
	// would lose one of the two values, so each is marked as a JSON
	// record is (codec.CollisionKey) and refused by the stream's
	// validator (a dead letter, or the run's error, per
	// on_schema_violation).
	collided string
	// keys are the names as JSON object keys, each with its colon
	// (AppendText); plain is false when a row's text could not stand
	// for its tree: a collision, or a name twice.
	keys  [][]byte
	plain bool
	err   error
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

// newCSVTexts is the csvReader of next, which reads body with csvRows.
func newCSVTexts(dec *Decoder, body io.Reader) *csvReader {
	in := &budget{r: body, err: errRecordTooLarge}
	comma := ','
	if d := dec.csv.Delimiter; d != "" {
		comma, _ = utf8.DecodeRuneInString(d)
	}
	return &csvReader{dec: dec, in: in, texts: newCSVRows(in, comma)}
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
		c.err = c.fail(err)
		return nil, c.err
	}
	return c.tree(row), nil
}

// fail is err of reading a row as Read returns it.
func (c *csvReader) fail(err error) error {
	var pe *csv.ParseError
	switch {
	case errors.Is(err, errRecordTooLarge):
		err = fmt.Errorf("stream %q: row %d of the csv body is larger than %d MiB", c.dec.stream, c.rows+1, c.dec.maxRecord>>20)
	case errors.Is(err, io.EOF):
	case errors.As(err, &pe):
		err = fmt.Errorf("stream %q: the csv body is not CSV: %w", c.dec.stream, pe)
	}
	return err
}

// tree is the record of a row.
func (c *csvReader) tree(row []string) map[string]any {
	rec := make(map[string]any, len(c.names)+1)
	for i, v := range row {
		rec[c.names[i]] = c.shapes[i].coerceText(v)
	}
	if c.collided != "" {
		rec[codec.CollisionKey] = c.collided
	}
	return rec
}

// next adds the next row to l: as its record's JSON text (what
// codec.Append writes of the tree Read returns, its keys in the header's
// order), or as the tree itself when no text decodes to it — a row with
// invalid UTF-8 (the tree keeps the bytes, and the validator judges
// them), a header with a collision or a name twice. It returns Read's
// errors, io.EOF after the last row.
func (c *csvReader) next(l *Lines) error {
	if c.err != nil {
		return c.err
	}
	row, err := c.textRow()
	if err == nil && c.names == nil {
		err = c.start(strs(row))
		if err == nil && (c.dec.csv.Header == nil || *c.dec.csv.Header) {
			row, err = c.textRow()
		}
	}
	if err != nil {
		c.err = c.fail(err)
		return c.err
	}
	if !c.plain {
		l.addTree(c.tree(strs(row)), c.rows)
		return nil
	}
	for _, v := range row {
		if !utf8.Valid(v) {
			l.addTree(c.tree(strs(row)), c.rows)
			return nil
		}
	}
	b := append(l.buf, '{')
	for i, v := range row {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, c.keys[i]...)
		// The text is read for this call alone: it is the row's
		// buffer, not a string of its own.
		b = c.shapes[i].appendText(b, unsafe.String(unsafe.SliceData(v), len(v)))
	}
	l.buf = append(b, '}')
	l.end(c.rows)
	return nil
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

// textRow reads the next row as row does, in place (csvRows).
func (c *csvReader) textRow() ([][]byte, error) {
	c.in.allow(c.texts.InputOffset(), c.dec.maxRecord)
	row, err := c.texts.Read()
	if err == nil {
		c.rows++
	}
	return row, err
}

// strs is row's fields as strings of their own.
func strs(row [][]byte) []string {
	s := make([]string, len(row))
	for i, v := range row {
		s[i] = string(v)
	}
	return s
}

// start takes the column names from the first row.
func (c *csvReader) start(first []string) error {
	// A body whose lines end with CR alone (classic Mac OS exports) is
	// one line to CSV: its header would swallow every row, and the body
	// read as 0 records.
	for _, name := range first {
		if (c.dec.csv.Header == nil || *c.dec.csv.Header) && strings.ContainsRune(name, '\r') {
			return fmt.Errorf("stream %q: the csv header holds a carriage return: the body's lines end with CR alone, which CSV does not read as line ends; have the API (or a proxy) send LF or CRLF line ends", c.dec.stream)
		}
	}
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
		// U+FFFD; two names made one so, or a name twice (id,id,v), are
		// a collision: every row would lose one of the two values, and
		// the key could come from either.
		repaired := repairUTF8(name)
		if _, ok := raw[repaired]; ok && c.collided == "" {
			c.collided = "/" + pointerEscaper.Replace(repaired)
		}
		raw[repaired] = name
		c.names[i] = repaired
		c.shapes[i] = c.dec.shape.property(repaired)
	}
	c.plain = c.collided == "" && len(raw) == len(first)
	c.keys = make([][]byte, len(first))
	for i, name := range c.names {
		c.keys[i] = append(codec.AppendString(nil, name), ':')
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
