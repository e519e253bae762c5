package runreport

import "time"

// slots is how many points a series keeps: a run of seconds or of days
// draws the same number, so a report's memory does not grow with the run.
const slots = 120

// series is values over a run's time in at most slots slots of equal
// width, one row of slots per kind. A value past the last slot doubles
// the width, merging each pair of slots: the series is downsampled as the
// run goes. A series of counts merges by sum; one of running totals
// (records written so far) by max.
type series struct {
	totals bool
	width  time.Duration // of a slot
	rows   map[string]*[slots]float64
	last   int // the highest slot written
}

func newSeries(totals bool) *series {
	return &series{totals: totals, width: time.Second, rows: map[string]*[slots]float64{}}
}

// add counts v for kind at offset at from the run's start (a series of
// counts), or sets kind's running total to v (a series of totals).
func (s *series) add(kind string, at time.Duration, v float64) {
	i := s.slot(at)
	row := s.rows[kind]
	if row == nil {
		row = new([slots]float64)
		s.rows[kind] = row
	}
	if s.totals {
		row[i] = max(row[i], v)
	} else {
		row[i] += v
	}
}

func (s *series) slot(at time.Duration) int {
	at = max(at, 0)
	for int(at/s.width) >= slots {
		for _, row := range s.rows {
			var merged [slots]float64
			for i := range slots / 2 {
				if s.totals {
					merged[i] = max(row[2*i], row[2*i+1])
				} else {
					merged[i] = row[2*i] + row[2*i+1]
				}
			}
			*row = merged
		}
		s.width *= 2
		s.last /= 2
	}
	i := int(at / s.width)
	s.last = max(s.last, i)
	return i
}

// values is kind's slots up to the last written; a series of totals
// carries each total forward over the slots where nothing was set.
func (s *series) values(kind string) []float64 {
	out := make([]float64, s.last+1)
	row := s.rows[kind]
	if row == nil {
		return out
	}
	m := 0.0
	for i := range out {
		if s.totals {
			m = max(m, row[i])
			out[i] = m
		} else {
			out[i] = row[i]
		}
	}
	return out
}
