// Package dataset generates the demo API's records: every row of every
// stream is a pure function of the seed and its index.
package dataset

import (
	"math"
	"math/bits"
	"sort"
)

// Streams, as the salt that keeps their hashes apart.
const (
	Customers uint64 = iota + 1
	Orders
	Items
	Events
	Invoices
	Tickets
	Bars
	Issues
	numStreams
)

// Salts: one per independent property of a record.
const (
	saltTime uint64 = iota + 1
	saltLate
	saltLag
	saltA
	saltB
	saltC
	saltNoise // + octave
)

// Gen generates records. Every method is a pure function of the resolved
// config and a row index (0-based; ids are index+1), so any row of any
// stream can be produced alone, in any order, by concurrent requests,
// without storing the data set.
type Gen struct {
	skey      [numStreams]uint64 // per-stream hash keys derived from the seed
	end, span int64              // DataEnd (Unix s) and SpanDays in seconds
	counts    [numStreams]int64  // base row counts by stream
	barsStart int64
	lateRate  float64
	drift     int64
}

// Params is what a data set is generated from: the demo config, resolved.
type Params struct {
	Seed      int64
	End, Span int64 // DataEnd (Unix s) and SpanDays in seconds
	LateRate  float64
	Drift     int
	BarsDays  int
	// Base row counts.
	Customers, Orders, Events, Invoices, Tickets, Issues int
}

// New returns the generator of the data set p describes.
func New(p Params) *Gen {
	g := &Gen{end: p.End, span: p.Span, lateRate: p.LateRate, drift: int64(p.Drift)}
	for st := range g.skey {
		g.skey[st] = Mix(uint64(p.Seed)*0x9e3779b97f4a7c15 + uint64(st)*0xd6e8feb86659fd93)
	}
	g.counts[Customers] = int64(p.Customers)
	g.counts[Orders] = int64(p.Orders)
	g.counts[Events] = int64(p.Events)
	g.counts[Invoices] = int64(p.Invoices)
	g.counts[Tickets] = int64(p.Tickets)
	g.counts[Issues] = int64(p.Issues)
	g.counts[Bars] = int64(p.BarsDays) * 86400 / barSeconds
	g.barsStart = p.End - int64(p.BarsDays)*86400
	return g
}

// Mix is the splitmix64 finalizer: a cheap bijection whose output bits all
// depend on all input bits.
func Mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// h is the hash of one property (salt) of row i of a stream.
func (g *Gen) h(st uint64, i int64, salt uint64) uint64 {
	return Mix(Mix(uint64(i)^g.skey[st]) + salt*0x9e3779b97f4a7c15)
}

// frac maps a hash to [0, 1).
func frac(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// pick chooses an element of list with a hash.
func pick(list []string, h uint64) string { return list[h%uint64(len(list))] }

// mulDiv is a*b/c without overflowing in the product (a, b, c >= 0, a*b/c
// fits in an int64).
func mulDiv(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	q, _ := bits.Div64(hi, lo, uint64(c))
	return int64(q)
}

// spread is the timestamp of row i of n spread over [end-span, end): row i
// owns the slot [start + i*span/n, start + (i+1)*span/n) and lies at a hashed
// second within it. Timestamps therefore never decrease with the index, and
// they are unique whenever slots are at least a second wide, so ordering by
// (updated_at, id) is ordering by index — which is what lets every filter
// below be a binary search.
func (g *Gen) spread(st uint64, i, n int64) int64 {
	b0 := mulDiv(i, g.span, n)
	t := g.end - g.span + b0
	if w := mulDiv(i+1, g.span, n) - b0; w > 0 {
		t += int64(g.h(st, i, saltTime) % uint64(w))
	}
	return t
}

// UpdatedAt is the replication key of row i of customers, orders, tickets or
// issues.
func (g *Gen) UpdatedAt(st uint64, i int64) int64 { return g.spread(st, i, g.counts[st]) }

// Lag is how many seconds after its updated_at row i commits: 0 for the
// usual row, [minLag, maxLag] for the LateRate fraction that commit late.
func (g *Gen) Lag(st uint64, i int64) int64 {
	if g.lateRate <= 0 || frac(g.h(st, i, saltLate)) >= g.lateRate {
		return 0
	}
	return minLag + int64(g.h(st, i, saltLag)%(maxLag-minLag+1))
}

// Visible applies the visibility rule to row i of customers, orders or issues.
func (g *Gen) Visible(st uint64, i, now int64) bool {
	u := g.UpdatedAt(st, i)
	return u <= now && u+g.Lag(st, i) <= now
}

// Bounds of the optional time filters.
const (
	NoSince  = math.MinInt64
	NoBefore = math.MaxInt64
)

// View is the result set of a filtered, visibility-checked stream in index
// order: rows [lo, mid) are all visible, and tail lists the visible rows of
// [mid, hi). Only rows updated within maxLag of now can still be waiting to
// commit, so tail is short and a page costs O(log n + page), whatever n is.
type View struct {
	lo, mid int64
	tail    []int64
}

// View selects the rows of st with since <= updated_at < before that are
// visible at now.
func (g *Gen) View(st uint64, since, before, now int64) View {
	n := g.counts[st]
	search := func(pred func(u int64) bool) int64 {
		return int64(sort.Search(int(n), func(i int) bool { return pred(g.UpdatedAt(st, int64(i))) }))
	}
	lo := search(func(u int64) bool { return u >= since })
	hi := search(func(u int64) bool { return u > now })
	if before != NoBefore {
		hi = min(hi, search(func(u int64) bool { return u >= before }))
	}
	mid := search(func(u int64) bool { return u > now-maxLag })
	mid = max(lo, min(mid, hi))
	hi = max(hi, mid)
	v := View{lo: lo, mid: mid}
	for i := mid; i < hi; i++ {
		if g.Visible(st, i, now) {
			v.tail = append(v.tail, i)
		}
	}
	return v
}

func (v *View) Len() int64 { return v.mid - v.lo + int64(len(v.tail)) }

// At is the index of the row at position p (0 <= p < len).
func (v *View) At(p int64) int64 {
	if p < v.mid-v.lo {
		return v.lo + p
	}
	return v.tail[p-(v.mid-v.lo)]
}

// Rank is the number of rows of the view whose index is below idx, i.e. the
// position of the first row at or after idx.
func (v *View) Rank(idx int64) int64 {
	switch {
	case idx <= v.lo:
		return 0
	case idx <= v.mid:
		return idx - v.lo
	}
	k := sort.Search(len(v.tail), func(j int) bool { return v.tail[j] >= idx })
	return v.mid - v.lo + int64(k)
}

// ---- customers ----

var (
	firstNames = []string{"Ada", "Alan", "Grace", "Linus", "Margaret", "Dennis", "Barbara", "Ken", "Frances", "Edsger", "Radia", "Donald", "Katherine", "Tim", "Hedy", "John", "Sophie", "Niklaus", "Joan", "Guido"}
	lastNames  = []string{"Lovelace", "Turing", "Hopper", "Torvalds", "Hamilton", "Ritchie", "Liskov", "Thompson", "Allen", "Dijkstra", "Perlman", "Knuth", "Johnson", "Berners", "Lamarr", "Backus", "Wilson", "Wirth", "Clarke", "Rossum"}
	countries  = []string{"US", "DE", "FR", "GB", "NL", "SE", "JP", "BR", "CA", "IN", "AU", "ES"}
	cities     = []string{"Springfield", "Riverside", "Fairview", "Kingston", "Greenville", "Bristol", "Clinton", "Salem", "Madison", "Georgetown"}
	streets    = []string{"Main St", "Oak Ave", "Pine Rd", "Maple Dr", "Cedar Ln", "Elm St", "Lake Rd", "Hill St", "Park Ave", "Mill Rd"}
	tagNames   = []string{"vip", "newsletter", "beta", "enterprise", "churn-risk", "partner", "trial", "edu"}
)

func appendLower(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

func (g *Gen) AppendCustomer(b []byte, i int64) []byte {
	ha, hb := g.h(Customers, i, saltA), g.h(Customers, i, saltB)
	id := i + 1
	first, last := pick(firstNames, ha), pick(lastNames, ha>>8)
	updated := g.UpdatedAt(Customers, i)
	b = append(b, `{"id":`...)
	b = AppendInt(b, id)
	b = append(b, `,"name":"`...)
	b = append(b, first...)
	b = append(b, ' ')
	b = append(b, last...)
	b = append(b, `","email":"`...)
	b = appendLower(b, first)
	b = append(b, '.')
	b = appendLower(b, last)
	b = AppendInt(b, id)
	b = append(b, `@example.com","country":"`...)
	b = append(b, pick(countries, ha>>16)...)
	// Above 2^53: a float64 cannot hold it, so a tap that decodes numbers
	// into float64 corrupts it, and the tests notice.
	b = append(b, `","account_number":`...)
	b = AppendInt(b, 9007199254740993+2*i)
	b = append(b, `,"lifetime_value":`...)
	b = appendCents(b, int64((ha>>24)%5_000_000))
	b = append(b, `,"tags":[`...)
	ntags, off := hb%4, (hb>>2)%uint64(len(tagNames))
	for k := uint64(0); k < ntags; k++ {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, tagNames[(off+k)%uint64(len(tagNames))]...)
		b = append(b, '"')
	}
	b = append(b, `],"address":`...)
	if (hb>>8)%10 == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"street":"`...)
		b = AppendInt(b, int64(1+(hb>>12)%999))
		b = append(b, ' ')
		b = append(b, pick(streets, hb>>24)...)
		b = append(b, `","city":"`...)
		b = append(b, pick(cities, hb>>32)...)
		b = append(b, `","zip":"`...)
		b = appendPadded(b, int64((hb>>40)%100000), 5)
		b = append(b, `"}`...)
	}
	b = append(b, `,"created_at":`...)
	b = AppendTime(b, updated-int64(g.h(Customers, i, saltC)%(400*86400)))
	b = append(b, `,"updated_at":`...)
	b = AppendTime(b, updated)
	return append(b, '}')
}

// ---- orders and their items ----

var (
	orderStatuses = []string{"pending", "paid", "paid", "shipped", "delivered", "delivered", "refunded", "cancelled"}
	currencies    = []string{"USD", "USD", "EUR", "GBP"}
)

// orderItem is item k (1-based) of order i.
type orderItem struct {
	sku       int64
	quantity  int64
	unitCents int64
}

func (g *Gen) ItemsCount(i int64) int64 { return 1 + int64(g.h(Orders, i, saltB)%4) }

func (g *Gen) item(i, k int64) orderItem {
	h := g.h(Items, i, uint64(k))
	return orderItem{sku: int64(h % 100000), quantity: 1 + int64((h>>20)%5), unitCents: 199 + int64((h>>32)%19800)}
}

// isDrift spreads exactly Drift drifted orders evenly through the set:
// row i is drifted when floor((i+1)·D/N) steps past floor(i·D/N).
func (g *Gen) isDrift(i int64) bool {
	n := g.counts[Orders]
	return g.drift > 0 && mulDiv(i+1, g.drift, n) > mulDiv(i, g.drift, n)
}

func (g *Gen) AppendOrder(b []byte, i int64) []byte {
	ha := g.h(Orders, i, saltA)
	cnt := g.ItemsCount(i)
	var amount int64
	for k := int64(1); k <= cnt; k++ {
		it := g.item(i, k)
		amount += it.quantity * it.unitCents
	}
	updated := g.UpdatedAt(Orders, i)
	drift := g.isDrift(i)
	b = append(b, `{"id":`...)
	b = AppendInt(b, i+1)
	b = append(b, `,"customer_id":`...)
	b = AppendInt(b, 1+int64(ha%uint64(g.counts[Customers])))
	b = append(b, `,"status":"`...)
	b = append(b, pick(orderStatuses, ha>>32)...)
	b = append(b, `","amount":`...)
	if drift {
		b = append(b, '"')
		b = appendCents(b, amount)
		b = append(b, '"')
	} else {
		b = appendCents(b, amount)
	}
	b = append(b, `,"currency":"`...)
	b = append(b, pick(currencies, ha>>40)...)
	b = append(b, `","items_count":`...)
	b = AppendInt(b, cnt)
	b = append(b, `,"created_at":`...)
	b = AppendTime(b, updated-int64(g.h(Orders, i, saltC)%(30*86400)))
	b = append(b, `,"updated_at":`...)
	b = AppendTime(b, updated)
	if drift {
		b = append(b, `,"coupon_code":"SAVE10"`...)
	}
	return append(b, '}')
}

// AppendItem appends item k of order i; the order id is only part of the
// item's own id, as in APIs whose children do not repeat their parent.
func (g *Gen) AppendItem(b []byte, i, k int64) []byte {
	it := g.item(i, k)
	b = append(b, `{"id":"`...)
	b = AppendInt(b, i+1)
	b = append(b, '-')
	b = AppendInt(b, k)
	b = append(b, `","sku":"SKU-`...)
	b = appendPadded(b, it.sku, 5)
	b = append(b, `","quantity":`...)
	b = AppendInt(b, it.quantity)
	b = append(b, `,"unit_price":`...)
	b = appendCents(b, it.unitCents)
	return append(b, '}')
}

// ---- events ----

var (
	eventTypes  = []string{"page_view", "page_view", "page_view", "click", "click", "search", "login", "logout", "signup", "purchase", "api_call", "api_call"}
	sources     = []string{"web", "web", "ios", "android", "api"}
	userAgents  = []string{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36", "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15", "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0", "DemoApp/4.2.1 (iPhone; iOS 17.5; Scale/3.00)", "DemoApp/4.2.0 (Linux; Android 14; Pixel 8)", "demo-sdk-python/2.7.0 python/3.12.4"}
	appSections = []string{"projects", "reports", "settings", "billing", "dashboards", "teams"}
	appPages    = []string{"overview", "edit", "members", "history", "export", "activity"}
)

// eventTime: ids 1..N are spread over the 30 days before DataEnd, growth
// events follow DataEnd one second apart, so occurred_at never decreases
// with the id.
func (g *Gen) eventTime(id int64) int64 {
	n := g.counts[Events]
	if id <= n {
		return g.end - eventsSpan + mulDiv(id-1, eventsSpan, n)
	}
	return g.end + id - n
}

func (g *Gen) AppendEvent(b []byte, id int64) []byte {
	ha, hb := g.h(Events, id, saltA), g.h(Events, id, saltB)
	b = append(b, `{"id":`...)
	b = AppendInt(b, id)
	b = append(b, `,"type":"`...)
	b = append(b, pick(eventTypes, ha)...)
	b = append(b, `","actor_id":`...)
	b = AppendInt(b, 1+int64((ha>>8)%uint64(g.counts[Customers])))
	b = append(b, `,"occurred_at":`...)
	b = AppendTime(b, g.eventTime(id))
	b = append(b, `,"source":"`...)
	b = append(b, pick(sources, ha>>24)...)
	b = append(b, `","ip":"`...)
	b = AppendInt(b, int64(10+(hb>>56)%200))
	b = append(b, '.')
	b = AppendInt(b, int64((hb>>48)&0xff))
	b = append(b, '.')
	b = AppendInt(b, int64((hb>>40)&0xff))
	b = append(b, '.')
	b = AppendInt(b, int64(1+(hb>>32)%254))
	b = append(b, `","user_agent":"`...)
	b = append(b, pick(userAgents, ha>>28)...)
	b = append(b, `","payload":{"path":"/app/`...)
	b = append(b, pick(appSections, ha>>32)...)
	b = append(b, '/')
	b = AppendInt(b, int64(1+(ha>>36)%5000))
	b = append(b, '/')
	b = append(b, pick(appPages, ha>>50)...)
	b = append(b, `","duration_ms":`...)
	b = AppendInt(b, int64(hb%2000))
	b = append(b, `,"bytes":`...)
	b = AppendInt(b, int64(200+(hb>>12)%500000))
	if (hb>>31)%20 == 0 {
		b = append(b, `,"ok":false}}`...)
	} else {
		b = append(b, `,"ok":true}}`...)
	}
	return b
}

// ---- invoices ----

var invoiceStatuses = []string{"paid", "paid", "paid", "open", "draft", "void", "uncollectible"}

// invoiceTime: base invoices are spread over the span, growth invoices follow
// DataEnd one second apart.
func (g *Gen) invoiceTime(i int64) int64 {
	n := g.counts[Invoices]
	if i < n {
		return g.spread(Invoices, i, n)
	}
	return g.end + i - n
}

func (g *Gen) AppendInvoice(b []byte, i int64) []byte {
	ha := g.h(Invoices, i, saltA)
	b = append(b, `{"id":`...)
	b = AppendInt(b, i+1)
	b = append(b, `,"customer_id":`...)
	b = AppendInt(b, 1+int64(ha%uint64(g.counts[Customers])))
	b = append(b, `,"number":"INV-`...)
	b = appendPadded(b, i+1, 6)
	b = append(b, `","total":`...)
	b = appendCents(b, 500+int64((ha>>24)%1_000_000))
	b = append(b, `,"status":"`...)
	b = append(b, pick(invoiceStatuses, ha>>48)...)
	b = append(b, `","issued_at":`...)
	b = AppendTime(b, g.invoiceTime(i))
	return append(b, '}')
}

// ---- tickets ----

var (
	ticketSubjects   = []string{"Cannot log in", "Refund request", "Invoice shows the wrong amount", "Export to CSV fails", "How do I add a team member?", "Password reset email never arrives", "API returns 500 on large pages", "Feature request: dark mode", "Billing address change", "Slow dashboard"}
	ticketPriorities = []string{"low", "normal", "normal", "high", "urgent"}
	ticketStatuses   = []string{"new", "open", "pending", "solved", "solved", "closed"}
)

func (g *Gen) AppendTicket(b []byte, i int64) []byte {
	ha := g.h(Tickets, i, saltA)
	updated := g.UpdatedAt(Tickets, i)
	b = append(b, `{"id":`...)
	b = AppendInt(b, i+1)
	b = append(b, `,"subject":"`...)
	b = append(b, pick(ticketSubjects, ha)...)
	b = append(b, `","priority":"`...)
	b = append(b, pick(ticketPriorities, ha>>8)...)
	b = append(b, `","status":"`...)
	b = append(b, pick(ticketStatuses, ha>>16)...)
	b = append(b, `","requester_id":`...)
	b = AppendInt(b, 1+int64((ha>>24)%uint64(g.counts[Customers])))
	b = append(b, `,"created_at":`...)
	b = AppendTime(b, updated-int64(g.h(Tickets, i, saltB)%(14*86400)))
	b = append(b, `,"updated_at":`...)
	b = AppendTime(b, updated)
	return append(b, '}')
}

// ---- issues (GraphQL) ----

var (
	issueVerbs   = []string{"Crash when", "Slow response when", "Wrong total after", "Typo in docs about", "Add support for", "Timeout while", "Flaky test for", "Improve error message when"}
	issueObjects = []string{"exporting reports", "syncing invoices", "paginating orders", "refreshing tokens", "loading the dashboard", "uploading files", "renaming a project", "switching locales"}
	issueAuthors = []string{"octocat", "hubot", "monalisa", "defunkt", "mojombo", "pjhyett", "wycats", "ezmobius"}
	issueLabels  = []string{"bug", "enhancement", "documentation", "good first issue", "question", "performance"}
)

func (g *Gen) AppendIssueID(b []byte, i int64) []byte {
	b = append(b, `"I_kwDODEMO`...)
	b = appendPadded(b, i+1, 6)
	return append(b, '"')
}

func (g *Gen) AppendIssue(b []byte, i int64) []byte {
	ha, hb := g.h(Issues, i, saltA), g.h(Issues, i, saltB)
	updated := g.UpdatedAt(Issues, i)
	b = append(b, `{"id":`...)
	b = g.AppendIssueID(b, i)
	b = append(b, `,"number":`...)
	b = AppendInt(b, i+1)
	b = append(b, `,"title":"`...)
	b = append(b, pick(issueVerbs, ha)...)
	b = append(b, ' ')
	b = append(b, pick(issueObjects, ha>>8)...)
	b = append(b, `","state":"`...)
	if (ha>>16)%10 < 3 {
		b = append(b, "CLOSED"...)
	} else {
		b = append(b, "OPEN"...)
	}
	b = append(b, `","author":"`...)
	b = append(b, pick(issueAuthors, ha>>24)...)
	b = append(b, `","labels":[`...)
	n, off := hb%3, (hb>>2)%uint64(len(issueLabels))
	for k := uint64(0); k < n; k++ {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, issueLabels[(off+k)%uint64(len(issueLabels))]...)
		b = append(b, '"')
	}
	b = append(b, `],"created_at":`...)
	b = AppendTime(b, updated-int64(g.h(Issues, i, saltC)%(180*86400)))
	b = append(b, `,"updated_at":`...)
	b = AppendTime(b, updated)
	return append(b, '}')
}

// ---- bars ----

// Prices follow a fractal random walk: the log price at bar x is a sum of
// octaves k of hashed noise, linearly interpolated between lattice points
// 2^k bars apart, with amplitudes growing as sqrt(2^k). That has the
// variance structure of a random walk (moves grow as the square root of the
// horizon) while any bar is computable from its index alone in 21 steps,
// instead of summing every step before it.
const (
	barOctaves = 21
	barStep    = 0.0006 // amplitude of the finest octave, in log price
	barBase    = 100.0
)

func (g *Gen) logPrice(x int64) float64 {
	var sum float64
	amp := barStep
	for k := 0; k < barOctaves; k++ {
		m := x >> k
		f := float64(x&(int64(1)<<k-1)) / float64(int64(1)<<k)
		v0 := 2*frac(g.h(Bars, m, saltNoise+uint64(k))) - 1
		v1 := 2*frac(g.h(Bars, m+1, saltNoise+uint64(k))) - 1
		sum += amp * (v0 + (v1-v0)*f)
		amp *= math.Sqrt2
	}
	return sum
}

// price4 is the price at the start of bar x in ten-thousandths.
func (g *Gen) price4(x int64) int64 {
	return int64(math.Round(barBase * math.Exp(g.logPrice(x)) * 10000))
}

func (g *Gen) barTime(j int64) int64 { return g.barsStart + j*barSeconds }

func (g *Gen) AppendBar(b []byte, j int64) []byte {
	open, cls := g.price4(j), g.price4(j+1)
	ha := g.h(Bars, j, saltA)
	hi := max(open, cls)
	hi += int64(float64(hi) * 0.001 * frac(ha))
	lo := min(open, cls)
	lo -= int64(float64(lo) * 0.001 * frac(g.h(Bars, j, saltB)))
	b = append(b, `{"symbol":"DEMO","t":`...)
	b = AppendTime(b, g.barTime(j))
	b = append(b, `,"open":`...)
	b = appendFixed4(b, open)
	b = append(b, `,"high":`...)
	b = appendFixed4(b, hi)
	b = append(b, `,"low":`...)
	b = appendFixed4(b, lo)
	b = append(b, `,"close":`...)
	b = appendFixed4(b, cls)
	b = append(b, `,"volume":`...)
	b = AppendInt(b, 100+int64((ha>>20)%50000))
	return append(b, '}')
}

// ---- invoices as csv and xml rows (the report endpoints) ----

// invoiceFields are the fields of invoice i as text, in CSV column order.
func (g *Gen) invoiceFields(b []byte, i int64, sep func(b []byte, k int) []byte) []byte {
	ha := g.h(Invoices, i, saltA)
	b = sep(b, 0)
	b = AppendInt(b, i+1)
	b = sep(b, 1)
	b = AppendInt(b, 1+int64(ha%uint64(max(g.counts[Customers], 1))))
	b = sep(b, 2)
	b = append(b, "INV-"...)
	b = appendPadded(b, i+1, 6)
	b = sep(b, 3)
	b = appendCents(b, 500+int64((ha>>24)%1_000_000))
	b = sep(b, 4)
	b = append(b, pick(invoiceStatuses, ha>>48)...)
	b = sep(b, 5)
	b = append(b, FormatTime(g.invoiceTime(i))...)
	return sep(b, 6)
}

func (g *Gen) AppendInvoiceCSV(b []byte, i int64) []byte {
	return g.invoiceFields(b, i, func(b []byte, k int) []byte {
		switch k {
		case 0:
			return b
		case 6:
			return append(b, '\n')
		}
		return append(b, ',')
	})
}

var xmlTags = []string{"id", "customer_id", "number", "total", "status", "issued_at"}

func (g *Gen) AppendInvoiceXML(b []byte, i int64) []byte {
	return g.invoiceFields(b, i, func(b []byte, k int) []byte {
		if k > 0 {
			b = append(append(append(b, "</"...), xmlTags[k-1]...), '>')
		} else {
			b = append(b, "  <invoice>"...)
		}
		if k < len(xmlTags) {
			return append(append(append(b, '<'), xmlTags[k]...), '>')
		}
		return append(b, "</invoice>\n"...)
	})
}

func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a > 0) == (b > 0) {
		q++
	}
	return q
}

// BarIndex is the index of the first bar at or after Unix second t,
// clamped to [0, count].
func (g *Gen) BarIndex(t int64) int64 {
	return min(max(ceilDiv(t-g.barsStart, barSeconds), 0), g.counts[Bars])
}

// Row timing.
const (
	// Late rows commit between minLag and maxLag seconds after their
	// updated_at.
	minLag = 30
	maxLag = 240
	// eventsSpan is how far back from DataEnd the base events reach.
	eventsSpan = 30 * 86400
	// barSeconds is the width of one bar.
	barSeconds = 300
)

// Count is the number of base rows of stream st.
func (g *Gen) Count(st uint64) int64 { return g.counts[st] }

// Key is stream st's hash key, derived from the seed.
func (g *Gen) Key(st uint64) uint64 { return g.skey[st] }

// BarsStart is the Unix time of the first bar.
func (g *Gen) BarsStart() int64 { return g.barsStart }

// End is DataEnd in Unix seconds.
func (g *Gen) End() int64 { return g.end }
