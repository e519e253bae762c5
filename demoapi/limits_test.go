package demoapi

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// clocked starts a server whose clock stands at 10:00 UTC until moved.
func clocked(t *testing.T, cfg Config) (*Server, string, *fakeClock) {
	t.Helper()
	clk := &fakeClock{}
	clk.set(time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC))
	s, base := startClocked(t, cfg, clk)
	return s, base, clk
}

// The request numbered throttle_429_at gets one 429 with Retry-After, and
// the arrivals inside its window are counted.
func TestThrottle429Once(t *testing.T) {
	s, base, clk := clocked(t, Config{Throttle429At: 3})
	var statuses []int
	for i := range 6 {
		a := get(t, base+"/v1/customers?limit=1")
		statuses = append(statuses, a.status)
		if i == 2 && a.header.Get("Retry-After") != "3" {
			t.Errorf("429 with Retry-After %q, want 3", a.header.Get("Retry-After"))
		}
		if i == 3 {
			clk.set(clk.now().Add(3 * time.Second)) // the 5th arrives as the window ends
		} else if i >= 2 {
			clk.set(clk.now().Add(time.Second))
		}
	}
	if got := fmt.Sprint(statuses); got != "[200 200 429 200 200 200]" {
		t.Errorf("statuses %s", got)
	}
	from, to, inside, ok := s.Throttle429Window()
	if !ok || to.Sub(from) != 3*time.Second || inside != 1 {
		t.Errorf("window %s..%s, %d inside, ok %v; want 3 s with the 4th request inside", from, to, inside, ok)
	}
}

// Request weights per UTC minute: the used weight is reported; over the
// budget is a 429 until the next minute.
func TestWeightPerMinute(t *testing.T) {
	_, base, clk := clocked(t, Config{WeightPerMinute: 10, Weights: map[string]int{"bars": 4}})
	tests := []struct {
		path       string
		wantStatus int
		wantUsed   string
		wantRetry  string
		advance    time.Duration
	}{
		{"/v1/bars?limit=1", 200, "4", "", 0},
		{"/v1/bars?limit=1", 200, "8", "", 0},
		{"/v1/customers?limit=1", 200, "9", "", 0},
		{"/v1/bars?limit=1", 429, "9", "60", 30 * time.Second},
		{"/v1/customers?limit=1", 200, "10", "", 0},
		{"/v1/bars?limit=1", 429, "10", "30", 30 * time.Second},
		{"/v1/bars?limit=1", 200, "4", "", 0}, // a new minute
	}
	for i, tt := range tests {
		a := get(t, base+tt.path)
		if a.status != tt.wantStatus || a.header.Get(UsedWeightHeader) != tt.wantUsed || a.header.Get("Retry-After") != tt.wantRetry {
			t.Errorf("%d %s: %d used %q retry-after %q; want %d %q %q", i, tt.path, a.status,
				a.header.Get(UsedWeightHeader), a.header.Get("Retry-After"), tt.wantStatus, tt.wantUsed, tt.wantRetry)
		}
		clk.set(clk.now().Add(tt.advance))
	}
}

// The GraphQL cost budget: answers carry extensions.cost; a query asking
// more than is available is THROTTLED; points restore over time.
func TestGraphQLCostBudget(t *testing.T) {
	s, base, clk := clocked(t, Config{Issues: 30, CostPoints: 25, CostRestorePerS: 5})
	query := func(first int) answer {
		body := fmt.Sprintf(`{"query":"query { repository { issues(first: $first) { edges { node { id } } } } }","variables":{"first":%d}}`, first)
		return do(t, "POST", base+"/graphql", []byte(body), nil)
	}
	cost := func(a answer, key string) string {
		return fmt.Sprint(field(a.body, "extensions.cost."+key))
	}
	a := query(10)
	if a.status != 200 || cost(a, "actualQueryCost") != "10" || cost(a, "throttleStatus.currentlyAvailable") != "15" {
		t.Fatalf("first query: %s", a.raw)
	}
	a = query(20) // 15 available: throttled
	if a.status != 200 || !strings.Contains(string(a.raw), `"THROTTLED"`) || cost(a, "throttleStatus.currentlyAvailable") != "15" {
		t.Fatalf("second query: %s", a.raw)
	}
	clk.set(clk.now().Add(time.Second)) // 20 available
	a = query(20)
	if cost(a, "actualQueryCost") != "20" || cost(a, "throttleStatus.currentlyAvailable") != "0" {
		t.Fatalf("third query: %s", a.raw)
	}
	if n := s.Throttled(); n != 1 {
		t.Errorf("throttled %d, want 1", n)
	}
}

func TestThrottleKnobsChecked(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Throttle429At: -1}, "demo.throttle_429_at: must not be negative"},
		{Config{WeightPerMinute: 5, Weights: map[string]int{"bars": 6}}, "demo.weights.bars: must be at most weight_per_minute (5), got 6"},
		{Config{Weights: map[string]int{"bars": 0}}, "demo.weights.bars: must be at least 1"},
		{Config{CostPoints: 10}, "demo.cost_restore_per_s: must be > 0 when cost_points is set"},
	}
	for _, tt := range tests {
		if _, err := New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want %q", tt.cfg, err, tt.want)
		}
	}
}

// RecordArrivals logs every request's arrival; without it (and without
// throttle_429_at) nothing is logged.
func TestRecordArrivals(t *testing.T) {
	for _, record := range []bool{false, true} {
		clk := &fakeClock{}
		clk.set(time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC))
		s, err := New(Config{})
		if err != nil {
			t.Fatal(err)
		}
		s.clock = clk.now
		if record {
			s.RecordArrivals()
		}
		ts := httptest.NewServer(s)
		var want []time.Time
		for range 3 {
			want = append(want, clk.now())
			get(t, ts.URL+"/v1/customers?limit=1")
			clk.set(clk.now().Add(time.Second))
		}
		ts.Close()
		if !record {
			want = nil
		}
		if got := s.Arrivals(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("record %v: arrivals %v, want %v", record, got, want)
		}
	}
}
