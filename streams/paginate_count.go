package streams

import (
	"fmt"
	"math/big"
	"strconv"
)

// The counting paginators (offset and page_number) keep their position in
// the query of the request itself: the next request is computed from the
// value the last request sent, so they carry no state of their own.

// OffsetOptions are the options of pagination type offset.
type OffsetOptions struct {
	OffsetParam   string `json:"offset_param"`
	PageSizeParam string `json:"page_size_param"`
	PageSize      int    `json:"page_size"`
	// TotalPath, when the body has it, holds the number of rows in all.
	TotalPath string `json:"total_path"`
}

func (*OffsetOptions) pageType() string { return PageOffset }

func (o *OffsetOptions) check() (string, string) {
	switch {
	case o.OffsetParam == "":
		return "offset_param", requiredFor(PageOffset)
	case o.PageSizeParam == "":
		return "page_size_param", requiredFor(PageOffset)
	case o.PageSize <= 0:
		return "page_size", fmt.Sprintf("must be a positive integer for pagination type %q", PageOffset)
	}
	return "", ""
}

func (o *OffsetOptions) paginator(d *Definition) Paginator {
	return offsetPaginator{name: d.Name, p: *o}
}

// PageNumberOptions are the options of pagination type page_number.
type PageNumberOptions struct {
	PageParam string `json:"page_param"`
	// StartPage is the number of the first page: 1 when unset, 0 for
	// zero-based APIs.
	StartPage      *int   `json:"start_page"`
	PageSizeParam  string `json:"page_size_param"`
	PageSize       int    `json:"page_size"`
	TotalPagesPath string `json:"total_pages_path"`
}

func (*PageNumberOptions) pageType() string { return PageNumber }

func (o *PageNumberOptions) check() (string, string) {
	switch {
	case o.PageParam == "":
		return "page_param", requiredFor(PageNumber)
	case o.PageSize < 0:
		return "page_size", fmt.Sprintf("must not be negative, got %d", o.PageSize)
	}
	return "", ""
}

func (o *PageNumberOptions) paginator(d *Definition) Paginator {
	return pageNumberPaginator{name: d.Name, p: *o}
}

// requiredFor is the message of a missing option of pagination type typ.
func requiredFor(typ string) string {
	return fmt.Sprintf("is required for pagination type %q", typ)
}

// offsetPaginator walks offset_param = 0, n, 2n, … where n is the number
// of records each page returned.
//
// It stops on an empty page, on a page shorter than page_size, or when the
// value at total_path (if the body has it) says the offset reached the
// total. An API whose rows shift while it is read (inserts before the
// offset) may repeat rows across pages; the tap drops duplicates by
// primary key within a run.
type offsetPaginator struct {
	name string
	p    OffsetOptions
}

func (o offsetPaginator) First(req Request) Request {
	return withParams(req, append([]string{o.p.OffsetParam, "0"}, pageSizeParam(o.p.PageSizeParam, o.p.PageSize)...)...)
}

func (o offsetPaginator) Next(last Request, resp *Response) (Request, bool, error) {
	n := len(resp.Records)
	if n == 0 || (o.p.PageSize > 0 && n < o.p.PageSize) {
		return Request{}, false, nil
	}
	cur, ok := parseBigInt(last.Query.Get(o.p.OffsetParam))
	if !ok {
		return Request{}, false, streamErr(o.name, "offset parameter %q of the last request is not a whole number", o.p.OffsetParam)
	}
	next := new(big.Int).Add(cur, big.NewInt(int64(n)))
	if o.p.TotalPath != "" {
		if v, found := Lookup(resp.Body, o.p.TotalPath); found && v != nil {
			total, ok := intValue(v)
			if !ok {
				return Request{}, false, streamErr(o.name, "total_path %q holds a JSON %s, expected a whole number", o.p.TotalPath, jsonType(v))
			}
			if next.Cmp(total) >= 0 {
				return Request{}, false, nil
			}
		}
	}
	return withParams(last, o.p.OffsetParam, next.String()), true, nil
}

// pageNumberPaginator walks page_param = start_page, start_page+1, …
// (start_page defaults to 1; 0 is allowed for zero-based APIs).
//
// It stops on an empty page, on a page shorter than page_size when
// page_size is set, or when the page just read is at or beyond the value
// at total_pages_path (if the body has it). Pages are counted from
// start_page, so with start_page 0 and total_pages 3 the last page is 2.
type pageNumberPaginator struct {
	name string
	p    PageNumberOptions
}

func (pn pageNumberPaginator) startPage() int {
	if pn.p.StartPage != nil {
		return *pn.p.StartPage
	}
	return 1
}

func (pn pageNumberPaginator) First(req Request) Request {
	return withParams(req, append([]string{pn.p.PageParam, strconv.Itoa(pn.startPage())}, pageSizeParam(pn.p.PageSizeParam, pn.p.PageSize)...)...)
}

func (pn pageNumberPaginator) Next(last Request, resp *Response) (Request, bool, error) {
	n := len(resp.Records)
	if n == 0 || (pn.p.PageSize > 0 && n < pn.p.PageSize) {
		return Request{}, false, nil
	}
	page, ok := parseBigInt(last.Query.Get(pn.p.PageParam))
	if !ok {
		return Request{}, false, streamErr(pn.name, "page parameter %q of the last request is not a whole number", pn.p.PageParam)
	}
	if pn.p.TotalPagesPath != "" {
		if v, found := Lookup(resp.Body, pn.p.TotalPagesPath); found && v != nil {
			total, ok := intValue(v)
			if !ok {
				return Request{}, false, streamErr(pn.name, "total_pages_path %q holds a JSON %s, expected a whole number", pn.p.TotalPagesPath, jsonType(v))
			}
			// Pages read so far, counted from start_page: page itself
			// for 1-based APIs, page+1 for 0-based ones.
			read := new(big.Int).Sub(page, big.NewInt(int64(pn.startPage()-1)))
			if read.Cmp(total) >= 0 {
				return Request{}, false, nil
			}
		}
	}
	next := new(big.Int).Add(page, big.NewInt(1))
	return withParams(last, pn.p.PageParam, next.String()), true, nil
}
