package streams

// PageNone makes exactly one request.
const PageNone = "none"

// noneOptions: the type takes only the common options.
type noneOptions struct{}

func (*noneOptions) pageType() string { return PageNone }

func (*noneOptions) readsPage(*Definition) PageReads { return PageReads{} }

func (*noneOptions) paginator(*Definition) Paginator { return nonePaginator{} }

func (*noneOptions) doc() PageDoc { return PageDoc{Next: "—", End: "after one request"} }

// nonePaginator makes exactly one request.
type nonePaginator struct{}

func (nonePaginator) First(req Request) Request { return req }

func (nonePaginator) Next(Request, *Page) (Request, bool, error) {
	return Request{}, false, nil
}
