package initconfig

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/settings"
)

// facts are what a test checks of one generated stream.
type facts struct {
	RecordsPath, PK, ReplicationKey, Param, Format, Pagination, Parent string
}

func factsOf(r *Result) map[string]facts {
	out := map[string]facts{}
	for _, d := range r.Config.Streams {
		f := facts{RecordsPath: d.RecordsPath, ReplicationKey: d.ReplicationKey, Pagination: d.Pagination.Type}
		if len(d.PrimaryKey) > 0 {
			f.PK = d.PrimaryKey[0]
		}
		if d.Incremental != nil {
			f.Param, f.Format = d.Incremental.Param, d.Incremental.Format
		}
		if d.Parent != nil {
			f.Parent = d.Parent.Stream + "." + d.Parent.Key + "->" + d.Parent.As
		}
		out[d.Name] = f
	}
	return out
}

func generate(t *testing.T, file string, opts Options) (*Result, error) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return FromOpenAPI(context.Background(), data, file, opts)
}

func TestFromOpenAPI(t *testing.T) {
	tests := map[string]struct {
		want  map[string]facts
		notes []string // each is in some note
	}{
		"stripe.yaml": {want: map[string]facts{
			"customers": {RecordsPath: "data", PK: "id", ReplicationKey: "created", Param: "created[gte]", Format: "unix", Pagination: "cursor"},
			"charges":   {RecordsPath: "data", PK: "id", Pagination: "cursor"},
		}, notes: []string{"stream charges: pagination cursor guessed from starting_after/has_more", "auth: bearer token"}},
		"github.json": {want: map[string]facts{
			"issues":         {PK: "id", ReplicationKey: "updated_at", Param: "since", Pagination: "link_header"},
			"issue_comments": {PK: "id", ReplicationKey: "updated_at", Param: "since", Pagination: "link_header", Parent: "issues.number->issue_number"},
		}, notes: []string{"path parameter {owner} is no parent's key: path_params.owner reads the environment variable TAP_OWNER"}},
		"pages.yaml": {want: map[string]facts{
			"tickets": {RecordsPath: "tickets", PK: "ticket_id", ReplicationKey: "updated_at", Param: "updated_since", Pagination: "page_number"},
		}, notes: []string{"servers[0].url https://{subdomain}.helpdesk.example.com/api/v2 with its variables' defaults", "primary key ticket_id guessed"}},
		"offset.json": {want: map[string]facts{
			"products": {RecordsPath: "results", PK: "id", ReplicationKey: "modified_at", Param: "modified_after", Pagination: "offset"},
		}},
		"nested.yaml": {want: map[string]facts{
			"orgs":        {RecordsPath: "data", PK: "id", Pagination: "cursor"},
			"org_members": {RecordsPath: "members", PK: "member_id", Pagination: "cursor", Parent: "orgs.id->org_id"},
		}, notes: []string{"OAuth2 client credentials"}},
		"refs.json": {want: map[string]facts{
			"invoices":   {RecordsPath: "items", PK: "id", ReplicationKey: "updated_at", Param: "updated_after", Pagination: "next_url"},
			"categories": {PK: "id", Pagination: "none"},
		}},
		"v31.yaml": {want: map[string]facts{
			"events": {RecordsPath: "events", PK: "id", ReplicationKey: "updated_at", Param: "updated_after", Pagination: "cursor"},
		}},
	}
	for file, tt := range tests {
		t.Run(file, func(t *testing.T) {
			base := "https://api.example.com"
			if file == "pages.yaml" {
				base = "" // the server template's defaults
			}
			r, err := generate(t, filepath.Join("testdata", file), Options{BaseURL: base})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, factsOf(r)); d != "" {
				t.Errorf("streams (-want +got):\n%s", d)
			}
			all := strings.Join(r.Notes, "\n")
			for _, n := range tt.notes {
				if !strings.Contains(all, n) {
					t.Errorf("no note says %q; notes:\n%s", n, all)
				}
			}
			loadsAsIs(t, r)
		})
	}
}

// loadsAsIs writes the config and loads it as the tap does.
func loadsAsIs(t *testing.T, r *Result) {
	t.Helper()
	b, err := r.Config.JSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"TAP_TOKEN", "TAP_API_KEY", "TAP_USERNAME", "TAP_PASSWORD", "TAP_CLIENT_ID", "TAP_CLIENT_SECRET", "TAP_OWNER", "TAP_REPO"} {
		t.Setenv(v, "x-env-value") // secrets need 8 characters or more
	}
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := settings.Load(path); err != nil {
		t.Errorf("the written config does not load: %v\n%s", err, b)
	}
}

// loadedSchema is the schema of stream as the tap reads it from the
// written config: its refs to the definitions expanded.
func loadedSchema(t *testing.T, r *Result, stream string) map[string]any {
	t.Helper()
	b, err := r.Config.JSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"TAP_TOKEN", "TAP_API_KEY", "TAP_USERNAME", "TAP_PASSWORD", "TAP_CLIENT_ID", "TAP_CLIENT_SECRET", "TAP_OWNER", "TAP_REPO"} {
		t.Setenv(v, "x-env-value")
	}
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := settings.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Schemas[stream]
}

func TestFromOpenAPISchema(t *testing.T) {
	r, err := generate(t, "testdata/refs.json", Options{BaseURL: "https://x"})
	if err != nil {
		t.Fatal(err)
	}
	inv := loadedSchema(t, r, "invoices")
	props := inv["properties"].(map[string]any)
	// allOf of three $refs merged; oneOf of two objects merged.
	want := map[string]any{"type": "object", "properties": map[string]any{
		"hours": map[string]any{"type": "number"}, "kind": map[string]any{"type": "string"},
		"quantity": map[string]any{"type": "integer"}, "sku": map[string]any{"type": "string"}}}
	if d := cmp.Diff(want, props["lines"].(map[string]any)["items"]); d != "" {
		t.Errorf("lines.items (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]any{"type": "string", "format": "date-time"}, props["updated_at"]); d != "" {
		t.Errorf("updated_at (-want +got):\n%s", d)
	}

	r, err = generate(t, "testdata/v31.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	json.Unmarshal(r.Config.Streams[0].Schema, &ev)
	evp := ev["properties"].(map[string]any)
	if d := cmp.Diff(map[string]any{"type": []any{"string", "null"}, "format": "date-time"}, evp["deleted_at"]); d != "" {
		t.Errorf("3.1 type array (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]any{"object", "null"}, evp["payload"].(map[string]any)["type"]); d != "" {
		t.Errorf("3.1 nullable object (-want +got):\n%s", d)
	}
}

func TestFromOpenAPIRefusesBadInput(t *testing.T) {
	const ok = "openapi: 3.0.0\ninfo: {title: x, version: '1'}\n"
	list := "paths:\n  /things:\n    get:\n      responses:\n        '200':\n          description: d\n          content:\n            application/json:\n              schema: {type: array, items: {type: object, properties: {id: {type: string}}}}\n"
	tests := map[string]struct{ doc, opts, want string }{
		"not OpenAPI":         {doc: `{"swagger": "1.2"}`, want: `not an OpenAPI document: expected a top-level "openapi": "3.x" (or "swagger": "2.0") field`},
		"not JSON or YAML":    {doc: "{{{", want: "not JSON or YAML"},
		"OpenAPI 2 spelled 4": {doc: "openapi: 4.0.0\n", want: `openapi "4.0.0": expected version 3.0 or 3.1`},
		"broken ref": {doc: ok + "servers: [{url: 'https://x'}]\npaths:\n  /x:\n    get:\n      responses:\n        '200':\n          description: d\n          content:\n            application/json:\n              schema: {$ref: '#/components/schemas/nope'}\n",
			want: `no GET operation whose success response is a list (an array, or an object holding an array of objects) ($ref "#/components/schemas/nope" cannot be resolved: left out GET /x)`},
		"remote ref not fetched": {doc: ok + "servers: [{url: 'https://x'}]\npaths:\n  /x:\n    get:\n      responses:\n        '200':\n          description: d\n          content:\n            application/json:\n              schema: {$ref: 'http://127.0.0.1:1/s.json'}\n",
			want: "only local files are followed"},
		"$ref loop": {doc: ok + "servers: [{url: 'https://x'}]\npaths:\n  /x:\n    get:\n      responses:\n        '200':\n          description: d\n          content:\n            application/json:\n              schema: {$ref: '#/components/schemas/a'}\ncomponents:\n  schemas:\n    a: {$ref: '#/components/schemas/b'}\n    b: {$ref: '#/components/schemas/a'}\n",
			want: "more than 32 $refs in a chain (a loop?)"},
		"no list operation": {doc: ok + "servers: [{url: 'https://x'}]\npaths:\n  /x/{id}:\n    get:\n      responses:\n        '200':\n          description: d\n          content:\n            application/json:\n              schema: {type: object, properties: {id: {type: string}}}\n",
			want: "no GET operation whose success response is a list"},
		"no server":           {doc: ok + list, want: "the document lists no servers: give --base-url"},
		"relative server":     {doc: ok + "servers: [{url: /api}]\n" + list, want: `servers[0].url "/api" is not an absolute http(s) URL: give --base-url`},
		"template no default": {doc: ok + "servers: [{url: 'https://{region}.x.com', variables: {region: {default: ''}}}]\n" + list, want: "variable {region} has no default"},
		"paths match nothing": {doc: ok + "servers: [{url: 'https://x'}]\n" + list, opts: "/v9/*", want: "among the paths matching --paths /v9/*"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "spec.yaml")
			os.WriteFile(file, []byte(tt.doc), 0o644)
			_, err := generate(t, file, Options{Paths: tt.opts})
			var ie *InputError
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), file+": ") {
				t.Fatalf("err = %v, want %q after the file name", err, tt.want)
			}
			if !asInputError(err, &ie) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err %T %q: want one line, an *InputError", err, err)
			}
		})
	}
}

func asInputError(err error, ie **InputError) bool {
	e, ok := err.(*InputError)
	*ie = e
	return ok
}

func TestFromOpenAPISwagger2(t *testing.T) {
	doc := `{"swagger": "2.0", "info": {"title": "s", "version": "1"}, "host": "api.example.com", "basePath": "/v1", "schemes": ["https"],
	  "securityDefinitions": {"key": {"type": "apiKey", "in": "header", "name": "X-Key"}},
	  "paths": {"/pets": {"get": {"produces": ["application/json"], "parameters": [{"name": "page", "in": "query", "type": "integer"}, {"name": "per_page", "in": "query", "type": "integer", "maximum": 50}],
	    "responses": {"200": {"description": "d", "schema": {"type": "array", "items": {"$ref": "#/definitions/Pet"}}}}}}},
	  "definitions": {"Pet": {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}}}`
	file := filepath.Join(t.TempDir(), "swagger.json")
	os.WriteFile(file, []byte(doc), 0o644)
	r, err := generate(t, file, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]facts{"pets": {PK: "id", Pagination: "page_number"}}, factsOf(r)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if r.Config.BaseURL != "https://api.example.com/v1" || r.Config.Auth["name"] != "X-Key" {
		t.Errorf("base_url %q, auth %v", r.Config.BaseURL, r.Config.Auth)
	}
	if !strings.Contains(strings.Join(r.Notes, "\n"), "a Swagger 2.0 document, converted to OpenAPI 3.0") {
		t.Errorf("no note of the conversion: %q", r.Notes)
	}
	loadsAsIs(t, r)
}

func TestFromOpenAPIPaths(t *testing.T) {
	r, err := generate(t, "testdata/stripe.yaml", Options{Paths: "/v1/charge*"})
	if err != nil {
		t.Fatal(err)
	}
	if got := factsOf(r); len(got) != 1 || got["charges"].Pagination != "cursor" {
		t.Errorf("--paths /v1/charge*: streams %v", got)
	}
}

// A document split into files: $refs to a local file are followed, from
// JSON and YAML alike.
func TestFromOpenAPIRefToAnotherFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "schemas.yaml"), []byte("thing:\n  type: object\n  properties:\n    id: {type: string}\n    updated_at: {type: string, format: date-time}\n"), 0o644)
	op := `{"get": {"responses": {"200": {"description": "d", "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "schemas.yaml#/thing"}}}}}}}}`
	docs := map[string]string{
		"api.json": `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "servers": [{"url": "https://x"}], "paths": {"/things": ` + op + `}}`,
		"api.yaml": "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'https://x'}]\npaths:\n  /things: " + op + "\n",
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(dir, name)
			os.WriteFile(file, []byte(doc), 0o644)
			r, err := generate(t, file, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(map[string]facts{"things": {PK: "id", Pagination: "none"}}, factsOf(r)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if !strings.Contains(string(r.Config.Streams[0].Schema), `"updated_at":{"format":"date-time","type":"string"}`) {
				t.Errorf("schema from the other file: %s", r.Config.Streams[0].Schema)
			}
		})
	}
}

// diamondDoc is an OpenAPI document whose record schema is L0, each L<i>
// an allOf of L<i+1> twice, levels deep: a walk per path visits 2^levels
// schemas.
func diamondDoc(levels int) []byte {
	schemas := map[string]any{}
	for i := range levels {
		next := map[string]any{"$ref": "#/components/schemas/L" + strconv.Itoa(i+1)}
		schemas["L"+strconv.Itoa(i)] = map[string]any{"allOf": []any{next, next}, "oneOf": []any{next, next}}
	}
	schemas["L"+strconv.Itoa(levels)] = map[string]any{"type": "object", "required": []any{"id"},
		"properties": map[string]any{"id": map[string]any{"type": "string"}, "updated_at": map[string]any{"type": "string", "format": "date-time"}}}
	doc := map[string]any{
		"openapi": "3.0.3", "info": map[string]any{"title": "diamonds", "version": "1"},
		"servers": []any{map[string]any{"url": "https://api.example.com"}},
		"paths": map[string]any{"/things": map[string]any{"get": map[string]any{
			"responses": map[string]any{"200": map[string]any{"description": "ok", "content": map[string]any{
				"application/json": map[string]any{"schema": map[string]any{"type": "array", "items": map[string]any{"$ref": "#/components/schemas/L0"}}}}}},
		}}},
		"components": map[string]any{"schemas": schemas},
	}
	b, _ := json.Marshal(doc)
	return b
}

// TestDiamondsWalkedOnce: a 40-level diamond document (a few KB) makes
// its stream as a flat one does; walked per path it ran for ever.
func TestDiamondsWalkedOnce(t *testing.T) {
	done := make(chan error, 1)
	var res *Result
	go func() {
		var err error
		res, err = FromOpenAPI(context.Background(), diamondDoc(40), "diamonds.json", Options{})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute): // a bound on a walk of 2^40, not a measure: the fix takes milliseconds
		t.Fatal("FromOpenAPI of a 40-level diamond document did not end in a minute: a schema is walked once per path")
	}
	if len(res.Config.Streams) != 1 {
		t.Fatalf("streams: %d, want 1", len(res.Config.Streams))
	}
	d := res.Config.Streams[0]
	var schema struct{ Properties map[string]any }
	if err := json.Unmarshal(d.Schema, &schema); err != nil {
		t.Fatal(err)
	}
	if len(d.PrimaryKey) != 1 || d.PrimaryKey[0] != "id" || schema.Properties["updated_at"] == nil {
		t.Errorf("stream %+v: want primary key id and updated_at in its schema", d)
	}
}

// TestRefsStayInTheFolder: a $ref is followed only to a regular file
// inside the document's folder, bounded; the error names the file and
// never quotes what it holds.
func TestRefsStayInTheFolder(t *testing.T) {
	outside := t.TempDir()
	secretFile := filepath.Join(outside, "passwd")
	if err := os.WriteFile(secretFile, []byte("root:x:0:0:SECRET-LINE:/root:/bin/bash\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "garbage.yaml"), []byte("SECRET-LINE: [unclosed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "thing.yaml"), []byte("type: object\nproperties:\n  id: {type: string}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	doc := func(ref string) string {
		return `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "servers": [{"url": "https://api.example.com"}],
"paths": {"/things": {"get": {"responses": {"200": {"description": "ok", "content": {"application/json":
{"schema": {"type": "array", "items": {"$ref": "` + ref + `"}}}}}}}}}}`
	}
	for _, tt := range []struct{ ref, want string }{
		{"thing.yaml", ""},
		{secretFile, "outside the document's folder"},
		{"../" + filepath.Base(outside) + "/passwd", "outside the document's folder"},
		{"zero.yaml", "outside the document's folder"}, // the link's target is /dev/zero
		{"fifo.yaml", "not a regular file (a FIFO)"},
		{"garbage.yaml", "not JSON or YAML: at line"},
	} {
		file := filepath.Join(dir, "api.json")
		res, err := FromOpenAPI(context.Background(), []byte(doc(tt.ref)), file, Options{})
		if tt.want == "" {
			if err != nil || len(res.Config.Streams) != 1 {
				t.Errorf("$ref %s: %v, want one stream", tt.ref, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("$ref %s: err %v, want one saying %q", tt.ref, err, tt.want)
			continue
		}
		if strings.Contains(err.Error(), "SECRET-LINE") || strings.Contains(err.Error(), "root:x") {
			t.Errorf("$ref %s: the error quotes the file: %v", tt.ref, err)
		}
	}
}

// TestYAMLAliasBomb: a document of a few KB whose aliases double at each
// level is refused before it is decoded whole.
func TestYAMLAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\nx-l0: &l0 [x, x]\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "x-l%d: &l%d [*l%d, *l%d]\n", i, i, i-1, i-1)
	}
	_, err := FromOpenAPI(context.Background(), []byte(b.String()), "bomb.yaml", Options{})
	if err == nil || !strings.Contains(err.Error(), "aliases expand it") {
		t.Fatalf("err %v, want the aliases refused", err)
	}
}

// TestSwagger2Produces: an operation's media types are its produces, else
// the document's, else JSON; a JSON type with parameters is JSON. An API
// that answers XML (AWS's S3 and Route 53 documents) gives no JSON
// stream.
func TestSwagger2Produces(t *testing.T) {
	doc := func(docProduces, opProduces string) string {
		op := `"responses": {"200": {"description": "d", "schema": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}}}}}}`
		if opProduces != "" {
			op = `"produces": [` + opProduces + `], ` + op
		}
		top := ""
		if docProduces != "" {
			top = `"produces": [` + docProduces + `], `
		}
		return `{"swagger": "2.0", "info": {"title": "s", "version": "1"}, "host": "api.example.com", ` + top + `"paths": {"/pets": {"get": {` + op + `}}}}`
	}
	for _, tt := range []struct {
		name, docProduces, opProduces string
		streams                       int
	}{
		{"none said", "", "", 1},
		{"document says XML", `"text/xml"`, "", 0},
		{"operation overrides the document", `"text/xml"`, `"application/json"`, 1},
		{"JSON with a charset", `"application/json; charset=utf-8"`, "", 1},
		{"vendor JSON", `"application/vnd.api+json"`, "", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "swagger.json")
			os.WriteFile(file, []byte(doc(tt.docProduces, tt.opProduces)), 0o644)
			r, err := generate(t, file, Options{})
			switch {
			case tt.streams == 0 && (err == nil || !strings.Contains(err.Error(), "no GET operation whose success response is a list")):
				t.Errorf("err %v, want no list operation", err)
			case tt.streams > 0 && err != nil:
				t.Errorf("err %v, want %d streams", err, tt.streams)
			case tt.streams > 0 && len(r.Config.Streams) != tt.streams:
				t.Errorf("%d streams, want %d", len(r.Config.Streams), tt.streams)
			}
		})
	}
}

// TestSameDocumentSameConfig: where two envelope paths are equally
// likely (Spotify's search: albums.next, artists.next, tracks.next), the
// choice does not depend on map order.
func TestSameDocumentSameConfig(t *testing.T) {
	env := map[string]*shape{}
	for _, p := range []string{"tracks.next", "artists.next", "albums.next", "playlists.next"} {
		env[p] = &shape{types: []string{"string"}}
	}
	for range 20 {
		if got := findNextURL(env); got != "albums.next" {
			t.Fatalf("findNextURL = %q, want albums.next (shortest, then first by name)", got)
		}
	}
}
