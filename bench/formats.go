package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/tap-dev/tap/demoapi"
)

// formatsDemo serves n invoices: as JSON pages (/v1/invoices) and as one
// CSV or JSON Lines body (/v1/export/invoices), the same rows.
func formatsDemo(n int) demoapi.Config {
	return demoapi.Config{Seed: 7, Invoices: n, MaxPageSize: pageSize}
}

// formatsConfig is a tap config reading the invoices in format (json:
// offset pages of 1,000; csv, jsonl: one streamed body of rows rows),
// validated against schemas/invoices.json, unthrottled.
func (b *bench) formatsConfig(name, baseURL, format string, rows int) (string, error) {
	var def map[string]any
	if format == "json" {
		def = b.stream("invoices", pageSize)
	} else {
		def = map[string]any{
			"name": "invoices", "path": "/v1/export/invoices",
			"params":      map[string]any{"format": format, "rows": fmt.Sprint(rows)},
			"format":      format,
			"primary_key": []string{"id"}, "pagination": map[string]any{"type": "none"},
			"schema": "schemas/invoices.json",
		}
	}
	return b.writeConfig(name, map[string]any{
		"base_url":             baseURL,
		"rate_limit":           map[string]any{"requests_per_second": 0, "max_in_flight": 1},
		"max_parallel_streams": 1,
		"request_timeout_s":    600,
		"on_schema_violation":  "dead_letter",
		"dead_letter_path":     filepath.Join(b.dir, name+".dead_letter.jsonl"),
		"streams":              []any{def},
	})
}

// runFormat runs the tap, pinned, on rows invoices in format.
func (b *bench) runFormat(ctx context.Context, format string, rows int) (*tapRun, error) {
	srv, url, err := startDemo(formatsDemo(rows))
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	cfg, err := b.formatsConfig(fmt.Sprintf("invoices_%s_%d.json", format, rows), url, format, rows)
	if err != nil {
		return nil, err
	}
	return b.runPinnedTap(ctx, cfg, rows, format)
}

// formats measures the tap on the same n invoices as JSON pages, one CSV
// body and one JSON Lines body (records/s, one core), and its peak RSS on
// a CSV body of n rows against one of n/10: a streamed body must not grow
// the tap's memory with its size.
func (b *bench) formats(ctx context.Context, rep *report, n int) error {
	const sc = "formats"
	runs := map[string]*tapRun{}
	for _, f := range []string{"json", "csv", "jsonl"} {
		progress(fmt.Sprintf("formats: tap on %s invoices as %s", thousands(int64(n)), f))
		r, err := b.runFormat(ctx, f, n)
		if err != nil {
			return err
		}
		runs[f] = r
		rate := float64(n) / r.wall.Seconds()
		rep.add(sc, f+" records/s", thousands(int64(rate)), "", "")
	}
	jsonRate := float64(n) / runs["json"].wall.Seconds()
	for _, f := range []string{"csv", "jsonl"} {
		rate := float64(n) / runs[f].wall.Seconds()
		rep.add(sc, f+"/json (records/s)", fmt.Sprintf("%.2f", rate/jsonRate), "", "")
	}
	progress(fmt.Sprintf("formats: tap on a CSV body of %s rows", thousands(int64(n/10))))
	small, err := b.runFormat(ctx, "csv", n/10)
	if err != nil {
		return err
	}
	large := runs["csv"]
	if small.maxRSSKiB == 0 || large.maxRSSKiB == 0 {
		return fmt.Errorf("no peak RSS from the operating system")
	}
	rep.add(sc, "peak RSS, CSV body of "+thousands(int64(n/10))+" rows", fmt.Sprintf("%.1f MiB", mib(small.maxRSSKiB)), "", "")
	rep.add(sc, "peak RSS, CSV body of "+thousands(int64(n))+" rows", fmt.Sprintf("%.1f MiB", mib(large.maxRSSKiB)), "", "")
	ratio := float64(large.maxRSSKiB) / float64(small.maxRSSKiB)
	rep.check(sc, "peak RSS ratio CSV large/small", fmt.Sprintf("%.2f", ratio), "<= 1.20", ratio <= 1.2)
	return nil
}
