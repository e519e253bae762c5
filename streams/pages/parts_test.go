package pages

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/streams"
)

// body is a response read as it arrives: its pages, each of ids, the
// last handed with no More; read counts the pages read, closed whether
// the walk let it go before its end.
type body struct {
	pages  [][]int
	read   int
	closed bool
	err    error // the error of the page after the last, when set
}

func (b *body) page() (*streams.Page, error) {
	if b.read == len(b.pages) {
		return nil, b.err
	}
	p := &streams.Page{}
	for _, id := range b.pages[b.read] {
		p.Records = append(p.Records, map[string]any{"id": id})
	}
	b.read++
	if b.read < len(b.pages) || b.err != nil {
		p.More = b
	}
	return p, nil
}

func (b *body) Next() (*streams.Page, error) {
	if b.closed {
		return nil, errors.New("read after Close")
	}
	return b.page()
}

func (b *body) Close() { b.closed = true }

// ended is a Paginator that records the page it was asked about.
type ended struct{ last *streams.Page }

func (e *ended) First(req streams.Request) streams.Request { return req }

func (e *ended) Next(_ streams.Request, p *streams.Page) (streams.Request, bool, error) {
	e.last = p
	return streams.Request{}, false, nil
}

// The pages of a body read as it arrives go to the handler in order, the
// paginator reads the last; a walk that ends inside the body closes it.
func TestWalkParts(t *testing.T) {
	stop := errors.New("stop")
	tests := map[string]struct {
		pages   [][]int
		bodyErr error
		stopAt  int // the handled page whose handler fails (1-based)
		cancel  int // the handled page after which ctx is canceled
		want    [][]int
		closed  bool
		wantErr string
	}{
		"every page in order": {pages: [][]int{{1, 2}, {3, 4}, {5}}, want: [][]int{{1, 2}, {3, 4}, {5}}},
		"one page":            {pages: [][]int{{1}}, want: [][]int{{1}}},
		"an empty last page":  {pages: [][]int{{1, 2}, {}}, want: [][]int{{1, 2}, {}}},
		"the handler stops inside the body": {pages: [][]int{{1}, {2}, {3}}, stopAt: 2,
			want: [][]int{{1}, {2}}, closed: true, wantErr: "stop"},
		"canceled inside the body": {pages: [][]int{{1}, {2}, {3}}, cancel: 1,
			want: [][]int{{1}}, closed: true, wantErr: `stream "x": stopped inside the body of page 1: context canceled`},
		"the body breaks": {pages: [][]int{{1}, {2}}, bodyErr: errors.New("connection reset"),
			want: [][]int{{1}, {2}}, wantErr: "connection reset"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			for _, walk := range []func(context.Context, *streams.Definition, streams.Paginator, streams.Request, streams.Fetch, func(*streams.Page) error) error{Walk, WalkInOrder} {
				b := &body{pages: tt.pages, err: tt.bodyErr}
				fetch := func(context.Context, streams.Request) (*streams.Page, error) { return b.page() }
				ctx, cancel := context.WithCancel(context.Background())
				p := &ended{}
				var got [][]int
				err := walk(ctx, &streams.Definition{Name: "x", PrimaryKey: []string{"id"}}, p, streams.Request{URL: "/x"}, fetch, func(pg *streams.Page) error {
					ids := []int{}
					for _, r := range pg.Records {
						ids = append(ids, r.(map[string]any)["id"].(int))
					}
					got = append(got, ids)
					if len(got) == tt.cancel {
						cancel()
					}
					if len(got) == tt.stopAt {
						return stop
					}
					return nil
				})
				cancel()
				if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("pages (-want +got):\n%s", diff)
				}
				if b.closed != tt.closed {
					t.Errorf("closed %v, want %v", b.closed, tt.closed)
				}
				if tt.wantErr == "" && (p.last == nil || fmt.Sprint(p.last.Records) != fmt.Sprint(pageOf(tt.want[len(tt.want)-1]))) {
					t.Errorf("the paginator read %v, want the last page", p.last)
				}
			}
		})
	}
}

func pageOf(ids []int) []any {
	var recs []any
	for _, id := range ids {
		recs = append(recs, map[string]any{"id": id})
	}
	return recs
}
