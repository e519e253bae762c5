package demoapi

import (
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/demoapi/dataset"
)

// One handler per REST endpoint. Each style of pagination the tap supports
// has its own endpoint, and each is written the way real APIs of that style
// behave (GitHub's Link header, Stripe's opaque cursor, keyset by id,
// offset/limit, page numbers, a next URL in the body).

// ---- parameters ----

// intParam reads an optional integer parameter that must be at least lo.
func intParam(q url.Values, name string, def, lo int64) (int64, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, badRequest("invalid %s: must be an integer, got %q", name, v)
	}
	if n < lo {
		return 0, badRequest("invalid %s: must be at least %d, got %d", name, lo, n)
	}
	return n, nil
}

// sizeParam reads a page size, clamped to MaxPageSize as APIs do silently.
func (s *Server) sizeParam(q url.Values, name string, def int64) (int64, error) {
	n, err := intParam(q, name, def, 1)
	return min(n, int64(s.cfg.MaxPageSize)), err
}

// sinceParam reads a lower time bound (rows with updated_at >= it) as the
// first whole second it admits, or dataset.NoSince.
func sinceParam(q url.Values, name string) (int64, error) {
	v := q.Get(name)
	if v == "" {
		return dataset.NoSince, nil
	}
	t, ok := parseTime(v)
	if !ok {
		return 0, badRequest("invalid %s: must be an RFC 3339 time such as 2026-01-02T15:04:05Z, got %q", name, v)
	}
	return ceilUnix(t), nil
}

// beforeParam reads an exclusive upper time bound, or dataset.NoBefore. On whole
// seconds, u < t is u < ceil(t).
func beforeParam(q url.Values, name string) (int64, error) {
	if q.Get(name) == "" {
		return dataset.NoBefore, nil
	}
	return sinceParam(q, name)
}

// checksum binds a token to the seed and to what it must not be mixed with.
func (s *Server) checksum(st uint64, p []byte) uint32 {
	x := s.g.Key(st) ^ 0x70c0
	for len(p) >= 8 {
		x = dataset.Mix(x ^ binary.LittleEndian.Uint64(p))
		p = p[8:]
	}
	for _, c := range p {
		x = dataset.Mix(x ^ uint64(c))
	}
	return uint32(x >> 32)
}

// ---- customers: Link header (GitHub style) ----

func (s *Server) customers(w http.ResponseWriter, r *http.Request, b []byte) ([]byte, error) {
	q := r.URL.Query()
	per, err := s.sizeParam(q, "per_page", 100)
	if err != nil {
		return nil, err
	}
	page, err := intParam(q, "page", 1, 1)
	if err != nil {
		return nil, err
	}
	since, err := sinceParam(q, "updated_since")
	if err != nil {
		return nil, err
	}
	before, err := beforeParam(q, "updated_before")
	if err != nil {
		return nil, err
	}
	v := s.g.View(dataset.Customers, since, before, s.now())
	total := v.Len()
	last := max(1, (total+per-1)/per)
	start := total
	if page <= last {
		start = (page - 1) * per
	}
	end := min(start+per, total)
	b = append(b, '[')
	for p := start; p < end; p++ {
		if p > start {
			b = append(b, ',')
		}
		b = s.g.AppendCustomer(b, v.At(p))
	}
	b = append(b, ']')

	// Absolute links that keep every other parameter of the request.
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	link := func(p int64, rel string) string {
		q.Set("page", strconv.FormatInt(p, 10))
		q.Set("per_page", strconv.FormatInt(per, 10))
		return "<" + scheme + "://" + r.Host + r.URL.Path + "?" + q.Encode() + `>; rel="` + rel + `"`
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"))
	}
	links = append(links, link(last, "last"))
	w.Header().Set("Link", strings.Join(links, ", "))
	return b, nil
}

// ---- orders: opaque cursor (Stripe style), newest first ----

// An orders cursor is std base64 of: version, position in the result set,
// the updated_since and updated_before filters (masked), and a checksum.
// The binary payload makes '+' and '/' common in tokens and its length
// (29 bytes) ends every token in '=', so a client that does not escape its
// query parameters fails loudly.
const orderTokenLen = 1 + 8 + 8 + 8 + 4

func (s *Server) orderToken(pos, since, before int64) string {
	var b [orderTokenLen]byte
	b[0] = 1
	binary.BigEndian.PutUint64(b[1:], uint64(pos))
	binary.BigEndian.PutUint64(b[9:], uint64(since))
	binary.BigEndian.PutUint64(b[17:], uint64(before))
	binary.BigEndian.PutUint32(b[25:], s.checksum(dataset.Orders, b[:25]))
	s.maskOrderToken(b[1:25])
	return base64.StdEncoding.EncodeToString(b[:])
}

// maskOrderToken XORs the fields of a token with a seed-derived key stream
// (its own inverse), so that tokens look opaque and a client cannot build
// one from a guess.
func (s *Server) maskOrderToken(p []byte) {
	for i := 0; i < len(p); i += 8 {
		k := dataset.Mix(s.g.Key(dataset.Orders) + uint64(i))
		for j := i; j < i+8 && j < len(p); j++ {
			p[j] ^= byte(k >> (8 * (j - i)))
		}
	}
}

func (s *Server) parseOrderToken(tok string) (pos, since, before int64, ok bool) {
	b, err := base64.StdEncoding.DecodeString(tok)
	if err != nil || len(b) != orderTokenLen || b[0] != 1 {
		return 0, 0, 0, false
	}
	s.maskOrderToken(b[1:25])
	if binary.BigEndian.Uint32(b[25:]) != s.checksum(dataset.Orders, b[:25]) {
		return 0, 0, 0, false
	}
	pos = int64(binary.BigEndian.Uint64(b[1:]))
	return pos, int64(binary.BigEndian.Uint64(b[9:])), int64(binary.BigEndian.Uint64(b[17:])), pos >= 0
}

func (s *Server) orders(_ http.ResponseWriter, r *http.Request, b []byte) ([]byte, error) {
	q := r.URL.Query()
	limit, err := s.sizeParam(q, "limit", 50)
	if err != nil {
		return nil, err
	}
	var pos, since, before int64
	if tok := q.Get("cursor"); tok != "" {
		// The token carries the filters of the first page; the request's
		// own filters are ignored, as the position only means something
		// in the result set the token was made for.
		var ok bool
		if pos, since, before, ok = s.parseOrderToken(tok); !ok {
			return nil, badRequest("invalid cursor: %q was not issued by this API", tok)
		}
	} else {
		if since, err = sinceParam(q, "updated_since"); err != nil {
			return nil, err
		}
		if before, err = beforeParam(q, "updated_before"); err != nil {
			return nil, err
		}
	}
	v := s.g.View(dataset.Orders, since, before, s.now())
	total := v.Len()
	start := min(pos, total)
	end := min(start+limit, total)
	b = append(b, `{"data":[`...)
	for p := start; p < end; p++ {
		if p > start {
			b = append(b, ',')
		}
		b = s.g.AppendOrder(b, v.At(total-1-p)) // descending
	}
	if end < total {
		b = append(b, `],"has_more":true,"next_cursor":"`...)
		b = append(b, s.orderToken(end, since, before)...)
		return append(b, `"}`...), nil
	}
	return append(b, `],"has_more":false,"next_cursor":""}`...), nil
}

// ---- order items: child stream, no pagination ----

func (s *Server) orderItems(_ http.ResponseWriter, r *http.Request, b []byte) ([]byte, error) {
	idText := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1/orders/"), "/items")
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil || id < 1 || id > s.g.Count(dataset.Orders) || !s.g.Visible(dataset.Orders, id-1, s.now()) {
		return nil, &apiError{status: http.StatusNotFound, msg: "order not found: " + idText}
	}
	i := id - 1
	b = append(b, `{"items":[`...)
	for k := int64(1); k <= s.g.ItemsCount(i); k++ {
		if k > 1 {
			b = append(b, ',')
		}
		b = s.g.AppendItem(b, i, k)
	}
	return append(b, `]}`...), nil
}

// ---- events: keyset by id, insert-only, growing ----

func (s *Server) events(_ http.ResponseWriter, r *http.Request, b []byte) ([]byte, error) {
	q := r.URL.Query()
	limit, err := s.sizeParam(q, "limit", 100)
	if err != nil {
		return nil, err
	}
	since, err := intParam(q, "since_id", 0, -1<<62)
	if err != nil {
		return nil, err
	}
	total := s.g.Count(dataset.Events) + s.eventsExtra.Load()
	start := min(max(since, 0), total) // id = index+1, so ids > since start at index since
	end := min(start+limit, total)
	b = append(b, `{"events":[`...)
	for i := start; i < end; i++ {
		if i > start {
			b = append(b, ',')
		}
		b = s.g.AppendEvent(b, i+1)
	}
	b = append(b, `]}`...)
	if n := s.cfg.EventsGrowth; n > 0 {
		s.eventsExtra.Add(int64(n))
	}
	return b, nil
}

// ---- invoices: offset/limit with a total, growing at the end ----

func (s *Server) invoices(_ http.ResponseWriter, r *http.Request, b []byte) ([]byte, error) {
	q := r.URL.Query()
	limit, err := s.sizeParam(q, "limit", 100)
	if err != nil {
		return nil, err
	}
	offset, err := intParam(q, "offset", 0, 0)
	if err != nil {
		return nil, err
	}
	total := s.g.Count(dataset.Invoices) + s.invoicesExtra.Load()
	start := min(offset, total)
	end := min(start+limit, total)
	b = append(b, `{"invoices":[`...)
	for i := start; i < end; i++ {
		if i > start {
			b = append(b, ',')
		}
		b = s.g.AppendInvoice(b, i)
	}
	b = append(b, `],"total":`...)
	b = dataset.AppendInt(b, total)
	b = append(b, '}')
	if n := s.cfg.InvoicesGrowth; n > 0 {
		s.invoicesExtra.Add(int64(n))
	}
	return b, nil
}

// ---- tickets: page number with total_pages ----

func (s *Server) tickets(_ http.ResponseWriter, r *http.Request, b []byte) ([]byte, error) {
	q := r.URL.Query()
	per, err := s.sizeParam(q, "per_page", 25)
	if err != nil {
		return nil, err
	}
	page, err := intParam(q, "page", 1, 1)
	if err != nil {
		return nil, err
	}
	total := s.g.Count(dataset.Tickets)
	pages := (total + per - 1) / per
	start := total
	if page <= pages {
		start = (page - 1) * per
	}
	end := min(start+per, total)
	b = append(b, `{"tickets":[`...)
	for i := start; i < end; i++ {
		if i > start {
			b = append(b, ',')
		}
		b = s.g.AppendTicket(b, i)
	}
	b = append(b, `],"page":`...)
	b = dataset.AppendInt(b, page)
	b = append(b, `,"per_page":`...)
	b = dataset.AppendInt(b, per)
	b = append(b, `,"total_pages":`...)
	b = dataset.AppendInt(b, pages)
	return append(b, '}'), nil
}

// ---- bars: date range + relative next URL in the body ----

func (s *Server) barToken(pos, from, to int64) string {
	var b [12]byte
	binary.BigEndian.PutUint64(b[:], uint64(pos))
	var bound [24]byte
	copy(bound[:], b[:8])
	binary.BigEndian.PutUint64(bound[8:], uint64(from))
	binary.BigEndian.PutUint64(bound[16:], uint64(to))
	binary.BigEndian.PutUint32(b[8:], s.checksum(dataset.Bars, bound[:]))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func (s *Server) bars(_ http.ResponseWriter, r *http.Request, b []byte) ([]byte, error) {
	q := r.URL.Query()
	limit, err := s.sizeParam(q, "limit", 500)
	if err != nil {
		return nil, err
	}
	g := s.g
	bound := func(name string, def int64) (string, int64, error) {
		v := q.Get(name)
		if v == "" {
			return dataset.FormatTime(def), g.BarIndex(def), nil
		}
		t, ok := parseTime(v)
		if !ok {
			return "", 0, badRequest("invalid %s: must be an RFC 3339 time or a date (YYYY-MM-DD), got %q", name, v)
		}
		return v, g.BarIndex(ceilUnix(t)), nil
	}
	fromText, from, err := bound("from", g.BarsStart())
	if err != nil {
		return nil, err
	}
	toText, to, err := bound("to", g.End())
	if err != nil {
		return nil, err
	}
	to = max(to, from)
	pos := from
	if tok := q.Get("page_token"); tok != "" {
		raw, err := base64.RawURLEncoding.DecodeString(tok)
		ok := err == nil && len(raw) == 12
		if ok {
			pos = int64(binary.BigEndian.Uint64(raw))
			ok = pos >= from && pos <= to && s.barToken(pos, from, to) == tok
		}
		if !ok {
			return nil, badRequest("invalid page_token: %q does not belong to this from/to range", tok)
		}
	}
	end := min(pos+limit, to)
	b = append(b, `{"bars":[`...)
	for j := pos; j < end; j++ {
		if j > pos {
			b = append(b, ',')
		}
		b = g.AppendBar(b, j)
	}
	b = append(b, `],"next":`...)
	if end >= to {
		return append(b, "null}"...), nil
	}
	next := "/v1/bars?from=" + url.QueryEscape(fromText) + "&to=" + url.QueryEscape(toText) +
		"&limit=" + strconv.FormatInt(limit, 10) + "&page_token=" + s.barToken(end, from, to)
	keys := make([]string, 0, len(q))
	for k := range q {
		switch k {
		case "from", "to", "limit", "page_token":
		default:
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys { // keep e.g. api_key
		for _, v := range q[k] {
			next += "&" + url.QueryEscape(k) + "=" + url.QueryEscape(v)
		}
	}
	b = codec.AppendString(b, next)
	return append(b, '}'), nil
}
