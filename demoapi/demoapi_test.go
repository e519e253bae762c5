package demoapi

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tap-dev/tap/demoapi/dataset"
)

// reverse returns records in the opposite order (orders are served newest first).
func reverse(rs []map[string]any) []map[string]any {
	out := slices.Clone(rs)
	slices.Reverse(out)
	return out
}

func filter(rs []map[string]any, keep func(map[string]any) bool) []map[string]any {
	out := []map[string]any{}
	for _, r := range rs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// TestWalkEqualsSource walks every endpoint to its end with its own
// pagination and checks that exactly Source(stream) came back: same rows,
// same content, each once, in the order the endpoint promises.
func TestWalkEqualsSource(t *testing.T) {
	since := "2025-06-01T00:00:00Z"
	sinceFrom := func(key string) func(map[string]any) bool {
		return func(r map[string]any) bool { return r[key].(string) >= since }
	}
	cases := []struct {
		name   string
		stream string
		params url.Values
		keep   func(map[string]any) bool // the filter the params apply
	}{
		{"customers", "customers", nil, nil},
		{"customers small pages since", "customers", url.Values{"per_page": {"37"}, "updated_since": {since}, "foo": {"bar"}}, sinceFrom("updated_at")},
		{"customers clamped page size", "customers", url.Values{"per_page": {"100000"}}, nil},
		{"orders", "orders", url.Values{"limit": {"17"}}, nil},
		{"orders since", "orders", url.Values{"limit": {"9"}, "updated_since": {since}}, sinceFrom("updated_at")},
		{"order_items", "order_items", url.Values{"limit": {"100"}}, nil},
		{"events", "events", url.Values{"limit": {"333"}}, nil},
		{"invoices", "invoices", url.Values{"limit": {"41"}}, nil},
		{"tickets", "tickets", url.Values{"per_page": {"10"}}, nil},
		{"tickets default", "tickets", nil, nil},
		{"bars", "bars", url.Values{"limit": {"97"}}, nil},
		{"bars range", "bars", url.Values{"from": {"2026-10-30"}, "to": {"2026-10-31T06:00:00Z"}, "limit": {"50"}}, func(r map[string]any) bool {
			ts := r["t"].(string)
			return ts >= "2026-10-30T00:00:00Z" && ts < "2026-10-31T06:00:00Z"
		}},
		{"issues", "issues", url.Values{"first": {"23"}}, nil},
		{"issues since", "issues", url.Values{"since": {since}}, sinceFrom("updated_at")},
	}
	// A Now shortly before DataEnd leaves the newest rows out, as a real
	// API's rows from the future would be.
	s, base := start(t, Config{BarsDays: 3, Now: "2026-10-20T00:00:00Z"})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want, err := s.Source(tc.stream)
			if err != nil {
				t.Fatal(err)
			}
			if tc.keep != nil {
				want = filter(want, tc.keep)
			}
			if len(want) == 0 {
				t.Fatal("Source returned nothing: the case tests nothing")
			}
			got := walk(t, base, tc.stream, tc.params)
			seen := map[string]bool{}
			for _, r := range got {
				if k := pk(tc.stream, r); seen[k] {
					t.Fatalf("duplicate %s", k)
				} else {
					seen[k] = true
				}
			}
			if tc.stream == "orders" {
				got = reverse(got)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("walk != Source (-want +got), %d vs %d rows:\n%.3000s", len(want), len(got), diff)
			}
		})
	}
}

func TestSourceOrderAndVisibility(t *testing.T) {
	// About half-way through the default span [2023-11-02, 2026-11-01).
	const now = "2025-05-01T00:00:00Z"
	s, _ := start(t, Config{Now: now})
	counts := map[string]int{"customers": 500, "orders": 200, "issues": 300, "tickets": 250}
	for stream, count := range counts {
		rows, err := s.Source(stream)
		if err != nil {
			t.Fatal(err)
		}
		prevID, prevT := int64(0), ""
		for _, r := range rows {
			u := r["updated_at"].(string)
			if stream != "tickets" && u > now {
				t.Errorf("%s: row %v updated at %s is after Now", stream, r["id"], u)
			}
			id := int64(0)
			if n, ok := r["number"].(json.Number); ok {
				id, _ = n.Int64()
			} else {
				id, _ = r["id"].(json.Number).Int64()
			}
			if id <= prevID || u < prevT {
				t.Errorf("%s: not in (updated_at, id) order at id %d", stream, id)
			}
			prevID, prevT = id, u
		}
		switch {
		case stream == "tickets" && len(rows) != count:
			t.Errorf("tickets: %d rows, want all %d (no visibility rule)", len(rows), count)
		case stream != "tickets" && (len(rows) < count*4/10 || len(rows) > count*6/10):
			t.Errorf("%s: %d of %d rows visible half-way through the span", stream, len(rows), count)
		}
	}
	if _, err := s.Source("nope"); err == nil {
		t.Error("Source(nope): no error")
	}
}

func TestLinkHeader(t *testing.T) {
	s, base := start(t, Config{})
	host := strings.TrimPrefix(base, "http://")
	src, _ := s.Source("customers")
	since := "2026-01-01T00:00:00Z"
	n := len(filter(src, func(r map[string]any) bool { return r["updated_at"].(string) >= since }))
	last := (n + 1) / 2
	link := func(page int, rel string) string {
		return fmt.Sprintf(`<http://%s/v1/customers?foo=bar&page=%d&per_page=2&updated_since=2026-01-01T00%%3A00%%3A00Z>; rel="%s"`, host, page, rel)
	}
	cases := []struct {
		page int
		want string
	}{
		{1, link(2, "next") + ", " + link(last, "last")},
		{2, link(3, "next") + ", " + link(last, "last")},
		{last, link(last, "last")},
		{last + 5, link(last, "last")},
	}
	for _, tc := range cases {
		a := mustGet(t, fmt.Sprintf("%s/v1/customers?per_page=2&foo=bar&updated_since=%s&page=%d", base, url.QueryEscape(since), tc.page))
		if got := a.header.Get("Link"); got != tc.want {
			t.Errorf("page %d: Link\n got %s\nwant %s", tc.page, got, tc.want)
		}
		if tc.page > last && len(a.body.([]any)) != 0 {
			t.Errorf("page %d beyond the last: %d rows", tc.page, len(a.body.([]any)))
		}
	}
}

func TestOrderCursorTokens(t *testing.T) {
	s, base := start(t, Config{})
	q := url.Values{"limit": {"1"}}
	var tokens []string
	for {
		a := mustGet(t, base+"/v1/orders?"+q.Encode())
		tok := field(a.body, "next_cursor").(string)
		if tok == "" {
			break
		}
		tokens = append(tokens, tok)
		q.Set("cursor", tok)
	}
	if len(tokens) != s.cfg.Orders-1 {
		t.Fatalf("%d tokens for %d orders at 1 per page", len(tokens), s.cfg.Orders)
	}
	special := map[rune]int{}
	for _, tok := range tokens {
		for _, c := range "+/=" {
			if strings.ContainsRune(tok, c) {
				special[c]++
			}
		}
	}
	for _, c := range "+/=" {
		if special[c] == 0 {
			t.Errorf("no token contains %q; tokens must exercise query escaping", c)
		}
	}
	// Round trip of the encoding itself.
	for _, tc := range []struct{ pos, since, before int64 }{{0, dataset.NoSince, dataset.NoBefore}, {7, 1700000000, dataset.NoBefore}, {1 << 40, 5, 6}} {
		pos, since, before, ok := s.parseOrderToken(s.orderToken(tc.pos, tc.since, tc.before))
		if !ok || pos != tc.pos || since != tc.since || before != tc.before {
			t.Errorf("round trip of %+v: %d %d %d %v", tc, pos, since, before, ok)
		}
	}
	// Tampering: change one character of a real token; or send '+' unescaped
	// (it arrives as a space).
	tok := []byte(tokens[3])
	tok[5] ^= 1
	plus := ""
	for _, tok := range tokens {
		if strings.Contains(tok, "+") {
			plus = strings.ReplaceAll(tok, "+", " ")
			break
		}
	}
	for _, bad := range []string{string(tok), "AAAA", "not base64!", plus} {
		a := get(t, base+"/v1/orders?cursor="+url.QueryEscape(bad))
		if a.status != 400 || !strings.Contains(string(a.raw), "cursor") {
			t.Errorf("cursor %q: %d %s", bad, a.status, a.raw)
		}
	}
	// A token from another seed is not ours.
	other, _ := New(Config{Seed: 99})
	a := get(t, base+"/v1/orders?cursor="+url.QueryEscape(other.orderToken(1, dataset.NoSince, dataset.NoBefore)))
	if a.status != 400 {
		t.Errorf("foreign token: %d", a.status)
	}
}

func TestLateRows(t *testing.T) {
	s0, _ := start(t, Config{})
	for _, stream := range []string{"customers", "orders", "issues"} {
		t.Run(stream, func(t *testing.T) {
			late := s0.LateRows(stream)
			// Default: 2% of 200-500 rows.
			if len(late) < 2 || len(late) > 25 {
				t.Fatalf("%d late rows", len(late))
			}
			row := late[len(late)/2]
			if lag := row.CommittedAt.Sub(row.UpdatedAt); lag < 30*time.Second || lag > 240*time.Second {
				t.Errorf("lag %v outside [30s, 240s]", lag)
			}
			for _, tc := range []struct {
				now     time.Time
				visible bool
			}{
				{row.UpdatedAt.Add(-time.Second), false},
				{row.UpdatedAt, false},
				{row.CommittedAt.Add(-time.Second), false},
				{row.CommittedAt, true},
				{row.CommittedAt.Add(time.Hour), true},
			} {
				s, base := start(t, Config{Now: tc.now.Format(time.RFC3339)})
				src, _ := s.Source(stream)
				got := walk(t, base, stream, nil)
				if stream == "orders" {
					got = reverse(got)
				}
				if diff := cmp.Diff(src, got); diff != "" {
					t.Fatalf("Now %s: walk != Source:\n%.2000s", tc.now, diff)
				}
				has := false
				for _, r := range src {
					if r["id"] == row.ID || r["id"] == json.Number(fmt.Sprint(row.ID)) {
						has = true
					}
				}
				if has != tc.visible {
					t.Errorf("Now %s (updated %s, committed %s): visible=%v, want %v", tc.now, row.UpdatedAt, row.CommittedAt, has, tc.visible)
				}
				if stream == "orders" {
					a := get(t, fmt.Sprintf("%s/v1/orders/%d/items", base, row.ID))
					if (a.status == 200) != tc.visible {
						t.Errorf("Now %s: items of late order: %d", tc.now, a.status)
					}
				}
			}
		})
	}
	if s0.LateRows("events") != nil {
		t.Error("events have late rows")
	}
}

func TestNowFilter(t *testing.T) {
	s, base := start(t, Config{Now: "2025-05-01T12:00:00Z"})
	all, _ := New(Config{Now: "2030-01-01T00:00:00Z"})
	for _, stream := range []string{"customers", "orders", "issues"} {
		want, _ := all.Source(stream)
		want = filter(want, func(r map[string]any) bool { return r["updated_at"].(string) <= "2025-05-01T12:00:00Z" })
		got := walk(t, base, stream, url.Values{"per_page": {"50"}, "limit": {"50"}, "first": {"50"}})
		if stream == "orders" {
			got = reverse(got)
		}
		// Late rows near the cut may differ; there are at most a few.
		if d := len(want) - len(got); d < 0 || d > 3 {
			t.Errorf("%s: %d rows up to Now, walk gave %d", stream, len(want), len(got))
		}
		src, _ := s.Source(stream)
		if diff := cmp.Diff(src, got); diff != "" {
			t.Errorf("%s: walk != Source:\n%.2000s", stream, diff)
		}
	}
}

func TestEventsGrowth(t *testing.T) {
	s, base := start(t, Config{Events: 2500, EventsGrowth: 7})
	got := walk(t, base, "events", url.Values{"limit": {"1000"}})
	// Pages at totals 2500, 2507, 2514: the third page is short.
	if len(got) != 2514 {
		t.Errorf("walk saw %d events, want 2514 (growth picked up)", len(got))
	}
	prev := ""
	for i, r := range got {
		if r["id"] != json.Number(itoa(i+1)) {
			t.Fatalf("event %d has id %v", i, r["id"])
		}
		if ts := r["occurred_at"].(string); ts < prev {
			t.Fatalf("occurred_at decreases at id %d", i+1)
		} else {
			prev = ts
		}
	}
	src, _ := s.Source("events")
	if len(src) != 2521 {
		t.Errorf("Source has %d events after 3 pages, want 2521", len(src))
	}
	if diff := cmp.Diff(src[:len(got)], got); diff != "" {
		t.Errorf("walk != Source prefix:\n%.2000s", diff)
	}
}

func TestInvoicesGrowth(t *testing.T) {
	s, base := start(t, Config{InvoicesGrowth: 5})
	got := walk(t, base, "invoices", url.Values{"limit": {"100"}})
	src, _ := s.Source("invoices")
	if len(got) <= 300 || len(src) != len(got)+5 {
		t.Errorf("walk %d, Source %d: growth not picked up", len(got), len(src))
	}
	if diff := cmp.Diff(src[:len(got)], got); diff != "" {
		t.Errorf("walk != Source prefix:\n%.2000s", diff)
	}
	if n := got[len(got)-1]["number"]; n != fmt.Sprintf("INV-%06d", len(got)) {
		t.Errorf("last number %v", n)
	}
}

func TestDrift(t *testing.T) {
	for _, drift := range []int{0, 1, 5, 200} {
		s, _ := start(t, Config{Drift: drift})
		src, _ := s.Source("orders")
		n := 0
		for _, r := range src {
			_, str := r["amount"].(string)
			_, coupon := r["coupon_code"]
			if str != coupon {
				t.Errorf("drift %d: order %v: string amount %v, coupon %v", drift, r["id"], str, coupon)
			}
			if str {
				n++
				if r["coupon_code"] != "SAVE10" {
					t.Errorf("coupon %v", r["coupon_code"])
				}
			} else if _, ok := r["amount"].(json.Number); !ok {
				t.Errorf("amount %T", r["amount"])
			}
		}
		if n != drift {
			t.Errorf("drift %d: %d drifted orders", drift, n)
		}
	}
}

func TestBigAccountNumber(t *testing.T) {
	s, base := start(t, Config{})
	a := mustGet(t, base+"/v1/customers?per_page=3")
	for i, want := range []string{"9007199254740993", "9007199254740995", "9007199254740997"} {
		if !strings.Contains(string(a.raw), `"account_number":`+want+`,`) {
			t.Errorf("page lacks account_number %s: %.300s", want, a.raw)
		}
		if got := records(t, a.body)[i]["account_number"]; got != json.Number(want) {
			t.Errorf("customer %d: account_number %v", i+1, got)
		}
	}
	src, _ := s.Source("customers")
	if got := src[0]["account_number"]; got != json.Number("9007199254740993") {
		t.Errorf("Source: %v", got)
	}
}

func TestRecordShapes(t *testing.T) {
	s, base := start(t, Config{BarsDays: 2})
	// Every record has exactly the documented fields.
	fields := map[string]string{
		"customers":   "account_number address country created_at email id lifetime_value name tags updated_at",
		"orders":      "amount created_at currency customer_id id items_count status updated_at",
		"order_items": "id order_id quantity sku unit_price",
		"events":      "actor_id id ip occurred_at payload source type user_agent",
		"invoices":    "customer_id id issued_at number status total",
		"tickets":     "created_at id priority requester_id status subject updated_at",
		"bars":        "close high low open symbol t volume",
		"issues":      "author created_at id labels number state title updated_at",
	}
	for stream, want := range fields {
		rows, err := s.Source(stream)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			keys := make([]string, 0, len(r))
			for k := range r {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if got := strings.Join(keys, " "); got != want {
				t.Fatalf("%s: fields %q, want %q", stream, got, want)
			}
		}
	}
	// Event size and shape.
	a := mustGet(t, base+"/v1/events?limit=100")
	if per := len(a.raw) / 100; per < 250 || per > 360 {
		t.Errorf("events are %d bytes each, want ~300", per)
	}
	// Bars: 5-minute steps, low <= open, close <= high.
	bars, _ := s.Source("bars")
	if len(bars) != 2*288 {
		t.Fatalf("%d bars", len(bars))
	}
	prev := time.Time{}
	for _, b := range bars {
		ts, _ := time.Parse(time.RFC3339, b["t"].(string))
		if !prev.IsZero() && ts.Sub(prev) != 5*time.Minute {
			t.Fatalf("bar step %v", ts.Sub(prev))
		}
		prev = ts
		f := func(k string) float64 { v, _ := b[k].(json.Number).Float64(); return v }
		if !(f("low") <= f("open") && f("low") <= f("close") && f("high") >= f("open") && f("high") >= f("close") && f("low") > 0) {
			t.Fatalf("bad bar %v", b)
		}
		if s := string(b["open"].(json.Number)); strings.Contains(s, ".") && len(s)-strings.Index(s, ".") > 5 {
			t.Fatalf("more than 4 decimals: %s", s)
		}
	}
	if last := prev.Add(5 * time.Minute); !last.Equal(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("bars end at %v", last)
	}
	// Items of an order add up to its amount.
	orders, _ := s.Source("orders")
	items, _ := s.Source("order_items")
	sum := map[json.Number]float64{}
	for _, it := range items {
		q, _ := it["quantity"].(json.Number).Float64()
		p, _ := it["unit_price"].(json.Number).Float64()
		sum[it["order_id"].(json.Number)] += q * p
	}
	for _, o := range orders {
		amt, _ := o["amount"].(json.Number).Float64()
		if d := sum[o["id"].(json.Number)] - amt; d > 0.001 || d < -0.001 {
			t.Errorf("order %v: amount %v, items sum %v", o["id"], amt, sum[o["id"].(json.Number)])
		}
	}
}

func TestDeterministic(t *testing.T) {
	a, _ := New(Config{Seed: 7, BarsDays: 5, Now: "2026-11-01T00:00:00Z"})
	b, _ := New(Config{Seed: 7, BarsDays: 5, Now: "2026-11-01T00:00:00Z"})
	c, _ := New(Config{Seed: 8, BarsDays: 5, Now: "2026-11-01T00:00:00Z"})
	for _, stream := range streamNames {
		ra, _ := a.Source(stream)
		rb, _ := b.Source(stream)
		rc, _ := c.Source(stream)
		if !reflect.DeepEqual(ra, rb) {
			t.Errorf("%s: same seed, different data", stream)
		}
		if reflect.DeepEqual(ra, rc) {
			t.Errorf("%s: different seeds, same data", stream)
		}
	}
}

func TestConfig(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Seed: 1, Customers: 500, Orders: 200, Events: 5000, Invoices: 300, Tickets: 250, Issues: 300, BarsDays: 730,
		DataEnd: "2026-11-01T00:00:00Z", SpanDays: 1095, LateRate: 0.02, SlowMS: 5000, MaxPageSize: 1000, Throttle429S: 3,
		FeedTrades: 1000, FeedHeartbeatMS: 200}
	if diff := cmp.Diff(want, s.cfg.Config); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	bad := []struct {
		cfg  Config
		want string
	}{
		{Config{FailRate: 2}, "demo.fail_rate: must be between 0 and 1, got 2"},
		{Config{LateRate: -0.1}, "demo.late_rate: must be between 0 and 1"},
		{Config{TruncateRate: 1.5}, "demo.truncate_rate"},
		{Config{Customers: -1}, "demo.customers: must not be negative, got -1"},
		{Config{MaxPageSize: -5}, "demo.max_page_size"},
		{Config{DataEnd: "yesterday"}, "demo.data_end"},
		{Config{Now: "2026-13-01"}, "demo.now"},
		{Config{SpanDays: -1}, "demo.span_days"},
		{Config{RequestsPerSecond: -1}, "demo.requests_per_second"},
		{Config{Drift: 201}, "demo.drift"},
		{Config{SlowMS: -1}, "demo.slow_ms"},
	}
	for _, tc := range bad {
		_, err := New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", tc.cfg, err, tc.want)
		}
	}
}

func TestAppendTime(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := []int64{0, -1, 86399, 86400, 951782400, 4107542399, 253402300799, -62135596800}
	for range 20000 {
		cases = append(cases, r.Int64N(253402300799+62135596800)-62135596800)
	}
	for _, u := range cases {
		want := `"` + time.Unix(u, 0).UTC().Format(time.RFC3339) + `"`
		if got := string(dataset.AppendTime(nil, u)); got != want {
			t.Fatalf("dataset.AppendTime(%d) = %s, want %s", u, got, want)
		}
	}
}

func TestBadRequests(t *testing.T) {
	_, base := start(t, Config{})
	cases := []struct {
		method, path string
		body         string
		status       int
		msg          string
	}{
		{"GET", "/nope", "", 404, "not found: /nope"},
		{"GET", "/v1/customers/", "", 404, "not found"},
		{"GET", "/v1/events?limit=abc", "", 400, "limit"},
		{"GET", "/v1/events?limit=0", "", 400, "limit"},
		{"GET", "/v1/events?since_id=x", "", 400, "since_id"},
		{"GET", "/v1/customers?updated_since=yesterday", "", 400, "updated_since"},
		{"GET", "/v1/customers?page=0", "", 400, "page"},
		{"GET", "/v1/orders?updated_since=2026-99-01", "", 400, "updated_since"},
		{"GET", "/v1/invoices?offset=-1", "", 400, "offset"},
		{"GET", "/v1/tickets?per_page=1.5", "", 400, "per_page"},
		{"GET", "/v1/bars?from=tomorrow", "", 400, "from"},
		{"GET", "/v1/bars?page_token=xyz", "", 400, "page_token"},
		{"GET", "/v1/orders/99999/items", "", 404, "order not found"},
		{"GET", "/v1/orders/abc/items", "", 404, "order not found"},
		{"POST", "/v1/customers", "", 405, "not allowed"},
		{"GET", "/graphql", "", 405, "not allowed"},
		{"POST", "/graphql", "{not json", 400, "Problems parsing JSON"},
	}
	for _, tc := range cases {
		a := do(t, tc.method, base+tc.path, []byte(tc.body), nil)
		if a.status != tc.status || !strings.Contains(string(a.raw), tc.msg) {
			t.Errorf("%s %s: %d %s, want %d with %q", tc.method, tc.path, a.status, a.raw, tc.status, tc.msg)
		}
		key := "error.message" // REST errors, and HTTP-level errors of /graphql
		if tc.status == 400 && tc.path == "/graphql" {
			key = "errors" // a GraphQL request error
		}
		if field(a.body, key) == nil {
			t.Errorf("%s %s: body %s lacks %s", tc.method, tc.path, a.raw, key)
		}
	}
	// The bars page_token belongs to its range.
	a := mustGet(t, base+"/v1/bars?from=2026-10-01&to=2026-10-02&limit=10")
	next, _ := url.Parse(field(a.body, "next").(string))
	q := next.Query()
	q.Set("to", "2026-10-03")
	if a := get(t, base+"/v1/bars?"+q.Encode()); a.status != 400 {
		t.Errorf("page_token reused with another range: %d", a.status)
	}
}

func TestGraphQLErrors(t *testing.T) {
	_, base := start(t, Config{})
	q := `query { repository { issues(first: $first) { edges { node { id } } } } }`
	cases := []struct {
		name string
		body any
		msg  string
	}{
		{"no query", map[string]any{}, "query"},
		{"empty query", map[string]any{"query": "  "}, "query"},
		{"not issues", map[string]any{"query": "{ viewer { login } }"}, "issues"},
		{"bad cursor", map[string]any{"query": q, "variables": map[string]any{"after": "Y3Vyc29yOnYyOg=="}}, "cursor"},
		{"cursor not a string", map[string]any{"query": q, "variables": map[string]any{"after": 5}}, "after"},
		{"bad first", map[string]any{"query": q, "variables": map[string]any{"first": -1}}, "first"},
		{"fractional first", map[string]any{"query": q, "variables": map[string]any{"first": 1.5}}, "first"},
		{"bad since", map[string]any{"query": q, "variables": map[string]any{"since": "soon"}}, "since"},
	}
	for _, tc := range cases {
		body, _ := json.Marshal(tc.body)
		a := do(t, "POST", base+"/graphql", body, nil)
		msg, _ := field(a.body, "errors").([]any)
		if a.status != 200 || len(msg) != 1 || !strings.Contains(string(a.raw), tc.msg) {
			t.Errorf("%s: %d %s", tc.name, a.status, a.raw)
		}
	}
	// first is clamped to 100; endCursor of an empty page is null.
	body, _ := json.Marshal(map[string]any{"query": q, "variables": map[string]any{"first": 5000}})
	a := do(t, "POST", base+"/graphql", body, nil)
	if n := len(field(a.body, "data.repository.issues.edges").([]any)); n != 100 {
		t.Errorf("first 5000 gave %d edges", n)
	}
	body, _ = json.Marshal(map[string]any{"query": q, "variables": map[string]any{"since": "2030-01-01T00:00:00Z"}})
	a = do(t, "POST", base+"/graphql", body, nil)
	if !strings.Contains(string(a.raw), `"pageInfo":{"hasNextPage":false,"endCursor":null}`) {
		t.Errorf("empty page: %s", a.raw)
	}
}
