package streams

import (
	"strings"
)

// PageLinkHeader follows the rel="next" link of the Link header.
const PageLinkHeader = "link_header"

// linkHeaderOptions: the type takes only the common options.
type linkHeaderOptions struct{}

func (*linkHeaderOptions) pageType() string { return PageLinkHeader }

// readsPage: the link is in a header; no record is read.
func (*linkHeaderOptions) readsPage(*Definition) PageReads { return PageReads{} }

func (*linkHeaderOptions) paginator(d *Definition) Paginator {
	return linkHeaderPaginator{name: d.Name}
}

func (*linkHeaderOptions) doc() PageDoc {
	return PageDoc{Next: "`Link: <…>; rel=\"next\"` (RFC 8288)", End: "no `rel=\"next\"`"}
}

// linkHeaderPaginator follows the rel="next" link of the response's Link
// header (RFC 8288), as GitHub and many others send it:
//
//	Link: <https://api.example.com/v1/items?page=3>; rel="next", <…?page=9>; rel="last"
//
// The link is resolved against the URL of the page it came from and must
// stay on the same scheme and host, exactly as for next_url. It stops when
// no link has rel "next".
type linkHeaderPaginator struct {
	name string
}

func (l linkHeaderPaginator) First(req Request) Request { return req }

func (l linkHeaderPaginator) Next(last Request, resp *Page) (Request, bool, error) {
	for _, link := range ParseLinkHeader(resp.Header.Values("Link")) {
		if !link.HasRel("next") {
			continue
		}
		next, err := followURL(l.name, last, resp, link.URL)
		if err != nil {
			return Request{}, false, err
		}
		return next, true, nil
	}
	return Request{}, false, nil
}

// Link is one link of a Link header (RFC 8288).
type Link struct {
	// URL is the target as written between < and >, not resolved.
	URL string
	// Rel holds the relation types, lower-cased: rel="next last" gives
	// ["next", "last"]. Only the first rel parameter of a link counts.
	Rel []string
	// Params holds the other target attributes by lower-cased name, with
	// quoted values unquoted ("title" → "a, b; c"). The first occurrence
	// of a name wins. Nil when the link has none.
	Params map[string]string
}

// HasRel reports whether l has the relation type rel (case-insensitive).
func (l Link) HasRel(rel string) bool {
	for _, r := range l.Rel {
		if strings.EqualFold(r, rel) {
			return true
		}
	}
	return false
}

// ParseLinkHeader parses the values of every Link header line of a
// response. A line may hold several comma-separated links; parameters may
// be tokens or quoted strings (in which commas and semicolons are
// literal), names are case-insensitive, whitespace is allowed around
// every separator. A malformed link is skipped up to the next comma that
// is not inside a quoted string; the parser never fails.
func ParseLinkHeader(values []string) []Link {
	var links []Link
	for _, v := range values {
		links = parseLinkValue(v, links)
	}
	return links
}

func parseLinkValue(s string, links []Link) []Link {
	i := 0
	for {
		i = skipSpaceAnd(s, i, ",")
		if i >= len(s) {
			return links
		}
		if s[i] != '<' {
			i = skipPastComma(s, i)
			continue
		}
		end := strings.IndexByte(s[i+1:], '>')
		if end < 0 {
			return links // "<" without ">": nothing after it can be a link
		}
		link := Link{URL: strings.TrimSpace(s[i+1 : i+1+end])}
		i += end + 2
		relSeen := false
		for {
			i = skipSpaceAnd(s, i, "")
			if i >= len(s) || s[i] == ',' {
				break
			}
			if s[i] != ';' {
				i = skipPastComma(s, i) // junk after the link: drop the rest of it
				break
			}
			i = skipSpaceAnd(s, i+1, "")
			start := i
			for i < len(s) && !strings.ContainsRune("=;, \t", rune(s[i])) {
				i++
			}
			name := strings.ToLower(s[start:i])
			i = skipSpaceAnd(s, i, "")
			value := ""
			if i < len(s) && s[i] == '=' {
				value, i = parseParamValue(s, skipSpaceAnd(s, i+1, ""))
			}
			switch {
			case name == "":
			case name == "rel":
				if !relSeen {
					relSeen = true
					for _, r := range strings.Fields(value) {
						link.Rel = append(link.Rel, strings.ToLower(r))
					}
				}
			default:
				if _, dup := link.Params[name]; !dup {
					if link.Params == nil {
						link.Params = map[string]string{}
					}
					link.Params[name] = value
				}
			}
		}
		links = append(links, link)
	}
}

// parseParamValue reads a quoted string (with backslash escapes) or a
// token starting at i, returning the value and the index after it.
func parseParamValue(s string, i int) (string, int) {
	if i < len(s) && s[i] == '"' {
		var b strings.Builder
		for i++; i < len(s); i++ {
			switch c := s[i]; c {
			case '\\':
				if i+1 < len(s) {
					i++
					b.WriteByte(s[i])
				}
			case '"':
				return b.String(), i + 1
			default:
				b.WriteByte(c)
			}
		}
		return b.String(), i // unterminated: take the rest
	}
	start := i
	for i < len(s) && !strings.ContainsRune(";, \t", rune(s[i])) {
		i++
	}
	return s[start:i], i
}

// skipSpaceAnd skips spaces, tabs and any byte of extra from i.
func skipSpaceAnd(s string, i int, extra string) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || strings.IndexByte(extra, s[i]) >= 0) {
		i++
	}
	return i
}

// skipPastComma returns the index after the next comma at or after i that
// is not inside a quoted string or <…>, or len(s).
func skipPastComma(s string, i int) int {
	inQuote, inURL := false, false
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case inQuote && c == '\\':
			i++
		case c == '"' && !inURL:
			inQuote = !inQuote
		case c == '<' && !inQuote:
			inURL = true
		case c == '>' && inURL:
			inURL = false
		case c == ',' && !inQuote && !inURL:
			return i + 1
		}
	}
	return len(s)
}
