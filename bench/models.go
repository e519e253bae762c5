package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tap-dev/tap/schemas"
)

// The models scenario (issue 28) reads the same n events of ~300 bytes
// through every pagination model (pages of 1,000), through schema shapes
// on keyset pages (bench/shapes.go), as one JSON Lines and one CSV body,
// as keyset pages of JSON Lines and of CSV, as one JSON Lines body whose
// lines hold linesPerLine records each at a records_path, and as the
// child stream of n/1,000 parents (keyset pages of 100; a page of 1,000 events
// each); then a 7-property stream paged by a cursor in the body. The tap is pinned to one core and the page server (a child
// process generating each page as asked, bench/modelserver.go) runs off
// it. The rows run one after the other, reps rounds of them
// interleaved; each row's figure is the median of its rounds: records per
// CPU-second and the ratio to keyset's median, peak RSS the largest of
// its rounds. A row that misses its target says FAIL in the table; the
// bench goes on.
//
// Targets: every pagination model ≥ 0.8 × keyset, the shapes ≥ 0.7 ×
// keyset's output bytes per CPU-second (but the one left to the schema
// library, a figure), the JSON Lines and CSV bodies and pages ≥
// 0.5 ×, the child stream ≥ 0.7 × (keyset is its twin: the same events in
// pages of 1,000), peak RSS ≤ 20 MiB at 1M records; the 7-property cursor
// stream ≤ 0.55 CPU-seconds per 100,000 records. With -records of
// 10,000,000 or more each row also runs once on 1,000,000 records, and
// its peak RSS at n must be ≤ 1.1 × that.

// A modelRow is one row of the scenario: its stream definitions (the
// last the one measured), what its figure counts and its target (0:
// none).
type modelRow struct {
	name   string
	what   string // said beside the name in its main figure
	unit   modelUnit
	target float64
	// streams returns the row's stream definitions.
	streams func(b *bench) []any
	// records is how many RECORD messages the row writes for n events,
	// and measured how many of them its rate counts.
	records, measured func(n int) int
	// flags are the row's command-line flags after --config, each
	// "{dir}" in them the bench's folder.
	flags []string
}

func allOf(n int) int { return n }

// A modelUnit is what a row's figure counts.
type modelUnit int

const (
	unitRecords modelUnit = iota // records per CPU-second, target a ratio to keyset's
	unitBytes                    // output bytes per CPU-second, target a ratio to keyset's
	unitPer100k                  // CPU-seconds per 100,000 records, target a ceiling
)

var keysetPagination = map[string]any{"type": "keyset", "key_param": "since_id", "key_field": "id", "page_size_param": "limit", "page_size": pageSize}

// modelRows are the scenario's rows, keyset first: the others are
// measured against it.
var modelRows = func() []modelRow {
	models := []struct {
		name       string
		pagination map[string]any
	}{
		{"keyset", keysetPagination},
		{"link_header", map[string]any{"type": "link_header"}},
		{"cursor", map[string]any{"type": "cursor", "cursor_param": "cursor", "next_cursor_path": "meta.next_cursor", "has_more_path": "meta.has_more"}},
		{"next_url", map[string]any{"type": "next_url", "next_url_path": "links.next"}},
		{"page_number", map[string]any{"type": "page_number", "page_param": "page", "page_size_param": "per_page", "page_size": pageSize, "total_pages_path": "meta.pages"}},
		{"offset", map[string]any{"type": "offset", "offset_param": "offset", "page_size_param": "limit", "page_size": pageSize, "total_path": "meta.total"}},
		{"graphql_nodes", map[string]any{"type": "graphql", "page_size": pageSize}},
		{"graphql_edges", map[string]any{"type": "graphql", "page_size": pageSize}},
	}
	var rows []modelRow
	for _, m := range models {
		rows = append(rows, modelRow{name: m.name, target: 0.8, records: allOf, measured: allOf,
			streams: func(b *bench) []any { return []any{b.modelStream(m.name, m.pagination)} }})
	}
	// The cost of seeing a run (#45): keyset with the HTML report and the
	// request trace, against keyset without (CPU within 5%, and peak RSS
	// within 2 MiB of keyset's row).
	rows = append(rows, modelRow{name: "keyset --report --trace", target: 0.95, records: allOf, measured: allOf,
		flags:   []string{"--report", "{dir}/report.html", "--trace", "{dir}/trace.jsonl"},
		streams: func(b *bench) []any { return []any{b.modelStream("keyset", keysetPagination)} }})
	rows = append(rows, shapeRows()...)
	return append(rows,
		modelRow{name: "jsonl body", target: 0.5, records: allOf, measured: allOf, streams: func(b *bench) []any {
			return []any{bodyStream(b, "jsonl", "schemas/events.json")}
		}},
		modelRow{name: "csv body", target: 0.5, records: allOf, measured: allOf, streams: func(b *bench) []any {
			return []any{bodyStream(b, "csv", csvEventSchema)}
		}},
		modelRow{name: "jsonl pages", target: 0.5, records: allOf, measured: allOf, streams: func(b *bench) []any {
			return []any{pagedBodyStream(b, "jsonl", "schemas/events.json")}
		}},
		modelRow{name: "csv pages", target: 0.5, records: allOf, measured: allOf, streams: func(b *bench) []any {
			return []any{pagedBodyStream(b, "csv", csvEventSchema)}
		}},
		modelRow{name: "jsonl records_path", target: 0.5, records: allOf, measured: allOf, streams: func(b *bench) []any {
			d := bodyStream(b, "jsonl", "schemas/events.json")
			d["path"], d["records_path"] = "/v1/jsonl_data", "data"
			return []any{d}
		}},
		modelRow{name: "child stream", target: 0.7,
			records:  func(n int) int { return n + parentsOf(n) },
			measured: allOf,
			streams:  func(b *bench) []any { return childStreams(b) }},
		modelRow{name: "cursor, 7 properties", unit: unitPer100k, target: 0.55,
			records: customersOf, measured: customersOf,
			streams: func(*bench) []any { return []any{customerStream()} }},
	)
}()

// modelStream is the events stream read through pagination at
// /v1/<model>.
func (b *bench) modelStream(model string, pagination map[string]any) map[string]any {
	d := b.stream("events", pageSize)
	d["name"], d["path"], d["records_path"], d["pagination"] = "events", "/v1/"+model, "data", pagination
	delete(d, "params")
	if strings.HasPrefix(model, "graphql") {
		delete(d, "records_path")
		delete(d, "error_path") // a GraphQL API's errors are its "errors"
		d["graphql"] = map[string]any{"query": "query($first: Int!, $after: String) { events(first: $first, after: $after) { … } }", "connection_path": "data.events"}
	}
	return d
}

// bodyStream is the events as one body of format (jsonl, csv) at
// /v1/<format>, validated against schema (a path or an inline schema).
func bodyStream(b *bench, format string, schema any) map[string]any {
	d := b.stream("events", pageSize)
	for _, k := range []string{"records_path", "error_path", "incremental", "replication_key", "is_sorted", "params"} {
		delete(d, k)
	}
	d["path"], d["format"], d["pagination"], d["schema"] = "/v1/"+format, format, map[string]any{"type": "none"}, schema
	return d
}

// pagedBodyStream is the events as keyset pages of pageSize in format
// (jsonl, csv) at /v1/<format>_pages, a record a line: the paginator
// reads nothing of a page but its records' ids.
func pagedBodyStream(b *bench, format string, schema any) map[string]any {
	d := b.stream("events", pageSize)
	for _, k := range []string{"records_path", "error_path", "params"} {
		delete(d, k)
	}
	d["path"], d["format"], d["pagination"], d["schema"] = "/v1/"+format+"_pages", format, keysetPagination, schema
	return d
}

// csvEventSchema is the events schema as a CSV row has it: the payload's
// members are columns of their own.
var csvEventSchema = map[string]any{
	"type": "object", "required": []any{"id"},
	"properties": map[string]any{
		"id": map[string]any{"type": "integer"}, "type": map[string]any{"type": []any{"null", "string"}},
		"actor_id":    map[string]any{"type": []any{"null", "integer"}},
		"occurred_at": map[string]any{"type": []any{"null", "string"}, "format": "date-time"},
		"source":      map[string]any{"type": []any{"null", "string"}}, "ip": map[string]any{"type": []any{"null", "string"}},
		"user_agent": map[string]any{"type": []any{"null", "string"}}, "path": map[string]any{"type": []any{"null", "string"}},
		"duration_ms": map[string]any{"type": []any{"null", "integer"}}, "bytes": map[string]any{"type": []any{"null", "integer"}},
		"ok": map[string]any{"type": []any{"null", "boolean"}},
	},
}

// childStreams are the parents (keyset pages of parentPage at
// /v1/parents) and the events as their child stream, a page of 1,000 at
// /v1/parents/{id}/events each.
func childStreams(b *bench) []any {
	parent := map[string]any{
		"name": "parents", "path": "/v1/parents", "records_path": "data", "primary_key": []any{"id"},
		"pagination": map[string]any{"type": "keyset", "key_param": "since_id", "key_field": "id", "page_size_param": "limit", "page_size": parentPage},
		"schema": map[string]any{"type": "object", "required": []any{"id"}, "properties": map[string]any{
			"id": map[string]any{"type": "integer"}, "name": map[string]any{"type": []any{"null", "string"}}}},
	}
	child := b.stream("events", pageSize)
	for _, k := range []string{"incremental", "replication_key", "is_sorted", "params"} {
		delete(child, k)
	}
	var schema map[string]any
	raw, _ := schemas.FS.ReadFile("events.json")
	json.Unmarshal(raw, &schema) // the bench's own copy: it is JSON
	schema["required"] = []any{"id", "parent_id"}
	schema["properties"].(map[string]any)["parent_id"] = map[string]any{"type": "integer"}
	child["path"], child["records_path"], child["schema"] = "/v1/parents/{id}/events", "data", schema
	child["parent"] = map[string]any{"stream": "parents", "key": "id", "as": "parent_id"}
	child["pagination"] = map[string]any{"type": "none"}
	return []any{parent, child}
}

// customerStream is the 7-property stream paged by a cursor in the body
// (pages of customerPage), as tap-rest-api-msdk's comparison read it.
func customerStream() map[string]any {
	obj := func(t ...any) map[string]any { return map[string]any{"type": t} }
	created := obj("null", "string")
	created["format"] = "date-time"
	return map[string]any{
		"name": "customers", "path": "/v1/customers", "records_path": "data", "primary_key": []any{"id"},
		"pagination": map[string]any{"type": "cursor", "cursor_param": "cursor", "next_cursor_path": "meta.next_cursor", "has_more_path": "meta.has_more",
			"page_size_param": "limit", "page_size": customerPage},
		"schema": map[string]any{"type": "object", "required": []any{"id"}, "properties": map[string]any{
			"id": obj("integer"), "name": obj("null", "string"), "email": obj("null", "string"), "status": obj("null", "string"),
			"amount": obj("null", "number"), "created_at": created, "active": obj("null", "boolean")}},
	}
}

// modelsConfig writes the config of row against url for n events.
func (b *bench) modelsConfig(row modelRow, url string, n int) (string, error) {
	cfg := map[string]any{
		"base_url": url, "rate_limit": map[string]any{"requests_per_second": 0, "max_in_flight": 1},
		"max_parallel_streams": 1, "request_timeout_s": 600, "on_schema_violation": "fail",
		"streams": row.streams(b),
	}
	name := strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			return r
		}
		return '_'
	}, row.name)
	return b.writeConfig(fmt.Sprintf("models_%s_%d.json", name, n), cfg)
}

// modelRuns are one row's runs.
type modelRuns struct {
	cpu   []time.Duration // user + system time of each round
	rss   int64           // the largest peak RSS of them, KiB
	bytes int64           // of the tap's stdout (the same in each round)
}

func (r *modelRuns) add(t *tapRun) {
	r.cpu = append(r.cpu, t.user+t.sys)
	r.rss = max(r.rss, t.maxRSSKiB)
	r.bytes = t.out.bytes
}

func (r *modelRuns) median() time.Duration {
	s := slices.Clone(r.cpu)
	slices.Sort(s)
	return s[len(s)/2]
}

// modelServer is a page server of n events.
type modelServer struct {
	url  string
	stop func()
}

func (b *bench) startModels(n int) (*modelServer, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	url, stop, err := b.startServer([]string{self, "-servemodels", "-records", strconv.Itoa(n)})
	if err != nil {
		return nil, err
	}
	return &modelServer{url: url, stop: stop}, nil
}

// runModel runs row once on srv's n events with the tap bin.
func (b *bench) runModel(ctx context.Context, bin string, row modelRow, srv *modelServer, n int) (*tapRun, error) {
	cfg, err := b.modelsConfig(row, srv.url, n)
	if err != nil {
		return nil, err
	}
	timeout := 2*time.Minute + time.Duration(n/5_000)*time.Second
	args := []string{bin, "--config", cfg}
	for _, f := range row.flags {
		args = append(args, strings.ReplaceAll(f, "{dir}", filepath.Dir(cfg)))
	}
	t, err := b.runPinned(ctx, args, timeout)
	if err != nil {
		return nil, err
	}
	if want := row.records(n); t.out.records != int64(want) {
		return nil, fmt.Errorf("%s: the tap emitted %d RECORD messages, want %d", row.name, t.out.records, want)
	}
	return t, nil
}

// rssBase is the size whose peak RSS a run of 10M records or more is
// compared with.
const rssBase = 1_000_000

// models runs the scenario on n records, reps rounds.
func (b *bench) models(ctx context.Context, rep *report, n, reps int) error {
	const sc = "models"
	srv, err := b.startModels(n)
	if err != nil {
		return err
	}
	defer srv.stop()
	loadStart := loadAvg()
	// One run first, not counted (the shortest row): the first run
	// after the build pays for the binary's pages coming into the page
	// cache.
	progress("models: a warm-up run")
	if _, err := b.runModel(ctx, b.bin, modelRows[len(modelRows)-1], srv, n); err != nil {
		return err
	}
	if b.old != nil {
		// Its failure, if any, is its row's, said below.
		b.runModel(ctx, b.old.bin, modelRows[len(modelRows)-1], srv, n)
	}
	runs := make([]modelRuns, len(modelRows))
	olds := make([]modelRuns, len(modelRows))
	oldErr := make([]string, len(modelRows)) // why the old build has no figure for the row
	for r := range reps {
		for i, row := range modelRows {
			progress(fmt.Sprintf("models: round %d of %d, %s, %s events", r+1, reps, row.name, thousands(int64(n))))
			// With -against, the two builds take turns going first.
			oldFirst := b.old != nil && r%2 == 1
			if oldFirst && oldErr[i] == "" {
				oldErr[i] = b.runOld(ctx, row, srv, n, &olds[i])
			}
			t, err := b.runModel(ctx, b.bin, row, srv, n)
			if err != nil {
				return err
			}
			runs[i].add(t)
			if b.old != nil && !oldFirst && oldErr[i] == "" {
				oldErr[i] = b.runOld(ctx, row, srv, n, &olds[i])
			}
		}
	}
	var base []int64 // peak RSS at rssBase, KiB, by row
	if n >= 10*rssBase {
		small, err := b.startModels(rssBase)
		if err != nil {
			return err
		}
		defer small.stop()
		for _, row := range modelRows {
			progress(fmt.Sprintf("models: %s, %s events, for the peak RSS", row.name, thousands(rssBase)))
			t, err := b.runModel(ctx, b.bin, row, small, rssBase)
			if err != nil {
				return err
			}
			base = append(base, t.maxRSSKiB)
		}
	}
	rep.add(sc, "load average (1 min), start and end", loadStart+", "+loadAvg(), "", "")
	rep.add(sc, "rounds (interleaved; medians)", strconv.Itoa(reps), "", "")
	keyset := float64(n) / runs[0].median().Seconds()
	keysetBytes := float64(runs[0].bytes) / runs[0].median().Seconds()
	for i, row := range modelRows {
		cpu := runs[i].median().Seconds()
		target := fmt.Sprintf(">= %.2f× keyset", row.target)
		var figure, value string
		var met bool
		switch row.unit {
		case unitPer100k:
			per100k := cpu * 100_000 / float64(row.measured(n))
			figure, value, target = row.name+", CPU-seconds per 100k records", fmt.Sprintf("%.3f (%s records)", per100k, thousands(int64(row.measured(n)))), fmt.Sprintf("<= %.2f", row.target)
			met = per100k <= row.target
		case unitBytes:
			perCPU := float64(runs[i].bytes) / cpu
			ratio := perCPU / keysetBytes
			figure = row.name + " (" + row.what + ") output MB per CPU-second"
			value = fmt.Sprintf("%.1f, %s records/CPU-s (%.2f× keyset)", perCPU/1e6, thousands(int64(float64(n)/cpu)), ratio)
			met = ratio >= row.target
		default:
			perCPU := float64(row.measured(n)) / cpu
			ratio := perCPU / keyset
			figure, value = row.name+" records per CPU-second", fmt.Sprintf("%s (%.2f× keyset)", thousands(int64(perCPU)), ratio)
			met = ratio >= row.target
		}
		if row.target == 0 {
			rep.add(sc, figure, value, "", "")
		} else {
			rep.check(sc, figure, value, target, met)
		}
		if b.old != nil {
			addAgainst(rep, sc, row.name, &runs[i], &olds[i], oldErr[i])
		}
		rss, m := mib(runs[i].rss), thousands(int64(row.measured(n)))
		if base == nil {
			rep.check(sc, row.name+" peak RSS, "+m+" records", fmt.Sprintf("%.1f MiB", rss), "<= 20 MiB", rss <= 20)
			continue
		}
		small := mib(base[i])
		rep.check(sc, row.name+" peak RSS, "+thousands(int64(row.measured(rssBase)))+" records", fmt.Sprintf("%.1f MiB", small), "<= 20 MiB", small <= 20)
		rep.check(sc, row.name+" peak RSS, "+m+" records", fmt.Sprintf("%.1f MiB (%.2f×)", rss, rss/small), fmt.Sprintf("<= 1.10× (%.1f MiB)", 1.1*small), rss <= 1.1*small)
	}
	return nil
}
