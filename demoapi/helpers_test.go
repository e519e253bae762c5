package demoapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/tap-dev/tap/demoapi/dataset"
)

// start builds a server from cfg and serves it on a loopback test server.
func start(t testing.TB, cfg Config) (*Server, string) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts.URL
}

// answer is one decoded response.
type answer struct {
	status int
	header http.Header
	raw    []byte
	body   any
}

func do(t testing.TB, method, u string, body []byte, header http.Header) answer {
	t.Helper()
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, u, err)
	}
	a := answer{status: resp.StatusCode, header: resp.Header, raw: raw}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q", method, u, ct)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&a.body); err != nil {
		t.Fatalf("%s %s: body is not JSON: %v: %.200s", method, u, err, raw)
	}
	return a
}

func get(t testing.TB, u string) answer { return do(t, http.MethodGet, u, nil, nil) }

// mustGet is get that requires a 200.
func mustGet(t testing.TB, u string) answer {
	t.Helper()
	a := get(t, u)
	if a.status != http.StatusOK {
		t.Fatalf("GET %s: status %d: %s", u, a.status, a.raw)
	}
	return a
}

// field walks a dotted path through decoded JSON.
func field(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func records(t testing.TB, v any) []map[string]any {
	t.Helper()
	arr, ok := v.([]any)
	if !ok {
		t.Fatalf("records: not an array: %T", v)
	}
	out := make([]map[string]any, len(arr))
	for i, r := range arr {
		out[i] = r.(map[string]any)
	}
	return out
}

func withQuery(base string, params url.Values) string {
	if len(params) == 0 {
		return base
	}
	return base + "?" + params.Encode()
}

var nextLink = regexp.MustCompile(`<([^>]*)>; rel="next"`)

// walk pages through one stream with the endpoint's own pagination and
// returns every record in the order served. It fails on a page that would
// repeat the previous request.
func walk(t testing.TB, base, stream string, params url.Values) []map[string]any {
	t.Helper()
	var out []map[string]any
	clone := func() url.Values {
		q := url.Values{}
		for k, v := range params {
			q[k] = append([]string(nil), v...)
		}
		return q
	}
	guard := map[string]bool{}
	seen := func(u string) {
		if guard[u] {
			t.Fatalf("%s: request repeated: %s", stream, u)
		}
		guard[u] = true
	}
	switch stream {
	case "customers":
		u := withQuery(base+"/v1/customers", params)
		for u != "" {
			seen(u)
			a := mustGet(t, u)
			out = append(out, records(t, a.body)...)
			u = ""
			if m := nextLink.FindStringSubmatch(a.header.Get("Link")); m != nil {
				u = m[1]
			}
		}
	case "orders", "order_items":
		q := clone()
		for {
			u := withQuery(base+"/v1/orders", q)
			seen(u)
			a := mustGet(t, u)
			out = append(out, records(t, field(a.body, "data"))...)
			if field(a.body, "has_more") != true {
				if c := field(a.body, "next_cursor"); c != "" {
					t.Fatalf("orders: last page has next_cursor %q", c)
				}
				break
			}
			q.Set("cursor", field(a.body, "next_cursor").(string))
		}
		if stream == "order_items" {
			orders := out // newest first; fetch the items in id order
			out = nil
			for _, o := range reverse(orders) {
				id := o["id"].(json.Number)
				a := mustGet(t, base+"/v1/orders/"+id.String()+"/items")
				for _, it := range records(t, field(a.body, "items")) {
					it["order_id"] = id
					out = append(out, it)
				}
			}
		}
	case "events":
		q := clone()
		limit := 100
		if l := q.Get("limit"); l != "" {
			limit = atoi(t, l)
		}
		for {
			u := withQuery(base+"/v1/events", q)
			seen(u)
			page := records(t, field(mustGet(t, u).body, "events"))
			out = append(out, page...)
			if len(page) < limit {
				break
			}
			q.Set("since_id", page[len(page)-1]["id"].(json.Number).String())
		}
	case "invoices":
		// Like the tap: stop at a short page (growth appends after every
		// page, so waiting for an empty one would never end).
		q := clone()
		offset, limit := 0, 100
		if l := q.Get("limit"); l != "" {
			limit = atoi(t, l)
		}
		for {
			q.Set("offset", itoa(offset))
			u := withQuery(base+"/v1/invoices", q)
			seen(u)
			page := records(t, field(mustGet(t, u).body, "invoices"))
			out = append(out, page...)
			if len(page) < limit {
				break
			}
			offset += len(page)
		}
	case "tickets":
		q := clone()
		for p := 1; ; p++ {
			q.Set("page", itoa(p))
			u := withQuery(base+"/v1/tickets", q)
			seen(u)
			a := mustGet(t, u)
			out = append(out, records(t, field(a.body, "tickets"))...)
			if tp, _ := field(a.body, "total_pages").(json.Number).Int64(); int64(p) >= tp {
				break
			}
		}
	case "bars":
		u := withQuery(base+"/v1/bars", params)
		for {
			seen(u)
			a := mustGet(t, u)
			out = append(out, records(t, field(a.body, "bars"))...)
			next := field(a.body, "next")
			if next == nil {
				break
			}
			if !strings.HasPrefix(next.(string), "/v1/bars?") {
				t.Fatalf("bars: next is not a relative URL: %q", next)
			}
			u = base + next.(string)
		}
	case "issues":
		vars := map[string]any{}
		for k := range params {
			vars[k] = params.Get(k)
		}
		if f, ok := vars["first"]; ok {
			vars["first"] = atoi(t, f.(string))
		}
		for {
			body, _ := json.Marshal(map[string]any{"query": "query($first:Int,$after:String,$since:DateTime){repository(owner:\"demo\",name:\"demo\"){issues(first:$first,after:$after,since:$since){edges{cursor node{id}} pageInfo{hasNextPage endCursor}}}}", "variables": vars})
			seen(string(body))
			a := do(t, http.MethodPost, base+"/graphql", body, nil)
			if a.status != 200 || field(a.body, "errors") != nil {
				t.Fatalf("graphql: %d %s", a.status, a.raw)
			}
			conn := field(a.body, "data.repository.issues")
			for _, e := range records(t, field(conn, "edges")) {
				out = append(out, e["node"].(map[string]any))
			}
			if field(conn, "pageInfo.hasNextPage") != true {
				break
			}
			vars["after"] = field(conn, "pageInfo.endCursor")
		}
	default:
		t.Fatalf("walk: unknown stream %q", stream)
	}
	return out
}

func itoa(i int) string { return string(dataset.AppendInt(nil, int64(i))) }

func atoi(t testing.TB, s string) int {
	var n int
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("not a number: %q", s)
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// pk is the primary key of a record as a string.
func pk(stream string, r map[string]any) string {
	switch stream {
	case "bars":
		return r["t"].(string)
	case "order_items":
		return r["order_id"].(json.Number).String() + "/" + r["id"].(string)
	}
	switch id := r["id"].(type) {
	case json.Number:
		return id.String()
	case string:
		return id
	}
	return "?"
}
