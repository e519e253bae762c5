package failure

import (
	"errors"
	"testing"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/records"
	"github.com/tap-dev/tap/streams"
)

// letters records the letters a Hold writes, or fails to.
type letters struct {
	got []records.RequestLetter
	err error
}

func (l *letters) Request(r records.RequestLetter) error {
	if l.err != nil {
		return l.err
	}
	l.got = append(l.got, r)
	return nil
}

func TestHoldJudge(t *testing.T) {
	now := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	failed := &client.StatusError{Stream: "orders", Method: "GET", URL: "https://api.test/orders", Status: 503, Attempts: 6}
	child := &client.StatusError{Stream: "items", Status: 503}
	walk := Walk{Stream: "orders", First: streams.Request{Method: "GET", URL: "https://api.test/orders"}, DeadLetter: true}
	broken := errors.New("disk full")
	tests := map[string]struct {
		walk      Walk
		err       error
		out       *letters
		partition string
		written   bool
		wantErr   error // nil: none
		all       bool  // the stream is held
		part      bool  // the partition is held
	}{
		"the walk's request, dead_letter: written, the stream held": {
			walk: walk, err: failed, out: &letters{}, written: true, all: true,
		},
		"per partition: only that partition held": {
			walk: walk, err: failed, out: &letters{}, partition: "p1", written: true, part: true,
		},
		"a child's failure: not the walk's letter, nothing held": {
			walk: walk, err: child, out: &letters{}, wantErr: nil,
		},
		"no dead_letter rule: the error stays the caller's": {
			walk: Walk{Stream: "orders"}, err: failed, out: &letters{},
		},
		"the letter cannot be written: both errors, nothing held": {
			walk: walk, err: failed, out: &letters{err: broken}, wantErr: broken,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var h Hold
			l, err := h.Judge(tt.walk, tt.err, tt.out, now, "2026-01-01", tt.partition)
			if l.Written != tt.written {
				t.Errorf("Written = %v, want %v", l.Written, tt.written)
			}
			if tt.wantErr == nil && err != nil || tt.wantErr != nil && (!errors.Is(err, tt.wantErr) || !errors.Is(err, tt.err)) {
				t.Errorf("err = %v, want it to hold %v", err, tt.wantErr)
			}
			if h.Held() != tt.all || h.PartitionHeld("p1") != tt.part || h.PartitionHeld("p2") {
				t.Errorf("held: stream %v, p1 %v, p2 %v; want %v, %v, false", h.Held(), h.PartitionHeld("p1"), h.PartitionHeld("p2"), tt.all, tt.part)
			}
			if tt.written {
				if len(tt.out.got) != 1 || !tt.out.got[0].Time.Equal(now) || tt.out.got[0].Bookmark != "2026-01-01" || tt.out.got[0].Status != 503 {
					t.Errorf("letters written = %+v, want one at %s from the bookmark, status 503", tt.out.got, now)
				}
			} else if len(tt.out.got) != 0 {
				t.Errorf("letters written = %+v, want none", tt.out.got)
			}
		})
	}
}
