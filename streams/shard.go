package streams

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Shard is the part of a chunked backfill that one process reads
// (--shard I/N): the windows whose index is I modulo N, counted over the
// full window plan from the stream's start, so that N processes started
// alike read every window once between them. The zero Shard reads all.
type Shard struct{ I, N int }

// ParseShard reads "I/N" with 0 <= I < N.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("expected I/N with 0 <= I < N, e.g. 0/4, got %q", s)
	}
	return Shard{I: i, N: n}, nil
}

// On reports whether sharding is on (N > 1).
func (s Shard) On() bool { return s.N > 1 }

// String is "I/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// windows are the shard's windows of the plan [origin, now) in chunks of
// chunkDays, that end after from (where this shard's own state resumes);
// a window holding from starts there.
func (s Shard) windows(origin, from, now time.Time, chunkDays int) []Window {
	ws := []Window{}
	for i, w := range PlanWindows(origin, now, chunkDays) {
		if i%s.N != s.I || !w.End.After(from) {
			continue
		}
		if w.Start.Before(from) {
			w.Start = from
		}
		ws = append(ws, w)
	}
	return ws
}
