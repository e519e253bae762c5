package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// The models scenario (issue 28) reads the same n events of ~300 bytes,
// in pages of 1,000, through every pagination model, the tap pinned to
// one core and the page server (a child process generating the pages as
// asked) off it: records per CPU-second of each, its ratio to keyset in
// the same run, and peak RSS at n (and n/10). Targets: every model ≥ 0.8
// × keyset, peak RSS ≤ 20 MiB, flat (≤ 1.1×).

// benchModels are the pagination settings of each model the page server
// answers, by the path it answers them on.
var benchModels = []struct {
	name       string
	pagination map[string]any
}{
	{"keyset", map[string]any{"type": "keyset", "key_param": "since_id", "key_field": "id", "page_size_param": "limit", "page_size": pageSize}},
	{"link_header", map[string]any{"type": "link_header"}},
	{"cursor", map[string]any{"type": "cursor", "cursor_param": "cursor", "next_cursor_path": "meta.next_cursor", "has_more_path": "meta.has_more"}},
	{"next_url", map[string]any{"type": "next_url", "next_url_path": "links.next"}},
	{"page_number", map[string]any{"type": "page_number", "page_param": "page", "page_size_param": "per_page", "page_size": pageSize, "total_pages_path": "meta.pages"}},
	{"offset", map[string]any{"type": "offset", "offset_param": "offset", "page_size_param": "limit", "page_size": pageSize, "total_path": "meta.total"}},
	{"graphql_nodes", map[string]any{"type": "graphql", "page_size": pageSize}},
	{"graphql_edges", map[string]any{"type": "graphql", "page_size": pageSize}},
}

// modelEvent appends event i (0-based; id i+1), ~300 bytes, as the demo's
// events schema has it.
func modelEvent(b []byte, i int) []byte {
	return fmt.Appendf(b, `{"id":%d,"type":"page_view","actor_id":%d,"occurred_at":"2026-01-%02dT%02d:%02d:%02dZ","source":"web","ip":"10.%d.%d.%d","user_agent":"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36","payload":{"path":"/products/%d/overview","duration_ms":%d,"bytes":%d,"ok":true}}`,
		i+1, i%997, 1+i/86400%28, i/3600%24, i/60%60, i%60, i%256, i/256%256, i/65536%256, i%5000, i%2000, i%500000)
}

// serveModels is the bench binary run as the models scenario's page
// server (-servemodels): it answers /v1/<model> with pages of n events,
// prints its URL and serves until its stdin closes.
func serveModels(n int) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench -servemodels:", err)
		return 1
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, header := modelPage(r, n)
		if body == nil {
			http.NotFound(w, r)
			return
		}
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	fmt.Println("http://" + ln.Addr().String())
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// modelPage is the answer to r for its model: the page's body and
// headers; nil for a path that is no model.
func modelPage(r *http.Request, n int) ([]byte, map[string]string) {
	q := r.URL.Query()
	num := func(k string) int { v, _ := strconv.Atoi(q.Get(k)); return v }
	model := strings.TrimPrefix(r.URL.Path, "/v1/")
	if shape, ok := strings.CutPrefix(model, "shape_"); ok {
		return shapePage(shape, num("since_id"), n), nil
	}
	start := 0
	switch model {
	case "keyset":
		start = num("since_id")
	case "link_header", "next_url", "page_number":
		start = max(num("page")-1, 0) * pageSize
	case "cursor":
		start = num("cursor")
	case "offset":
		start = num("offset")
	case "graphql_nodes", "graphql_edges":
		var body struct{ Variables map[string]any }
		json.NewDecoder(r.Body).Decode(&body)
		s, _ := body.Variables["after"].(string)
		start, _ = strconv.Atoi(s)
	default:
		return nil, nil
	}
	end := min(start+pageSize, n)
	more := end < n
	b := make([]byte, 0, (end-start)*340+200)
	head, tail := `{"data":[`, `]`
	switch model {
	case "graphql_nodes":
		head = `{"data":{"events":{"nodes":[`
	case "graphql_edges":
		head = `{"data":{"events":{"edges":[`
	}
	b = append(b, head...)
	for i := start; i < end; i++ {
		if i > start {
			b = append(b, ',')
		}
		if model == "graphql_edges" {
			b = fmt.Appendf(b, `{"cursor":"%d","node":`, i+1)
		}
		b = modelEvent(b, i)
		if model == "graphql_edges" {
			b = append(b, '}')
		}
	}
	b = append(b, tail...)
	var header map[string]string
	switch model {
	case "link_header":
		if more {
			header = map[string]string{"Link": fmt.Sprintf(`</v1/link_header?page=%d>; rel="next"`, end/pageSize+1)}
		}
	case "cursor":
		b = fmt.Appendf(b, `,"meta":{"has_more":%v,"next_cursor":"%d"}`, more, end)
	case "next_url":
		next := "null"
		if more {
			next = fmt.Sprintf(`"/v1/next_url?page=%d"`, end/pageSize+1)
		}
		b = fmt.Appendf(b, `,"links":{"next":%s}`, next)
	case "page_number":
		b = fmt.Appendf(b, `,"meta":{"pages":%d}`, (n+pageSize-1)/pageSize)
	case "offset":
		b = fmt.Appendf(b, `,"meta":{"total":%d}`, n)
	case "graphql_nodes", "graphql_edges":
		b = fmt.Appendf(b, `,"pageInfo":{"hasNextPage":%v,"endCursor":"%d"}}}`, more, end)
	}
	return append(b, '}'), header
}

// modelsConfig writes the config of one stream of model against url.
func (b *bench) modelsConfig(model string, pagination map[string]any, url string, n int) (string, error) {
	d := b.stream("events", pageSize)
	d["name"], d["path"], d["records_path"], d["pagination"] = "events", "/v1/"+model, "data", pagination
	delete(d, "params")
	if strings.HasPrefix(model, "graphql") {
		delete(d, "records_path")
		delete(d, "error_path") // a GraphQL API's errors are its "errors"
		d["graphql"] = map[string]any{"query": "query($first: Int!, $after: String) { events(first: $first, after: $after) { … } }", "connection_path": "data.events"}
	}
	cfg := map[string]any{
		"base_url": url, "rate_limit": map[string]any{"requests_per_second": 0, "max_in_flight": 1},
		"max_parallel_streams": 1, "request_timeout_s": 60, "on_schema_violation": "fail",
		"streams": []any{d},
	}
	return b.writeConfig(fmt.Sprintf("models_%s_%d.json", model, n), cfg)
}

// models runs the scenario on n records.
func (b *bench) models(ctx context.Context, rep *report, n int) error {
	const sc = "models"
	self, err := os.Executable()
	if err != nil {
		return err
	}
	url, stop, err := b.startServer([]string{self, "-servemodels", "-records", strconv.Itoa(n)})
	if err != nil {
		return err
	}
	defer stop()
	timeout := 2*time.Minute + time.Duration(n/10_000)*time.Second
	var keyset float64
	var keysetRun *tapRun
	for _, m := range benchModels {
		progress(fmt.Sprintf("models: %s, %s events", m.name, thousands(int64(n))))
		cfg, err := b.modelsConfig(m.name, m.pagination, url, n)
		if err != nil {
			return err
		}
		t, err := b.runPinned(ctx, []string{b.bin, "--config", cfg}, timeout)
		if err != nil {
			return err
		}
		if t.out.records != int64(n) {
			return fmt.Errorf("%s: the tap emitted %d RECORD messages, want %d", m.name, t.out.records, n)
		}
		perCPU := float64(n) / (t.user + t.sys).Seconds()
		if m.name == "keyset" {
			keyset, keysetRun = perCPU, t
		}
		ratio := perCPU / keyset
		rep.check(sc, m.name+" records per CPU-second", fmt.Sprintf("%s (%.2f× keyset)", thousands(int64(perCPU)), ratio), ">= 0.80× keyset", ratio >= 0.8)
		rep.check(sc, m.name+" peak RSS, "+thousands(int64(n))+" records", fmt.Sprintf("%.1f MiB", mib(t.maxRSSKiB)), "<= 20 MiB", mib(t.maxRSSKiB) <= 20)
	}
	return b.modelShapes(ctx, rep, url, n, keysetRun, timeout)
}
