package pages

import (
	"fmt"

	"github.com/tap-dev/tap/streams"
)

// New returns the Paginator of d's pagination type. It checks d
// first, so a definition with a missing pagination option is an error here
// rather than a strange request later.
//
// Every paginator is a small immutable value: all it needs to compute the
// next request is the request just made and its Response, so one Paginator
// may serve any number of walks (parent records, windows) at once.
//
// First is idempotent for every type: applying it to a request it already
// prepared gives the same request back.
func New(d *streams.Definition) (streams.Paginator, error) {
	if d == nil {
		return nil, fmt.Errorf("pages: New needs a definition")
	}
	if err := d.Check(); err != nil {
		return nil, err
	}
	return d.Paginator(), nil
}
