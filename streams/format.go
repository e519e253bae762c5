package streams

import (
	"errors"
	"fmt"
)

// Body formats of a stream (Definition.Format).
const (
	FormatJSON  = "json"
	FormatJSONL = "jsonl"
	FormatCSV   = "csv"
	FormatXML   = "xml"
)

// CSVOptions say how a csv body is laid out.
type CSVOptions struct {
	// Delimiter is the one character between fields [","].
	Delimiter string `json:"delimiter" doc:"The one character between fields [\",\"]."`
	// Header: the first row names the columns [true]. Without it the
	// columns are named column_1, column_2, …
	Header *bool `json:"header" doc:"The first row names the columns [true]; without it they are column_1, column_2, …."`
}

// BodyFormat is the format of d's page bodies: json by default.
func (d *Definition) BodyFormat() string {
	if d.Format == "" {
		return FormatJSON
	}
	return d.Format
}

// Streamed reports whether d is read as one body whose records are handed
// on while it arrives, never held whole: a body of a record-per-row format
// (jsonl, csv, xml) that is not paged.
func (d *Definition) Streamed() bool {
	pt, _ := lookupPageType(d.Pagination.Type)
	return d.BodyFormat() != FormatJSON && pt.name == PageNone && d.Async == nil
}

func formatMsg(format string) string {
	return fmt.Sprintf("expected json, jsonl, csv or xml, got %q", format)
}

// CheckFormat reports a body format that is not json, jsonl, csv or xml.
func CheckFormat(f string) error {
	if validFormat(f) {
		return nil
	}
	return errors.New(formatMsg(f))
}
