package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// The models scenario's page server: the bench binary run with
// -servemodels answers every row of the scenario from n generated events
// (bench/models.go), each page built as it is asked for.

// modelEvent appends event i (0-based; id i+1), ~300 bytes, as the demo's
// events schema has it.
func modelEvent(b []byte, i int) []byte {
	return fmt.Appendf(b, `{"id":%d,"type":"page_view","actor_id":%d,"occurred_at":"%s","source":"web","ip":"10.%d.%d.%d","user_agent":"%s","payload":{"path":"/products/%d/overview","duration_ms":%d,"bytes":%d,"ok":true}}`,
		i+1, i%997, eventTime(i), i%256, i/256%256, i/65536%256, eventAgent, i%5000, i%2000, i%500000)
}

// csvHeader and csvEvent are event i as a CSV row: the payload's members
// are columns of their own (csvEventSchema).
const csvHeader = "id,type,actor_id,occurred_at,source,ip,user_agent,path,duration_ms,bytes,ok\n"

func csvEvent(b []byte, i int) []byte {
	return fmt.Appendf(b, "%d,page_view,%d,%s,web,10.%d.%d.%d,\"%s\",/products/%d/overview,%d,%d,true\n",
		i+1, i%997, eventTime(i), i%256, i/256%256, i/65536%256, eventAgent, i%5000, i%2000, i%500000)
}

// customerRecord appends record i of the 7-property cursor stream
// (customerSchema), ~170 bytes.
func customerRecord(b []byte, i int) []byte {
	return fmt.Appendf(b, `{"id":%d,"name":"Customer %d","email":"customer%d@example.com","status":"%s","amount":%d.%02d,"created_at":"%s","active":%v}`,
		i+1, i+1, i+1, [3]string{"active", "trialing", "past_due"}[i%3], i%10000, i%100, eventTime(i), i%7 != 0)
}

const eventAgent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"

func eventTime(i int) string {
	return fmt.Sprintf("2026-01-%02dT%02d:%02d:%02dZ", 1+i/86400%28, i/3600%24, i/60%60, i%60)
}

// serveModels is the bench binary run as the models scenario's page
// server (-servemodels): it answers /v1/<row> from n events, prints its
// URL and serves until its stdin closes.
func serveModels(n int) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench -servemodels:", err)
		return 1
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if streamBody(w, r, n) {
			return
		}
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

// linesPerLine is how many events a line of /v1/jsonl_data holds.
const linesPerLine = 100

// streamBody answers the JSON Lines and CSV rows: /v1/jsonl, /v1/csv and
// /v1/jsonl_data, all n events in one body written as it is generated;
// /v1/jsonl_pages and /v1/csv_pages, the keyset page of pageSize events
// after since_id. False for any other path.
func streamBody(w http.ResponseWriter, r *http.Request, n int) bool {
	var row func([]byte, int) []byte
	start, end, step, csv := 0, n, 1, false
	switch r.URL.Path {
	case "/v1/jsonl", "/v1/jsonl_pages":
		row = func(b []byte, i int) []byte { return append(modelEvent(b, i), '\n') }
		w.Header().Set("Content-Type", "application/x-ndjson")
	case "/v1/jsonl_data":
		// A line holds linesPerLine events in its "data".
		row = func(b []byte, i int) []byte {
			b = append(b, `{"data":[`...)
			for j := i; j < min(i+linesPerLine, n); j++ {
				if j > i {
					b = append(b, ',')
				}
				b = modelEvent(b, j)
			}
			return append(b, "]}\n"...)
		}
		step = linesPerLine
		w.Header().Set("Content-Type", "application/x-ndjson")
	case "/v1/csv", "/v1/csv_pages":
		row, csv = csvEvent, true
		w.Header().Set("Content-Type", "text/csv")
	default:
		return false
	}
	if strings.HasSuffix(r.URL.Path, "_pages") {
		start, _ = strconv.Atoi(r.URL.Query().Get("since_id"))
		end = max(min(start+pageSize, n), start)
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	if csv {
		bw.WriteString(csvHeader)
	}
	var b []byte
	for i := start; i < end; i += step {
		b = row(b[:0], i)
		if _, err := bw.Write(b); err != nil {
			return true // the tap went away
		}
	}
	bw.Flush()
	return true
}

// modelPage is the answer to r for its row: the page's body and headers;
// nil for a path that is no row of the scenario.
func modelPage(r *http.Request, n int) ([]byte, map[string]string) {
	q := r.URL.Query()
	num := func(k string) int { v, _ := strconv.Atoi(q.Get(k)); return v }
	model := strings.TrimPrefix(r.URL.Path, "/v1/")
	if shape, ok := strings.CutPrefix(model, "shape_"); ok {
		return shapePage(shape, num("since_id"), n), nil
	}
	start, size, record := 0, pageSize, modelEvent
	switch model {
	case "keyset":
		start = num("since_id")
	case "link_header", "next_url", "page_number":
		start = max(num("page")-1, 0) * pageSize
	case "cursor":
		start = num("cursor")
	case "customers":
		start, size, record = num("cursor"), customerPage, customerRecord
		n = customersOf(n)
	case "offset":
		start = num("offset")
	case "graphql_nodes", "graphql_edges":
		var body struct{ Variables map[string]any }
		json.NewDecoder(r.Body).Decode(&body)
		s, _ := body.Variables["after"].(string)
		start, _ = strconv.Atoi(s)
	case "parents":
		return parentsPage(n, num("since_id")), nil
	default:
		// /v1/parents/<id>/events: the child page of parent id, its
		// pageSize events.
		id, ok := strings.CutPrefix(model, "parents/")
		if id, ok = strings.CutSuffix(id, "/events"); !ok {
			return nil, nil
		}
		p, err := strconv.Atoi(id)
		if err != nil || p < 1 || p > parentsOf(n) {
			return nil, nil
		}
		model, start = "child", (p-1)*pageSize
	}
	end := min(start+size, n)
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
		b = record(b, i)
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
	case "cursor", "customers":
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

// The parent/child row: n/pageSize parents, each the parent of pageSize
// of the events, in keyset pages of parentPage: a page of parents is
// held while its children are walked, so one page of all of them would
// grow with the run (at 10M events, 10,000 parents), as no API's pages do.
func parentsOf(n int) int { return (n + pageSize - 1) / pageSize }

const parentPage = 100

// parentsPage is the page of parents after id since.
func parentsPage(n, since int) []byte {
	b := []byte(`{"data":[`)
	for p := since; p < min(since+parentPage, parentsOf(n)); p++ {
		if p > since {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"id":%d,"name":"account %d"}`, p+1, p+1)
	}
	return append(b, "]}"...)
}

// The 7-property cursor row reads n/10 records (at least 1,000) in pages
// of customerPage.
const customerPage = 100

func customersOf(n int) int { return max(n/10, min(n, 1000)) }
