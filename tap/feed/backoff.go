package feed

import "time"

// backoff is the wait before a reconnect: full jitter, a uniform draw in
// [0, min(max, base·2^failures)), so that many taps that lost the same
// server do not come back together. failures counts the connections in
// a row that ended without a message; rand is uniform in [0, 1).
func backoff(failures int, base, max time.Duration, rand float64) time.Duration {
	ceiling := base
	for i := 0; i < failures && ceiling < max; i++ {
		ceiling *= 2
	}
	ceiling = min(ceiling, max)
	return time.Duration(rand * float64(ceiling))
}
