package command

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/internal/taptest"
	"github.com/tap-dev/tap/tap"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/tap/inputs"
	"github.com/tap-dev/tap/tap/output"
)

func streamDefs(cfg map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, s := range cfg["streams"].([]any) {
		m := s.(map[string]any)
		out[m["name"].(string)] = m
	}
	return out
}

func runInfer(t *testing.T, config, stream string, pages int) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = InferSchema(context.Background(), inputs.Files{Config: config}, stream, pages, &out, &errb)
	return out.String(), errb.String(), err
}

// TestInferSchemaDemoRoundTrip infers the schema of every demo stream from
// its first pages, then syncs every stream with the inferred schemas inline
// and on_schema_violation "fail": not one record may violate them.
func TestInferSchemaDemoRoundTrip(t *testing.T) {
	cfg, path := taptest.DemoConfig(t, nil)
	defs := streamDefs(cfg)
	var mu sync.Mutex
	inferredSchemas := map[string]any{}
	t.Run("infer", func(t *testing.T) {
		for name := range defs {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				out, stderr, err := runInfer(t, path, name, 3)
				if err != nil {
					t.Fatalf("InferSchema: %v\nstderr:\n%s", err, stderr)
				}
				if !strings.Contains(stderr, "infer-schema: read stream="+name+" records=") {
					t.Errorf("stderr lacks the records/pages line:\n%s", stderr)
				}
				v, err := codec.Decode([]byte(out))
				if err != nil {
					t.Fatalf("stdout is not one JSON value: %v\n%s", err, out)
				}
				props, _ := v.(map[string]any)["properties"].(map[string]any)
				if len(props) < 3 {
					t.Errorf("too few properties inferred:\n%s", out)
				}
				mu.Lock()
				inferredSchemas[name] = v
				mu.Unlock()
			})
		}
	})
	if t.Failed() {
		return
	}
	for name, d := range defs {
		d["schema"] = inferredSchemas[name]
	}
	cfg["on_schema_violation"] = settings.ViolationFail
	path = taptest.WriteConfig(t, filepath.Dir(path), "inferred.json", cfg)
	loaded, err := settings.Load(path)
	if err != nil {
		t.Fatalf("the inferred schemas are not accepted by LoadConfig: %v", err)
	}
	var out, logs bytes.Buffer
	err = tap.Sync(context.Background(), tap.Options{Config: loaded, Writer: output.NewSinger(&out), Log: output.NewStderrLogger(&logs, slog.LevelInfo, nil)})
	if err != nil {
		t.Fatalf("sync with the inferred schemas: %v\nlogs:\n%s", err, tail(logs.String(), 40))
	}
	if strings.Contains(logs.String(), "schema drift") {
		t.Errorf("drift reported against inferred schemas:\n%s", logs.String())
	}
	records := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct{ Type, Stream string }
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("bad line %q: %v", line, err)
		}
		if m.Type == "RECORD" {
			records[m.Stream]++
		}
	}
	for name := range defs {
		if records[name] == 0 {
			t.Errorf("stream %s: no records synced", name)
		}
	}
	if _, err := os.Stat(loaded.DeadLetterPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dead-letter file was written: %v", err)
	}
	t.Logf("records synced: %v", records)
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestInferSchemaWithoutSchemas: the target, its parent and other streams
// may have no schema yet; missing files and files emptied by a shell
// redirection count as missing.
func TestInferSchemaWithoutSchemas(t *testing.T) {
	cfg, path := taptest.DemoConfig(t, func(cfg map[string]any) {
		defs := streamDefs(cfg)
		delete(defs["orders"], "schema")
		delete(defs["order_items"], "schema")
		defs["events"]["schema"] = "schemas/not_written_yet.json"
		defs["tickets"]["schema"] = "empty.json"
	})
	dir := filepath.Dir(path)
	if err := os.WriteFile(filepath.Join(dir, "empty.json"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = cfg
	for _, c := range []struct {
		stream string
		has    []string // properties the output must have
		logs   []string
	}{
		{"order_items", []string{"order_id", "sku", "unit_price"}, []string{`the stream has no schema yet stream=order_items reason="no \"schema\" in its definition"`, "parent_pages_orders=1"}},
		{"orders", []string{"amount", "coupon_code"}, nil},
		// No schema and no incremental.format: start_date is not sent as
		// since_id, which would be refused.
		{"events", []string{"payload", "occurred_at"}, []string{"does not exist", "start_date not applied"}},
		{"tickets", []string{"subject", "priority"}, []string{"empty.json is empty"}},
		{"customers", []string{"address", "tags"}, nil},
	} {
		t.Run(c.stream, func(t *testing.T) {
			out, stderr, err := runInfer(t, path, c.stream, 2)
			if err != nil {
				t.Fatalf("InferSchema: %v\nstderr:\n%s", err, stderr)
			}
			var got struct {
				Properties map[string]any `json:"properties"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			for _, p := range c.has {
				if _, ok := got.Properties[p]; !ok {
					t.Errorf("property %q not inferred:\n%s", p, out)
				}
			}
			for _, l := range c.logs {
				if !strings.Contains(stderr, l) {
					t.Errorf("stderr lacks %q:\n%s", l, stderr)
				}
			}
		})
	}
}

func TestInferSchemaErrors(t *testing.T) {
	_, path := taptest.DemoConfig(t, nil)
	broken, brokenPath := taptest.DemoConfig(t, func(cfg map[string]any) {
		streamDefs(cfg)["tickets"]["schema"] = "bad.json"
	})
	_ = broken
	if err := os.WriteFile(filepath.Join(filepath.Dir(brokenPath), "bad.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		files  inputs.Files
		stream string
		pages  int
		exit   int
		msg    string
	}{
		{"unknown stream", inputs.Files{Config: path}, "nope", 3, tap.ExitBadInput,
			`--infer-schema: no stream named "nope" (the config defines customers, orders, order_items, events, invoices, tickets, bars, issues)`},
		{"no config", inputs.Files{}, "orders", 3, tap.ExitBadInput, "--infer-schema needs --config"},
		{"zero pages", inputs.Files{Config: path}, "orders", 0, tap.ExitBadInput, "--infer-pages: expected a number of pages >= 1, got 0"},
		{"missing config file", inputs.Files{Config: filepath.Join(t.TempDir(), "none.json")}, "orders", 3, tap.ExitBadInput, "cannot read config"},
		// Another stream's schema that exists but is broken is still an
		// error of the config.
		{"broken schema of another stream", inputs.Files{Config: brokenPath}, "orders", 3, tap.ExitBadInput, `stream "tickets": schema`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := InferSchema(context.Background(), c.files, c.stream, c.pages, &out, &errb)
			if err == nil {
				t.Fatalf("no error; stdout:\n%s", out.String())
			}
			if got := tap.ExitCode(err); got != c.exit {
				t.Errorf("exit code %d, want %d (%v)", got, c.exit, err)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q lacks %q", err, c.msg)
			}
			if out.Len() > 0 {
				t.Errorf("stdout should be empty on error, got:\n%s", out.String())
			}
		})
	}
	t.Run("broken schema of the target is ignored", func(t *testing.T) {
		out, stderr, err := runInfer(t, brokenPath, "tickets", 1)
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		if !strings.Contains(stderr, "ignoring the stream's current schema") || !strings.Contains(out, `"subject"`) {
			t.Errorf("stderr:\n%s\nstdout:\n%s", stderr, out)
		}
	})
}

// fakeAPI serves "/things" and "/things/{id}/parts" from handlers and
// records every query it gets.
type fakeAPI struct {
	mu      sync.Mutex
	queries []string
	things  func(q url.Values) string
	parts   func(id string) (int, string)
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.queries = append(f.queries, r.URL.Path+"?"+r.URL.RawQuery)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if id, ok := strings.CutPrefix(r.URL.Path, "/things/"); ok {
		status, body := f.parts(strings.TrimSuffix(id, "/parts"))
		w.WriteHeader(status)
		io.WriteString(w, body)
		return
	}
	io.WriteString(w, f.things(r.URL.Query()))
}

func (f *fakeAPI) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.queries...)
}

func fakeConfig(t *testing.T, base string, startDate string, defs ...map[string]any) string {
	t.Helper()
	cfg := map[string]any{
		"base_url":   base,
		"rate_limit": map[string]any{"requests_per_second": 0},
		"retry":      map[string]any{"max_attempts": 1},
		"streams":    defs,
	}
	if startDate != "" {
		cfg["start_date"] = startDate
	}
	return taptest.WriteConfig(t, t.TempDir(), "config.json", cfg)
}

func thingsDef(extra map[string]any) map[string]any {
	d := map[string]any{
		"name": "things", "path": "/things", "records_path": "data", "primary_key": []string{"id"},
		"replication_key": "updated_at",
		"incremental":     map[string]any{"param": "since", "format": "rfc3339"},
		"pagination":      map[string]any{"type": "page_number", "page_param": "page", "page_size_param": "per_page", "page_size": 2},
	}
	for k, v := range extra {
		d[k] = v
	}
	return d
}

// pagesOf serves n full pages of 2 things each, then an empty one.
func pagesOf(n int) func(q url.Values) string {
	return func(q url.Values) string {
		p := 1
		fmt.Sscan(q.Get("page"), &p)
		if p > n {
			return `{"data":[]}`
		}
		return fmt.Sprintf(`{"data":[{"id":%d,"updated_at":"2026-03-01T00:00:00Z"},{"id":%d,"updated_at":"2026-03-02T00:00:00Z","note":"x"}]}`, 2*p-1, 2*p)
	}
}

func TestInferSchemaRequests(t *testing.T) {
	intSchema := map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}, "updated_at": map[string]any{"type": "integer"}}}
	now := time.Now().UTC()
	for _, c := range []struct {
		name      string
		startDate string
		def       map[string]any
		pages     int
		things    func(q url.Values) string
		want      []string // queries, in order; "*" matches the rest
		logs      []string
	}{{
		name: "no start_date: no filter, stops after the pages asked",
		def:  thingsDef(nil), pages: 2, things: pagesOf(5),
		want: []string{"/things?page=1&per_page=2", "/things?page=2&per_page=2"},
		// requests= is 2, or 3 when the prefetch of page 3 was sent in time.
		logs: []string{"records=4 pages=2 empty_pages=0 requests="},
	}, {
		name: "start_date filters a time key", startDate: "2026-01-01T00:00:00Z",
		def: thingsDef(nil), pages: 1, things: pagesOf(5),
		want: []string{"/things?page=1&per_page=2&since=2026-01-01T00%3A00%3A00Z"},
	}, {
		name: "the end of the stream comes first", startDate: "2026-01-01T00:00:00Z",
		def: thingsDef(nil), pages: 10, things: pagesOf(1),
		want: []string{"/things?page=1&per_page=2&since=2026-01-01T00%3A00%3A00Z", "/things?page=2&per_page=2&since=2026-01-01T00%3A00%3A00Z"},
		logs: []string{"records=2 pages=2 empty_pages=1"},
	}, {
		name: "a numeric key in the current schema is not filtered by start_date", startDate: "2026-01-01T00:00:00Z",
		def: thingsDef(map[string]any{"schema": intSchema}), pages: 1, things: pagesOf(5),
		want: []string{"/things?page=1&per_page=2"},
	}, {
		name: "no schema and no format: start_date is not sent", startDate: "2026-01-01T00:00:00Z",
		def:   thingsDef(map[string]any{"incremental": map[string]any{"param": "since"}}),
		pages: 1, things: pagesOf(5),
		want: []string{"/things?page=1&per_page=2"},
		logs: []string{"start_date not applied"},
	}, {
		name:  "max_pages ends the walk quietly",
		def:   thingsDef(map[string]any{"pagination": map[string]any{"type": "page_number", "page_param": "page", "page_size_param": "per_page", "page_size": 2, "max_pages": 1}}),
		pages: 3, things: pagesOf(5),
		want: []string{"/things?page=1&per_page=2"},
	}, {
		name:      "chunk windows from start_date; empty windows do not count",
		startDate: now.AddDate(0, 0, -95).Format(time.DateOnly),
		def: thingsDef(map[string]any{
			"incremental": map[string]any{"param": "from", "end_param": "to", "chunk_days": 30, "format": "date"},
			"pagination":  map[string]any{"type": "none"},
		}),
		pages: 1,
		things: func(q url.Values) string {
			// Data only in the last 40 days.
			if q.Get("from") < now.AddDate(0, 0, -40).Format(time.DateOnly) {
				return `{"data":[]}`
			}
			return `{"data":[{"id":1,"updated_at":"2026-03-01T00:00:00Z"}]}`
		},
		want: []string{
			"/things?from=" + now.AddDate(0, 0, -95).Format(time.DateOnly) + "&to=" + now.AddDate(0, 0, -65).Format(time.DateOnly),
			"/things?from=" + now.AddDate(0, 0, -65).Format(time.DateOnly) + "&to=" + now.AddDate(0, 0, -35).Format(time.DateOnly),
			"/things?from=" + now.AddDate(0, 0, -35).Format(time.DateOnly) + "&to=" + now.AddDate(0, 0, -5).Format(time.DateOnly),
		},
		logs: []string{"records=1 pages=3 empty_pages=2"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			api := &fakeAPI{things: c.things}
			srv := httptest.NewServer(api)
			defer srv.Close()
			path := fakeConfig(t, srv.URL, c.startDate, c.def)
			out, stderr, err := runInfer(t, path, "things", c.pages)
			if err != nil {
				t.Fatalf("%v\nstderr:\n%s", err, stderr)
			}
			// The walk may have prefetched one page past the last it read.
			got := api.log()
			if len(got) == len(c.want)+1 {
				got = got[:len(c.want)]
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("requests (-want +got):\n%s", d)
			}
			for _, l := range c.logs {
				if !strings.Contains(stderr, l) {
					t.Errorf("stderr lacks %q:\n%s", l, stderr)
				}
			}
			if !strings.Contains(out, `"updated_at"`) {
				t.Errorf("stdout:\n%s", out)
			}
		})
	}
}

// TestInferSchemaChild: a child is walked under its parent's records until
// enough of its pages were read; an ignored status is no page; every
// record gets the parent key under parent.as.
func TestInferSchemaChild(t *testing.T) {
	api := &fakeAPI{
		things: func(url.Values) string {
			return `{"data":[{"id":1},{"id":2},{"id":3},{"id":4}]}`
		},
		parts: func(id string) (int, string) {
			switch id {
			case "1":
				return http.StatusNotFound, `{"error":"gone"}`
			case "2":
				return http.StatusOK, `{"parts":[]}`
			}
			return http.StatusOK, `{"parts":[{"sku":"A-` + id + `","qty":1}]}`
		},
	}
	srv := httptest.NewServer(api)
	defer srv.Close()
	path := fakeConfig(t, srv.URL, "",
		map[string]any{"name": "things", "path": "/things", "records_path": "data", "primary_key": []string{"id"},
			"schema": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}}}},
		map[string]any{"name": "parts", "path": "/things/{id}/parts", "records_path": "parts", "primary_key": []string{"sku"},
			"parent": map[string]any{"stream": "things", "key": "id", "as": "thing_id"}, "ignore_statuses": []int{404}},
	)
	out, stderr, err := runInfer(t, path, "parts", 1)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	want := []string{"/things?", "/things/1/parts?", "/things/2/parts?", "/things/3/parts?"}
	if d := cmp.Diff(want, api.log()); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	nullable := func(t string) map[string]any { return map[string]any{"type": []any{"null", t}} }
	wantSchema := map[string]any{"type": "object", "properties": map[string]any{
		"qty": nullable("integer"), "sku": nullable("string"), "thing_id": nullable("integer"),
	}}
	if d := cmp.Diff(wantSchema, got); d != "" {
		t.Errorf("schema (-want +got):\n%s", d)
	}
	if !strings.Contains(stderr, "records=1 pages=2 empty_pages=1") || !strings.Contains(stderr, "parent_pages_things=1") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// TestInferSchemaNoRecords: an empty stream still gives a usable schema,
// listing the keys of the definition.
func TestInferSchemaNoRecords(t *testing.T) {
	srv := httptest.NewServer(&fakeAPI{things: func(url.Values) string { return `{"data":[]}` }})
	defer srv.Close()
	path := fakeConfig(t, srv.URL, "", thingsDef(nil))
	out, stderr, err := runInfer(t, path, "things", 3)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{}, "updated_at": map[string]any{}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("schema (-want +got):\n%s", d)
	}
	if !strings.Contains(stderr, "no records read") {
		t.Errorf("stderr:\n%s", stderr)
	}
}
