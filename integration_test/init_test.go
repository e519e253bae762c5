package integration_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The init tests generate a config from each OpenAPI document of
// initconfig/testdata, run it through the real binary against a loopback
// server serving that document's shape, and check that every page was
// walked and every record read exactly once.

const initEnvSecret = "init-s3cret-9d2"

// initEnv holds the values the generated configs read from the
// environment.
var initEnv = []string{"TAP_TOKEN=" + initEnvSecret, "TAP_API_KEY=" + initEnvSecret, "TAP_USERNAME=u",
	"TAP_PASSWORD=" + initEnvSecret, "TAP_CLIENT_ID=c", "TAP_CLIENT_SECRET=" + initEnvSecret, "TAP_OWNER=tap-dev", "TAP_REPO=tap"}

// shapeServer serves one API shape and counts its pages.
type shapeServer struct {
	mu    sync.Mutex
	pages map[string]int // by stream path pattern
	bad   []string       // requests it refused, for the failure message
}

func (s *shapeServer) page(kind string) {
	s.mu.Lock()
	s.pages[kind]++
	s.mu.Unlock()
}

func (s *shapeServer) refuse(w http.ResponseWriter, r *http.Request, why string) {
	s.mu.Lock()
	s.bad = append(s.bad, r.URL.String()+": "+why)
	s.mu.Unlock()
	http.Error(w, why, http.StatusBadRequest)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return def
}

// window is all[from:from+n], clipped.
func window(all []map[string]any, from, n int) []map[string]any {
	if from > len(all) {
		from = len(all)
	}
	return all[from:min(from+n, len(all))]
}

func stamp(i int) string {
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour).Format(time.RFC3339)
}

// initShape is one document and the API it describes.
type initShape struct {
	spec    string
	base    string // path of --base-url on the server
	handler func(s *shapeServer) http.Handler
	want    map[string]int // records per stream
	pages   map[string]int // pages per stream kind, at least
}

func initShapes() map[string]initShape {
	const n = 25
	return map[string]initShape{
		"stripe cursor list": {spec: "stripe.yaml", want: map[string]int{"customers": n, "charges": n}, pages: map[string]int{"customers": 3, "charges": 3},
			handler: func(s *shapeServer) http.Handler {
				list := func(prefix string) []map[string]any {
					var all []map[string]any
					for i := n; i >= 1; i-- { // newest first
						all = append(all, map[string]any{"id": fmt.Sprintf("%s_%03d", prefix, i), "object": prefix, "created": 1767225600 + i, "amount": i, "email": nil})
					}
					return all
				}
				lists := map[string][]map[string]any{"/v1/customers": list("cus"), "/v1/charges": list("ch")}
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					all, ok := lists[r.URL.Path]
					if !ok || r.Header.Get("Authorization") != "Bearer "+initEnvSecret {
						s.refuse(w, r, "unknown path or no bearer token")
						return
					}
					q := r.URL.Query()
					limit := min(atoiOr(q.Get("limit"), 10), 10)
					from := 0
					if after := q.Get("starting_after"); after != "" {
						from = slices.IndexFunc(all, func(m map[string]any) bool { return m["id"] == after }) + 1
						if from == 0 {
							s.refuse(w, r, "no such starting_after")
							return
						}
					}
					page := window(all, from, limit)
					s.page(strings.TrimPrefix(r.URL.Path, "/v1/"))
					writeJSON(w, map[string]any{"object": "list", "url": r.URL.Path, "data": page, "has_more": from+len(page) < len(all)})
				})
			}},
		"github link header with since": {spec: "github.json", want: map[string]int{"issues": n, "issue_comments": 3 * n}, pages: map[string]int{"issues": 3, "comments": n},
			handler: func(s *shapeServer) http.Handler {
				var issues []map[string]any
				for i := 1; i <= n; i++ {
					issues = append(issues, map[string]any{"id": 1000 + i, "number": i, "title": "t", "updated_at": stamp(i), "user": map[string]any{"login": "x", "id": 1}, "labels": []any{"bug"}})
				}
				linked := func(w http.ResponseWriter, r *http.Request, all []map[string]any) {
					q := r.URL.Query()
					per := min(atoiOr(q.Get("per_page"), 30), 10)
					page := atoiOr(q.Get("page"), 1)
					if page*per < len(all) {
						next := *r.URL
						nq := next.Query()
						nq.Set("page", strconv.Itoa(page+1))
						next.RawQuery = nq.Encode()
						w.Header().Set("Link", fmt.Sprintf(`<http://%s%s>; rel="next"`, r.Host, next.RequestURI()))
					}
					writeJSON(w, window(all, (page-1)*per, per))
				}
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Header.Get("Authorization") != "Bearer "+initEnvSecret {
						s.refuse(w, r, "no bearer token")
						return
					}
					if r.URL.Path == "/repos/tap-dev/tap/issues" {
						s.page("issues")
						linked(w, r, issues)
						return
					}
					num, ok := strings.CutPrefix(r.URL.Path, "/repos/tap-dev/tap/issues/")
					num, ok2 := strings.CutSuffix(num, "/comments")
					i := atoiOr(num, 0)
					if !ok || !ok2 || i < 1 || i > n {
						s.refuse(w, r, "unknown path")
						return
					}
					var comments []map[string]any
					for c := 1; c <= 3; c++ {
						comments = append(comments, map[string]any{"id": i*10 + c, "body": "b", "updated_at": stamp(i + c), "user": map[string]any{"login": "y", "id": 2}})
					}
					s.page("comments")
					linked(w, r, comments)
				})
			}},
		"page and per_page": {spec: "pages.yaml", base: "/api/v2", want: map[string]int{"tickets": n}, pages: map[string]int{"tickets": 3},
			handler: func(s *shapeServer) http.Handler {
				var all []map[string]any
				for i := 1; i <= n; i++ {
					all = append(all, map[string]any{"ticket_id": i, "subject": "s", "status": "open", "updated_at": stamp(i)})
				}
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path != "/api/v2/tickets" || r.Header.Get("X-API-Key") != initEnvSecret {
						s.refuse(w, r, "unknown path or no API key")
						return
					}
					q := r.URL.Query()
					per := min(atoiOr(q.Get("per_page"), 10), 10)
					page := atoiOr(q.Get("page"), 1)
					s.page("tickets")
					writeJSON(w, map[string]any{"tickets": window(all, (page-1)*per, per), "page": page, "total_pages": (len(all) + per - 1) / per})
				})
			}},
		"offset and limit": {spec: "offset.json", base: "/api", want: map[string]int{"products": n}, pages: map[string]int{"products": 4},
			handler: func(s *shapeServer) http.Handler {
				var all []map[string]any
				for i := 1; i <= n; i++ {
					all = append(all, map[string]any{"id": fmt.Sprintf("p%d", i), "price": 1.5, "tags": []any{"a"}, "modified_at": stamp(i)})
				}
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if u, p, ok := r.BasicAuth(); r.URL.Path != "/api/products" || !ok || u != "u" || p != initEnvSecret {
						s.refuse(w, r, "unknown path or no basic auth")
						return
					}
					q := r.URL.Query()
					limit := min(atoiOr(q.Get("limit"), 7), 7)
					s.page("products")
					writeJSON(w, map[string]any{"results": window(all, atoiOr(q.Get("offset"), 0), limit), "total": len(all)})
				})
			}},
		"nested child resource": {spec: "nested.yaml", want: map[string]int{"orgs": 5, "org_members": 20}, pages: map[string]int{"orgs": 3, "members": 10},
			handler: func(s *shapeServer) http.Handler {
				var orgs []map[string]any
				for i := 1; i <= 5; i++ {
					orgs = append(orgs, map[string]any{"id": fmt.Sprintf("org%d", i), "name": "o"})
				}
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/oauth/token" {
						if r.ParseForm() != nil || r.PostForm.Get("grant_type") != "client_credentials" {
							s.refuse(w, r, "bad token request")
							return
						}
						writeJSON(w, map[string]any{"access_token": "at-1", "token_type": "bearer", "expires_in": 3600})
						return
					}
					if r.Header.Get("Authorization") != "Bearer at-1" {
						s.refuse(w, r, "no access token")
						return
					}
					q := r.URL.Query()
					if r.URL.Path == "/v1/orgs" {
						from := atoiOr(strings.TrimPrefix(q.Get("cursor"), "c"), 0)
						page := window(orgs, from, min(atoiOr(q.Get("limit"), 2), 2))
						var next any
						if from+len(page) < len(orgs) {
							next = "c" + strconv.Itoa(from+len(page))
						}
						s.page("orgs")
						writeJSON(w, map[string]any{"data": page, "meta": map[string]any{"next_cursor": next}})
						return
					}
					org, ok := strings.CutPrefix(r.URL.Path, "/v1/orgs/")
					org, ok2 := strings.CutSuffix(org, "/members")
					if !ok || !ok2 || !strings.HasPrefix(org, "org") {
						s.refuse(w, r, "unknown path")
						return
					}
					var members []map[string]any
					for m := 1; m <= 4; m++ {
						members = append(members, map[string]any{"member_id": org + "-m" + strconv.Itoa(m), "email": "e", "role": "r"})
					}
					from := atoiOr(q.Get("page_token"), 0)
					page := window(members, from, min(atoiOr(q.Get("page_size"), 3), 3))
					body := map[string]any{"members": page}
					if from+len(page) < len(members) {
						body["next_page_token"] = strconv.Itoa(from + len(page))
					}
					s.page("members")
					writeJSON(w, body)
				})
			}},
		"refs everywhere": {spec: "refs.json", base: "/v3", want: map[string]int{"invoices": n, "categories": 5}, pages: map[string]int{"invoices": 3, "categories": 1},
			handler: func(s *shapeServer) http.Handler {
				var invoices []map[string]any
				for i := 1; i <= n; i++ {
					invoices = append(invoices, map[string]any{"id": i, "created_at": stamp(0), "updated_at": stamp(i),
						"total": map[string]any{"amount": 100, "currency": "EUR"},
						"lines": []any{map[string]any{"kind": "product", "sku": "x", "quantity": 1}, map[string]any{"kind": "service", "hours": 1.5}}})
				}
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					switch r.URL.Path {
					case "/v3/invoices":
						page := atoiOr(r.URL.Query().Get("page"), 1)
						var next any
						if page*10 < n {
							next = "/v3/invoices?page=" + strconv.Itoa(page+1)
						}
						s.page("invoices")
						writeJSON(w, map[string]any{"items": window(invoices, (page-1)*10, 10), "links": map[string]any{"next": next, "self": r.URL.String()}})
					case "/v3/categories":
						var cats []map[string]any
						for i := 1; i <= 5; i++ {
							cats = append(cats, map[string]any{"id": i, "name": "c", "children": []any{map[string]any{"id": 100 + i, "name": "sub", "children": []any{}}}})
						}
						s.page("categories")
						writeJSON(w, cats)
					default:
						s.refuse(w, r, "unknown path")
					}
				})
			}},
		"openapi 3.1": {spec: "v31.yaml", want: map[string]int{"events": n}, pages: map[string]int{"events": 7},
			handler: func(s *shapeServer) http.Handler {
				var all []map[string]any
				for i := 1; i <= n; i++ {
					e := map[string]any{"id": i, "type": "t", "updated_at": stamp(i), "deleted_at": nil, "payload": map[string]any{"value": i}}
					if i%2 == 0 {
						e["payload"] = nil
						e["deleted_at"] = stamp(i)
					}
					all = append(all, e)
				}
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path != "/v1/events" || r.URL.Query().Get("api_key") != initEnvSecret {
						s.refuse(w, r, "unknown path or no api_key")
						return
					}
					q := r.URL.Query()
					from := atoiOr(q.Get("after"), 0)
					page := window(all, from, min(atoiOr(q.Get("limit"), 4), 4))
					var next any
					if from+len(page) < len(all) {
						next = strconv.Itoa(from + len(page))
					}
					s.page("events")
					writeJSON(w, map[string]any{"events": page, "next_cursor": next, "has_more": next != nil})
				})
			}},
	}
}

func TestInitOpenAPIEndToEnd(t *testing.T) {
	t.Parallel()
	for name, sh := range initShapes() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := &shapeServer{pages: map[string]int{}}
			base := serve(t, sh.handler(srv)) + sh.base
			dir := t.TempDir()
			spec, err := filepath.Abs(filepath.Join("..", "initconfig", "testdata", sh.spec))
			if err != nil {
				t.Fatal(err)
			}
			r := runTap(t, dir, time.Minute, nil, "init", "--openapi", spec, "--base-url", base, "--out", "config.json")
			if r.code != 0 {
				t.Fatalf("init exit %d: %s", r.code, r.stderr)
			}
			for _, line := range strings.Split(strings.TrimSpace(string(r.stderr)), "\n") {
				if !strings.HasPrefix(line, "tap init: ") {
					t.Errorf("stderr line %q is not a tap init note", line)
				}
			}
			// --discover loads the config as the sync below does; the probe
			// test runs it.
			if r := runTap(t, dir, time.Minute, initEnv, "--config", "config.json", "--test"); r.code != 0 {
				t.Fatalf("--test exit %d: %s", r.code, r.stderr)
			}
			srv.mu.Lock()
			srv.pages = map[string]int{}
			srv.mu.Unlock()
			run := runTap(t, dir, 2*time.Minute, initEnv, "--config", "config.json")
			if run.code != 0 {
				t.Fatalf("sync exit %d: %s\nrefused: %v", run.code, run.stderr, srv.bad)
			}
			if bytes.Contains(run.stdout, []byte(initEnvSecret)) || bytes.Contains(run.stderr, []byte(initEnvSecret)) {
				t.Errorf("the secret from the environment was printed")
			}
			got := map[string]int{}
			seen := map[string]bool{}
			sc := bufio.NewScanner(bytes.NewReader(run.stdout))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var m struct {
					Type   string         `json:"type"`
					Stream string         `json:"stream"`
					Record map[string]any `json:"record"`
				}
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.Type != "RECORD" {
					continue
				}
				key := m.Stream + "/" + fmt.Sprint(m.Record["id"], m.Record["ticket_id"], m.Record["member_id"])
				if seen[key] {
					t.Errorf("record %s written twice", key)
				}
				seen[key] = true
				got[m.Stream]++
			}
			if d := diffCounts(sh.want, got); d != "" {
				t.Errorf("records per stream: %s\nstderr:\n%s", d, run.stderr)
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			for kind, least := range sh.pages {
				if srv.pages[kind] < least {
					t.Errorf("stream %s: %d pages requested, want at least %d (every page walked)", kind, srv.pages[kind], least)
				}
			}
			if len(srv.bad) > 0 {
				t.Errorf("the server refused: %v", srv.bad)
			}
		})
	}
}

func diffCounts(want, got map[string]int) string {
	var out []string
	for k, w := range want {
		if got[k] != w {
			out = append(out, fmt.Sprintf("%s: got %d, want %d", k, got[k], w))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			out = append(out, fmt.Sprintf("%s: unexpected stream", k))
		}
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

// TestInitWritesNothingOnBadInput: bad input is one line, exit 2, and
// --out is not created (nor an earlier one touched).
func TestInitWritesNothingOnBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("openapi: 3.0.0\ninfo: {title: x, version: '1'}\npaths:\n  /x:\n    get:\n      responses:\n        '200':\n          description: d\n          content:\n            application/json:\n              schema: {$ref: '#/components/schemas/missing'}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "config.json"), []byte("earlier"), 0o644)
	r := runTap(t, dir, time.Minute, nil, "init", "--openapi", "broken.yaml", "--base-url", "http://127.0.0.1:1", "--out", "config.json")
	if r.code != 2 || bytes.Count(r.stderr, []byte("\n")) != 1 || !bytes.Contains(r.stderr, []byte("broken.yaml")) {
		t.Errorf("exit %d, stderr %q: want exit 2 and one line naming the file", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "config.json")); string(b) != "earlier" {
		t.Errorf("config.json was touched: %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("files left behind: %v", entries)
	}
}

// TestInitProbeEndToEnd probes the GitHub-like shape with a bearer token
// on the command line: the token lands nowhere, and the config runs.
func TestInitProbeEndToEnd(t *testing.T) {
	t.Parallel()
	srv := &shapeServer{pages: map[string]int{}}
	base := serve(t, initShapes()["github link header with since"].handler(srv))
	dir := t.TempDir()
	r := runTap(t, dir, time.Minute, nil, "init", "--probe", base+"/repos/tap-dev/tap/issues?per_page=10",
		"--auth-header", "Authorization: Bearer "+initEnvSecret, "--out", "config.json")
	if r.code != 0 {
		t.Fatalf("init exit %d: %s", r.code, r.stderr)
	}
	cfg, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(cfg, []byte(initEnvSecret)) || bytes.Contains(r.stderr, []byte(initEnvSecret)) {
		t.Fatalf("the token passed on the command line was written:\n%s\n%s", cfg, r.stderr)
	}
	if !bytes.Contains(r.stderr, []byte(`pagination link_header`)) || !bytes.Contains(r.stderr, []byte("set TAP_TOKEN")) {
		t.Errorf("stderr does not say its guesses:\n%s", r.stderr)
	}
	if r := runTap(t, dir, time.Minute, initEnv, "--config", "config.json", "--discover"); r.code != 0 {
		t.Fatalf("--discover exit %d: %s", r.code, r.stderr)
	}
	if r := runTap(t, dir, time.Minute, initEnv, "--config", "config.json", "--test"); r.code != 0 {
		t.Fatalf("--test exit %d: %s", r.code, r.stderr)
	}
	run := runTap(t, dir, time.Minute, initEnv, "--config", "config.json")
	if run.code != 0 {
		t.Fatalf("sync exit %d: %s\nrefused: %v", run.code, run.stderr, srv.bad)
	}
	if n := bytes.Count(run.stdout, []byte(`"type":"RECORD"`)); n != 25 {
		t.Errorf("%d records, want the 25 issues", n)
	}
}
