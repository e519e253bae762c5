package runreport

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A series keeps slots points whatever the run's length: an hour of
// counts, a second apart, doubles the slot width until it fits, and the
// sum of the counts is kept.
func TestSeriesDownsamples(t *testing.T) {
	s := newSeries(false)
	for sec := range 3600 {
		s.add("2xx", time.Duration(sec)*time.Second, 1)
	}
	if s.last >= slots || s.width != 32*time.Second {
		t.Fatalf("last slot %d, width %s: want under %d slots of 32s", s.last, s.width, slots)
	}
	total := 0.0
	for _, v := range s.values("2xx") {
		total += v
	}
	if total != 3600 {
		t.Errorf("sum %v after downsampling, want 3600", total)
	}
}

// A series of running totals merges by max and carries a total forward.
func TestSeriesTotals(t *testing.T) {
	s := newSeries(true)
	for _, st := range []struct {
		at time.Duration
		v  float64
	}{{0, 10}, {2 * time.Second, 30}, {5 * time.Second, 40}} {
		s.add("orders", st.at, st.v)
	}
	if diff := cmp.Diff([]float64{10, 10, 30, 30, 30, 40}, s.values("orders")); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	s.add("orders", 200*time.Second, 50) // past 120 slots: width 2s
	got := s.values("orders")
	if s.width != 2*time.Second || got[0] != 10 || got[2] != 40 || got[len(got)-1] != 50 {
		t.Errorf("after a merge: width %s, values %v", s.width, got)
	}
}
