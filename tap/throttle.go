package tap

import (
	"encoding/json"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/tap/failure"
)

// withLimits adds to a stream's request what the client's limits and
// status rules need: the merged on_status rules, the stream's weight and,
// under a GraphQL cost budget, the query's cost estimate (its page size,
// the "first" variable of the body).
func (e *engine) withLimits(d *streams.Definition, r client.Request) client.Request {
	if rules := streams.StatusRules(e.cfg.OnStatus, d); len(rules) > 0 {
		r.OnStatus = make(map[int]client.StatusRule, len(rules))
		for code, rule := range rules {
			r.OnStatus[code] = failure.ClientRule(rule)
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

// breakerMetric is the client's OnBreaker in a sync: a metric line on
// each change of the breaker's state.
func (e *engine) breakerMetric(state string, openings int) {
	e.report.Counter("circuit_breaker_state", openings, map[string]any{"state": state})
}
