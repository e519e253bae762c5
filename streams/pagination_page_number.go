package streams

import (
	"math/big"
	"strconv"

	"github.com/tap-dev/tap/codec"
)

// PageNumber walks page_param = start_page, start_page+1, …
const PageNumber = "page_number"

// PageNumberOptions are the options of pagination type page_number.
type PageNumberOptions struct {
	PageParam string `json:"page_param" lang:"required"`
	// StartPage is the number of the first page: 1 when unset, 0 for
	// zero-based APIs.
	StartPage      *int   `json:"start_page" lang:"min=0,default=1"`
	PageSizeParam  string `json:"page_size_param"`
	PageSize       int    `json:"page_size" lang:"min=0"`
	TotalPagesPath string `json:"total_pages_path"`
}

func (*PageNumberOptions) pageType() string { return PageNumber }

func (o *PageNumberOptions) params() []PageParam {
	return pageParams(o.PageParam, isCount, o.PageSizeParam, isCount)
}

func (o *PageNumberOptions) bodyFields() []string {
	return setFields("total_pages_path", o.TotalPagesPath)
}

// readsPage: the records' count, and total_pages_path.
func (o *PageNumberOptions) readsPage(*Definition) PageReads {
	return PageReads{Envelope: setFields(o.TotalPagesPath, o.TotalPagesPath)}
}

func (o *PageNumberOptions) paginator(d *Definition) Paginator {
	return pageNumberPaginator{name: d.Name, p: *o}
}

func (*PageNumberOptions) doc() PageDoc {
	return PageDoc{Next: "page + 1", End: "empty (or short) page, or `total_pages_path`"}
}

// The counting paginators (offset and page_number) keep their position in
// the query of the request itself: the next request is computed from the
// value the last request sent, so they carry no state of their own.

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
	return req.WithParams(append([]string{pn.p.PageParam, strconv.Itoa(pn.startPage())}, pageSizeParam(pn.p.PageSizeParam, pn.p.PageSize)...)...)
}

func (pn pageNumberPaginator) Next(last Request, resp *Page) (Request, bool, error) {
	n := len(resp.Records)
	if n == 0 || (pn.p.PageSize > 0 && n < pn.p.PageSize) {
		return Request{}, false, nil
	}
	page, ok := parseBigInt(last.Query.Get(pn.p.PageParam))
	if !ok {
		return Request{}, false, streamErr(pn.name, "page parameter %q of the last request is not a whole number", pn.p.PageParam)
	}
	if pn.p.TotalPagesPath != "" {
		if v, found := resp.Value(pn.p.TotalPagesPath); found && v != nil {
			total, ok := intValue(v)
			if !ok {
				return Request{}, false, streamErr(pn.name, "total_pages_path %q holds a JSON %s, expected a whole number", pn.p.TotalPagesPath, codec.TypeName(v))
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
	return last.WithParams(pn.p.PageParam, next.String()), true, nil
}
