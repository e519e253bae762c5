package pages

import (
	"math/big"
	"strconv"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams"
)

// The counting paginators (offset and page_number) keep their position in
// the query of the request itself: the next request is computed from the
// value the last request sent, so they carry no state of their own.

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
	p    streams.OffsetOptions
}

func (o offsetPaginator) First(req streams.Request) streams.Request {
	return req.WithParams(append([]string{o.p.OffsetParam, "0"}, pageSizeParam(o.p.PageSizeParam, o.p.PageSize)...)...)
}

func (o offsetPaginator) Next(last streams.Request, resp *streams.Response) (streams.Request, bool, error) {
	n := len(resp.Records)
	if n == 0 || (o.p.PageSize > 0 && n < o.p.PageSize) {
		return streams.Request{}, false, nil
	}
	cur, ok := parseBigInt(last.Query.Get(o.p.OffsetParam))
	if !ok {
		return streams.Request{}, false, streamErr(o.name, "offset parameter %q of the last request is not a whole number", o.p.OffsetParam)
	}
	next := new(big.Int).Add(cur, big.NewInt(int64(n)))
	if o.p.TotalPath != "" {
		if v, found := streams.Lookup(resp.Body, o.p.TotalPath); found && v != nil {
			total, ok := intValue(v)
			if !ok {
				return streams.Request{}, false, streamErr(o.name, "total_path %q holds a JSON %s, expected a whole number", o.p.TotalPath, codec.TypeName(v))
			}
			if next.Cmp(total) >= 0 {
				return streams.Request{}, false, nil
			}
		}
	}
	return last.WithParams(o.p.OffsetParam, next.String()), true, nil
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
	p    streams.PageNumberOptions
}

func (pn pageNumberPaginator) startPage() int {
	if pn.p.StartPage != nil {
		return *pn.p.StartPage
	}
	return 1
}

func (pn pageNumberPaginator) First(req streams.Request) streams.Request {
	return req.WithParams(append([]string{pn.p.PageParam, strconv.Itoa(pn.startPage())}, pageSizeParam(pn.p.PageSizeParam, pn.p.PageSize)...)...)
}

func (pn pageNumberPaginator) Next(last streams.Request, resp *streams.Response) (streams.Request, bool, error) {
	n := len(resp.Records)
	if n == 0 || (pn.p.PageSize > 0 && n < pn.p.PageSize) {
		return streams.Request{}, false, nil
	}
	page, ok := parseBigInt(last.Query.Get(pn.p.PageParam))
	if !ok {
		return streams.Request{}, false, streamErr(pn.name, "page parameter %q of the last request is not a whole number", pn.p.PageParam)
	}
	if pn.p.TotalPagesPath != "" {
		if v, found := streams.Lookup(resp.Body, pn.p.TotalPagesPath); found && v != nil {
			total, ok := intValue(v)
			if !ok {
				return streams.Request{}, false, streamErr(pn.name, "total_pages_path %q holds a JSON %s, expected a whole number", pn.p.TotalPagesPath, codec.TypeName(v))
			}
			// Pages read so far, counted from start_page: page itself
			// for 1-based APIs, page+1 for 0-based ones.
			read := new(big.Int).Sub(page, big.NewInt(int64(pn.startPage()-1)))
			if read.Cmp(total) >= 0 {
				return streams.Request{}, false, nil
			}
		}
	}
	next := new(big.Int).Add(page, big.NewInt(1))
	return last.WithParams(pn.p.PageParam, next.String()), true, nil
}
