// The row parser below is encoding/csv's Reader.readRecord (Go 1.26,
// src/encoding/csv/reader.go), with the options the tap sets (no comment
// character, no lazy quotes, no leading-space trimming, every row as many
// fields as the first), returning the fields as slices of its buffer:
//
// Copyright 2011 The Go Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in Go's LICENSE file.

package decoder

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"unicode/utf8"
)

// csvRows reads a CSV body row by row as encoding/csv's Reader does, with
// the same rows, the same errors (*csv.ParseError, at the same line and
// column) and the same InputOffset; but a row's fields are slices of the
// reader's buffer, valid until the next row, where encoding/csv copies
// each row into a new string. A csv body read as it arrives writes its
// rows as JSON texts (csvReader.next) and keeps none of them: that string
// was nearly all the garbage of the body (one a row; in the models bench,
// 86% of the bytes a csv body allocated, and its collections pushed the
// peak RSS above the jsonl body's). TestCSVRowsAsEncodingCSV and
// FuzzCSVRows check it against encoding/csv.
type csvRows struct {
	r      *bufio.Reader
	comma  rune
	fields int // the fields of each row, the first's; 0 before it
	line   int
	offset int64
	raw    []byte // a line longer than the bufio.Reader's buffer
	buf    []byte // the row's fields, one after the other
	ends   []int  // where each field ends in buf
	row    [][]byte
}

var errInvalidDelim = errors.New("csv: invalid field or comment delimiter")

func newCSVRows(r io.Reader, comma rune) *csvRows {
	return &csvRows{r: bufio.NewReaderSize(r, readAhead), comma: comma}
}

// InputOffset is encoding/csv's Reader.InputOffset.
func (r *csvRows) InputOffset() int64 { return r.offset }

func validDelim(r rune) bool {
	return r != 0 && r != '"' && r != '\r' && r != '\n' && utf8.ValidRune(r) && r != utf8.RuneError
}

func lengthNL(b []byte) int {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		return 1
	}
	return 0
}

func nextRune(b []byte) rune {
	r, _ := utf8.DecodeRune(b)
	return r
}

func (r *csvRows) readLine() ([]byte, error) {
	line, err := r.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		r.raw = append(r.raw[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = r.r.ReadSlice('\n')
			r.raw = append(r.raw, line...)
		}
		line = r.raw
	}
	readSize := len(line)
	if readSize > 0 && err == io.EOF {
		err = nil
		// For backwards compatibility, drop trailing \r before EOF.
		if line[readSize-1] == '\r' {
			line = line[:readSize-1]
		}
	}
	r.line++
	r.offset += int64(readSize)
	// Normalize \r\n to \n on all input lines.
	if n := len(line); n >= 2 && line[n-2] == '\r' && line[n-1] == '\n' {
		line[n-2] = '\n'
		line = line[:n-1]
	}
	return line, err
}

// Read returns the next row's fields, valid until the next call, and
// encoding/csv's error where its Read would fail.
func (r *csvRows) Read() ([][]byte, error) {
	if !validDelim(r.comma) {
		return nil, errInvalidDelim
	}
	// Read line (automatically skipping past empty lines).
	var line []byte
	var errRead error
	for errRead == nil {
		line, errRead = r.readLine()
		if errRead == nil && len(line) == lengthNL(line) {
			line = nil
			continue // Skip empty lines
		}
		break
	}
	if errRead == io.EOF {
		return nil, errRead
	}

	// Parse each field in the record.
	var err error
	const quoteLen = len(`"`)
	commaLen := utf8.RuneLen(r.comma)
	recLine := r.line // Starting line for record
	r.buf = r.buf[:0]
	r.ends = r.ends[:0]
	col, posLine := 1, r.line
parseField:
	for {
		if len(line) == 0 || line[0] != '"' {
			// Non-quoted string field
			i := bytes.IndexRune(line, r.comma)
			field := line
			if i >= 0 {
				field = field[:i]
			} else {
				field = field[:len(field)-lengthNL(field)]
			}
			// Check to make sure a quote does not appear in field.
			if j := bytes.IndexByte(field, '"'); j >= 0 {
				err = &csv.ParseError{StartLine: recLine, Line: r.line, Column: col + j, Err: csv.ErrBareQuote}
				break parseField
			}
			r.buf = append(r.buf, field...)
			r.ends = append(r.ends, len(r.buf))
			if i >= 0 {
				line = line[i+commaLen:]
				col += i + commaLen
				continue parseField
			}
			break parseField
		}
		// Quoted string field
		line = line[quoteLen:]
		col += quoteLen
		for {
			i := bytes.IndexByte(line, '"')
			if i >= 0 {
				// Hit next quote.
				r.buf = append(r.buf, line[:i]...)
				line = line[i+quoteLen:]
				col += i + quoteLen
				switch rn := nextRune(line); {
				case rn == '"':
					// `""` sequence (append quote).
					r.buf = append(r.buf, '"')
					line = line[quoteLen:]
					col += quoteLen
				case rn == r.comma:
					// `",` sequence (end of field).
					line = line[commaLen:]
					col += commaLen
					r.ends = append(r.ends, len(r.buf))
					continue parseField
				case lengthNL(line) == len(line):
					// `"\n` sequence (end of line).
					r.ends = append(r.ends, len(r.buf))
					break parseField
				default:
					// `"*` sequence (invalid non-escaped quote).
					err = &csv.ParseError{StartLine: recLine, Line: r.line, Column: col - quoteLen, Err: csv.ErrQuote}
					break parseField
				}
			} else if len(line) > 0 {
				// Hit end of line (copy all data so far).
				r.buf = append(r.buf, line...)
				if errRead != nil {
					break parseField
				}
				col += len(line)
				line, errRead = r.readLine()
				if len(line) > 0 {
					posLine++
					col = 1
				}
				if errRead == io.EOF {
					errRead = nil
				}
			} else {
				// Abrupt end of file (EOF or error).
				if errRead == nil {
					err = &csv.ParseError{StartLine: recLine, Line: posLine, Column: col, Err: csv.ErrQuote}
					break parseField
				}
				r.ends = append(r.ends, len(r.buf))
				break parseField
			}
		}
	}
	if err == nil {
		err = errRead
	}

	r.row = r.row[:0]
	from := 0
	for _, to := range r.ends {
		r.row = append(r.row, r.buf[from:to:to])
		from = to
	}

	// Check or update the expected fields per record.
	if r.fields > 0 {
		if len(r.row) != r.fields && err == nil {
			err = &csv.ParseError{StartLine: recLine, Line: recLine, Column: 1, Err: csv.ErrFieldCount}
		}
	} else {
		r.fields = len(r.row)
	}
	return r.row, err
}
