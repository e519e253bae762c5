package streams

import (
	"math/big"

	"github.com/tap-dev/tap/codec"
)

// PageOffset walks offset_param = 0, n, 2n, …
const PageOffset = "offset"

// OffsetOptions are the options of pagination type offset.
type OffsetOptions struct {
	OffsetParam string `json:"offset_param" lang:"required"`
	// PageSizeParam and PageSize may be left out for an API that pages
	// at a size of its own choosing: the offset then moves by the rows
	// each page returned, and an empty page ends the walk.
	PageSizeParam string `json:"page_size_param"`
	PageSize      int    `json:"page_size" lang:"min=0"`
	// TotalPath, when the body has it, holds the number of rows in all.
	TotalPath string `json:"total_path"`
}

func (*OffsetOptions) pageType() string { return PageOffset }

// rules: a page size parameter sends the page size.
func (*OffsetOptions) rules() []rule {
	return []rule{{field: "pagination.page_size", msg: "is required with page_size_param: the size it sends",
		when: []cond{set("pagination.page_size_param")}, need: set("pagination.page_size")}}
}

func (o *OffsetOptions) params() []PageParam {
	return pageParams(o.OffsetParam, isCount, o.PageSizeParam, isCount)
}

func (o *OffsetOptions) bodyFields() []string { return setFields("total_path", o.TotalPath) }

// repeatsRows: a source that shifts under the walk (inserts before the
// offset) repeats rows across pages; the run drops them by primary key.
// Without page_size, the rows of a page the API sized are unknown: the
// window holds pages of unsizedPage rows, the common default.
func (o *OffsetOptions) repeatsRows() int {
	if o.PageSize == 0 {
		return unsizedPage
	}
	return o.PageSize
}

// unsizedPage is the page size dedupe assumes of an offset walk without
// page_size.
const unsizedPage = 100

// readsPage: the records' count, and total_path.
func (o *OffsetOptions) readsPage(*Definition) PageReads {
	return PageReads{Envelope: setFields(o.TotalPath, o.TotalPath)}
}

func (o *OffsetOptions) paginator(d *Definition) Paginator {
	return offsetPaginator{name: d.Name, p: *o}
}

func (*OffsetOptions) doc() PageDoc {
	return PageDoc{Next: "offset += rows", End: "short or empty page, or `total_path` reached; rows repeated by a shifting source are dropped by primary key (the count is logged)"}
}

// The counting paginators (offset and page_number) keep their position in
// the query of the request itself: the next request is computed from the
// value the last request sent, so they carry no state of their own.

// offsetPaginator walks offset_param = 0, n, 2n, … where n is the number
// of records each page returned.
//
// It stops on an empty page, on a page shorter than page_size (when set), or when the
// value at total_path (if the body has it) says the offset reached the
// total. An API whose rows shift while it is read (inserts before the
// offset) may repeat rows across pages; the tap drops a row whose
// primary key was on the last 4 pages (tap/dedupe).
type offsetPaginator struct {
	name string
	p    OffsetOptions
}

func (o offsetPaginator) First(req Request) Request {
	return req.WithParams(append([]string{o.p.OffsetParam, "0"}, pageSizeParam(o.p.PageSizeParam, o.p.PageSize)...)...)
}

func (o offsetPaginator) Next(last Request, resp *Page) (Request, bool, error) {
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
		if v, found := resp.Value(o.p.TotalPath); found && v != nil {
			total, ok := intValue(v)
			if !ok {
				return Request{}, false, streamErr(o.name, "total_path %q holds a JSON %s, expected a whole number", o.p.TotalPath, codec.TypeName(v))
			}
			if next.Cmp(total) >= 0 {
				return Request{}, false, nil
			}
		}
	}
	return last.WithParams(o.p.OffsetParam, next.String()), true, nil
}
