package interp

import (
	"net/http"
	"regexp"
	"strings"
)

// ResponseHeaders is the headers variable as the CDK's paginators pass
// it: dict(response.headers), with "link" replaced by requests'
// response.links, the Link header parsed into {rel: {"url": ..., "rel":
// ...}} ({{ headers['link']['next']['url'] }}). Repeated headers are
// joined with ", " as urllib3 joins them.
//
// Python keeps each name as the server wrote it; Go's client has made it
// canonical (X-Ratelimit-Remaining), so each name is here both in that
// form and in lower case, the form HTTP/2 servers send.
func ResponseHeaders(h http.Header) map[string]any {
	out := make(map[string]any, 2*len(h)+1)
	for k, vs := range h {
		v := strings.Join(vs, ", ")
		out[k] = v
		out[strings.ToLower(k)] = v
	}
	links := map[string]any{}
	if raw := strings.Join(h.Values("Link"), ", "); raw != "" {
		for _, l := range parseLinks(raw) {
			key, _ := l["rel"].(string)
			if key == "" {
				key, _ = l["url"].(string)
			}
			links[key] = l
		}
	}
	out["link"] = links
	return out
}

var linkSplit = regexp.MustCompile(`, *<`)

// parseLinks is requests.utils.parse_header_links.
func parseLinks(value string) []map[string]any {
	const quotes = " '\""
	value = strings.Trim(value, quotes)
	if value == "" {
		return nil
	}
	var links []map[string]any
	for _, val := range linkSplit.Split(value, -1) {
		url, params, _ := strings.Cut(val, ";")
		link := map[string]any{"url": strings.Trim(url, "<> '\"")}
		for _, param := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(param, "=")
			if !ok || strings.Contains(v, "=") {
				break // Python's unpacking fails on no "=" or on two
			}
			link[strings.Trim(k, quotes)] = strings.Trim(v, quotes)
		}
		links = append(links, link)
	}
	return links
}
