package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// manifestEvents is an Airbyte manifest of the demo's events stream: the
// page after each is asked from the last record's id, as a manifest of a
// keyset API says it; the schema inline (%s), as Connector Builder
// exports write it.
const manifestEvents = `version: 6.0.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: events
    primary_key: id
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "https://api.example.com", path: /v1/events}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [events]}}
      paginator:
        type: DefaultPaginator
        page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: since_id}
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ last_record['id'] }}", page_size: %d}
    schema_loader: {type: InlineSchemaLoader, schema: %s}
`

// manifest measures a manifest's stream against the same stream written
// in the tap's language, on the same pages: issue 40 asks a manifest to
// run at the tap's speed, within 1.2 times its CPU per record and 1.1
// times its peak RSS. Both are read whole (no state), validated, one
// request at a time.
func (b *bench) manifest(ctx context.Context, rep *report, n, reps int) error {
	const sc, size = "manifest", 1000
	self, err := os.Executable()
	if err != nil {
		return err
	}
	schema, err := os.ReadFile(filepath.Join(b.root, "schemas", "events.json"))
	if err != nil {
		return err
	}
	var compact json.RawMessage
	if err := json.Unmarshal(schema, &compact); err != nil {
		return fmt.Errorf("schemas/events.json: %v", err)
	}
	mpath := filepath.Join(b.dir, "events_manifest.yaml")
	if err := os.WriteFile(mpath, fmt.Appendf(nil, manifestEvents, size, compact), 0o600); err != nil {
		return err
	}
	url, stop, err := b.startServer([]string{self, "-servepages", "-records", strconv.Itoa(n), "-pagesize", strconv.Itoa(size)})
	if err != nil {
		return err
	}
	defer stop()
	settings := map[string]any{
		"rate_limit":           map[string]any{"requests_per_second": 0, "max_in_flight": 1},
		"max_parallel_streams": 1,
		"request_timeout_s":    60,
		"on_schema_violation":  "dead_letter",
		"dead_letter_path":     filepath.Join(b.dir, "manifest.dead_letter.jsonl"),
	}
	// The tap's own definition of the same stream, read whole as the
	// manifest's is (a manifest without a cursor keeps no bookmark).
	d := b.stream("events", size)
	for _, k := range []string{"replication_key", "is_sorted", "incremental", "error_path"} {
		delete(d, k)
	}
	native := map[string]any{"base_url": url, "streams": []any{d}}
	tapSettings := map[string]any{"base_url": url}
	for k, v := range settings {
		native[k], tapSettings[k] = v, v
	}
	nativeCfg, err := b.writeConfig("manifest_native.json", native)
	if err != nil {
		return err
	}
	connectorCfg, err := b.writeConfig("manifest_config.json", map[string]any{"tap": tapSettings})
	if err != nil {
		return err
	}
	timeout := 2*time.Minute + time.Duration(n/10_000)*time.Second
	var natives, manifests []*tapRun
	for i := range reps {
		progress(fmt.Sprintf("manifest: %s events, the tap's language then the manifest (%d of %d)", thousands(int64(n)), i+1, reps))
		for _, run := range []struct {
			args []string
			into *[]*tapRun
		}{
			{[]string{b.bin, "--config", nativeCfg}, &natives},
			{[]string{b.bin, "--manifest", mpath, "--config", connectorCfg}, &manifests},
		} {
			r, err := b.runPinned(ctx, run.args, timeout)
			if err != nil {
				return err
			}
			if r.out.records != int64(n) {
				return fmt.Errorf("%v: the tap emitted %d RECORD messages, want %d", run.args[1:], r.out.records, n)
			}
			*run.into = append(*run.into, r)
		}
	}
	nc, mc := medianCPU(natives), medianCPU(manifests)
	nr, mr := medianRSS(natives), medianRSS(manifests)
	rep.add(sc, "runs", fmt.Sprintf("%d of each, interleaved; medians", reps), "", "")
	rep.add(sc, "CPU per record: manifest / tap's language", fmt.Sprintf("%.2f / %.2f µs", micros(mc)/float64(n), micros(nc)/float64(n)), "", "")
	rep.check(sc, "CPU per record, manifest/tap's language", fmt.Sprintf("%.2f", float64(mc)/float64(nc)), "<= 1.20", float64(mc) <= 1.2*float64(nc))
	rep.add(sc, "peak RSS: manifest / tap's language", fmt.Sprintf("%.1f / %.1f MiB", mib(mr), mib(nr)), "", "")
	rep.check(sc, "peak RSS, manifest/tap's language", fmt.Sprintf("%.2f", float64(mr)/float64(nr)), "<= 1.10", float64(mr) <= 1.1*float64(nr))
	return nil
}

// medianRSS is the median of the runs' peak RSS, in KiB.
func medianRSS(runs []*tapRun) int64 {
	ks := make([]int64, len(runs))
	for i, r := range runs {
		ks[i] = r.maxRSSKiB
	}
	slices.Sort(ks)
	return ks[len(ks)/2]
}
