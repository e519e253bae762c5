package tap

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tap-dev/tap/settings"
)

// modelRecords is how many records the pagination models' API serves, in
// pages of modelPage.
const modelRecords, modelPage = 25, 10

// modelAPI serves modelRecords records, {"type":…,"id":…} (keys out of
// order, so a spliced record's bytes differ from the tree's), paginated
// as model says, and logs each request.
type modelAPI struct {
	model  string
	format string // of the body: json unless set; jsonl and csv pages hold the records alone, jsonl_data lines hold them at "data"
	mu     sync.Mutex
	log    []string
}

func (a *modelAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	body, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	a.log = append(a.log, r.Method+" "+r.URL.RequestURI()+" "+string(body))
	a.mu.Unlock()
	at := func(s string) int { n, _ := strconv.Atoi(strings.TrimPrefix(s, "at-")); return n }
	start := 0
	switch a.model {
	case "keyset", "cursor_from_last_record":
		start = at(q.Get("since_id"))
	case "link_header", "next_url", "page_number":
		if p := at(q.Get("page")); p > 0 {
			start = (p - 1) * modelPage
		}
	case "cursor", "cursor_has_more", "cursor_header":
		start = at(q.Get("cursor"))
	case "offset":
		start = at(q.Get("offset"))
	case "offset_shifting":
		// Two rows were inserted before the offset between two
		// requests: each page repeats the last two of the one before.
		off := at(q.Get("offset"))
		start = off - 2*(off/modelPage)
	case "graphql_edges", "graphql_nodes":
		var b struct{ Variables map[string]any }
		json.Unmarshal(body, &b)
		s, _ := b.Variables["after"].(string)
		start = at(s)
	}
	end := min(start+modelPage, modelRecords)
	if a.model == "none" {
		end = modelRecords
	}
	more := end < modelRecords
	var recs []string
	for id := start + 1; id <= end; id++ {
		rec := fmt.Sprintf(`{"type":"t%d","id":%d}`, id%3, id)
		if a.model == "graphql_edges" {
			rec = fmt.Sprintf(`{"cursor":"at-%d","node":%s}`, id, rec)
		}
		recs = append(recs, rec)
	}
	switch a.format {
	case "jsonl":
		w.Header().Set("Content-Type", "application/x-ndjson")
		a.headers(w, more, end)
		io.WriteString(w, strings.Join(recs, "\n"))
		return
	case "jsonl_data":
		// Records inside each line, three a line (records_path data).
		w.Header().Set("Content-Type", "application/x-ndjson")
		a.headers(w, more, end)
		for i := 0; i < len(recs); i += 3 {
			fmt.Fprintf(w, "{\"n\":%d,\"data\":[%s]}\n", i, strings.Join(recs[i:min(i+3, len(recs))], ","))
		}
		return
	case "csv":
		w.Header().Set("Content-Type", "text/csv")
		a.headers(w, more, end)
		io.WriteString(w, "type,id\r\n")
		for id := start + 1; id <= end; id++ {
			fmt.Fprintf(w, "t%d,%d\r\n", id%3, id)
		}
		return
	}
	items := "[" + strings.Join(recs, ",") + "]"
	next := func(v string) string {
		if !more {
			return "null"
		}
		return strconv.Quote(v)
	}
	w.Header().Set("Content-Type", "application/json")
	a.headers(w, more, end)
	var out string
	switch a.model {
	case "cursor":
		out = fmt.Sprintf(`{"meta":{"next":%s},"items":%s}`, next(fmt.Sprintf("at-%d", end)), items)
	case "cursor_has_more":
		out = fmt.Sprintf(`{"items":%s,"has_more":%v,"next":"at-%d"}`, items, more, end)
	case "next_url":
		out = fmt.Sprintf(`{"items":%s,"links":{"self":"x","next":%s}}`, items, next(fmt.Sprintf("/v1/x?page=%d", end/modelPage+1)))
	case "page_number":
		out = fmt.Sprintf(`{"meta":{"pages":%d},"items":%s}`, (modelRecords+modelPage-1)/modelPage, items)
	case "offset", "offset_shifting":
		out = fmt.Sprintf(`{"items":%s,"meta":{"total":%d}}`, items, modelRecords)
	case "graphql_edges", "graphql_nodes":
		key := "nodes"
		if a.model == "graphql_edges" {
			key = "edges"
		}
		out = fmt.Sprintf(`{"data":{"conn":{"pageInfo":{"hasNextPage":%v,"endCursor":"at-%d"},%q:%s}}}`, more, end, key, items)
	default:
		out = fmt.Sprintf(`{"items":%s}`, items)
	}
	io.WriteString(w, out)
}

// headers sets the headers of the page that ends at record end.
func (a *modelAPI) headers(w http.ResponseWriter, more bool, end int) {
	switch a.model {
	case "link_header":
		if more {
			w.Header().Set("Link", fmt.Sprintf(`</v1/x?page=%d>; rel="next"`, end/modelPage+1))
		}
	case "cursor_header":
		if more {
			w.Header().Set("X-Next", fmt.Sprintf("at-%d", end))
		}
	}
}

// bodyModels are the models whose pages may be jsonl or csv bodies: the
// paginator reads nothing of the body but its records.
var bodyModels = []string{"none", "keyset", "link_header", "cursor_header", "cursor_from_last_record", "offset_shifting"}

// modelPaginations are the stream settings of each model the API serves.
var modelPaginations = map[string]map[string]any{
	"none":                    {"type": "none"},
	"keyset":                  {"type": "keyset", "key_param": "since_id", "key_field": "id", "page_size_param": "limit", "page_size": modelPage},
	"link_header":             {"type": "link_header"},
	"cursor":                  {"type": "cursor", "cursor_param": "cursor", "next_cursor_path": "meta.next"},
	"cursor_has_more":         {"type": "cursor", "cursor_param": "cursor", "next_cursor_path": "next", "has_more_path": "has_more"},
	"cursor_header":           {"type": "cursor", "cursor_param": "cursor", "next_cursor_header": "X-Next"},
	"cursor_from_last_record": {"type": "cursor", "cursor_param": "since_id", "cursor_from_last_record": "id"},
	"next_url":                {"type": "next_url", "next_url_path": "links.next"},
	"page_number":             {"type": "page_number", "page_param": "page", "total_pages_path": "meta.pages"},
	"offset":                  {"type": "offset", "offset_param": "offset", "page_size_param": "limit", "page_size": modelPage, "total_path": "meta.total"},
	"offset_shifting":         {"type": "offset", "offset_param": "offset", "page_size_param": "limit", "page_size": modelPage},
	"graphql_edges":           {"type": "graphql", "page_size": modelPage},
	"graphql_nodes":           {"type": "graphql", "page_size": modelPage},
}

// syncModel syncs the one stream of model's API, spliced or on the tree
// path only: what it wrote, and the requests the API saw.
func syncModel(t *testing.T, model string, tree bool) (*rawRecorder, []string) {
	t.Helper()
	return syncModelAs(t, model, "", tree)
}

// syncModelAs is syncModel with the API's pages in format (json: "").
func syncModelAs(t *testing.T, model, format string, tree bool) (*rawRecorder, []string) {
	t.Helper()
	api := &modelAPI{model: model, format: format}
	srv := httptest.NewServer(api)
	defer srv.Close()
	def := map[string]any{"name": "events", "path": "/v1/x", "primary_key": []any{"id"}, "records_path": "items",
		"schema": map[string]any{"type": "object", "required": []any{"id"}, "properties": map[string]any{
			"id": map[string]any{"type": "integer"}, "type": map[string]any{"type": []any{"null", "string"}}}},
		"pagination": modelPaginations[model]}
	switch format {
	case "":
	case "jsonl_data":
		def["format"], def["records_path"] = "jsonl", "data"
	default:
		def["format"] = format
		delete(def, "records_path")
	}
	if strings.HasPrefix(model, "graphql") {
		delete(def, "records_path")
		def["graphql"] = map[string]any{"query": "query($first: Int!, $after: String) { conn { … } }", "connection_path": "data.conn"}
	}
	dir := t.TempDir()
	config := map[string]any{"base_url": srv.URL, "rate_limit": map[string]any{"requests_per_second": 0},
		"retry": map[string]any{"max_attempts": 1}, "streams": []any{def}}
	cfg, err := settings.Load(writeConfig(t, dir, "config.json", config))
	if err != nil {
		t.Fatal(err)
	}
	w := &rawRecorder{raw: map[string][][]byte{}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := syncTree(context.Background(), Options{Config: cfg, Writer: w, Log: log}, tree); err != nil {
		t.Fatal(err)
	}
	for i, m := range w.msgs {
		w.msgs[i].Version = 0
		bm, _ := m.State["bookmarks"].(map[string]any)
		for _, b := range bm {
			delete(b.(map[string]any), "version") // the run's clock
		}
	}
	return w, api.log
}

// TestSpliceEveryModel syncs a stream of each pagination model twice,
// spliced and on the tree path only: the same records in the same order,
// the same states, the same requests; and every record spliced. So do
// jsonl pages (a record a line, or records inside each line) and csv
// pages of the models that read no body values. The
// offset pages of a source that shifts repeat rows, dropped both ways.
func TestSpliceEveryModel(t *testing.T) {
	type run struct{ model, format string }
	var runs []run
	for model := range modelPaginations {
		runs = append(runs, run{model, ""})
	}
	// Pages of jsonl and csv bodies, paginated or read as they arrive.
	for _, model := range bodyModels {
		runs = append(runs, run{model, "jsonl"}, run{model, "jsonl_data"}, run{model, "csv"})
	}
	for _, r := range runs {
		model := r.model
		t.Run(strings.TrimPrefix(r.format+" "+model, " "), func(t *testing.T) {
			tree, treeReqs := syncModelAs(t, model, r.format, true)
			spliced, splicedReqs := syncModelAs(t, model, r.format, false)
			if d := cmp.Diff(tree.msgs, spliced.msgs, cmp.AllowUnexported(message{})); d != "" {
				t.Fatalf("messages differ (-tree +spliced):\n%s", d)
			}
			if d := cmp.Diff(treeReqs, splicedReqs); d != "" {
				t.Fatalf("requests differ (-tree +spliced):\n%s", d)
			}
			raw := spliced.raw["events"]
			if len(raw) != modelRecords {
				t.Fatalf("%d records, want %d", len(raw), modelRecords)
			}
			for i, b := range raw {
				if bytes.Equal(b, tree.raw["events"][i]) {
					t.Fatalf("record %d not spliced: %s", i, b)
				}
			}
		})
	}
}
