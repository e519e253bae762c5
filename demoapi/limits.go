package demoapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// The limits of this file model three kinds of API throttling:
//
//   - One 429 mid-run (Throttle429At): the request with that number, over
//     every endpoint, is answered 429 with Retry-After: Throttle429S. The
//     arrival time of every request is logged meanwhile, so that a test
//     can count the requests that arrived inside the Retry-After window.
//   - A weight budget per UTC minute (WeightPerMinute), as exchanges bill
//     (Binance): each request weighs Weights[route] (default 1); every
//     answer reports the minute's used weight in X-MBX-USED-WEIGHT-1M, and
//     a request over the budget is answered 429 with Retry-After up to the
//     next minute.
//   - A GraphQL cost budget (CostPoints restored at CostRestorePerS), as
//     Shopify bills: a query needs its requested cost (first) available;
//     it is charged its actual cost (the edges returned, at least 1); the
//     answer carries extensions.cost {requestedQueryCost,
//     actualQueryCost, throttleStatus {maximumAvailable,
//     currentlyAvailable, restoreRate}}. A query over the budget is
//     answered 200 with errors [{"extensions": {"code": "THROTTLED"}}].

// UsedWeightHeader is the header reporting the weight used this minute.
const UsedWeightHeader = "X-MBX-USED-WEIGHT-1M"

// limits is the state of the throttling knobs.
type limits struct {
	mu        sync.Mutex
	arrivals  []time.Time // when Throttle429At > 0 or logAll
	logAll    bool        // RecordArrivals was called
	win429    [2]time.Time
	minute    time.Time
	weight    int
	costAvail float64
	costAt    time.Time
	throttled int
}

// checkLimits checks the throttling knobs.
func (c *Config) checkLimits() error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("demo.%s: %s", field, fmt.Sprintf(format, args...))
	}
	switch {
	case c.Throttle429At < 0:
		return bad("throttle_429_at", "must not be negative, got %d", c.Throttle429At)
	case c.Throttle429S < 0:
		return bad("throttle_429_s", "must not be negative, got %d", c.Throttle429S)
	case c.WeightPerMinute < 0:
		return bad("weight_per_minute", "must not be negative, got %d", c.WeightPerMinute)
	case c.CostPoints < 0 || c.CostPoints != c.CostPoints:
		return bad("cost_points", "must be a number >= 0, got %s", fmtFloat(c.CostPoints))
	case c.CostRestorePerS < 0 || c.CostRestorePerS != c.CostRestorePerS:
		return bad("cost_restore_per_s", "must be a number >= 0, got %s", fmtFloat(c.CostRestorePerS))
	case c.CostPoints > 0 && c.CostRestorePerS == 0:
		return bad("cost_restore_per_s", "must be > 0 when cost_points is set")
	}
	for route, w := range c.Weights {
		if w < 1 {
			return bad("weights."+route, "must be at least 1, got %d", w)
		}
		if c.WeightPerMinute > 0 && w > c.WeightPerMinute {
			return bad("weights."+route, "must be at most weight_per_minute (%d), got %d", c.WeightPerMinute, w)
		}
	}
	if c.Throttle429S == 0 {
		c.Throttle429S = 3
	}
	return nil
}

// throttled applies the one-429 and weight knobs to request number n of
// route; it reports whether it answered the request.
func (s *Server) throttled(w http.ResponseWriter, route string, n int64) bool {
	c := &s.cfg
	if c.Throttle429At == 0 && c.WeightPerMinute == 0 {
		return false
	}
	now := s.clock()
	l := &s.lim
	h := w.Header()
	if c.Throttle429At > 0 && n == int64(c.Throttle429At) {
		l.mu.Lock()
		l.win429 = [2]time.Time{now, now.Add(time.Duration(c.Throttle429S) * time.Second)}
		l.mu.Unlock()
		h.Set("Retry-After", strconv.Itoa(c.Throttle429S))
		s.writeError(w, route, http.StatusTooManyRequests, "rate limit exceeded", false)
		return true
	}
	if c.WeightPerMinute == 0 {
		return false
	}
	weight := 1
	if v, ok := c.Weights[route]; ok {
		weight = v
	}
	m := now.UTC().Truncate(time.Minute)
	l.mu.Lock()
	if !m.Equal(l.minute) {
		l.minute, l.weight = m, 0
	}
	over := l.weight+weight > c.WeightPerMinute
	if !over {
		l.weight += weight
	}
	used := l.weight
	l.mu.Unlock()
	h.Set(UsedWeightHeader, strconv.Itoa(used))
	if !over {
		return false
	}
	h.Set("Retry-After", strconv.Itoa(max(1, int(m.Add(time.Minute).Sub(now).Seconds()+0.999))))
	s.writeError(w, route, http.StatusTooManyRequests, "request weight over the limit of "+strconv.Itoa(c.WeightPerMinute)+" per minute", false)
	return true
}

// logArrival notes when a request arrived, while a test may ask.
func (s *Server) logArrival(t time.Time) {
	if s.cfg.Throttle429At == 0 && !s.lim.logAll {
		return
	}
	s.lim.mu.Lock()
	s.lim.arrivals = append(s.lim.arrivals, t)
	s.lim.mu.Unlock()
}

// RecordArrivals makes the server log the arrival time of every request,
// for Arrivals. Call it before Start.
func (s *Server) RecordArrivals() { s.lim.logAll = true }

// Arrivals returns the arrival times logged so far, in the order the
// requests arrived.
func (s *Server) Arrivals() []time.Time {
	s.lim.mu.Lock()
	defer s.lim.mu.Unlock()
	return slices.Clone(s.lim.arrivals)
}

// Throttle429Window returns when the one 429 of Throttle429At was
// answered and when its Retry-After ended, and how many requests arrived
// strictly between the two. ok is false until that 429 was answered.
func (s *Server) Throttle429Window() (from, to time.Time, inside int, ok bool) {
	s.lim.mu.Lock()
	defer s.lim.mu.Unlock()
	from, to = s.lim.win429[0], s.lim.win429[1]
	if from.IsZero() {
		return from, to, 0, false
	}
	for _, a := range s.lim.arrivals {
		if a.After(from) && a.Before(to) {
			inside++
		}
	}
	return from, to, inside, true
}

// Throttled counts the GraphQL queries answered THROTTLED.
func (s *Server) Throttled() int {
	s.lim.mu.Lock()
	defer s.lim.mu.Unlock()
	return s.lim.throttled
}

// graphqlBilled is the GraphQL endpoint under the cost budget, when one is
// set.
func (s *Server) graphqlBilled(w http.ResponseWriter, r *http.Request, b []byte) ([]byte, error) {
	c := &s.cfg
	if c.CostPoints == 0 {
		return s.graphql(w, r, b)
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		return nil, &apiError{status: http.StatusBadRequest, msg: "could not read the request body: " + err.Error(), graphql: true}
	}
	var req struct {
		Variables struct {
			First json.Number `json:"first"`
		} `json:"variables"`
	}
	json.Unmarshal(raw, &req) //nolint:errcheck // s.graphql reports a bad body
	requested := 50.0
	if f, err := req.Variables.First.Float64(); err == nil && f >= 1 {
		requested = min(f, 100)
	}
	l := &s.lim
	now := s.clock()
	l.mu.Lock()
	if l.costAt.IsZero() {
		l.costAvail = c.CostPoints
	} else if dt := now.Sub(l.costAt).Seconds(); dt > 0 {
		l.costAvail = min(c.CostPoints, l.costAvail+dt*c.CostRestorePerS)
	}
	l.costAt = now
	if l.costAvail < requested {
		l.throttled++
		avail := l.costAvail
		l.mu.Unlock()
		b = append(b, `{"errors":[{"message":"Throttled","extensions":{"code":"THROTTLED"}}],`...)
		return s.appendCost(b, requested, 0, avail), nil
	}
	l.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(raw))
	b, err = s.graphql(w, r, b)
	if err != nil || len(b) == 0 || b[len(b)-1] != '}' {
		return b, err
	}
	actual := float64(max(1, bytes.Count(b, []byte(`{"cursor":"`))))
	l.mu.Lock()
	l.costAvail -= actual
	avail := l.costAvail
	l.mu.Unlock()
	b = append(b[:len(b)-1], ',')
	return s.appendCost(b, requested, actual, avail), nil
}

// appendCost closes a GraphQL answer with its extensions.cost.
func (s *Server) appendCost(b []byte, requested, actual, avail float64) []byte {
	b = append(b, `"extensions":{"cost":{"requestedQueryCost":`...)
	b = strconv.AppendFloat(b, requested, 'f', -1, 64)
	b = append(b, `,"actualQueryCost":`...)
	b = strconv.AppendFloat(b, actual, 'f', -1, 64)
	b = append(b, `,"throttleStatus":{"maximumAvailable":`...)
	b = strconv.AppendFloat(b, s.cfg.CostPoints, 'f', -1, 64)
	b = append(b, `,"currentlyAvailable":`...)
	b = strconv.AppendFloat(b, float64(int64(avail)), 'f', -1, 64)
	b = append(b, `,"restoreRate":`...)
	b = strconv.AppendFloat(b, s.cfg.CostRestorePerS, 'f', -1, 64)
	return append(b, "}}}}"...)
}
