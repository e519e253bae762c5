package initconfig

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/tap-dev/tap/streams"
)

// Parameter and property names by what they do, most common first.
var (
	sizeParams       = []string{"limit", "per_page", "page_size", "pageSize", "perPage", "size", "count", "max_results", "maxResults", "page[size]"}
	pageParams       = []string{"page", "page_number", "pageNumber", "page[number]", "p"}
	offsetParams     = []string{"offset", "skip", "start", "page[offset]"}
	cursorParams     = []string{"cursor", "page_token", "pageToken", "next_token", "nextToken", "continuation_token", "continuationToken", "page_cursor", "after", "page[after]", "page[cursor]"}
	lastRecordParams = []string{"starting_after"}
	nextCursorProps  = []string{"next_cursor", "next_page_token", "nextPageToken", "nextCursor", "next_token", "nextToken", "end_cursor", "endCursor", "cursor", "continuation_token", "after"}
	hasMoreProps     = []string{"has_more", "hasMore", "has_next", "hasNext", "has_next_page", "hasNextPage", "more"}
	nextURLProps     = []string{"next", "next_url", "nextUrl", "next_page_url", "nextPageUrl", "next_link", "nextLink", "@odata.nextLink", "href"}
	totalProps       = []string{"total", "total_count", "totalCount", "count", "total_results", "totalResults"}
	totalPagesProps  = []string{"total_pages", "totalPages", "page_count", "pageCount", "pages", "last_page", "lastPage"}
)

// defaultPageSize is the page size sent when the spec gives no maximum.
const defaultPageSize = 100

// envelopeProps lists the scalar properties of the body outside the
// records, two levels deep, by dotted path: name → JSON type.
func envelopeProps(body *shape, recordsPath string) map[string]*shape {
	out := map[string]*shape{}
	var walk func(prefix string, s *shape, depth int)
	walk = func(prefix string, s *shape, depth int) {
		for _, name := range sortedKeys(s.props) {
			path := prefix + name
			if path == recordsPath {
				continue
			}
			p := s.prop(name)
			if p.is("object") && depth < 2 {
				walk(path+".", p, depth+1)
				continue
			}
			out[path] = p
		}
	}
	walk("", body, 0)
	return out
}

// findProp is the envelope path whose last segment is the first of names
// (in their order) with a value of type typ.
func findProp(env map[string]*shape, names []string, typ string) string {
	for _, want := range names {
		var hits []string
		for path, s := range env {
			if lastSegment(path) == want && s.is(typ) {
				hits = append(hits, path)
			}
		}
		if len(hits) > 0 {
			slices.SortFunc(hits, shortestFirst)
			return hits[0]
		}
	}
	return ""
}

// shortestFirst orders paths by length, then by name: the same document
// always gives the same config.
func shortestFirst(a, b string) int { return cmp.Or(len(a)-len(b), strings.Compare(a, b)) }

func findParam(params map[string]*parameter, names []string) *parameter {
	for _, n := range names {
		if p := params[n]; p != nil {
			return p
		}
	}
	return nil
}

// pageSize is what to send as the size parameter: the documented maximum
// when it is below 100, else 100. sure is false when the spec gives no
// maximum, and a shorter page ends the walk.
func pageSize(p *parameter) (size int, sure bool) {
	if p == nil || p.Schema == nil {
		return defaultPageSize, false
	}
	if m := p.Schema.Value.Max; m != nil && *m >= 1 {
		if int(*m) < defaultPageSize {
			return int(*m), true
		}
		return defaultPageSize, true
	}
	return defaultPageSize, false
}

// pagination guesses the stream's pagination from its query parameters,
// the properties of its body around the records, and its documented
// headers.
func (g *generator) pagination(d *streams.Definition, body *shape, recordsPath string, params map[string]*parameter, headers []string) {
	env := envelopeProps(body, recordsPath)
	size := findParam(params, sizeParams)
	n, sure := pageSize(size)
	sizeName := ""
	if size != nil {
		sizeName = size.Name
	}
	note := func(format string, args ...any) { g.res.note("stream %s: "+format, append([]any{d.Name}, args...)...) }
	shortPage := func() {
		if size != nil && !sure {
			note("page size %d sent as %s (the spec gives no maximum): a shorter page ends the walk, so lower it if the API caps pages below that", n, sizeName)
		}
	}
	hasMore := findProp(env, hasMoreProps, "boolean")
	switch p := findParam(params, lastRecordParams); {
	case p != nil && hasMore != "":
		key := "id"
		if len(d.PrimaryKey) == 1 {
			key = d.PrimaryKey[0]
		}
		d.Pagination = streams.Pagination{Type: streams.PageCursor, Options: &streams.CursorOptions{
			CursorParam: p.Name, CursorFromLastRecord: key, HasMorePath: hasMore, PageSizeParam: sizeName, PageSize: sizeIf(size, n)}}
		note("pagination cursor guessed from %s/%s: the next page starts after the last record's %s", p.Name, hasMore, key)
		return
	}
	if p := findParam(params, cursorParams); p != nil {
		if next := findProp(env, nextCursorProps, "string"); next != "" {
			d.Pagination = streams.Pagination{Type: streams.PageCursor, Options: &streams.CursorOptions{
				CursorParam: p.Name, NextCursorPath: next, HasMorePath: hasMore, PageSizeParam: sizeName, PageSize: sizeIf(size, n)}}
			note("pagination cursor guessed from %s/%s", p.Name, next)
			return
		}
	}
	if hasLinkHeader(headers) {
		d.Pagination = streams.Pagination{Type: streams.PageLinkHeader}
		if size != nil {
			setParam(d, sizeName, n)
		}
		note("pagination link_header: the response documents a Link header")
		return
	}
	if next := findNextURL(env); next != "" {
		d.Pagination = streams.Pagination{Type: streams.PageNextURL, Options: &streams.NextURLOptions{NextURLPath: next}}
		if size != nil {
			setParam(d, sizeName, n)
		}
		note("pagination next_url guessed from the %s property", next)
		return
	}
	if p := findParam(params, pageParams); p != nil {
		o := &streams.PageNumberOptions{PageParam: p.Name, PageSizeParam: sizeName, PageSize: sizeIf(size, n),
			TotalPagesPath: findProp(env, totalPagesProps, "integer")}
		if p.Schema != nil && ((p.Schema.Value.Min != nil && *p.Schema.Value.Min == 0) || p.Schema.Value.Default == float64(0)) {
			zero := 0
			o.StartPage = &zero
		}
		d.Pagination = streams.Pagination{Type: streams.PageNumber, Options: o}
		note("pagination page_number guessed from the %s parameter", p.Name)
		shortPage()
		return
	}
	if p := findParam(params, offsetParams); p != nil && size != nil {
		d.Pagination = streams.Pagination{Type: streams.PageOffset, Options: &streams.OffsetOptions{
			OffsetParam: p.Name, PageSizeParam: sizeName, PageSize: n, TotalPath: findProp(env, totalProps, "integer")}}
		note("pagination offset guessed from the %s/%s parameters", p.Name, sizeName)
		shortPage()
		return
	}
	d.Pagination = streams.Pagination{Type: streams.PageNone}
	if size != nil {
		setParam(d, sizeName, n)
	}
	note("no pagination found: one request reads the stream")
}

func sizeIf(p *parameter, n int) int {
	if p == nil {
		return 0
	}
	return n
}

func setParam(d *streams.Definition, name string, n int) {
	if d.Params == nil {
		d.Params = map[string]string{}
	}
	d.Params[name] = strconv.Itoa(n)
}

func hasLinkHeader(h []string) bool {
	for _, name := range h {
		if strings.EqualFold(name, "link") {
			return true
		}
	}
	return false
}

// findNextURL is the envelope path of a next page's URL: a string named
// next (or links.next, _links.next.href, …).
func findNextURL(env map[string]*shape) string {
	for _, want := range nextURLProps {
		var hits []string
		for path, s := range env {
			if lastSegment(path) != want || !s.is("string") {
				continue
			}
			if want == "href" && !strings.Contains(path, "next") {
				continue
			}
			hits = append(hits, path)
		}
		if len(hits) > 0 {
			slices.SortFunc(hits, shortestFirst)
			return hits[0]
		}
	}
	return ""
}

// Time filters: a parameter that asks for the rows changed (or created)
// since a time, and the properties it filters on, most likely first.
var (
	timeFilter = lazyRegexp(`^(?i)(updated|modified|changed|created|last_modified|lastModified|updatedAt|modifiedAt|createdAt|updated_at|modified_at|created_at)?[_\[]?(since|after|from|gte|gt|min|start)\]?$`)
	byPrefix   = map[string][]string{
		"updated":  {"updated_at", "updated", "updatedAt", "modified_at", "last_modified"},
		"modified": {"modified_at", "modified", "modifiedAt", "last_modified", "updated_at"},
		"changed":  {"changed_at", "updated_at", "modified_at"},
		"created":  {"created_at", "created", "createdAt"},
		"":         {"updated_at", "updated", "updatedAt", "modified_at", "modified", "last_modified", "lastModified", "changed_at"},
	}
)

// incremental makes the stream incremental when a query parameter filters
// by a time property of its records.
func (g *generator) incremental(d *streams.Definition, rec *shape, params map[string]*parameter) {
	for _, name := range sortedKeys(params) {
		p := params[name]
		m := timeFilter().FindStringSubmatch(name)
		if m == nil {
			continue
		}
		said := describedTime(p)
		if m[1] == "" && !timeParam(p) && said == "" {
			continue // a bare "after" is a cursor unless it takes a time
		}
		if gte := strings.TrimSuffix(name, "[gt]") + "[gte]"; strings.HasSuffix(name, "[gt]") && params[gte] != nil {
			continue // created[gte] includes the bookmark's own instant
		}
		prefix := strings.ToLower(m[1])
		if prefix == "" && said != "time" {
			prefix = said // "only results updated after ...": what it filters on
		}
		for _, cut := range []string{"_at", "at"} {
			prefix = strings.TrimSuffix(prefix, cut)
		}
		if prefix == "last_modified" || prefix == "lastmodified" {
			prefix = "modified"
		}
		cands, ok := byPrefix[prefix]
		if !ok {
			continue
		}
		if m[1] != "" {
			cands = append([]string{m[1]}, cands...)
		}
		for _, prop := range cands {
			ps := rec.prop(prop)
			if ps == nil {
				continue
			}
			format := timeFormat(p, ps)
			if format == "" {
				continue
			}
			d.ReplicationKey = prop
			d.Incremental = &streams.Incremental{Param: name}
			if format != "rfc3339" {
				d.Incremental.Format = format
			}
			g.res.note("stream %s: replication key %s, filtered by the %s parameter (%s)", d.Name, prop, name, format)
			return
		}
	}
}

// describedTime is what p's description says it filters on: "created"
// or "updated" for a time of creation or of change ("only show results
// that were last updated after the given time"), "time" for a time
// alone ("an ISO 8601 timestamp"), "" for none. A parameter documented
// only in words, with no date-time format, is a time filter too.
func describedTime(p *parameter) string {
	desc := p.Description
	if p.Schema != nil {
		desc += " " + p.Schema.Value.Description
	}
	desc = strings.ToLower(desc)
	if !timeWords().MatchString(desc) {
		return ""
	}
	switch {
	case changeWords().MatchString(desc):
		return "updated"
	case createWords().MatchString(desc):
		return "created"
	}
	return "time"
}

var (
	timeWords   = lazyRegexp(`\b(time|date|timestamp|datetime|date-time|iso ?8601|rfc ?3339|epoch|unix)\b`)
	changeWords = lazyRegexp(`\b(updated|modified|changed|last update|last modified)\b`)
	createWords = lazyRegexp(`\b(created|creation)\b`)
)

// timeParam reports whether p takes a date-time or a date.
func timeParam(p *parameter) bool {
	if p.Schema == nil {
		return false
	}
	ps := flatten(p.Schema.Value)
	return ps.is("string") && (ps.format == "date-time" || ps.format == "date")
}

// timeFormat is how the filter parameter takes a time, given the
// property it filters on; "" when the property is no time.
func timeFormat(p *parameter, prop *shape) string {
	var ps *shape
	if p.Schema != nil {
		ps = flatten(p.Schema.Value)
	}
	switch {
	case prop.is("string") && prop.format == "date-time":
		if ps != nil && ps.is("string") && ps.format == "date" {
			return "date"
		}
		if ps != nil && ps.is("integer") && !ps.is("string") {
			return "unix"
		}
		return "rfc3339"
	case prop.is("string") && prop.format == "date":
		return "date"
	case prop.is("integer") && !prop.is("string"):
		if ps != nil && ps.is("string") && ps.format == "date-time" {
			return ""
		}
		return "unix"
	}
	return ""
}
