package initconfig

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/records/infer"
	"github.com/tap-dev/tap/streams"
)

// probeLimit bounds the body a probe reads.
const probeLimit = 32 << 20

// Probe requests rawURL once (with authHeader, "Name: value", when set)
// and generates a one-stream config from the answer. The header's value
// and any secret-looking query parameter of the URL are written as
// {"env": …} references, never as themselves.
func Probe(ctx context.Context, rawURL, authHeader string) (*Result, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, inputErr("--probe: expected an http(s) URL such as https://api.example.com/v1/orders")
	}
	if u.User != nil {
		return nil, inputErr("--probe: the URL must not hold credentials; pass them with --auth-header")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, inputErr("--probe: %v", err)
	}
	req.Header.Set("Accept", "application/json")
	var hname string
	if authHeader != "" {
		name, value, ok := strings.Cut(authHeader, ":")
		hname = strings.TrimSpace(name)
		if !ok || hname == "" || strings.TrimSpace(value) == "" {
			return nil, inputErr(`--auth-header: expected "Name: value", such as "Authorization: Bearer …"`)
		}
		req.Header.Set(hname, strings.TrimSpace(value))
	}
	where := u.Scheme + "://" + u.Host + u.EscapedPath()
	hc := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(next *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		// As the run's client: no credential off the origin. Go drops
		// only Authorization and Cookie on a redirect to another host;
		// an X-Api-Key would follow.
		if hname != "" && !sameOrigin(next.URL, via[0].URL) {
			next.Header.Del(hname)
		}
		return nil
	}}
	resp, err := hc.Do(req)
	if err != nil {
		// The error names the URL with its query, which may hold a key.
		return nil, inputErr("--probe: %s is unreachable: %v", where, netReason(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, probeLimit))
	if err != nil {
		return nil, inputErr("--probe: reading the answer of %s: %v", where, netReason(err))
	}
	if resp.StatusCode/100 != 2 {
		return nil, inputErr("--probe: %s answered %s, expected a 2xx list of records", where, resp.Status)
	}
	return fromResponse(u, resp.Header, body, req.Header.Get(hname), hname)
}

// sameOrigin reports whether a and b have one scheme, host and port
// (a port left out is the scheme's own).
func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if u.Scheme == "https" {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// netReason is an error's last part ("connection refused"), without the
// URL a *url.Error repeats.
func netReason(err error) string {
	if ue, ok := err.(*url.Error); ok {
		err = ue.Err
	}
	return firstLine(err)
}

// fromResponse generates the config of one answer to u.
func fromResponse(u *url.URL, header http.Header, body []byte, authValue, authName string) (*Result, error) {
	where := u.Scheme + "://" + u.Host + u.EscapedPath()
	tree, err := codec.Decode(body)
	if err != nil {
		return nil, inputErr("--probe: the answer of %s is not JSON (Content-Type %q)", where, header.Get("Content-Type"))
	}
	res := &Result{}
	name := (&generator{names: map[string]bool{}}).name(u.Path, nil)
	recordsPath, recs := findProbeRecords(tree)
	if recs == nil {
		return nil, inputErr("--probe: the answer of %s holds no array of objects to read records from", where)
	}
	note := func(format string, args ...any) { res.note("stream %s: "+format, append([]any{name}, args...)...) }
	if recordsPath != "" {
		note("records at %s", recordsPath)
	}
	d := streams.Definition{Name: name, Path: u.EscapedPath(), RecordsPath: recordsPath}
	if d.Path == "" {
		d.Path = "/"
	}
	res.Config.BaseURL = u.Scheme + "://" + u.Host
	res.Config.Auth = probeAuth(authName, authValue, res)
	query := u.Query()
	for _, k := range sortedKeys(query) {
		if client.SecretName(k) {
			if res.Config.Auth != nil {
				return nil, inputErr("--probe: both --auth-header and the query parameter %s look like credentials; pass one", k)
			}
			res.Config.Auth = map[string]any{"type": "api_key", "name": k, "in": "query", "value": envRef("TAP_API_KEY")}
			res.note("auth: the query parameter %s is an API key; set TAP_API_KEY to it", k)
			query.Del(k)
		}
	}
	var shape infer.Shape
	for _, r := range recs {
		shape.Add(r)
	}
	schema := shape.Schema()
	props := *schema.Properties
	d.PrimaryKey = probeKey(recs, props)
	if d.PrimaryKey == nil {
		note("no primary key found (no id, nor one *_id unique in the records seen)")
	} else if d.PrimaryKey[0] != "id" {
		note("primary key %s guessed (unique in the %d records seen)", d.PrimaryKey[0], len(recs))
	}
	for _, k := range []string{"updated_at", "updated", "modified_at", "last_modified", "updatedAt", "modifiedAt", "changed_at"} {
		if p := props[k]; p != nil && p.Format == "date-time" {
			d.ReplicationKey = k
			note("replication key %s guessed; its filter parameter is unknown, so every run reads the whole stream: add incremental.param (e.g. updated_since) if the API has one", k)
			break
		}
	}
	probePagination(&d, u, header, tree, recs, query, note)
	if len(query) > 0 {
		d.Params = map[string]string{}
		for _, k := range sortedKeys(query) {
			d.Params[k] = query.Get(k)
		}
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	d.Schema = raw
	note("schema inferred from the %d records of one page: types seen there only", len(recs))
	res.Config.Streams = []streams.Definition{d}
	return res, nil
}

// probeAuth is the auth block for the header the probe sent.
func probeAuth(name, value string, res *Result) map[string]any {
	if name == "" {
		return nil
	}
	scheme, _, _ := strings.Cut(value, " ")
	switch {
	case strings.EqualFold(name, "Authorization") && strings.EqualFold(scheme, "bearer"):
		res.note("auth: bearer token from --auth-header; set TAP_TOKEN to it")
		return map[string]any{"type": "bearer", "token": envRef("TAP_TOKEN")}
	case strings.EqualFold(name, "Authorization") && strings.EqualFold(scheme, "basic"):
		res.note("auth: basic from --auth-header; set TAP_USERNAME and TAP_PASSWORD")
		return map[string]any{"type": "basic", "username": envRef("TAP_USERNAME"), "password": envRef("TAP_PASSWORD")}
	}
	res.note("auth: the %s header is an API key; set TAP_API_KEY to its value", name)
	return map[string]any{"type": "api_key", "name": name, "in": "header", "value": envRef("TAP_API_KEY")}
}

// findProbeRecords finds the array of objects in a decoded body: the body,
// or the one under the likeliest name among its properties (two levels).
func findProbeRecords(tree any) (string, []any) {
	if a, ok := tree.([]any); ok && objects(a) {
		return "", a
	}
	m, ok := tree.(map[string]any)
	if !ok {
		return "", nil
	}
	type found struct {
		path string
		recs []any
	}
	var hits []found
	for _, k := range sortedKeys(m) {
		switch v := m[k].(type) {
		case []any:
			if objects(v) {
				hits = append(hits, found{k, v})
			}
		case map[string]any:
			for _, k2 := range sortedKeys(v) {
				if a, ok := v[k2].([]any); ok && objects(a) {
					hits = append(hits, found{k + "." + k2, a})
				}
			}
		}
	}
	if len(hits) == 0 {
		return "", nil
	}
	for _, want := range recordsNames {
		if i := slices.IndexFunc(hits, func(f found) bool { return lastSegment(f.path) == want }); i >= 0 {
			return hits[i].path, hits[i].recs
		}
	}
	return hits[0].path, hits[0].recs
}

// objects reports whether a is a non-empty array of objects (an empty one
// says nothing of its records).
func objects(a []any) bool {
	if len(a) == 0 {
		return false
	}
	for _, v := range a {
		if _, ok := v.(map[string]any); !ok {
			return false
		}
	}
	return true
}

// probeKey is "id" when every record has one, else a *_id property unique
// across the records.
func probeKey(recs []any, props map[string]*infer.Schema) []string {
	for _, k := range append([]string{"id"}, sortedKeys(props)...) {
		if k != "id" && !strings.HasSuffix(k, "_id") {
			continue
		}
		seen := map[string]bool{}
		for _, r := range recs {
			v, ok := r.(map[string]any)[k]
			if !ok || v == nil {
				break
			}
			seen[fmt.Sprint(v)] = true
		}
		if len(seen) == len(recs) {
			return []string{k}
		}
	}
	return nil
}

// probePagination reads the pagination from the answer: a Link header,
// a next URL, a cursor, or page counters.
func probePagination(d *streams.Definition, u *url.URL, header http.Header, tree any, recs []any, query url.Values, note func(string, ...any)) {
	env := map[string]any{}
	if m, ok := tree.(map[string]any); ok {
		flattenBody("", m, d.RecordsPath, env, 0)
	}
	str := func(names []string) string {
		for _, want := range names {
			for _, path := range sortedKeys(env) {
				if s, ok := env[path].(string); ok && s != "" && lastSegment(path) == want {
					return path
				}
			}
		}
		return ""
	}
	hasMore := ""
	for _, want := range hasMoreProps {
		for _, path := range sortedKeys(env) {
			if _, ok := env[path].(bool); ok && lastSegment(path) == want && hasMore == "" {
				hasMore = path
			}
		}
	}
	size := firstParam(query, sizeParams)
	sizeN := 0
	if size != "" {
		fmt.Sscan(query.Get(size), &sizeN)
	}
	for _, l := range streams.ParseLinkHeader(header.Values("Link")) {
		if l.HasRel("next") {
			d.Pagination = streams.Pagination{Type: streams.PageLinkHeader}
			note("pagination link_header: the answer has a Link header with rel=\"next\"")
			return
		}
	}
	if next := str(nextURLProps); next != "" {
		if s := env[next].(string); strings.HasPrefix(s, "http") || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "?") {
			d.Pagination = streams.Pagination{Type: streams.PageNextURL, Options: &streams.NextURLOptions{NextURLPath: next}}
			note("pagination next_url: %s holds the next page's URL", next)
			return
		}
	}
	if next := str(nextCursorProps); next != "" {
		param := firstParam(query, cursorParams)
		if param == "" {
			param = strings.TrimPrefix(strings.TrimPrefix(lastSegment(next), "next_"), "next")
			if param == "" || param == "Cursor" {
				param = "cursor"
			}
			note("pagination cursor from %s, sent back as the %s parameter (guessed: check the API's name for it)", next, param)
		} else {
			note("pagination cursor from %s, sent back as the %s parameter", next, param)
		}
		query.Del(param)
		d.Pagination = streams.Pagination{Type: streams.PageCursor, Options: &streams.CursorOptions{CursorParam: param, NextCursorPath: next, HasMorePath: hasMore}}
		return
	}
	if hasMore != "" && len(d.PrimaryKey) == 1 {
		param := firstParam(query, lastRecordParams)
		if param == "" {
			param = "starting_after"
		}
		query.Del(param)
		d.Pagination = streams.Pagination{Type: streams.PageCursor, Options: &streams.CursorOptions{CursorParam: param, CursorFromLastRecord: d.PrimaryKey[0], HasMorePath: hasMore}}
		note("pagination cursor guessed from %s: the next page starts after the last record's %s, sent as %s", hasMore, d.PrimaryKey[0], param)
		return
	}
	totalPages := ""
	for _, want := range totalPagesProps {
		for _, path := range sortedKeys(env) {
			if _, ok := env[path].(json.Number); ok && lastSegment(path) == want && totalPages == "" {
				totalPages = path
			}
		}
	}
	if page := firstParam(query, pageParams); page != "" || totalPages != "" {
		if page == "" {
			page = "page"
		}
		query.Del(page)
		o := &streams.PageNumberOptions{PageParam: page, TotalPagesPath: totalPages}
		if size != "" {
			o.PageSizeParam, o.PageSize = size, sizeN
			query.Del(size)
		}
		d.Pagination = streams.Pagination{Type: streams.PageNumber, Options: o}
		note("pagination page_number by the %s parameter (guessed from the page counters)", page)
		return
	}
	if off := firstParam(query, offsetParams); off != "" && size != "" && sizeN > 0 {
		query.Del(off)
		query.Del(size)
		d.Pagination = streams.Pagination{Type: streams.PageOffset, Options: &streams.OffsetOptions{OffsetParam: off, PageSizeParam: size, PageSize: sizeN}}
		note("pagination offset by the %s/%s parameters", off, size)
		return
	}
	d.Pagination = streams.Pagination{Type: streams.PageNone}
	note("no pagination seen in one answer: one request reads the stream")
}

func firstParam(q url.Values, names []string) string {
	for _, n := range names {
		if q.Has(n) {
			return n
		}
	}
	return ""
}

// flattenBody lists the scalars of a body outside the records by dotted
// path, two levels deep.
func flattenBody(prefix string, m map[string]any, recordsPath string, out map[string]any, depth int) {
	for k, v := range m {
		path := prefix + k
		if path == recordsPath {
			continue
		}
		if sub, ok := v.(map[string]any); ok && depth < 2 {
			flattenBody(path+".", sub, recordsPath, out, depth+1)
			continue
		}
		out[path] = v
	}
}
