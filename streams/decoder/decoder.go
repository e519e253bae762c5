// Package decoder reads the records of a page body in a stream's format
// (json, jsonl, csv, xml), one record at a time, and undoes gzip; a body
// read as it arrives is handed on in pages of PageRecords (Pages).
package decoder

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams"
)

// A RecordReader hands out the records of one body, one at a time; Read
// returns io.EOF after the last. Records are decoded as they are read, so
// a body of any size takes the memory of one record.
type RecordReader interface {
	Read() (any, error)
}

// Decoder reads bodies of one format for one stream.
type Decoder struct {
	stream      string
	format      string
	recordsPath string
	csv         streams.CSVOptions
	shape       *shape // from the stream's schema; nil: untyped
	// maxRecord and maxPage are maxRecordText and maxPageBody (a test
	// makes them small).
	maxRecord, maxPage int64
}

// New returns the decoder of format (json, jsonl, csv or xml) for
// stream d. schema is d's decoded JSON Schema (nil for none): csv and xml
// values, which are text, take the types it gives their properties.
func New(d *streams.Definition, format string, schema map[string]any) (*Decoder, error) {
	if format == "" {
		format = streams.FormatJSON
	}
	if err := streams.CheckFormat(format); err != nil {
		return nil, fmt.Errorf("stream %q: format: %w", d.Name, err)
	}
	dec := &Decoder{stream: d.Name, format: format, recordsPath: d.RecordsPath, shape: shapeOf(schema),
		maxRecord: maxRecordText, maxPage: maxPageBody}
	if d.CSV != nil {
		dec.csv = *d.CSV
	}
	return dec, nil
}

// Format is the format the decoder reads.
func (dec *Decoder) Format() string { return dec.format }

// Records returns a reader of the records of body. The json format is
// decoded whole (it is one document); the others are read as they come.
func (dec *Decoder) Records(body io.Reader) RecordReader {
	switch dec.format {
	case streams.FormatJSONL:
		return newJSONLReader(dec, body)
	case streams.FormatCSV:
		return newCSVReader(dec, body)
	case streams.FormatXML:
		return newXMLReader(dec, body)
	}
	return &jsonReader{dec: dec, body: body}
}

// CheckContentType reports a response whose Content-Type says it is
// plainly another format than the decoder reads (an HTML error page from
// a proxy, JSON from an API that ignored the export parameter). Types that
// say nothing (text/plain, application/octet-stream, none at all) pass: a
// body is then judged by decoding it.
func (dec *Decoder) CheckContentType(contentType string) error {
	if contentType == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil
	}
	kind := ""
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		kind = "html"
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		kind = streams.FormatJSON
	case mt == "application/x-ndjson" || mt == "application/jsonl" || mt == "application/jsonlines" || mt == "application/x-jsonlines":
		kind = streams.FormatJSONL
	case mt == "text/csv" || mt == "application/csv" || mt == "text/tab-separated-values":
		kind = streams.FormatCSV
	case mt == "application/xml" || mt == "text/xml" || strings.HasSuffix(mt, "+xml"):
		kind = streams.FormatXML
	default:
		return nil
	}
	// A JSON Lines body is often served as application/json.
	if kind == dec.format || (dec.format == streams.FormatJSONL && kind == streams.FormatJSON) {
		return nil
	}
	return fmt.Errorf("stream %q: the response is %s (Content-Type %q), but the stream's format is %s", dec.stream, kindText(kind), contentType, dec.format)
}

func kindText(kind string) string {
	if kind == "html" {
		return "an HTML page"
	}
	return kind
}

// Decompress returns body, gunzipped when it is gzip: announced by a
// Content-Encoding or a Content-Type of application/gzip, or recognised
// by its magic bytes (storage services often serve a .gz file as
// application/octet-stream). Go's HTTP transport has already undone a
// Content-Encoding it asked for itself.
func Decompress(body io.Reader, header http.Header) (io.Reader, error) {
	return new(readers).decompress(body, header)
}

// bodyBuffer is the size of the buffer a body is read through.
const bodyBuffer = 64 << 10

// readers are the buffers a body is read through, kept by a page of Lines
// for the next body read into it (ReadLines): made afresh for each page,
// the two buffers of 64 KiB (Decompress's, the jsonl reader's) and a gzip
// reader were most of what a paginated jsonl stream allocated.
type readers struct {
	body, line *bufio.Reader
	gzip       *gzip.Reader
	// atPath finds the records at a jsonl body's records_path in a line
	// (lineReader); nil until the first such body.
	atPath *codec.Page
}

// buffered returns r read through *b, made or reset for it; r itself when
// it is a buffer of that size already.
func buffered(b **bufio.Reader, r io.Reader) *bufio.Reader {
	if br, ok := r.(*bufio.Reader); ok && br.Size() >= bodyBuffer {
		return br
	}
	if *b == nil {
		*b = bufio.NewReaderSize(r, bodyBuffer)
	} else {
		(*b).Reset(r)
	}
	return *b
}

// decompress is Decompress through rs's buffers.
func (rs *readers) decompress(body io.Reader, header http.Header) (io.Reader, error) {
	br := buffered(&rs.body, body)
	announced := false
	for _, v := range header.Values("Content-Encoding") {
		if strings.Contains(strings.ToLower(v), "gzip") {
			announced = true
		}
	}
	if mt, _, _ := mime.ParseMediaType(header.Get("Content-Type")); mt == "application/gzip" || mt == "application/x-gzip" {
		announced = true
	}
	magic, err := br.Peek(2)
	if err != nil && err != io.EOF {
		return nil, err
	}
	isGzip := len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b
	if !isGzip {
		if announced && len(magic) > 0 {
			return nil, fmt.Errorf("the body is announced as gzip but is not gzip")
		}
		return br, nil
	}
	if rs.gzip == nil {
		rs.gzip, err = gzip.NewReader(br)
	} else {
		err = rs.gzip.Reset(br)
	}
	if err != nil {
		return nil, fmt.Errorf("reading gzip body: %w", err)
	}
	return rs.gzip, nil
}
