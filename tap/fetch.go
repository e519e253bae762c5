package tap

import (
	"context"
	"errors"
	"fmt"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/streams"
)

// errIgnored ends a walk whose request answered a status listed in the
// stream's ignore_statuses.
var errIgnored = errors.New("status ignored")

// lowerBound is where an incremental stream starts: bookmark − overlap, or
// start_date. nil means "from the beginning" (no filter sent).
func (e *engine) lowerBound(n *node) (any, error) {
	d := n.def
	if d.Incremental == nil || !n.selected {
		return nil, nil
	}
	bm := e.state.Value(d.Name)
	if bm == nil && (n.numeric || e.cfg.Start.IsZero()) {
		return nil, nil
	}
	lower, err := streams.LowerBound(bm, d.Incremental, e.cfg.Start)
	if err != nil {
		return nil, &InputError{File: "state", Err: fmt.Errorf("bookmarks.%s.replication_key_value: %v", d.Name, err)}
	}
	return lower, nil
}

// firstRequest builds a walk's first request: path placeholders from the
// parent record, the incremental lower bound, and a window's end.
func (e *engine) firstRequest(n *node, vars map[string]string, lower any, w *streams.Window) (streams.Request, error) {
	d := n.def
	req, err := d.FirstRequest(vars)
	if err != nil {
		return req, err
	}
	set := func(name string, value any) error {
		if d.Pagination.Type == streams.PageGraphQL {
			req, err = req.WithVariable(name, value)
			return err
		}
		req = req.WithParam(name, fmt.Sprint(value))
		return nil
	}
	if inc := d.Incremental; inc != nil && lower != nil {
		if err := set(inc.Param, streams.FormatBound(lower, inc.Format)); err != nil {
			return req, err
		}
		if w != nil {
			if err := set(inc.EndParam, streams.FormatBound(w.End, inc.Format)); err != nil {
				return req, err
			}
		}
	}
	return req, nil
}

// walk follows one stream's pages from first, handling every record.
func (e *engine) walk(ctx context.Context, n *node, first streams.Request, parentKey any) error {
	p, err := streams.NewPaginator(n.def)
	if err != nil {
		return err
	}
	err = streams.Walk(ctx, n.def, p, first, e.fetcher(n), func(resp *streams.Response) error {
		n.pages.Add(1)
		extracted := e.now()
		for _, rec := range resp.Records {
			if err := e.handle(ctx, n, rec, extracted, parentKey); err != nil {
				return err
			}
		}
		// Records of a sorted stream arrive in key order, so once a page
		// is written the largest key on it is safe to checkpoint.
		if n.def.IsSorted && n.def.Parent == nil && n.maxSeen != nil {
			if err := e.commit(n); err != nil {
				return err
			}
			return e.checkpoint(n)
		}
		return nil
	})
	if errors.Is(err, errIgnored) {
		n.ignored.Add(1)
		return nil
	}
	return err
}

// fetcher sends a page request through the client; the body is decoded
// and its records extracted inside the client's retry loop, so a body cut
// short or a 200 carrying an error is retried like a 503.
func (e *engine) fetcher(n *node) streams.Fetch {
	d := n.def
	return func(ctx context.Context, req streams.Request) (*streams.Response, error) {
		var body any
		var records []any
		resp, err := e.client.Do(ctx, client.Request{
			Stream: d.Name, Method: req.Method, URL: req.URL, Query: req.Query, Body: req.Body,
			IgnoreStatuses: d.IgnoreStatuses,
			Check: func(b []byte) error {
				v, err := streams.DecodeJSON(b)
				if err != nil {
					return client.Transient(fmt.Errorf("response body is not JSON: %w", err))
				}
				recs, err := d.Extract(v)
				var apiErr *streams.APIError
				if errors.As(err, &apiErr) {
					return client.Transient(err)
				}
				if err != nil {
					return err
				}
				body, records = v, recs
				return nil
			},
		})
		if err != nil {
			return nil, err
		}
		if resp.Ignored {
			return nil, errIgnored
		}
		return &streams.Response{URL: resp.URL, Header: resp.Header, Body: body, Records: records}, nil
	}
}

// walkChild walks a child stream once for one parent record, its path
// placeholders filled from the parent's key.
func (e *engine) walkChild(ctx context.Context, c *node, parent map[string]any) error {
	if !c.needed() {
		return nil
	}
	p := c.def.Parent
	key := parent[p.Key]
	if key == nil {
		return fmt.Errorf("stream %q: a record of parent stream %q has no %q to fill the path", c.def.Name, p.Stream, p.Key)
	}
	text := fmt.Sprint(key)
	vars := map[string]string{p.Key: text}
	if p.As != "" {
		vars[p.As] = text
	}
	lower, err := e.lowerBound(c)
	if err != nil {
		return err
	}
	req, err := e.firstRequest(c, vars, lower, nil)
	if err != nil {
		return err
	}
	return e.walk(ctx, c, req, key)
}
