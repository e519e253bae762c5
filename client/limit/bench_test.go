package limit

import (
	"net/http"
	"testing"
)

// The cost of one attempt's bookkeeping when no limit makes it wait: the
// price every request pays.
func BenchmarkAcquireSettle(b *testing.B) {
	l := New(Config{RequestsPerSecond: 1e9, Burst: 1 << 20, MaxInFlight: 4, MaxRetryAfter: 1})
	h := http.Header{}
	sp := Spend{Stream: "s", Weight: 1}
	for b.Loop() {
		release, err := l.Acquire(b.Context(), sp)
		if err != nil {
			b.Fatal(err)
		}
		l.Settle(sp, h, http.StatusOK)
		release()
	}
}
