package streams

import (
	"fmt"
	"unicode/utf8"
)

func validFormat(f string) bool {
	switch f {
	case FormatJSON, FormatJSONL, FormatCSV, FormatXML:
		return true
	}
	return false
}

// checkFormat checks format, csv, async and the pagination options that
// depend on the format: a paginator that reads the body needs a JSON body.
func (d *Definition) checkFormat() error {
	bad := func(field, format string, args ...any) error {
		return &FieldError{Stream: d.Name, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if d.Async != nil {
		if err := d.checkAsync(); err != nil {
			return err
		}
	}
	records := d.BodyFormat() // the format the records come in
	if d.Async != nil {
		records = d.Async.DownloadFormat(d)
	}
	if c := d.CSV; c != nil {
		if records != FormatCSV {
			return bad("csv", "is only for format \"csv\", the stream's records come as %s", records)
		}
		r, size := utf8.DecodeRuneInString(c.Delimiter)
		if c.Delimiter != "" && (size != len(c.Delimiter) || r == utf8.RuneError || r == '"' || r == '\r' || r == '\n') {
			return bad("csv.delimiter", "must be one character other than a quote or a line break, got %q", c.Delimiter)
		}
	}
	if records == FormatXML && d.RecordsPath == "" {
		return bad("records_path", "is required for format \"xml\": it starts at the root element, e.g. \"items.item\" for <items><item>…</item></items>")
	}
	if d.Async != nil || d.BodyFormat() == FormatJSON {
		return nil
	}
	if d.GraphQL != nil {
		return bad("format", "a GraphQL stream answers JSON, got %q", d.Format)
	}
	if d.ErrorPath != "" {
		return bad("error_path", "reads a JSON body; a %s body has none (remove it)", d.Format)
	}
	if fields := d.Pagination.bodyFields(); len(fields) > 0 {
		field := fields[0]
		return bad("pagination."+field, "reads a JSON body; a %s body has none (a cursor may come in a header: next_cursor_header)", d.Format)
	}
	return nil
}
