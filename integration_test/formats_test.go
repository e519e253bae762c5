package integration_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// reportStreams returns the stream definitions of ../sample_reports.json
// by name, each a fresh copy.
func reportStreams(t *testing.T) map[string]map[string]any {
	t.Helper()
	var cfg struct {
		Streams []map[string]any `json:"streams"`
	}
	readJSON(t, "../sample_reports.json", &cfg)
	out := map[string]map[string]any{}
	for _, s := range cfg.Streams {
		out[s["name"].(string)] = s
	}
	return out
}

// TestFormats reads the invoices of the demo API as CSV, JSON Lines and
// XML, gzipped both ways, paged by a cursor in a response header and by a
// cursor in the POST body, and checks each table equals the source.
func TestFormats(t *testing.T) {
	t.Parallel()
	srv, base := startDemo(t, demoBase())
	var log reqLog
	base = serve(t, log.wrap(srv))
	all := reportStreams(t)
	variant := func(from, name string, params map[string]any) map[string]any {
		d := all[from]
		b, _ := json.Marshal(d)
		var c map[string]any
		json.Unmarshal(b, &c)
		c["name"] = name
		if params != nil {
			c["params"] = params
		}
		return c
	}
	search := variant("invoices_search", "invoices_search", nil)
	search["body"] = map[string]any{"page": map[string]any{"size": 7}, "q": "all"}
	defs := []any{
		variant("invoices_csv", "csv_plain", nil),
		variant("invoices_csv", "csv_gzip_encoding", map[string]any{"format": "csv", "gzip": "encoding"}),
		variant("invoices_csv", "csv_gzip_type", map[string]any{"format": "csv", "gzip": "type"}),
		variant("invoices_jsonl", "jsonl_gzip_type", nil),
		variant("invoices_jsonl", "jsonl_plain", map[string]any{"format": "jsonl"}),
		variant("invoices_xml", "xml_gzip_encoding", nil),
		variant("invoices_pages", "csv_header_cursor", map[string]any{"format": "csv", "limit": "9"}),
		search,
	}
	d := newTapDir(t, tapConfig(base, defs))
	l := newLoader(t)
	r := d.sync(l, time.Minute)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	want := source(t, srv, "invoices")
	if len(want) != 50 {
		t.Fatalf("source has %d invoices, want 50", len(want))
	}
	for _, def := range defs {
		name := def.(map[string]any)["name"].(string)
		t.Run(name, func(t *testing.T) {
			assertTable(t, l, name, []string{"id"}, want)
		})
	}

	// The header cursor: 50 rows in pages of 9 is 6 requests, each
	// carrying the cursor the page before gave in X-Next-Cursor.
	var cursors, afters []string
	for _, q := range log.all() {
		switch {
		case q.Path == "/v1/export/invoices" && q.Query.Get("limit") == "9":
			cursors = append(cursors, q.Query.Get("cursor"))
		case q.Path == "/v1/search/invoices":
			if q.Method != "POST" || len(q.Query) != 0 {
				t.Errorf("search request %s with query %v: the cursor belongs in the body", q.Method, q.Query)
			}
			var body struct {
				Q    string `json:"q"`
				Page struct {
					Size  int    `json:"size"`
					After string `json:"after"`
				} `json:"page"`
			}
			if err := json.Unmarshal(q.Body, &body); err != nil || body.Q != "all" || body.Page.Size != 7 {
				t.Errorf("search body %s: want the stream's body with page.after added (%v)", q.Body, err)
			}
			afters = append(afters, body.Page.After)
		}
	}
	if got := strings.Join(cursors, ","); got != ",inv_9,inv_18,inv_27,inv_36,inv_45" {
		t.Errorf("header cursors sent = %q", got)
	}
	if got := strings.Join(afters, ","); got != ",after_7,after_14,after_21,after_28,after_35,after_42,after_49" {
		t.Errorf("body cursors sent = %q", got)
	}
}

// TestFormatWrongContentType: a csv stream answered with a JSON page fails
// at once, naming the content type, without a retry.
func TestFormatWrongContentType(t *testing.T) {
	t.Parallel()
	srv, base := startDemo(t, demoBase())
	def := map[string]any{"name": "invoices", "path": "/v1/invoices", "format": "csv", "primary_key": []string{"id"}, "schema": "schemas/invoices.json"}
	d := newTapDir(t, tapConfig(base, []any{def}))
	r := d.sync(newLoader(t), time.Minute)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
	if line := lastLine(r.stderr); !strings.Contains(line, `Content-Type "application/json"`) || !strings.Contains(line, "format is csv") {
		t.Errorf("error line %q does not name the content type and the format", line)
	}
	if n := srv.Stats().ByPath["invoices"]; n != 1 {
		t.Errorf("%d requests, want 1: a body of the wrong format is not retried", n)
	}
}

// TestFormatCSVSchemaViolation: a CSV value the schema's type does not
// take is a dead letter, not a crash; the other rows are emitted typed.
func TestFormatCSVSchemaViolation(t *testing.T) {
	t.Parallel()
	_, base := startDemo(t, demoBase())
	def := reportStreams(t)["invoices_csv"]
	def["schema"] = map[string]any{"type": "object", "properties": map[string]any{
		"id": map[string]any{"type": "integer"}, "customer_id": map[string]any{"type": "integer"},
		"number": map[string]any{"type": "string"}, "total": map[string]any{"type": "number"},
		"status":    map[string]any{"type": "integer"}, // text in the data: every row violates
		"issued_at": map[string]any{"type": "string"},
	}}
	cfg := tapConfig(base, []any{def})
	cfg["on_schema_violation"] = "dead_letter"
	cfg["dead_letter_path"] = "dead_letter.jsonl"
	d := newTapDir(t, cfg)
	l := newLoader(t)
	r := d.sync(l, time.Minute)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	if n := len(l.rows("invoices_csv")); n != 0 {
		t.Errorf("%d rows emitted, want 0: every row has a status that is not an integer", n)
	}
	f, err := os.Open(filepath.Join(d.dir, "dead_letter.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var dl struct {
			Record map[string]any `json:"record"`
		}
		if err := json.Unmarshal(sc.Bytes(), &dl); err != nil {
			t.Fatal(err)
		}
		// The values that did convert are typed: id is a number.
		if _, ok := dl.Record["id"].(float64); !ok {
			t.Errorf("dead letter record id = %#v, want a number", dl.Record["id"])
		}
		n++
	}
	if n != 50 {
		t.Errorf("%d dead letters, want 50", n)
	}
	if !bytes.Contains(r.stderr, []byte("dead_letters=50")) {
		t.Errorf("summary does not count 50 dead letters:\n%s", r.stderr)
	}
}

// TestFormatsCheck: Airbyte check reads the first record of a streamed
// export, not the export, and creates no report job.
func TestFormatsCheck(t *testing.T) {
	t.Parallel()
	srv, base := startDemo(t, demoBase())
	all := reportStreams(t)
	d := newTapDir(t, tapConfig(base, []any{all["invoices_csv"], all["invoices_report"]}))
	r := runTap(t, d.dir, time.Minute, nil, "check", "--config", "config.json")
	if r.code != 0 || !bytes.Contains(r.stdout, []byte(`"status":"SUCCEEDED"`)) {
		t.Fatalf("check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !bytes.Contains(r.stdout, []byte("check: async stream not checked: it would create a report job stream=invoices_report")) {
		t.Errorf("check does not say it skipped the async stream:\n%s", r.stdout)
	}
	st := srv.Stats().ByPath
	if st["reports_create"] != 0 || st["export"] != 1 {
		t.Errorf("check sent %d creates and %d export requests; want 0 and 1", st["reports_create"], st["export"])
	}
}
