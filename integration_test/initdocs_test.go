package integration_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The tests of tap init on real documents: each writes a config from a
// document in the shape of a real API's, and runs it through the binary
// against a loopback server answering in that API's shape.

// TestInitStripeSizeDocument: Stripe's document (124 list streams, 3 MB)
// gives a config smaller than itself, whose --discover lists every
// stream, and one of whose streams runs alone, end to end, with no
// placeholder set but those of auth.
func TestInitStripeSizeDocument(t *testing.T) {
	dir := t.TempDir()
	doc := gunzip(t, "../initconfig/testdata/stripe/spec3-2020-03-02.json.gz")
	writeFile(t, filepath.Join(dir, "stripe.json"), doc)

	const customers = 250
	var pages atomic.Int64
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/customers" {
			http.NotFound(w, r)
			return
		}
		pages.Add(1)
		q := r.URL.Query()
		limit := atoiOr(q.Get("limit"), 10)
		from := 0
		if after := q.Get("starting_after"); after != "" {
			from = atoiOr(strings.TrimPrefix(after, "cus_"), 0)
		}
		var data []any
		for i := from + 1; i <= min(from+limit, customers); i++ {
			data = append(data, map[string]any{"id": fmt.Sprintf("cus_%04d", i), "object": "customer",
				"created": 1_700_000_000 + i, "email": fmt.Sprintf("c%d@example.com", i), "livemode": false,
				"metadata": map[string]any{}, "address": nil, "balance": 0})
		}
		writeJSON(w, map[string]any{"object": "list", "url": "/v1/customers", "data": data, "has_more": from+limit < customers})
	}))

	env := []string{"TAP_USERNAME=sk_test_user", "TAP_PASSWORD=" + initEnvSecret}
	r := runTap(t, dir, 2*time.Minute, env, "init", "--openapi", "stripe.json", "--base-url", base, "--out", "config.json")
	if r.code != 0 {
		t.Fatalf("init: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	cfgSize := fileSize(t, filepath.Join(dir, "config.json"))
	if cfgSize > int64(len(doc)) {
		t.Errorf("the config is %d bytes, the document %d: want no larger than the document", cfgSize, len(doc))
	}

	r = runTap(t, dir, 2*time.Minute, env, "--config", "config.json", "--discover")
	if r.code != 0 {
		t.Fatalf("--discover: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	var cat map[string]any
	if err := json.Unmarshal(r.stdout, &cat); err != nil {
		t.Fatal(err)
	}
	list := cat["streams"].([]any)
	if len(list) != 124 {
		t.Errorf("--discover listed %d streams, want 124", len(list))
	}
	for _, s := range list {
		s := s.(map[string]any)
		for _, m := range s["metadata"].([]any) {
			m := m.(map[string]any)
			if len(m["breadcrumb"].([]any)) == 0 {
				m["metadata"].(map[string]any)["selected"] = s["tap_stream_id"] == "customers"
			}
		}
	}
	b, _ := json.Marshal(cat)
	writeFile(t, filepath.Join(dir, "catalog.json"), b)

	r = runTap(t, dir, 2*time.Minute, env, "--config", "config.json", "--catalog", "catalog.json")
	if r.code != 0 {
		t.Fatalf("a run of customers: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	ids := map[string]bool{}
	for _, line := range bytes.Split(r.stdout, []byte("\n")) {
		var m struct {
			Type   string         `json:"type"`
			Stream string         `json:"stream"`
			Record map[string]any `json:"record"`
		}
		if json.Unmarshal(line, &m) == nil && m.Type == "RECORD" {
			if m.Stream != "customers" || ids[m.Record["id"].(string)] {
				t.Fatalf("record %s of %s: another stream, or twice", m.Record["id"], m.Stream)
			}
			ids[m.Record["id"].(string)] = true
		}
	}
	if len(ids) != customers || pages.Load() != 3 {
		t.Errorf("%d customers in %d pages, want %d in 3", len(ids), pages.Load(), customers)
	}
}

func gunzip(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestInitRealDocumentShapes: three documents in shapes real ones have.
// Paths behind a version placeholder with a default are requested with
// the default; an operation that needs a $ref the document lacks is left
// out with one WARN, the others run; a time filter documented only in
// words makes the stream incremental.
func TestInitRealDocumentShapes(t *testing.T) {
	var accounts, widgets, issues []map[string]any
	for i := 1; i <= 230; i++ {
		accounts = append(accounts, map[string]any{"id": fmt.Sprintf("acc_%d", i), "name": "a"})
	}
	for i := 1; i <= 120; i++ {
		widgets = append(widgets, map[string]any{"id": i, "label": "w"})
	}
	for i := 1; i <= 150; i++ {
		at := stamp(i)
		issues = append(issues, map[string]any{"id": i, "title": "t", "created_at": at, "updated_at": at})
	}
	var mu sync.Mutex
	var sinces []string
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch r.URL.Path {
		case "/v4/accounts":
			writeJSON(w, map[string]any{"accounts": window(accounts, atoiOr(q.Get("offset"), 0), atoiOr(q.Get("limit"), 10))})
		case "/widgets":
			n := atoiOr(q.Get("per_page"), 10)
			writeJSON(w, window(widgets, (atoiOr(q.Get("page"), 1)-1)*n, n))
		case "/issues":
			mu.Lock()
			sinces = append(sinces, q.Get("since"))
			mu.Unlock()
			var after []map[string]any
			for _, is := range issues {
				if q.Get("since") == "" || is["updated_at"].(string) >= q.Get("since") {
					after = append(after, is)
				}
			}
			n := atoiOr(q.Get("per_page"), 10)
			writeJSON(w, window(after, (atoiOr(q.Get("page"), 1)-1)*n, n))
		default:
			http.NotFound(w, r)
		}
	}))
	for _, c := range []struct {
		doc, stream string
		records     int
		note        string
	}{
		{"prefix.yaml", "accounts", 230, "paths: {apiVersion} is v4, its parameter's default"},
		{"brokenref.json", "widgets", 120, `WARN brokenref.json: $ref "#/components/schemas/PartExtras" cannot be resolved: left out GET /gadgets`},
		{"since.yaml", "issues", 150, "stream issues: replication key updated_at, filtered by the since parameter (rfc3339)"},
	} {
		t.Run(c.doc, func(t *testing.T) {
			dir := t.TempDir()
			b, err := os.ReadFile(filepath.Join("../initconfig/testdata", c.doc))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, c.doc), b)
			r := runTap(t, dir, time.Minute, nil, "init", "--openapi", c.doc, "--base-url", base, "--out", "config.json")
			if r.code != 0 || !strings.Contains(string(r.stderr), "tap init: "+c.note+"\n") {
				t.Fatalf("init: exit %d, want 0 and the note %q; stderr:\n%s", r.code, c.note, r.stderr)
			}
			var cfg struct {
				Streams []struct {
					Name string `json:"name"`
				} `json:"streams"`
			}
			readJSON(t, filepath.Join(dir, "config.json"), &cfg)
			if len(cfg.Streams) != 1 || cfg.Streams[0].Name != c.stream {
				t.Fatalf("streams %+v, want only %s", cfg.Streams, c.stream)
			}
			r = runTap(t, dir, time.Minute, nil, "--config", "config.json", "--state-out", "state.json")
			if r.code != 0 {
				t.Fatalf("run: exit %d; stderr:\n%s", r.code, r.stderr)
			}
			if got := bytes.Count(r.stdout, []byte(`"type":"RECORD"`)); got != c.records {
				t.Fatalf("%d records, want %d; stderr:\n%s", got, c.records, r.stderr)
			}
			if c.stream != "issues" {
				return
			}
			// The second run asks for what changed since the bookmark
			// (less the default overlap of 300 s).
			mu.Lock()
			sinces = nil
			mu.Unlock()
			r = runTap(t, dir, time.Minute, nil, "--config", "config.json", "--state", "state.json")
			if r.code != 0 {
				t.Fatalf("second run: exit %d; stderr:\n%s", r.code, r.stderr)
			}
			mu.Lock()
			defer mu.Unlock()
			want := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(150*time.Hour - 300*time.Second).Format(time.RFC3339)
			if len(sinces) == 0 || sinces[0] != want {
				t.Fatalf("the second run sent since=%v, want %s first", sinces, want)
			}
		})
	}
}
