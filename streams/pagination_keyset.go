package streams

import ()

// PageKeyset asks for the rows after the largest key seen.
const PageKeyset = "keyset"

// KeysetOptions are the options of pagination type keyset.
type KeysetOptions struct {
	KeyParam      string `json:"key_param" lang:"required"`
	KeyField      string `json:"key_field" lang:"required"`
	PageSizeParam string `json:"page_size_param"`
	PageSize      int    `json:"page_size" lang:"min=0"`
}

func (*KeysetOptions) pageType() string { return PageKeyset }

func (o *KeysetOptions) params() []PageParam {
	return pageParams(o.KeyParam, isNumeric, o.PageSizeParam, isCount)
}

// readsPage: the paginator reads only key_field of each record.
func (o *KeysetOptions) readsPage(*Definition) PageReads {
	return PageReads{Fields: []string{o.KeyField}}
}

func (o *KeysetOptions) paginator(d *Definition) Paginator {
	return keysetPaginator{name: d.Name, p: *o}
}

func (*KeysetOptions) doc() PageDoc {
	return PageDoc{Next: "largest `key_field` on the page", End: "empty or short page"}
}

// keysetPaginator asks for the rows after the largest key seen:
// key_param = max(key_field) over the records of the page.
//
// The largest key is computed, never taken from the last row: an API that
// does not sort exactly by the key would otherwise skip rows. Integer keys
// compare as numbers, exactly (9007199254740993 > 9007199254740992);
// string keys compare lexically; a page mixing both is an error.
//
// It stops on an empty page, or on a page shorter than page_size when
// page_size is set.
//
// First never touches key_param when the request already has it: the
// incremental lower bound of the stream may live in the same parameter.
type keysetPaginator struct {
	name string
	p    KeysetOptions
}

func (k keysetPaginator) First(req Request) Request {
	return req.WithParams(pageSizeParam(k.p.PageSizeParam, k.p.PageSize)...)
}

func (k keysetPaginator) Next(last Request, resp *Page) (Request, bool, error) {
	n := len(resp.Records)
	if n == 0 || (k.p.PageSize > 0 && n < k.p.PageSize) {
		return Request{}, false, nil
	}
	var maxKey key
	for i, rec := range resp.Records {
		v, ok, err := keyOf(rec, k.p.KeyField)
		if err != nil {
			return Request{}, false, streamErr(k.name, "key_field %q: %v", k.p.KeyField, err)
		}
		if !ok {
			return Request{}, false, streamErr(k.name, "record %d of the page has no key_field %q to page by", i, k.p.KeyField)
		}
		if i == 0 {
			maxKey = v
			continue
		}
		c, err := v.compare(maxKey)
		if err != nil {
			return Request{}, false, streamErr(k.name, "key_field %q: %v", k.p.KeyField, err)
		}
		if c > 0 {
			maxKey = v
		}
	}
	return last.WithParams(k.p.KeyParam, maxKey.text), true, nil
}
