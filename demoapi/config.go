// Package demoapi is the bundled demo API: a real HTTP server on loopback
// that behaves like a SaaS API, with one endpoint per pagination style the
// tap supports and switchable faults (rate limits, 5xx, resets, truncated
// bodies, slow answers, expired tokens, bans).
//
// It is used by base_url "embedded://demo", by "tap serve-demo", by the
// integration tests and by the benchmarks. Every record is a pure function of
// (Config, stream, index): nothing is stored, so a data set of a million
// events costs no memory, and a test can ask the server (Source) for exactly
// the rows it would serve and compare them with what the tap emitted.
package demoapi

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Config is the "demo" block of the tap config. Zero values mean the default
// in brackets, so that an empty block (or none) gives the standard demo.
type Config struct {
	Seed int64 `json:"seed"` // [1]
	// Record counts (the full data set, before growth).
	Customers int `json:"customers"` // [500]
	Orders    int `json:"orders"`    // [200]
	Events    int `json:"events"`    // [5000]
	Invoices  int `json:"invoices"`  // [300]
	Tickets   int `json:"tickets"`   // [250]
	Issues    int `json:"issues"`    // [300]
	BarsDays  int `json:"bars_days"` // [730] days of 5-minute bars ending at DataEnd
	// EventsGrowth new events are appended after every events page served
	// [0]; InvoicesGrowth likewise for invoices [0]. They model an API that
	// keeps receiving data while it is being read.
	EventsGrowth   int `json:"events_growth"`
	InvoicesGrowth int `json:"invoices_growth"`

	// Time axis. Customers, orders, issues, tickets and invoices have their
	// timestamps in [DataEnd - SpanDays, DataEnd).
	DataEnd  string  `json:"data_end"`  // RFC 3339 [2026-11-01T00:00:00Z]
	SpanDays float64 `json:"span_days"` // [1095]
	// Now is the demo's clock for visibility [wall clock]: a row is visible
	// iff its updated_at <= Now and, if it is a late row, updated_at + lag <= Now.
	Now string `json:"now"`
	// LateRate is the fraction of customers/orders/issues rows that commit
	// late, with a lag uniform in [30 s, 240 s] [0.02]. Late rows are what
	// an incremental overlap exists for.
	LateRate float64 `json:"late_rate"`
	// Drift orders (spread through the set) have "amount" as a JSON string
	// and an extra field "coupon_code" [0]: schema drift for the validator.
	Drift int `json:"drift"`

	// Faults.
	RequestsPerSecond float64 `json:"requests_per_second"` // [0 = off] fixed 1-second window quota across all endpoints
	FailRate          float64 `json:"fail_rate"`           // [0] fraction of requests answered 503
	LatencyMS         int     `json:"latency_ms"`          // [0] added to every answer
	SlowRate          float64 `json:"slow_rate"`           // [0] fraction of requests that sleep SlowMS before answering
	SlowMS            int     `json:"slow_ms"`             // [5000]
	ResetRate         float64 `json:"reset_rate"`          // [0] fraction of requests whose connection is closed without an answer
	TruncateRate      float64 `json:"truncate_rate"`       // [0] fraction of 200 answers whose body is cut in half
	ErrorBodyRate     float64 `json:"error_body_rate"`     // [0] fraction of answers that are 200 with an error body
	UnauthorizedAfter int     `json:"unauthorized_after"`  // [0 = off] after this many requests, every request gets 401
	TeapotAfter       int     `json:"teapot_after"`        // [0 = off] after this many requests, every request gets 418
	RetryAfterS       int     `json:"retry_after_s"`       // [0 = seconds until the window resets, at least 1] Retry-After on 429
	Token             string  `json:"token"`               // [""] when set, requests must carry "Authorization: Bearer <token>" or api_key=<token>
	MaxPageSize       int     `json:"max_page_size"`       // [1000] page-size parameters are clamped to this
	// Throttling knobs; see limits.go.
	Throttle429At   int            `json:"throttle_429_at"`    // [0 = off] the request with this number (from 1) gets 429 with Retry-After
	Throttle429S    int            `json:"throttle_429_s"`     // [3] its Retry-After, seconds
	WeightPerMinute int            `json:"weight_per_minute"`  // [0 = off] request weight allowed per UTC minute
	Weights         map[string]int `json:"weights"`            // [1 each] weight by route name ("bars": 5)
	CostPoints      float64        `json:"cost_points"`        // [0 = off] GraphQL cost budget
	CostRestorePerS float64        `json:"cost_restore_per_s"` // its restore rate, points a second
	// Feeds (feed.go): trades numbered 1..FeedTrades over a websocket,
	// SSE and NDJSON, and their history at /v1/trades. Each fault fires
	// once: on the first connection that reaches its seq.
	FeedTrades       int  `json:"feed_trades"`        // [1000]
	FeedIntervalMS   int  `json:"feed_interval_ms"`   // [0] between two trades
	FeedHeartbeatMS  int  `json:"feed_heartbeat_ms"`  // [200]
	FeedNoEnd        bool `json:"feed_no_end"`        // after the last trade, heartbeats only, no end message
	FeedDrop         int  `json:"feed_drop"`          // [0 = off] this seq is lost
	FeedSilenceAfter int  `json:"feed_silence_after"` // [0 = off] after this seq, the connection stays open and silent
	FeedCloseAfter   int  `json:"feed_close_after"`   // [0 = off] after this seq, the connection is cut
	FeedReplay       int  `json:"feed_replay"`        // [0] a reconnect starts this many seqs early: duplicates
	FeedMute         bool `json:"feed_mute"`          // the first connection is accepted and never sent anything
	// OAuth, when set, serves /oauth/token and makes the data endpoints
	// want its access tokens (or Token, when set too).
	OAuth *OAuth `json:"oauth"`
	// Accounts, when set, configures /v1/accounts, the table that
	// changes between runs (accounts.go); it is served with its defaults
	// without.
	Accounts *Accounts `json:"accounts"`
}

// Defaults of the fields whose zero value does not mean "off".
const (
	defaultSeed        = 1
	defaultCustomers   = 500
	defaultOrders      = 200
	defaultEvents      = 5000
	defaultInvoices    = 300
	defaultTickets     = 250
	defaultIssues      = 300
	defaultBarsDays    = 730
	defaultDataEnd     = "2026-11-01T00:00:00Z"
	defaultSpanDays    = 1095
	defaultLateRate    = 0.02
	defaultSlowMS      = 5000
	defaultMaxPageSize = 1000
)

// settings is a Config with its defaults applied and its times parsed. It
// never changes after New.
type settings struct {
	Config
	dataEnd  int64 // Unix seconds
	span     int64 // seconds, >= 1
	hasNow   bool
	now      int64 // Unix seconds, when hasNow
	rpsLimit int   // requests per 1-s window, when RequestsPerSecond > 0
}

// resolve applies the defaults and checks every field, naming the first bad
// one the way the tap names config fields ("demo.fail_rate: ...").
func (c Config) resolve() (settings, error) {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("demo.%s: %s", field, fmt.Sprintf(format, args...))
	}
	counts := []struct {
		name string
		v    *int
		def  int
	}{
		{"customers", &c.Customers, defaultCustomers},
		{"orders", &c.Orders, defaultOrders},
		{"events", &c.Events, defaultEvents},
		{"invoices", &c.Invoices, defaultInvoices},
		{"tickets", &c.Tickets, defaultTickets},
		{"issues", &c.Issues, defaultIssues},
		{"bars_days", &c.BarsDays, defaultBarsDays},
		{"events_growth", &c.EventsGrowth, 0},
		{"invoices_growth", &c.InvoicesGrowth, 0},
		{"drift", &c.Drift, 0},
		{"latency_ms", &c.LatencyMS, 0},
		{"slow_ms", &c.SlowMS, defaultSlowMS},
		{"unauthorized_after", &c.UnauthorizedAfter, 0},
		{"teapot_after", &c.TeapotAfter, 0},
		{"retry_after_s", &c.RetryAfterS, 0},
		{"max_page_size", &c.MaxPageSize, defaultMaxPageSize},
		{"feed_trades", &c.FeedTrades, 1000},
		{"feed_interval_ms", &c.FeedIntervalMS, 0},
		{"feed_heartbeat_ms", &c.FeedHeartbeatMS, 200},
		{"feed_drop", &c.FeedDrop, 0},
		{"feed_silence_after", &c.FeedSilenceAfter, 0},
		{"feed_close_after", &c.FeedCloseAfter, 0},
		{"feed_replay", &c.FeedReplay, 0},
	}
	for _, f := range counts {
		if *f.v < 0 {
			return settings{}, bad(f.name, "must not be negative, got %d", *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	// Keep index arithmetic (index * span, index * 2) far from overflow.
	const maxCount = 1 << 40
	for _, f := range counts[:7] {
		if *f.v > maxCount {
			return settings{}, bad(f.name, "must be at most %d, got %d", maxCount, *f.v)
		}
	}
	if c.BarsDays > 100*366 {
		return settings{}, bad("bars_days", "must be at most %d, got %d", 100*366, c.BarsDays)
	}
	if c.Drift > c.Orders {
		return settings{}, bad("drift", "must be at most the number of orders (%d), got %d", c.Orders, c.Drift)
	}
	rates := []struct {
		name string
		v    *float64
		def  float64
	}{
		{"late_rate", &c.LateRate, defaultLateRate},
		{"fail_rate", &c.FailRate, 0},
		{"slow_rate", &c.SlowRate, 0},
		{"reset_rate", &c.ResetRate, 0},
		{"truncate_rate", &c.TruncateRate, 0},
		{"error_body_rate", &c.ErrorBodyRate, 0},
	}
	for _, f := range rates {
		if math.IsNaN(*f.v) || *f.v < 0 || *f.v > 1 {
			return settings{}, bad(f.name, "must be between 0 and 1, got %s", fmtFloat(*f.v))
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if a := c.Accounts; a != nil {
		for _, f := range []struct {
			name string
			v    int
		}{{"count", a.Count}, {"generation", a.Generation}, {"list_delay_ms", a.ListDelayMS}} {
			if f.v < 0 {
				return settings{}, bad("accounts."+f.name, "must not be negative, got %d", f.v)
			}
		}
		if a.Count > 1_000_000 || a.Generation > 20 {
			return settings{}, bad("accounts", "count is at most 1000000 and generation at most 20, got %d and %d", a.Count, a.Generation)
		}
	}
	if err := c.checkLimits(); err != nil {
		return settings{}, err
	}
	if math.IsNaN(c.RequestsPerSecond) || math.IsInf(c.RequestsPerSecond, 0) || c.RequestsPerSecond < 0 {
		return settings{}, bad("requests_per_second", "must be a number >= 0 (0 = no limit), got %s", fmtFloat(c.RequestsPerSecond))
	}
	if math.IsNaN(c.SpanDays) || math.IsInf(c.SpanDays, 0) || c.SpanDays < 0 || c.SpanDays > 100*366 {
		return settings{}, bad("span_days", "must be a number of days between 0 and %d, got %s", 100*366, fmtFloat(c.SpanDays))
	}
	if c.SpanDays == 0 {
		c.SpanDays = defaultSpanDays
	}
	if c.Seed == 0 {
		c.Seed = defaultSeed
	}
	if c.DataEnd == "" {
		c.DataEnd = defaultDataEnd
	}
	end, err := time.Parse(time.RFC3339, c.DataEnd)
	if err != nil {
		return settings{}, bad("data_end", "must be an RFC 3339 time such as %q, got %q", defaultDataEnd, c.DataEnd)
	}
	if y := end.UTC().Year(); y < 1900 || y > 9000 {
		return settings{}, bad("data_end", "must lie between the years 1900 and 9000, got %q", c.DataEnd)
	}
	if c.OAuth != nil {
		o := *c.OAuth
		if _, err := o.resolve(); err != nil {
			return settings{}, err
		}
		c.OAuth = &o
	}
	s := settings{Config: c, dataEnd: end.Unix()}
	s.span = int64(c.SpanDays * 86400)
	if s.span < 1 {
		s.span = 1
	}
	if c.Now != "" {
		now, err := time.Parse(time.RFC3339, c.Now)
		if err != nil {
			return settings{}, bad("now", "must be an RFC 3339 time such as %q (or empty for the wall clock), got %q", defaultDataEnd, c.Now)
		}
		s.hasNow, s.now = true, now.Unix()
	}
	if c.RequestsPerSecond > 0 {
		// A fixed window of one second holds a whole number of requests;
		// rounding down keeps a client that paces itself at exactly
		// RequestsPerSecond honest.
		s.rpsLimit = max(1, int(math.Min(c.RequestsPerSecond, 1<<30)))
	}
	return s, nil
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// parseTime reads a time parameter: RFC 3339 (fractions allowed), a date
// (YYYY-MM-DD, midnight UTC), or Unix seconds (milliseconds when it has 13
// or more digits). Being lenient costs nothing and lets every incremental
// format of the tap talk to the demo.
func parseTime(v string) (time.Time, bool) {
	v = strings.TrimSpace(v)
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, true
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, true
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
		if len(v) >= 13 {
			return time.UnixMilli(n), true
		}
		return time.Unix(n, 0), true
	}
	return time.Time{}, false
}

// ceilUnix is the smallest whole second >= t: "updated_at >= since" with a
// fractional since is "updated_at >= ceil(since)" on whole seconds.
func ceilUnix(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}
