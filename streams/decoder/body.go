package decoder

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/tap-dev/tap/streams"
)

// maxGzipJSON bounds a gzipped JSON page once inflated, as the client
// bounds a plain one.
const maxGzipJSON = 256 << 20

// PageRecords is how many records of a body read as it arrives make one
// of its pages (Pages): the memory a body of any size takes, and how
// often a sorted stream checkpoints while it is read.
const PageRecords = 1000

// PageConsumer reads one page of a jsonl, csv or xml stream into *recs:
// the records of a page are held, so the page is bounded (maxPageBody
// once inflated); a body read by Pages is not.
func (dec *Decoder) PageConsumer(recs *[]any) func(io.Reader, http.Header) error {
	return func(body io.Reader, h http.Header) error {
		*recs = (*recs)[:0]
		return dec.each(body, h, dec.maxPage, func(rec any) error {
			*recs = append(*recs, rec)
			return nil
		})
	}
}

// Pages decodes body (gunzipped when it is gzip) as it arrives, after
// checking its Content-Type, and hands its records to page in pages of
// at most size records (PageRecords when size <= 0), each a new slice:
// a body of any size takes the memory of the pages page holds. A full
// page goes to page as soon as the record after it is read, with last
// false; the page that ends with the body's last record (empty for an
// empty body) goes with last true. Pages stops at page's error; at an
// error of the body, the records read before it go to page (last false)
// before Pages returns the error.
func (dec *Decoder) Pages(body io.Reader, h http.Header, size int, page func(recs []any, last bool) error) error {
	if size <= 0 {
		size = PageRecords
	}
	recs := make([]any, 0, size)
	var pageErr error
	err := dec.each(body, h, 0, func(rec any) error {
		if len(recs) == size {
			if pageErr = page(recs, false); pageErr != nil {
				return pageErr
			}
			recs = make([]any, 0, size)
		}
		recs = append(recs, rec)
		return nil
	})
	if err != nil {
		if pageErr == nil && len(recs) > 0 {
			// The records before the error are handed on, as a body
			// read record by record would have.
			if perr := page(recs, false); perr != nil {
				return perr
			}
		}
		return err
	}
	return page(recs, true)
}

// each decodes body (gunzipped when it is gzip) record by record, after
// checking its Content-Type, reading at most max bytes of the inflated
// body (0: no bound), and hands each record to f.
func (dec *Decoder) each(body io.Reader, h http.Header, max int64, f func(any) error) error {
	if err := dec.CheckContentType(h.Get("Content-Type")); err != nil {
		return err
	}
	r, err := Decompress(body, h)
	if err != nil {
		return err
	}
	if max > 0 {
		b := &budget{r: r, err: errPageTooLarge}
		b.allow(0, max)
		r = b
	}
	rr := dec.Records(r)
	for {
		rec, err := rr.Read()
		if err == io.EOF {
			return nil
		}
		if errors.Is(err, errPageTooLarge) {
			return fmt.Errorf("stream %q: a page of the %s body is larger than %d MiB once inflated", dec.stream, dec.format, max>>20)
		}
		if err != nil {
			return err
		}
		if err := f(rec); err != nil {
			return err
		}
	}
}

// bom is the UTF-8 byte order mark some exports start with. JSON has no
// place for it (RFC 8259 8.1 lets a parser ignore it): it is dropped at
// the start of a JSON body and of a JSON Lines body's first line, as CSV
// drops it from its header.
var bom = []byte("\uFEFF")

// GunzipJSON returns the JSON text of a page: inflated when gzipped (gzip
// is recognised by its magic bytes, whatever the headers said), without a
// byte order mark.
func GunzipJSON(b []byte) ([]byte, error) {
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		return bytes.TrimPrefix(b, bom), nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("reading gzip body: %w", err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxGzipJSON+1))
	if err != nil {
		return nil, fmt.Errorf("reading gzip body: %w", err)
	}
	if len(out) > maxGzipJSON {
		return nil, fmt.Errorf("gzip body larger than %d MiB once inflated", maxGzipJSON>>20)
	}
	return bytes.TrimPrefix(out, bom), nil
}

// WithAccept adds an Accept header asking for format, unless h has one.
func WithAccept(h http.Header, format string) http.Header {
	if h.Get("Accept") != "" {
		return h
	}
	a := acceptHeader(format)
	if a == nil {
		return h
	}
	out := h.Clone()
	if out == nil {
		out = http.Header{}
	}
	out["Accept"] = a["Accept"]
	return out
}

// acceptHeader asks for a body in format.
func acceptHeader(format string) http.Header {
	accept := map[string]string{
		streams.FormatJSONL: "application/x-ndjson, application/json;q=0.9, */*;q=0.5",
		streams.FormatCSV:   "text/csv, */*;q=0.5",
		streams.FormatXML:   "application/xml, text/xml;q=0.9, */*;q=0.5",
	}[format]
	if accept == "" {
		return nil
	}
	return http.Header{"Accept": {accept}}
}
