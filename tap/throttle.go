package tap

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/streams"
)

// withLimits adds to a stream's request what the client's limits and
// status rules need: the merged on_status rules, the stream's weight and,
// under a GraphQL cost budget, the query's cost estimate (its page size,
// the "first" variable of the body).
func (e *engine) withLimits(d *streams.Definition, r client.Request) client.Request {
	if rules := streams.StatusRules(e.cfg.OnStatus, d); len(rules) > 0 {
		r.OnStatus = make(map[int]client.StatusRule, len(rules))
		for code, rule := range rules {
			r.OnStatus[code] = clientRule(rule)
		}
		r.IgnoreStatuses = nil // in the rules
	}
	r.Weight = max(d.Weight, 1)
	if d.GraphQL != nil && e.cfg.RateLimit.Cost.Points > 0 {
		r.Cost = graphqlFirst(r.Body)
	}
	return r
}

// graphqlFirst is the page size a GraphQL body asks for (variables.first),
// or 1 when it asks for none.
func graphqlFirst(body []byte) float64 {
	var b struct {
		Variables struct {
			First json.Number `json:"first"`
		} `json:"variables"`
	}
	if json.Unmarshal(body, &b) == nil {
		if f, err := b.Variables.First.Float64(); err == nil && f >= 1 {
			return f
		}
	}
	return 1
}

// clientOptions are the parts of the client's config that come from the
// run rather than from the config file: the daily quota already used
// today by earlier runs (STATE's quota), and the breaker's metric lines.
func (e *engine) clientOptions(st *State) ([]func(*client.Config), error) {
	var opts []func(*client.Config)
	if e.cfg.RateLimit.DailyQuota > 0 {
		day, used, ok, err := st.Quota()
		if err != nil {
			return nil, &InputError{File: "state", Err: err}
		}
		if ok {
			opts = append(opts, func(c *client.Config) { c.QuotaDay, c.QuotaUsed = day, used })
		}
	}
	opts = append(opts, func(c *client.Config) {
		c.OnBreaker = func(state string, openings int) {
			e.metric(e.metricsLevel(), "counter", "circuit_breaker_state", openings, map[string]any{"state": state})
		}
	})
	return opts, nil
}

// trackQuota makes every STATE carry the client's daily quota count.
func (e *engine) trackQuota(st *State) {
	if e.cfg.RateLimit.DailyQuota > 0 {
		st.setQuotaSource(e.client.QuotaUsage)
	}
}

// quotaKey is the top-level STATE key of the daily quota count.
const quotaKey = "quota"

// Quota returns the daily quota count STATE carries: its UTC day and the
// requests used on it. ok is false when there is none.
func (st *State) Quota() (day string, used int, ok bool, err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return parseQuota(st.other[quotaKey])
}

func parseQuota(v any) (day string, used int, ok bool, err error) {
	if v == nil {
		return "", 0, false, nil
	}
	bad := fmt.Errorf(`quota: expected {"day": "YYYY-MM-DD", "used": N >= 0}, got %s`, jsonText(v))
	m, isObj := v.(map[string]any)
	if !isObj {
		return "", 0, false, bad
	}
	day, _ = m["day"].(string)
	if _, err := time.Parse(time.DateOnly, day); err != nil {
		return "", 0, false, bad
	}
	switch n := m["used"].(type) {
	case json.Number:
		i, err := n.Int64()
		if err != nil || i < 0 || i > 1e12 {
			return "", 0, false, bad
		}
		used = int(i)
	case int:
		used = n
	default:
		return "", 0, false, bad
	}
	return day, used, true, nil
}

// setQuotaSource makes every snapshot of the state carry the quota count
// f returns, in place of the one read.
func (st *State) setQuotaSource(f func() (day string, used int)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.quota = f
}

// quotaLocked is the quota object to write, or nil.
func (st *State) quotaLocked() any {
	if st.quota != nil {
		day, used := st.quota()
		return map[string]any{"day": day, "used": used}
	}
	return st.other[quotaKey]
}

// mergeQuota keeps, of two quota counts read (Airbyte carries one per
// stream), the later day's, and on the same day the larger count.
func mergeQuota(a, b any) any {
	da, ua, okA, errA := parseQuota(a)
	db, ub, okB, errB := parseQuota(b)
	switch {
	case !okA || errA != nil:
		return b
	case !okB || errB != nil:
		return a
	case db > da || (db == da && ub > ua):
		return b
	}
	return a
}
