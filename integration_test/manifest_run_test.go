package integration_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// singerRecords groups a Singer run's RECORD messages by stream, and
// returns its last STATE's value.
func singerRecords(t *testing.T, out []byte) (map[string][]map[string]any, any) {
	t.Helper()
	recs := map[string][]map[string]any{}
	var state any
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct {
			Type   string         `json:"type"`
			Stream string         `json:"stream"`
			Record map[string]any `json:"record"`
			Value  any            `json:"value"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not a JSON message: %s", sc.Text())
		}
		switch m.Type {
		case "RECORD":
			recs[m.Stream] = append(recs[m.Stream], m.Record)
		case "STATE":
			state = m.Value
		}
	}
	return recs, state
}

// TestManifestConfigCat runs Airbyte's own ConfigCat manifest, unchanged,
// against a loopback server that answers as ConfigCat's API documents:
// basic auth, organizations and products, and their members, tags and
// environments as substreams whose paths carry the parent's id.
func TestManifestConfigCat(t *testing.T) {
	const user, password = "cc-user", "cc-password-5b1f"
	want := map[string][]map[string]any{
		"organizations": {{"organizationId": "o1", "name": "Acme"}, {"organizationId": "o2", "name": "Globex"}},
		"products":      {{"productId": "p1", "name": "Shop", "order": 0.0}, {"productId": "p2", "name": "App", "order": 1.0}},
	}
	children := map[string]string{"organization_members": "organizationId", "tags": "productId", "environments": "productId"}
	paths := map[string]string{"organization_members": "/v1/organizations/%s/members", "tags": "/v1/products/%s/tags", "environments": "/v1/products/%s/environments"}
	parents := map[string]string{"organization_members": "organizations", "tags": "products", "environments": "products"}
	bodies := map[string]any{"/v1/organizations": want["organizations"], "/v1/products": want["products"]}
	for child, key := range children {
		for i, p := range want[parents[child]] {
			id := p[key].(string)
			recs := []map[string]any{{"userId": fmt.Sprintf("%s-u%d", id, i), "email": id + "@example.com"}}
			if child != "organization_members" {
				recs = []map[string]any{{"tagId": float64(i + 1), "environmentId": fmt.Sprintf("%s-e", id), "name": child + " of " + id}}
			}
			bodies[fmt.Sprintf(paths[child], id)] = recs
			for _, r := range recs {
				c := map[string]any{key: id} // the tap writes the partition field into a child's records
				for k, v := range r {
					c[k] = v
				}
				want[child] = append(want[child], c)
			}
		}
	}
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != auth {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		body, ok := bodies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}))
	dir := t.TempDir()
	config := filepath.Join(dir, "config.json")
	writeJSONFile(t, config, map[string]any{"username": user, "password": password, "tap": map[string]any{"base_url": base}})
	manifest, err := filepath.Abs("../manifest/testdata/airbyte/configcat.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res := runTap(t, dir, time.Minute, nil, "--manifest", manifest, "--config", config)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	got, _ := singerRecords(t, res.stdout)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	for _, out := range [][]byte{res.stdout, res.stderr} {
		if bytes.Contains(out, []byte(password)) {
			t.Errorf("the password was written: %s", out)
		}
	}

	// Airbyte mode, from the same manifest: discover names the streams,
	// read writes the records as RECORD messages.
	res = runTap(t, dir, time.Minute, nil, "discover", "--manifest", manifest, "--config", config)
	if res.code != 0 || !bytes.Contains(res.stdout, []byte(`"name":"organization_members"`)) {
		t.Fatalf("discover: exit %d: %s %s", res.code, res.stdout, res.stderr)
	}
}

// manifestPaging is a manifest in the CDK's language with every paginator
// the tap lowers and a datetime cursor: cursor pages whose next URL is in
// the body, page numbers, offsets, and an incremental stream filtered by
// a start parameter.
const manifestPaging = `version: 6.0.0
type: DeclarativeSource
definitions:
  requester:
    type: HttpRequester
    url_base: "https://api.example.com/v2"
    authenticator:
      type: ApiKeyAuthenticator
      header: X-Api-Key
      api_token: "{{ config['api_key'] }}"
  schema:
    type: InlineSchemaLoader
    schema: {type: object, properties: {id: {type: integer}, updated_at: {type: string}}}
streams:
  - type: DeclarativeStream
    name: by_link
    primary_key: id
    schema_loader: {$ref: "#/definitions/schema"}
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/requester", path: /link}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestPath}
        pagination_strategy:
          type: CursorPagination
          cursor_value: '{{ response.get("links", {}).get("next", {}) }}'
          stop_condition: '{{ not response.get("links", {}).get("next", {}) }}'
  - type: DeclarativeStream
    name: by_page
    primary_key: id
    schema_loader: {$ref: "#/definitions/schema"}
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/requester", path: /page}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [results]}}
      paginator:
        type: DefaultPaginator
        page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: per_page}
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
        pagination_strategy: {type: PageIncrement, page_size: 2, start_from_page: 1}
  - type: DeclarativeStream
    name: by_offset
    primary_key: id
    schema_loader: {$ref: "#/definitions/schema"}
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/requester", path: /offset}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [items]}}
      paginator:
        type: DefaultPaginator
        page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
        pagination_strategy: {type: OffsetIncrement, page_size: 2}
  - type: DeclarativeStream
    name: updates
    primary_key: id
    schema_loader: {$ref: "#/definitions/schema"}
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated_at
      datetime_format: "%Y-%m-%dT%H:%M:%SZ"
      start_datetime: {type: MinMaxDatetime, datetime: "{{ config['start_date'] }}", datetime_format: "%Y-%m-%dT%H:%M:%SZ"}
      start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: updated_since}
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/requester", path: /updates}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next_cursor }}"}
  - type: DeclarativeStream
    name: notes
    primary_key: note_id
    schema_loader: {type: InlineSchemaLoader, schema: {type: object, properties: {note_id: {type: string}}}}
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/requester", path: /notes}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [notes]}}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - type: ParentStreamConfig
            parent_key: id
            partition_field: item_id
            request_option: {type: RequestOption, inject_into: request_parameter, field_name: item}
            stream: {$ref: "#/streams/0"}
spec:
  connection_specification:
    type: object
    required: [api_key, start_date]
    properties:
      api_key: {type: string, airbyte_secret: true}
      start_date: {type: string}
`

// TestManifestPaging runs manifestPaging against a loopback server of
// six records per stream in pages of two, then again from the STATE the
// first run ended with: the incremental stream asks for what changed
// since its bookmark and reads fewer records.
func TestManifestPaging(t *testing.T) {
	const key = "key-3f9a7c21"
	rows := func(n int, day int) []map[string]any {
		var out []map[string]any
		for i := 1; i <= n; i++ {
			out = append(out, map[string]any{"id": float64(i), "updated_at": time.Date(2025, 1, day+i, 0, 0, 0, 0, time.UTC).Format(time.RFC3339)})
		}
		return out
	}
	all := rows(6, 0)
	var mu sync.Mutex
	var since []string
	var base string
	page := func(from int) []map[string]any { return all[min(from, 6):min(from+2, 6)] }
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != key {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		q := r.URL.Query()
		var body any
		switch r.URL.Path {
		case "/v2/link":
			n, _ := strconv.Atoi(q.Get("n"))
			links := map[string]any{}
			if n+2 < 6 {
				links["next"] = fmt.Sprintf("%s/v2/link?n=%d", base, n+2)
			}
			body = map[string]any{"data": page(n), "links": links}
		case "/v2/page":
			p, _ := strconv.Atoi(q.Get("page"))
			if q.Get("per_page") != "2" || p < 1 {
				http.Error(w, "bad page", http.StatusBadRequest)
				return
			}
			body = map[string]any{"results": page((p - 1) * 2)}
		case "/v2/offset":
			o, _ := strconv.Atoi(q.Get("offset"))
			if q.Get("limit") != "2" {
				http.Error(w, "bad limit", http.StatusBadRequest)
				return
			}
			body = map[string]any{"items": page(o)}
		case "/v2/notes":
			item := q.Get("item")
			if item == "" {
				http.Error(w, "item is required", http.StatusBadRequest)
				return
			}
			body = map[string]any{"notes": []map[string]any{{"note_id": "n" + item}}}
		case "/v2/updates":
			mu.Lock()
			since = append(since, q.Get("updated_since"))
			mu.Unlock()
			after, err := time.Parse(time.RFC3339, q.Get("updated_since"))
			if err != nil {
				http.Error(w, "bad updated_since", http.StatusBadRequest)
				return
			}
			var match []map[string]any
			for _, r := range all {
				if ts, _ := time.Parse(time.RFC3339, r["updated_at"].(string)); !ts.Before(after) {
					match = append(match, r)
				}
			}
			c, _ := strconv.Atoi(q.Get("cursor"))
			next := any(nil)
			if c+2 < len(match) {
				next = strconv.Itoa(c + 2)
			}
			body = map[string]any{"data": match[min(c, len(match)):min(c+2, len(match))], "next_cursor": next}
		default:
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(body)
	})
	base = serve(t, h)
	dir := t.TempDir()
	manifest := filepath.Join(dir, "manifest.yaml")
	if err := os.WriteFile(manifest, []byte(manifestPaging), 0o600); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "config.json")
	writeJSONFile(t, config, map[string]any{"api_key": key, "start_date": "2025-01-01T00:00:00Z", "tap": map[string]any{"base_url": base}})
	res := runTap(t, dir, time.Minute, nil, "--manifest", manifest, "--config", config)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	got, state := singerRecords(t, res.stdout)
	for _, s := range []string{"by_link", "by_page", "by_offset", "updates"} {
		if diff := cmp.Diff(all, got[s]); diff != "" {
			t.Errorf("%s: records (-want +got):\n%s", s, diff)
		}
	}
	// A note of each item, asked with the item's id in the query; the
	// tap writes the id into the note under the partition field.
	var notes []map[string]any
	for _, r := range all {
		id := strconv.Itoa(int(r["id"].(float64)))
		notes = append(notes, map[string]any{"note_id": "n" + id, "item_id": r["id"]})
	}
	if diff := cmp.Diff(notes, got["notes"]); diff != "" {
		t.Errorf("notes: records (-want +got):\n%s", diff)
	}
	assertNone(t, res.outputs(), key)

	statePath := filepath.Join(dir, "state.json")
	writeJSONFile(t, statePath, state)
	mu.Lock()
	since = nil
	mu.Unlock()
	res = runTap(t, dir, time.Minute, nil, "--manifest", manifest, "--config", config, "--state", statePath)
	if res.code != 0 {
		t.Fatalf("second run: exit %d: %s", res.code, res.stderr)
	}
	again, _ := singerRecords(t, res.stdout)
	if n := len(again["updates"]); n == 0 || n >= len(all) {
		t.Errorf("second run read %d updates, want fewer than %d and some (the last is read again)", n, len(all))
	}
	mu.Lock()
	if len(since) == 0 || !strings.HasPrefix(since[0], "2025-01-06") {
		t.Errorf("second run asked updated_since %q, want the bookmark 2025-01-06", since)
	}
	since = nil
	mu.Unlock()

	// Airbyte mode, from a state the CDK wrote: its cursor shape is read
	// as the bookmark, and written back beside the tap's own keys.
	catalog := filepath.Join(dir, "catalog.json")
	writeJSONFile(t, catalog, map[string]any{"streams": []any{map[string]any{
		"stream":    map[string]any{"name": "updates", "json_schema": map[string]any{}, "supported_sync_modes": []any{"full_refresh", "incremental"}},
		"sync_mode": "incremental", "destination_sync_mode": "append", "cursor_field": []any{"updated_at"}}}})
	cdkState := filepath.Join(dir, "cdk_state.json")
	writeJSONFile(t, cdkState, []any{map[string]any{"type": "STREAM", "stream": map[string]any{
		"stream_descriptor": map[string]any{"name": "updates"}, "stream_state": map[string]any{"updated_at": "2025-01-04T00:00:00Z"}}}})
	res = runTap(t, dir, time.Minute, nil, "read", "--manifest", manifest, "--config", config, "--catalog", catalog, "--state", cdkState)
	if res.code != 0 {
		t.Fatalf("read from the CDK's state: exit %d: %s", res.code, res.stdout)
	}
	var records int
	var last map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(res.stdout), []byte("\n")) {
		var m struct {
			Type  string `json:"type"`
			State struct {
				Stream struct {
					State map[string]any `json:"stream_state"`
				} `json:"stream"`
			} `json:"state"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("not a JSON message: %s", line)
		}
		switch m.Type {
		case "RECORD":
			records++
		case "STATE":
			last = m.State.Stream.State
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(since) == 0 || since[0] != "2025-01-04T00:00:00Z" {
		t.Errorf("the read from the CDK's state asked updated_since %q, want its cursor 2025-01-04T00:00:00Z", since)
	}
	if records != 3 {
		t.Errorf("read %d records from the CDK's state, want the 3 from 2025-01-04", records)
	}
	if last["updated_at"] != "2025-01-06T00:00:00Z" || last["replication_key_value"] != "2025-01-06T00:00:00Z" {
		t.Errorf("last stream_state %v: want the CDK's updated_at and the tap's bookmark, both 2025-01-06T00:00:00Z", last)
	}
}

func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestManifestDelighted runs Airbyte's Delighted manifest, unchanged,
// against a loopback server that answers as Delighted's API documents:
// basic auth with the key as the user, people paged by the Link header,
// unsubscribes, bounces and survey responses by page number, 100 a page,
// each filtered by since/until (epoch seconds, until inclusive) in the
// manifest's weekly windows. A second run from its STATE asks each stream
// from its bookmark and reads fewer records.
func TestManifestDelighted(t *testing.T) {
	const key = "dl-key-7c1e90ab"
	now := time.Now().UTC().Truncate(time.Second)
	start := now.Add(-20 * 24 * time.Hour)
	cursors := map[string]string{"people": "created_at", "unsubscribes": "unsubscribed_at", "bounces": "bounced_at", "survey_responses": "updated_at"}
	params := map[string][2]string{"survey_responses": {"updated_since", "updated_until"}}
	data := map[string][]map[string]any{}
	for stream, field := range cursors {
		for i := range 400 {
			ts := start.Add(time.Duration(i) * 20 * 24 * time.Hour / 400).Add(time.Minute).Unix()
			r := map[string]any{field: float64(ts)}
			switch stream {
			case "people":
				r["id"] = fmt.Sprintf("p%03d", i)
				r["email"] = fmt.Sprintf("p%03d@example.com", i)
			case "survey_responses":
				r["id"] = fmt.Sprintf("r%03d", i)
				r["score"] = float64(i % 11)
			default:
				r["person_id"] = fmt.Sprintf("p%03d", i)
				r["email"] = fmt.Sprintf("p%03d@example.com", i)
			}
			data[stream] = append(data[stream], r)
		}
	}
	var mu sync.Mutex
	asked := map[string][]int64{} // the since of each stream's requests
	var base string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || user != key || pass != "" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		stream := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1/"), ".json")
		rows, known := data[stream]
		if !known {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		p := params[stream]
		if p[0] == "" {
			p = [2]string{"since", "until"}
		}
		since, err1 := strconv.ParseInt(q.Get(p[0]), 10, 64)
		until, err2 := strconv.ParseInt(q.Get(p[1]), 10, 64)
		per, err3 := strconv.Atoi(q.Get("per_page"))
		if err1 != nil || err2 != nil || err3 != nil || per != 100 {
			http.Error(w, "since, until and per_page=100 are required", http.StatusBadRequest)
			return
		}
		mu.Lock()
		asked[stream] = append(asked[stream], since)
		mu.Unlock()
		var match []map[string]any
		for _, row := range rows {
			if ts := int64(row[cursors[stream]].(float64)); ts >= since && ts <= until {
				match = append(match, row)
			}
		}
		page := 1
		if s := q.Get("page"); s != "" {
			page, _ = strconv.Atoi(s)
		}
		from := min((page-1)*per, len(match))
		to := min(from+per, len(match))
		if stream == "people" && to < len(match) {
			next := *r.URL
			nq := next.Query()
			nq.Set("page", strconv.Itoa(page+1))
			next.RawQuery = nq.Encode()
			w.Header().Set("Link", fmt.Sprintf(`<%s%s>; rel="next"`, base, next.RequestURI()))
		}
		_ = json.NewEncoder(w).Encode(match[from:to])
	})
	base = serve(t, h)
	dir := t.TempDir()
	config := filepath.Join(dir, "config.json")
	writeJSONFile(t, config, map[string]any{"api_key": key, "since": start.Format("2006-01-02 15:04:05"), "tap": map[string]any{"base_url": base}})
	manifest, err := filepath.Abs("../manifest/testdata/airbyte/delighted.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res := runTap(t, dir, 2*time.Minute, nil, "--manifest", manifest, "--config", config)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	got, state := singerRecords(t, res.stdout)
	for stream, want := range data {
		if diff := cmp.Diff(want, got[stream]); diff != "" {
			t.Errorf("%s: records (-want +got):\n%s", stream, diff)
		}
	}
	mu.Lock()
	for stream := range data {
		if n := len(asked[stream]); n < 3 {
			t.Errorf("%s: %d requests, want at least 3 pages", stream, n)
		}
	}
	asked = map[string][]int64{}
	mu.Unlock()
	assertNone(t, res.outputs(), key)

	statePath := filepath.Join(dir, "state.json")
	writeJSONFile(t, statePath, state)
	res = runTap(t, dir, 2*time.Minute, nil, "--manifest", manifest, "--config", config, "--state", statePath)
	if res.code != 0 {
		t.Fatalf("second run: exit %d: %s", res.code, res.stderr)
	}
	again, _ := singerRecords(t, res.stdout)
	mu.Lock()
	defer mu.Unlock()
	for stream, rows := range data {
		last := int64(rows[len(rows)-1][cursors[stream]].(float64))
		if n := len(again[stream]); n >= len(rows) {
			t.Errorf("%s: the second run read %d records, want fewer than %d", stream, n, len(rows))
		}
		if len(asked[stream]) == 0 || asked[stream][0] != last {
			t.Errorf("%s: the second run asked since %v, want the bookmark %d first", stream, asked[stream], last)
		}
	}
}

// TestManifestConnectors runs Airbyte's own manifests, unchanged, each
// against a loopback server that answers as the API's documentation
// says, three pages or more a paged stream: the records the tap writes
// are those the server sent (with the fields the manifest adds), and the
// credential is never written. A row is a manifest, its config and its
// API.
func TestManifestConnectors(t *testing.T) {
	type api struct {
		check func(r *http.Request) bool // the credential, as the manifest sends it
		serve func(t *testing.T, r *http.Request) any
	}
	const token = "tok-9f2c41d7e0"
	bearer := func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer "+token }
	rows := func(n int, row func(i int) map[string]any) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			out[i] = row(i)
		}
		return out
	}
	// SavvyCal: cursor pages (metadata.after), events with their
	// scheduler's name and email added as fields.
	events := rows(6, func(i int) map[string]any {
		return map[string]any{"id": fmt.Sprintf("ev_%d", i), "scheduler": map[string]any{"display_name": fmt.Sprintf("S %d", i), "email": fmt.Sprintf("s%d@example.com", i)}}
	})
	links := rows(5, func(i int) map[string]any {
		return map[string]any{"id": fmt.Sprintf("link_%d", i), "slug": fmt.Sprintf("s%d", i)}
	})
	zones := rows(3, func(i int) map[string]any { return map[string]any{"id": fmt.Sprintf("Zone/%d", i)} })
	cursorPages := func(all []map[string]any, r *http.Request) any {
		from, _ := strconv.Atoi(r.URL.Query().Get("after"))
		to := min(from+2, len(all))
		after := any(nil)
		if to < len(all) {
			after = strconv.Itoa(to)
		}
		return map[string]any{"entries": all[from:to], "metadata": map[string]any{"after": after, "limit": 2}}
	}
	var withAdded []map[string]any
	for _, e := range events {
		s := e["scheduler"].(map[string]any)
		withAdded = append(withAdded, map[string]any{"id": e["id"], "scheduler": s, "scheduler_name": s["display_name"], "scheduler_email": s["email"]})
	}
	// Mailjet SMS: offset pages of 100 (Offset, Limit), the config's
	// time range as constant parameters.
	sms := rows(250, func(i int) map[string]any {
		return map[string]any{"ID": fmt.Sprintf("sms-%03d", i), "To": "+100000", "SmsCount": float64(1), "CreationTS": float64(1666261656 + i)}
	})
	// Uppromote: pages linked by links.next (a URL), referrals asked
	// from the config's start date (from_date, a date) and filtered by
	// their epoch created_at.
	affiliates := rows(5, func(i int) map[string]any {
		return map[string]any{"id": float64(i + 1), "email": fmt.Sprintf("a%d@example.com", i)}
	})
	coupons := rows(4, func(i int) map[string]any { return map[string]any{"id": float64(i + 1), "code": fmt.Sprintf("C%d", i)} })
	referrals := rows(6, func(i int) map[string]any {
		return map[string]any{"id": float64(i + 1), "created_at": float64(time.Date(2025, 3, 1+i, 0, 0, 0, 0, time.UTC).Unix())}
	})
	// Navan: OAuth client credentials at the API's own token endpoint,
	// page numbers from 0 (page, size 50), bookings asked from the start
	// date in epoch seconds (createdFrom).
	bookings := rows(120, func(i int) map[string]any {
		return map[string]any{"uuid": fmt.Sprintf("b-%03d", i), "lastModified": time.Date(2025, 4, 1, 0, i, 0, 0, time.UTC).Format("2006-01-02T15:04:05.000000Z")}
	})
	const navanToken = "navan-access-3c5e7f"
	// Flexmail: basic auth, contacts in offset pages of 500 under
	// _embedded.item, five lists unpaged.
	contacts := rows(1100, func(i int) map[string]any {
		return map[string]any{"id": fmt.Sprintf("c%04d", i), "email": fmt.Sprintf("c%d@example.com", i)}
	})
	embedded := func(items []map[string]any) any { return map[string]any{"_embedded": map[string]any{"item": items}} }
	small := rows(2, func(i int) map[string]any { return map[string]any{"id": fmt.Sprintf("x%d", i)} })
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("acct-77:pat-"+token))
	// Google Tasks: task lists and each list's tasks, pages by
	// nextPageToken, the tasks' paths carrying their list's id.
	lists := rows(3, func(i int) map[string]any {
		return map[string]any{"id": fmt.Sprintf("L%d", i), "updated": "2025-05-01T00:00:00.000000Z"}
	})
	tasksOf := func(list string) []map[string]any {
		return rows(5, func(i int) map[string]any {
			return map[string]any{"id": fmt.Sprintf("%s-t%d", list, i), "updated": fmt.Sprintf("2025-05-0%dT00:00:00.000000Z", i+1)}
		})
	}
	tokenPages := func(all []map[string]any, r *http.Request) any {
		from, _ := strconv.Atoi(r.URL.Query().Get("pageToken"))
		out := map[string]any{"items": all[min(from, len(all)):min(from+2, len(all))]}
		if from+2 < len(all) {
			out["nextPageToken"] = strconv.Itoa(from + 2)
		}
		return out
	}
	var listTasks []map[string]any
	for _, l := range lists {
		for _, task := range tasksOf(l["id"].(string)) {
			task = maps.Clone(task)
			task["tasklist_id"] = l["id"]
			listTasks = append(listTasks, task)
		}
	}
	// Unleash: the API token in the Authorization header, a 403 the
	// manifest retries (the first answer of the run), a 401 it fails on.
	features := rows(4, func(i int) map[string]any {
		return map[string]any{"name": fmt.Sprintf("feature-%d", i), "enabled": i%2 == 0}
	})
	var unleashMu sync.Mutex
	unleashCalls := 0
	// Hellobaton: the API key in the query (api_key), eleven streams
	// paged by the next URL in the body, 100 a page asked on the first.
	batonStreams := []string{"activity", "companies", "milestones", "phases", "project_attachments", "projects", "tasks", "task_attachments", "templates", "time_entries", "users"}
	baton := map[string][]map[string]any{}
	for i, s := range batonStreams {
		baton[s] = rows(3+i%3*2, func(j int) map[string]any {
			return map[string]any{"id": float64(100*i + j), "_self": fmt.Sprintf("%s/%d", s, j)}
		})
	}
	var batonBase string
	var upBase string
	linked := func(all []map[string]any, r *http.Request) any {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		links := map[string]any{"next": nil}
		if n+2 < len(all) {
			next := *r.URL
			q := next.Query()
			q.Set("n", strconv.Itoa(n+2))
			next.RawQuery = q.Encode()
			links["next"] = upBase + next.RequestURI()
		}
		return map[string]any{"data": all[min(n, len(all)):min(n+2, len(all))], "links": links}
	}
	// xkcd: one comic a page, the next page's path computed from the
	// last (num + 1), until the 404 the manifest ignores.
	comics := rows(3, func(i int) map[string]any {
		return map[string]any{"num": float64(2958 + i), "title": fmt.Sprintf("Comic %d", i), "img": fmt.Sprintf("https://imgs.example/%d.png", i)}
	})
	// Persona: every stream paged by the last record's id (page[after]),
	// a computed cursor, until a page with no data.
	personaPaths := map[string]string{"accounts": "/api/v1/accounts", "cases": "/api/v1/cases", "api-keys": "/api/v1/api-keys", "api-logs": "/api/v1/api-logs",
		"events": "/api/v1/events", "inquiries": "/api/v1/inquiries", "inquiry-sessions": "/api/v1/inquiry-sessions", "webhooks": "/api/v1/webhooks",
		"workflows-run": "/api/v1/workflow-runs", "workflow-runs": "/api/v1/workflow-runs"}
	persona := map[string][]map[string]any{}
	personaByPath := map[string][]map[string]any{}
	for stream, path := range personaPaths {
		if personaByPath[path] == nil {
			n := 3 + len(personaByPath)%4*70 // 3 to 213: a page of 100, to three
			personaByPath[path] = rows(n, func(i int) map[string]any {
				return map[string]any{"id": fmt.Sprintf("%s_%04d", strings.TrimPrefix(path, "/api/v1/"), i), "type": "record"}
			})
		}
		persona[stream] = personaByPath[path]
	}
	// Airbyte's own API: a session token from a login with the client's
	// id and secret in a JSON body, connections and workspaces by next
	// URLs, each connection's jobs asked from the start date.
	const airbyteToken = "ab-session-6d1f0c"
	connections := rows(5, func(i int) map[string]any {
		return map[string]any{"connectionId": fmt.Sprintf("conn-%d", i), "name": fmt.Sprintf("c%d", i)}
	})
	workspaces := rows(3, func(i int) map[string]any { return map[string]any{"workspaceId": fmt.Sprintf("ws-%d", i)} })
	jobsOf := func(conn string) []map[string]any {
		return rows(2, func(i int) map[string]any {
			return map[string]any{"jobId": float64(i + 1), "connectionId": conn, "lastUpdatedAt": fmt.Sprintf("2025-04-0%dT10:00:00Z", i+1)}
		})
	}
	var airbyteJobs []map[string]any
	for _, c := range connections {
		airbyteJobs = append(airbyteJobs, jobsOf(c["connectionId"].(string))...)
	}
	var abBase string
	nextPages := func(all []map[string]any, r *http.Request) any {
		n, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		out := map[string]any{"data": all[min(n, len(all)):min(n+2, len(all))]}
		if n+2 < len(all) {
			next := *r.URL
			q := next.Query()
			q.Set("offset", strconv.Itoa(n+2))
			next.RawQuery = q.Encode()
			out["next"] = abBase + next.RequestURI()
		}
		return out
	}
	// Reply.io: an API that answers a throttled request with a 200 whose
	// body says "Too much requests", which the manifest's predicate
	// retries; people in page-number pages of 1,000.
	var replyMu sync.Mutex
	replyThrottled := 0
	people := rows(2500, func(i int) map[string]any {
		return map[string]any{"id": float64(i + 1), "email": fmt.Sprintf("p%d@example.com", i)}
	})
	campaigns := rows(3, func(i int) map[string]any {
		return map[string]any{"id": float64(i + 1), "name": fmt.Sprintf("camp %d", i)}
	})
	accounts := rows(2, func(i int) map[string]any {
		return map[string]any{"id": float64(i + 1), "emailAddress": fmt.Sprintf("a%d@example.com", i)}
	})
	templates := rows(2, func(i int) map[string]any { return map[string]any{"id": float64(i + 1), "name": fmt.Sprintf("t%d", i)} })
	for _, tt := range []struct {
		manifest string
		config   map[string]any
		api      api
		want     map[string][]map[string]any
		base     *string // set to the server's URL, for the links it hands out
	}{
		{manifest: "savvycal.yaml", config: map[string]any{"api_key": token},
			api: api{check: bearer, serve: func(t *testing.T, r *http.Request) any {
				switch r.URL.Path {
				case "/v1/events":
					return cursorPages(events, r)
				case "/v1/links":
					return cursorPages(links, r)
				case "/v1/time_zones":
					return zones
				}
				return nil
			}},
			want: map[string][]map[string]any{"events": withAdded, "scheduling_links": links, "timezones": zones}},
		{manifest: "mailjet-sms.yaml", config: map[string]any{"token": token, "start_date": 1666261656, "end_date": 1666281656},
			api: api{check: bearer, serve: func(t *testing.T, r *http.Request) any {
				q := r.URL.Query()
				if r.URL.Path != "/v4/sms" || q.Get("fromTS") != "1666261656" || q.Get("ToTS") != "1666281656" || q.Get("Limit") != "100" {
					t.Errorf("unexpected request %s", r.URL)
					return nil
				}
				off, _ := strconv.Atoi(q.Get("Offset"))
				return map[string]any{"Data": sms[min(off, len(sms)):min(off+100, len(sms))], "Count": len(sms)}
			}},
			want: map[string][]map[string]any{"sms": sms}},
		{manifest: "navan.yaml", config: map[string]any{"client_id": "nav-client-1", "client_secret": "nav-secret-2b4d", "start_date": "2025-04-01T00:00:00Z"},
			api: api{check: func(r *http.Request) bool {
				if r.URL.Path == "/ta-auth/oauth/token" {
					return true
				}
				return r.Header.Get("Authorization") == "Bearer "+navanToken
			}, serve: func(t *testing.T, r *http.Request) any {
				q := r.URL.Query()
				switch r.URL.Path {
				case "/ta-auth/oauth/token":
					if err := r.ParseForm(); err != nil {
						t.Errorf("token request: %v (%s)", err, r.Header.Get("Content-Type"))
						return nil
					}
					id, secret, ok := r.BasicAuth()
					if !ok {
						id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
					}
					if r.PostForm.Get("grant_type") != "client_credentials" || id != "nav-client-1" || secret != "nav-secret-2b4d" {
						t.Errorf("token request: grant %q, client %q", r.PostForm.Get("grant_type"), id)
						return nil
					}
					return map[string]any{"access_token": navanToken, "expires_in": 3600, "token_type": "Bearer"}
				case "/v1/bookings":
					page, err := strconv.Atoi(q.Get("page"))
					if err != nil || q.Get("size") != "50" || q.Get("bookingType") != "FLIGHT" || q.Get("createdFrom") != strconv.FormatInt(time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC).Unix(), 10) {
						t.Errorf("unexpected request %s", r.URL)
						return nil
					}
					return map[string]any{"data": bookings[min(page*50, len(bookings)):min(page*50+50, len(bookings))]}
				}
				return nil
			}},
			want: map[string][]map[string]any{"bookings": bookings}},
		{manifest: "flexmail.yaml", config: map[string]any{"account_id": "acct-77", "personal_access_token": "pat-" + token},
			api: api{check: func(r *http.Request) bool { return r.Header.Get("Authorization") == basic }, serve: func(t *testing.T, r *http.Request) any {
				q := r.URL.Query()
				switch r.URL.Path {
				case "/contacts":
					off, err := strconv.Atoi(q.Get("offset"))
					if q.Get("limit") != "500" || err != nil && q.Get("offset") != "" {
						t.Errorf("unexpected request %s", r.URL)
						return nil
					}
					return embedded(contacts[min(off, len(contacts)):min(off+500, len(contacts))])
				case "/custom-fields", "/interests", "/segments", "/sources":
					return embedded(small)
				case "/webhook-events":
					return small
				}
				return nil
			}},
			want: map[string][]map[string]any{"contacts": contacts, "custom_fields": small, "interests": small, "segments": small, "sources": small, "webhook_events": small}},
		{manifest: "google-tasks.yaml", config: map[string]any{"api_key": token, "start_date": "2025-01-01T00:00:00Z", "records_limit": "2"},
			api: api{check: bearer, serve: func(t *testing.T, r *http.Request) any {
				if r.URL.Query().Get("maxResults") != "2" {
					t.Errorf("unexpected request %s", r.URL)
				}
				if r.URL.Path == "/tasks/v1/users/@me/lists" {
					return tokenPages(lists, r)
				}
				if list, ok := strings.CutPrefix(r.URL.Path, "/tasks/v1/lists/"); ok {
					return tokenPages(tasksOf(strings.TrimSuffix(list, "/tasks")), r)
				}
				return nil
			}},
			want: map[string][]map[string]any{"tasks": lists, "lists_tasks": listTasks}},
		{manifest: "unleash.yaml", config: map[string]any{"api_token": token, "api_url": "unleash.example.com", "tap": map[string]any{"retry": map[string]any{"base_delay_ms": 10}}},
			api: api{check: func(r *http.Request) bool { return r.Header.Get("Authorization") == token }, serve: func(t *testing.T, r *http.Request) any {
				if r.URL.Path != "/api/client/features" {
					return nil
				}
				unleashMu.Lock()
				defer unleashMu.Unlock()
				if unleashCalls++; unleashCalls == 1 {
					return errForbidden
				}
				return map[string]any{"version": 1, "features": features}
			}},
			want: map[string][]map[string]any{"features": features}},
		{manifest: "hellobaton.yaml", config: map[string]any{"api_key": token, "company": "acme"}, base: &batonBase,
			api: api{check: func(r *http.Request) bool { return r.URL.Query().Get("api_key") == token }, serve: func(t *testing.T, r *http.Request) any {
				all, ok := baton[strings.TrimPrefix(r.URL.Path, "/api/")]
				if !ok {
					return nil
				}
				q := r.URL.Query()
				if q.Get("page_size") != "100" && q.Get("page") == "" {
					t.Errorf("a first page without page_size=100: %s", r.URL)
				}
				n, _ := strconv.Atoi(q.Get("page"))
				out := map[string]any{"count": len(all), "results": all[min(2*n, len(all)):min(2*n+2, len(all))], "next": nil}
				if 2*n+2 < len(all) {
					next := *r.URL
					nq := next.Query()
					nq.Set("page", strconv.Itoa(n+1))
					next.RawQuery = nq.Encode()
					out["next"] = batonBase + next.RequestURI()
				}
				return out
			}},
			want: baton},
		{manifest: "xkcd.yaml", config: map[string]any{"comic_number": "2958"},
			api: api{check: func(*http.Request) bool { return true }, serve: func(t *testing.T, r *http.Request) any {
				n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/"), "/info.0.json"))
				if err != nil || n < 2958 || n > 2960 {
					return nil // 404, which the manifest ignores
				}
				return comics[n-2958]
			}},
			want: map[string][]map[string]any{"xkcd": comics}},
		{manifest: "persona.yaml", config: map[string]any{"api_key": token},
			api: api{check: bearer, serve: func(t *testing.T, r *http.Request) any {
				all, ok := personaByPath[r.URL.Path]
				if !ok || r.URL.Query().Get("page[size]") != "100" {
					t.Errorf("unexpected request %s", r.URL)
					return nil
				}
				from := 0
				if after := r.URL.Query().Get("page[after]"); after != "" {
					for from < len(all) && all[from]["id"] != after {
						from++
					}
					from++
				}
				from = min(from, len(all))
				return map[string]any{"data": all[from:min(from+100, len(all))]}
			}},
			want: persona},
		{manifest: "airbyte.yaml", config: map[string]any{"client_id": "ab-client-1", "client_secret": "ab-secret-77f3", "start_date": "2025-01-01T00:00:00Z"}, base: &abBase,
			api: api{check: func(r *http.Request) bool {
				return r.URL.Path == "/v1/applications/token" || r.Header.Get("Authorization") == "Bearer "+airbyteToken
			}, serve: func(t *testing.T, r *http.Request) any {
				q := r.URL.Query()
				switch r.URL.Path {
				case "/v1/applications/token":
					var login map[string]any
					if err := json.NewDecoder(r.Body).Decode(&login); err != nil || r.Method != http.MethodPost ||
						login["client_id"] != "ab-client-1" || login["client_secret"] != "ab-secret-77f3" || login["grant-type"] != "client_credentials" {
						t.Errorf("login: %s %v %v", r.Method, login, err)
						return nil
					}
					return map[string]any{"access_token": airbyteToken}
				case "/v1/connections":
					return nextPages(connections, r)
				case "/v1/workspaces":
					return nextPages(workspaces, r)
				case "/v1/jobs":
					if q.Get("updatedAtStart") != "2025-01-01T00:00:00Z" || q.Get("orderBy") != "updatedAt|DESC" {
						t.Errorf("unexpected request %s", r.URL)
					}
					return nextPages(jobsOf(q.Get("connectionId")), r)
				}
				return nil
			}},
			want: map[string][]map[string]any{"Connections": connections, "Workspaces": workspaces, "Jobs": airbyteJobs}},
		{manifest: "reply-io.yaml", config: map[string]any{"api_key": token, "tap": map[string]any{"retry": map[string]any{"base_delay_ms": 10}}},
			api: api{check: func(r *http.Request) bool { return r.Header.Get("X-Api-Key") == token }, serve: func(t *testing.T, r *http.Request) any {
				q := r.URL.Query()
				switch r.URL.Path {
				case "/v1/campaigns":
					replyMu.Lock()
					defer replyMu.Unlock()
					if replyThrottled++; replyThrottled == 1 {
						return "Too much requests. Please try again in 15 seconds"
					}
					return campaigns
				case "/v1/emailAccounts":
					return accounts
				case "/v1/people":
					page, _ := strconv.Atoi(q.Get("page"))
					if q.Get("limit") != "1000" || page < 1 {
						t.Errorf("unexpected request %s", r.URL)
					}
					return map[string]any{"people": people[min((page-1)*1000, len(people)):min(page*1000, len(people))]}
				case "/v1/templates":
					return map[string]any{"userTemplates": templates}
				}
				return nil
			}},
			want: map[string][]map[string]any{"campaigns": campaigns, "email_accounts": accounts, "people": people, "templates": templates}},
		{manifest: "uppromote.yaml", config: map[string]any{"api_key": token, "start_date": "2025-03-02T00:00:00Z"}, base: &upBase,
			api: api{check: bearer, serve: func(t *testing.T, r *http.Request) any {
				switch r.URL.Path {
				case "/api/v1/affiliates":
					return linked(affiliates, r)
				case "/api/v1/coupons":
					return linked(coupons, r)
				case "/api/v1/referrals":
					from, err := time.Parse(time.DateOnly, r.URL.Query().Get("from_date"))
					if err != nil {
						t.Errorf("referrals asked without a from_date: %s", r.URL)
						return nil
					}
					var match []map[string]any
					for _, ref := range referrals {
						if int64(ref["created_at"].(float64)) >= from.Unix() {
							match = append(match, ref)
						}
					}
					return linked(match, r)
				}
				return nil
			}},
			want: map[string][]map[string]any{"affiliates": affiliates, "coupons": coupons, "referrals": referrals[1:]}},
	} {
		t.Run(tt.manifest, func(t *testing.T) {
			var mu sync.Mutex
			requests := 0
			base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !tt.api.check(r) {
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				mu.Lock()
				requests++
				mu.Unlock()
				body := tt.api.serve(t, r)
				if body == nil {
					http.NotFound(w, r)
					return
				}
				if body == errForbidden {
					http.Error(w, "forbidden, for now", http.StatusForbidden)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(body)
			}))
			if tt.base != nil {
				*tt.base = base
			}
			dir := t.TempDir()
			config := filepath.Join(dir, "config.json")
			cfg := maps.Clone(tt.config)
			own, _ := cfg["tap"].(map[string]any)
			own = maps.Clone(own)
			if own == nil {
				own = map[string]any{}
			}
			own["base_url"] = base
			cfg["tap"] = own
			writeJSONFile(t, config, cfg)
			manifest, err := filepath.Abs("../manifest/testdata/airbyte/" + tt.manifest)
			if err != nil {
				t.Fatal(err)
			}
			res := runTap(t, dir, time.Minute, nil, "--manifest", manifest, "--config", config)
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stderr)
			}
			got, _ := singerRecords(t, res.stdout)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
			assertNone(t, res.outputs(), token, navanToken, "nav-secret-2b4d", airbyteToken, "ab-secret-77f3")
		})
	}
}

// errForbidden is an API's answer of 403, by TestManifestConnectors's
// servers.
var errForbidden = &struct{ forbidden bool }{true}

// TestManifestYotpo runs Airbyte's Yotpo manifest, unchanged: the token
// in the query (utoken), offsets of one record a page (page, count), and
// reviews whose datetime cursor sends no filter (no start_time_option):
// the first run reads them all, and a second run from its STATE asks for
// them all again and writes only those at or after the bookmark, their
// created_at read in the manifest's own format ("%Y-%m-%dT%H:%M:%S.%f%z").
func TestManifestYotpo(t *testing.T) {
	const token, app = "yotpo-utoken-4e2a", "app-123"
	rowsOf := func(n int, row func(i int) map[string]any) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			out[i] = row(i)
		}
		return out
	}
	reviews := rowsOf(5, func(i int) map[string]any {
		return map[string]any{"id": float64(i + 1), "score": float64(i%5 + 1),
			"created_at": time.Date(2025, 6, 1+i, 9, 0, 0, 0, time.UTC).Format("2006-01-02T15:04:05.000000-0700")}
	})
	unsubscribers := rowsOf(3, func(i int) map[string]any {
		return map[string]any{"id": float64(i + 1), "email": fmt.Sprintf("u%d@example.com", i)}
	})
	points := rowsOf(2, func(i int) map[string]any {
		return map[string]any{"date": fmt.Sprintf("2025-06-0%d", i+1), "value": float64(i)}
	})
	hooks := rowsOf(2, func(i int) map[string]any {
		return map[string]any{"id": float64(i + 1), "url": fmt.Sprintf("https://hooks.example/%d", i)}
	})
	events := rowsOf(2, func(i int) map[string]any {
		return map[string]any{"id": float64(i + 1), "name": fmt.Sprintf("event_%d", i)}
	})
	raw := rowsOf(2, func(i int) map[string]any {
		return map[string]any{"email": fmt.Sprintf("r%d@example.com", i), "emails_sent": float64(i)}
	})
	offsetPage := func(all []map[string]any, r *http.Request) []map[string]any {
		off, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if r.URL.Query().Get("count") != "1" {
			t.Errorf("unexpected request %s", r.URL)
		}
		return all[min(off, len(all)):min(off+1, len(all))]
	}
	var mu sync.Mutex
	requests := map[string]int{}
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("utoken") != token {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		mu.Lock()
		requests[r.URL.Path]++
		mu.Unlock()
		var body any
		switch r.URL.Path {
		case "/analytics/v1/emails/" + app + "/emails_sent":
			body = map[string]any{"date_series_points": points}
		case "/analytics/v1/emails/" + app + "/export/raw_data":
			body = map[string]any{"records": raw}
		case "/v1/apps/" + app + "/reviews":
			body = map[string]any{"reviews": offsetPage(reviews, r)}
		case "/apps/" + app + "/webhooks":
			body = map[string]any{"response": map[string]any{"webhooks": hooks}}
		case "/apps/" + app + "/unsubscribers":
			body = map[string]any{"response": map[string]any{"unsubscribers": offsetPage(unsubscribers, r)}}
		case "/webhook_events":
			body = map[string]any{"response": map[string]any{"webhook_events": events}}
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}))
	dir := t.TempDir()
	cfg := map[string]any{"access_token": token, "app_key": app, "email": "me@example.com", "start_date": "2025-01-01T00:00:00.000Z",
		"tap": map[string]any{"base_url": base}}
	got, state, res := manifestRun(t, dir, "yotpo.yaml", cfg, nil)
	if diff := cmp.Diff(map[string][]map[string]any{"email_analytics": points, "raw_data": raw, "reviews": reviews,
		"webhooks": hooks, "unsubscribers": unsubscribers, "webhook_events": events}, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	mu.Lock()
	if n := requests["/v1/apps/"+app+"/reviews"]; n != len(reviews)+1 {
		t.Errorf("%d review pages asked, want %d (one a record, then an empty one)", n, len(reviews)+1)
	}
	mu.Unlock()
	assertNone(t, res.outputs(), token)

	again, _, _ := manifestRun(t, dir, "yotpo.yaml", cfg, state)
	// The bookmark is the last review's created_at: it alone is written
	// again (a record at the bookmark is, as a ">=" filter returns it).
	if diff := cmp.Diff(reviews[len(reviews)-1:], again["reviews"]); diff != "" {
		t.Errorf("second run's reviews (-want +got):\n%s", diff)
	}
}

// TestManifestStockdata runs Airbyte's Stockdata manifest, unchanged:
// every stream walked once per value of a ListPartitionRouter (the
// config's symbols, or industries), each value sent as a query
// parameter, news in page-number pages of 50 asked from a date, prices
// asked from a date and written with their ticker (an AddFields of the
// partition's value). A second run from its STATE asks each symbol from
// that symbol's own bookmark, in the CDK's partitioned shape in Airbyte
// mode.
func TestManifestStockdata(t *testing.T) {
	const key = "sd-key-0b7e3a51"
	symbols := []string{"AAPL", "TSLA", "MSFT"}
	day := func(i int) time.Time { return time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i) }
	news := map[string][]map[string]any{} // by symbol or industry
	prices := map[string][]map[string]any{}
	for si, s := range append(slices.Clone(symbols), "Technology") {
		for i := range 60 + 10*si { // two pages of 50 or more
			news[s] = append(news[s], map[string]any{"uuid": fmt.Sprintf("%s-%03d", s, i), "title": fmt.Sprintf("news %d of %s", i, s),
				"published_at": day(i / 4).Add(time.Duration(si) * time.Hour).Format("2006-01-02T15:04:05.000000Z")})
		}
		for i := range 5 {
			prices[s] = append(prices[s], map[string]any{"date": day(i + si).Format("2006-01-02T15:04:05.000000Z"), "close": float64(100 + i)})
		}
	}
	var mu sync.Mutex
	asked := map[string][]string{} // "path symbol" → the date each walk asked from
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("api_token") != key {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var rows []map[string]any
		var from string
		switch r.URL.Path {
		case "/v1/news/all":
			part := q.Get("symbols") + q.Get("industries")
			from = q.Get("published_after")
			page, _ := strconv.Atoi(q.Get("page"))
			if q.Get("limit") != "50" || page < 1 || q.Get("language") != "en" {
				t.Errorf("unexpected request %s", r.URL)
			}
			var match []map[string]any
			for _, n := range news[part] {
				if n["published_at"].(string) >= from {
					match = append(match, n)
				}
			}
			rows = match[min((page-1)*50, len(match)):min(page*50, len(match))]
			if page == 1 {
				mu.Lock()
				asked["news "+part] = append(asked["news "+part], from)
				mu.Unlock()
			}
		case "/v1/data/eod", "/v1/data/intraday":
			from = q.Get("date_from")
			for _, p := range prices[q.Get("symbols")] {
				if p["date"].(string) >= from {
					rows = append(rows, p)
				}
			}
			mu.Lock()
			asked[r.URL.Path+" "+q.Get("symbols")] = append(asked[r.URL.Path+" "+q.Get("symbols")], from)
			mu.Unlock()
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"data": rows})
	}))
	dir := t.TempDir()
	cfg := map[string]any{"api_key": key, "symbols": symbols, "industries": []string{"Technology"},
		"start_date": "2025-02-01T00:00:00Z", "tap": map[string]any{"base_url": base}}
	got, state, res := manifestRun(t, dir, "stockdata.yaml", cfg, nil)
	want := map[string][]map[string]any{"news_feeds_per_industry": news["Technology"]}
	for _, s := range symbols {
		want["news_feeds_per_symbols"] = append(want["news_feeds_per_symbols"], news[s]...)
		want["intraday_unadjusted_data"] = append(want["intraday_unadjusted_data"], prices[s]...)
		for _, p := range prices[s] {
			p = maps.Clone(p)
			p["ticker"] = s
			want["eod_data"] = append(want["eod_data"], p)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	assertNone(t, res.outputs(), key)
	mu.Lock()
	for _, s := range symbols {
		if a := asked["news "+s]; len(a) != 1 || a[0] != "2025-02-01" {
			t.Errorf("news of %s asked from %v, want once from the start date", s, a)
		}
	}
	asked = map[string][]string{}
	mu.Unlock()

	// The second run asks each symbol from its own bookmark (a day: the
	// cursor's datetime_format), and writes what is at or after it.
	again, _, _ := manifestRun(t, dir, "stockdata.yaml", cfg, state)
	mu.Lock()
	defer mu.Unlock()
	for _, s := range symbols {
		rows := news[s]
		last := rows[len(rows)-1]["published_at"].(string)[:10]
		if a := asked["news "+s]; len(a) != 1 || a[0] != last {
			t.Errorf("second run: news of %s asked from %v, want its own bookmark's day %s", s, a, last)
		}
	}
	if n, all := len(again["news_feeds_per_symbols"]), len(want["news_feeds_per_symbols"]); n == 0 || n >= all {
		t.Errorf("second run wrote %d news of symbols, want fewer than %d and some", n, all)
	}
}

// TestManifestTrustpilot runs Airbyte's Trustpilot manifest, unchanged,
// with its SelectiveAuthenticator choosing OAuth (a refresh token at the
// API's own endpoint): the configured business units found by name, one
// request per value of a ListPartitionRouter; their private reviews, a
// substream in page-number pages, newest first (is_data_feed), their
// links removed; and every business unit. A second run from its STATE
// writes, of each unit's reviews, only those at or after that unit's
// bookmark.
func TestManifestTrustpilot(t *testing.T) {
	const access, secret, refresh = "tp-access-4b1e9c", "tp-secret-0d7a21", "tp-refresh-5c3f88"
	units := map[string]map[string]any{"acme.com": {"id": "bu-acme", "displayName": "Acme"}, "globex.com": {"id": "bu-globex", "displayName": "Globex"}}
	reviews := map[string][]map[string]any{}
	for i, id := range []string{"bu-acme", "bu-globex"} {
		for j := range 150 - 120*i { // two pages of 100 for acme, one for globex
			reviews[id] = append(reviews[id], map[string]any{"id": fmt.Sprintf("%s-r%03d", id, j), "stars": float64(j%5 + 1),
				"createdAt": time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC).Add(-time.Duration(j) * time.Hour).Format(time.RFC3339)})
		}
	}
	all := []map[string]any{{"id": "bu-acme"}, {"id": "bu-globex"}, {"id": "bu-initech"}}
	withLinks := func(m map[string]any) map[string]any {
		m = maps.Clone(m)
		m["links"] = []any{map[string]any{"rel": "self", "href": "https://api.example/x"}}
		return m
	}
	var mu sync.Mutex
	tokenRequests := 0
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		var body any
		switch {
		case r.URL.Path == "/v1/oauth/oauth-business-users-for-applications/refresh":
			if err := r.ParseForm(); err != nil {
				t.Error(err)
			}
			id, sec, ok := r.BasicAuth()
			if !ok {
				id, sec = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
			}
			if r.PostForm.Get("grant_type") != "refresh_token" || r.PostForm.Get("refresh_token") != refresh || id != "tp-client-1" || sec != secret {
				t.Errorf("token request: %v", r.PostForm)
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			mu.Lock()
			tokenRequests++
			mu.Unlock()
			body = map[string]any{"access_token": access, "expires_in": 3600, "token_type": "Bearer"}
		case r.Header.Get("Authorization") != "Bearer "+access:
			w.WriteHeader(http.StatusUnauthorized)
			return
		case r.URL.Path == "/v1/business-units/find":
			u, ok := units[q.Get("name")]
			if !ok {
				http.NotFound(w, r)
				return
			}
			body = withLinks(u)
		case strings.HasPrefix(r.URL.Path, "/v1/private/business-units/"):
			id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1/private/business-units/"), "/reviews")
			page, _ := strconv.Atoi(q.Get("page"))
			if q.Get("perPage") != "100" || q.Get("orderBy") != "createdat.desc" || page < 1 {
				t.Errorf("unexpected request %s", r.URL)
			}
			rs := reviews[id]
			var out []any
			for _, rv := range rs[min((page-1)*100, len(rs)):min(page*100, len(rs))] {
				out = append(out, withLinks(rv))
			}
			body = map[string]any{"reviews": out, "links": []any{}}
		case r.URL.Path == "/v1/business-units/all":
			page, _ := strconv.Atoi(q.Get("page"))
			var out []any
			if page == 1 {
				for _, u := range all {
					out = append(out, withLinks(u))
				}
			}
			body = map[string]any{"businessUnits": out}
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}))
	dir := t.TempDir()
	cfg := map[string]any{"credentials": map[string]any{"auth_type": "oauth2.0", "client_id": "tp-client-1", "client_secret": secret,
		"refresh_token": refresh, "access_token": "stale-access-token", "token_expiry_date": "2025-01-01T00:00:00Z"},
		"start_date": "2025-01-01T00:00:00Z", "business_units": []string{"acme.com", "globex.com"}, "tap": map[string]any{"base_url": base}}
	got, state, res := manifestRun(t, dir, "trustpilot.yaml", cfg, nil)
	want := map[string][]map[string]any{"configured_business_units": {units["acme.com"], units["globex.com"]}, "business_units": all}
	for _, id := range []string{"bu-acme", "bu-globex"} {
		for _, rv := range reviews[id] {
			rv = maps.Clone(rv)
			rv["business_unit_id"] = id // the partition field, which the tap writes
			want["private_reviews"] = append(want["private_reviews"], rv)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	assertNone(t, res.outputs(), access, secret, refresh)
	mu.Lock()
	if tokenRequests != 1 {
		t.Errorf("%d token requests, want 1", tokenRequests)
	}
	mu.Unlock()

	again, _, _ := manifestRun(t, dir, "trustpilot.yaml", cfg, state)
	var newest []map[string]any
	for _, id := range []string{"bu-acme", "bu-globex"} {
		rv := maps.Clone(reviews[id][0]) // newest first: the first is the bookmark
		rv["business_unit_id"] = id
		newest = append(newest, rv)
	}
	if diff := cmp.Diff(newest, again["private_reviews"]); diff != "" {
		t.Errorf("second run's reviews (-want +got):\n%s", diff)
	}
}

// TestManifestNASA runs Airbyte's NASA manifest, unchanged: its
// start_date parameter is an expression of the window's start
// ({{ stream_interval.start_time if stream_interval else ... }}),
// computed for each run: the config's start date first, then, from the
// STATE, the bookmark less the manifest's lookback of 31 days.
func TestManifestNASA(t *testing.T) {
	const key = "nasa-key-8e2b4c71"
	var apod []map[string]any
	for d := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC); d.Before(time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)); d = d.AddDate(0, 0, 1) {
		apod = append(apod, map[string]any{"date": d.Format(time.DateOnly), "title": "picture of " + d.Format(time.DateOnly), "media_type": "image"})
	}
	var mu sync.Mutex
	var asked []string
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/planetary/apod" || q.Get("api_key") != key {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		asked = append(asked, q.Get("start_date"))
		mu.Unlock()
		var out []map[string]any
		for _, a := range apod {
			if a["date"].(string) >= q.Get("start_date") {
				out = append(out, a)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	dir := t.TempDir()
	cfg := map[string]any{"api_key": key, "start_date": "2025-01-10", "tap": map[string]any{"base_url": base}}
	got, state, res := manifestRun(t, dir, "nasa.yaml", cfg, nil)
	if diff := cmp.Diff(apod[9:], got["nasa_apod"]); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	again, _, res := manifestRun(t, dir, "nasa.yaml", cfg, state)
	// The bookmark is 2025-02-28; 31 days before it, 2025-01-28: the
	// API filters, and the run writes what it sent.
	if diff := cmp.Diff(apod[27:], again["nasa_apod"]); diff != "" {
		t.Errorf("second run's records (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"2025-01-10", "2025-01-28"}, asked); diff != "" {
		t.Errorf("start_date asked (-want +got):\n%s", diff)
	}
	assertNone(t, res.outputs(), key)
}

// manifestRun runs the binary on manifest/testdata/airbyte/name with the
// connector config cfg (written to dir) and, when state is not nil, the
// STATE of an earlier run; a run that does not exit 0 fails the test. It
// returns the records by stream, the last STATE and the run's output.
func manifestRun(t *testing.T, dir, name string, cfg map[string]any, state any) (map[string][]map[string]any, any, result) {
	t.Helper()
	config := filepath.Join(dir, "config.json")
	writeJSONFile(t, config, cfg)
	manifest, err := filepath.Abs("../manifest/testdata/airbyte/" + name)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--manifest", manifest, "--config", config}
	if state != nil {
		statePath := filepath.Join(dir, "state.json")
		writeJSONFile(t, statePath, state)
		args = append(args, "--state", statePath)
	}
	res := runTap(t, dir, time.Minute, nil, args...)
	if res.code != 0 {
		t.Fatalf("%s (from a STATE: %v): exit %d: %s", name, state != nil, res.code, res.stderr)
	}
	recs, last := singerRecords(t, res.stdout)
	return recs, last, res
}

// TestManifestBox runs Airbyte's Box manifest, unchanged: OAuth client
// credentials with Box's own token fields, sixteen streams paged by
// markers, offsets (with and without a page size) and a stream position
// whose end a stop condition computes (chunk_size == 0); a folder's
// items split into files and folders by record filters, records
// gathered through "*" in a field_path, and substreams of files,
// folders and collections.
func TestManifestBox(t *testing.T) {
	const access, secret = "box-access-2f6e1a", "box-secret-7d3c99"
	items := func(prefix string, n int, extra func(i int) map[string]any) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			out[i] = map[string]any{"id": fmt.Sprintf("%s%d", prefix, i+1)}
			if extra != nil {
				maps.Copy(out[i], extra(i))
			}
		}
		return out
	}
	folderItems := items("it", 7, func(i int) map[string]any {
		if i%2 == 0 {
			return map[string]any{"type": "file", "name": fmt.Sprintf("f%d.txt", i)}
		}
		return map[string]any{"type": "folder", "name": fmt.Sprintf("dir%d", i)}
	})
	var files, folders []map[string]any
	for _, it := range folderItems {
		if it["type"] == "file" {
			files = append(files, it)
		} else {
			folders = append(folders, it)
		}
	}
	events := items("ev", 5, nil)
	adminLogs := items("al", 4, func(i int) map[string]any { return map[string]any{"event_id": fmt.Sprintf("al-%d", i)} })
	marked := map[string][]map[string]any{
		"/2.0/sign_templates": items("st", 5, nil), "/2.0/sign_requests": items("sr", 3, nil),
	}
	recent := items("rc", 5, nil)
	offsets := map[string][]map[string]any{"/2.0/collections": items("co", 2, nil), "/2.0/folders/trash/items": items("tr", 3, nil), "/2.0/users": items("us", 4, nil)}
	childRows := func(kind, parent string) []map[string]any {
		return items(kind+"-"+parent+"-", 2, nil)
	}
	tasks := func(file string) []map[string]any { return items("ta-"+file+"-", 2, nil) }
	var mu sync.Mutex
	tokens := 0
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		page := func(all []map[string]any, size int) []map[string]any {
			off, _ := strconv.Atoi(q.Get("offset"))
			return all[min(off, len(all)):min(off+size, len(all))]
		}
		marker := func(all []map[string]any) any {
			from, _ := strconv.Atoi(q.Get("marker"))
			out := map[string]any{"entries": all[min(from, len(all)):min(from+2, len(all))]}
			if from+2 < len(all) {
				out["next_marker"] = strconv.Itoa(from + 2)
			}
			return out
		}
		var body any
		p := r.URL.Path
		switch {
		case p == "/oauth2/token":
			_ = r.ParseForm()
			if r.PostForm.Get("box_subject_type") != "user" || r.PostForm.Get("box_subject_id") != "12345" || r.PostForm.Get("grant_type") != "client_credentials" {
				t.Errorf("token request: %v", r.PostForm)
			}
			mu.Lock()
			tokens++
			mu.Unlock()
			body = map[string]any{"access_token": access, "expires_in": 3600, "token_type": "bearer"}
		case r.Header.Get("Authorization") != "Bearer "+access:
			w.WriteHeader(http.StatusUnauthorized)
			return
		case p == "/2.0/events":
			all := events
			if q.Get("stream_type") == "admin_logs" {
				all = adminLogs
			}
			pos, _ := strconv.Atoi(q.Get("stream_position"))
			chunk := all[min(pos, len(all)):min(pos+2, len(all))]
			body = map[string]any{"entries": chunk, "chunk_size": len(chunk), "next_stream_position": strconv.Itoa(pos + len(chunk))}
		case marked[p] != nil:
			body = marker(marked[p])
		case p == "/2.0/recent_items":
			var entries []any
			for _, rc := range recent {
				entries = append(entries, map[string]any{"type": "recent_item", "interaction_type": "item_preview", "item": rc})
			}
			from, _ := strconv.Atoi(q.Get("marker"))
			out := map[string]any{"entries": entries[min(from, len(entries)):min(from+2, len(entries))]}
			if from+2 < len(entries) {
				out["next_marker"] = strconv.Itoa(from + 2)
			}
			body = out
		case p == "/2.0/folders/0/items":
			body = map[string]any{"entries": page(folderItems, 100), "total_count": len(folderItems)}
		case offsets[p] != nil:
			size := 100
			if p == "/2.0/users" {
				size = 2 // the API's own page size: the manifest sends none and reads none
			}
			body = map[string]any{"entries": page(offsets[p], size)}
		case strings.HasPrefix(p, "/2.0/collections/"):
			body = map[string]any{"entries": page(childRows("ci", strings.Split(p, "/")[3]), 1)}
		case strings.HasSuffix(p, "/collaborations"):
			body = marker(childRows("cb", strings.Split(p, "/")[3]))
		case strings.HasSuffix(p, "/comments"):
			body = map[string]any{"entries": page(childRows("cm", strings.Split(p, "/")[3]), 100)}
		case strings.HasSuffix(p, "/tasks"):
			var entries []any
			for _, ta := range tasks(strings.Split(p, "/")[3]) {
				entries = append(entries, map[string]any{"id": "task-of", "task_assignment_collection": map[string]any{"entries": []any{ta}}})
			}
			body = map[string]any{"entries": entries}
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}))
	cfg := map[string]any{"client_id": "box-client-1", "client_secret": secret, "user": 12345, "tap": map[string]any{"base_url": base}}
	got, _, res := manifestRun(t, t.TempDir(), "box.yaml", cfg, nil)
	with := func(rows []map[string]any, field, value string) []map[string]any {
		out := make([]map[string]any, len(rows))
		for i, r := range rows {
			out[i] = maps.Clone(r)
			out[i][field] = value
		}
		return out
	}
	want := map[string][]map[string]any{
		"events": events, "admin_logs": adminLogs, "sign_templates": marked["/2.0/sign_templates"], "sign_request": marked["/2.0/sign_requests"],
		"collections": offsets["/2.0/collections"], "trashed_items": offsets["/2.0/folders/trash/items"], "users": offsets["/2.0/users"],
		"recent_items": recent, "files": files, "folders": folders,
	}
	for _, co := range offsets["/2.0/collections"] {
		want["collection_items"] = append(want["collection_items"], with(childRows("ci", co["id"].(string)), "collection", co["id"].(string))...)
	}
	for _, f := range files {
		id := f["id"].(string)
		want["file_collaborations"] = append(want["file_collaborations"], with(childRows("cb", id), "file_id", id)...)
		want["file_comments"] = append(want["file_comments"], with(childRows("cm", id), "file_id", id)...)
		want["file_tasks"] = append(want["file_tasks"], with(tasks(id), "file_id", id)...)
	}
	for _, f := range folders {
		id := f["id"].(string)
		want["folder_collaborations"] = append(want["folder_collaborations"], with(childRows("cb", id), "folder_id", id)...)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	if tokens != 1 {
		t.Errorf("%d token requests, want 1", tokens)
	}
	assertNone(t, res.outputs(), access, secret)
}

// TestManifestBreezyHR runs Airbyte's Breezy HR manifest, unchanged: its
// transformations, which the stream maps cannot state, run in the
// manifest's interpreter on each record in order — fields read from
// nested objects, a field replaced by one of its own members, an id
// copied and its field removed, {% set %} statements, the partition's
// value — and a substream whose parent key is a field a transformation
// added (position_id).
func TestManifestBreezyHR(t *testing.T) {
	const key, company = "breezy-key-51c0d7", "co-42"
	position := func(id, name, country string) map[string]any {
		return map[string]any{"_id": id, "name": name, "type": map[string]any{"name": "Full-Time"},
			"location":    map[string]any{"country": map[string]any{"id": country, "name": "Country " + country}},
			"friendly_id": "fr-" + id, "education": "any", "creator_id": "u1", "state": "published"}
	}
	positions := []map[string]any{position("p1", "Dev", "US"), position("p2", "Ops", "FR")}
	candidates := map[string][]map[string]any{
		"p1": {{"_id": "c1", "name": "Ann", "stage": map[string]any{"name": "Applied"}}, {"_id": "c2", "name": "Bob", "stage": map[string]any{"name": "Hired"}}},
		"p2": {{"_id": "c3", "name": "Cat", "stage": map[string]any{"name": "Applied"}}},
	}
	pipelines := map[string]any{"default": map[string]any{"name": "Default", "pipeline": []any{"a"}, "creation_date": "2025", "updated_date": "2025", "type": "x"},
		"sales": map[string]any{"name": "Sales", "pipeline": []any{"b"}, "creation_date": "2025", "updated_date": "2025", "type": "y"}}
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != key {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		prefix := "/v3/company/" + company
		var body any
		switch p := strings.TrimPrefix(r.URL.Path, prefix); {
		case p == "/positions":
			body = positions
		case strings.HasPrefix(p, "/position/") && strings.HasSuffix(p, "/candidates"):
			id := strings.TrimSuffix(strings.TrimPrefix(p, "/position/"), "/candidates")
			if r.URL.Query().Get("sort") != "updated_date" {
				t.Errorf("unexpected request %s", r.URL)
			}
			body = candidates[id]
		case p == "/pipelines":
			body = pipelines
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}))
	cfg := map[string]any{"api_key": key, "company_id": company, "tap": map[string]any{"base_url": base}}
	got, _, res := manifestRun(t, t.TempDir(), "breezy-hr.yaml", cfg, nil)
	want := map[string][]map[string]any{
		"positions": {
			{"name": "Dev", "type": "Full-Time", "country_id": "US", "position_id": "p1", "country_name": "Country US", "state": "published"},
			{"name": "Ops", "type": "Full-Time", "country_id": "FR", "position_id": "p2", "country_name": "Country FR", "state": "published"},
		},
		// pos_id renders "p1-" then " c1"; position_id renders " " then
		// the part of pos_id before "- ", as the CDK's templates do. The
		// tap writes the partition's value as the partition field too.
		"candidates": {
			{"_id": "c1", "name": "Ann", "stage": "Applied", "pos_id": "p1- c1", "position_id": " p1", "positions": "p1"},
			{"_id": "c2", "name": "Bob", "stage": "Hired", "pos_id": "p1- c2", "position_id": " p1", "positions": "p1"},
			{"_id": "c3", "name": "Cat", "stage": "Applied", "pos_id": "p2- c3", "position_id": " p2", "positions": "p2"},
		},
		"pipelines": {{"name": "Default"}, {"name": "Sales"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s\n%s", diff, res.stderr)
	}
	assertNone(t, res.outputs(), key)
}

// TestManifestWikipediaPageviews runs Airbyte's Wikipedia Pageviews
// manifest, unchanged: its per-article path ends in the window's bounds
// ({{stream_slice.start_time}}/{{stream_slice.end_time}}, "%Y%m%d"),
// which the walk computes: the config's start first, the bookmark (an
// hourly "%Y%m%d%H" timestamp) on the second run; the top path is built
// from slices of the config's start.
func TestManifestWikipediaPageviews(t *testing.T) {
	var views []map[string]any
	for d := range 10 {
		ts := time.Date(2024, 1, 1+d, 0, 0, 0, 0, time.UTC).Format("2006010215")
		views = append(views, map[string]any{"project": "en.wikipedia", "article": "Go", "granularity": "daily", "timestamp": ts, "access": "all-access", "agent": "user", "views": float64(100 + d)})
	}
	top := []map[string]any{{"project": "en.wikipedia", "access": "all-access", "year": "2024", "month": "01", "day": "01",
		"articles": []any{map[string]any{"article": "Main_Page", "views": float64(9000), "rank": float64(1)}}}}
	var mu sync.Mutex
	var asked []string
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := strings.TrimPrefix(r.URL.Path, "/api/rest_v1/metrics/pageviews")
		var body any
		switch {
		case strings.HasPrefix(p, "/per-article/en.wikipedia/all-access/user/Go/daily/"):
			bounds := strings.Split(strings.TrimPrefix(p, "/per-article/en.wikipedia/all-access/user/Go/daily/"), "/")
			if len(bounds) != 2 || len(bounds[0]) != 8 || len(bounds[1]) != 8 {
				t.Errorf("unexpected request %s", r.URL)
				return
			}
			mu.Lock()
			asked = append(asked, bounds[0])
			mu.Unlock()
			var items []map[string]any
			for _, v := range views {
				if v["timestamp"].(string)[:8] >= bounds[0] {
					items = append(items, v)
				}
			}
			body = map[string]any{"items": items}
		case p == "/top/en.wikipedia/all-access/2024/01/01":
			body = map[string]any{"items": top}
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}))
	dir := t.TempDir()
	cfg := map[string]any{"project": "en.wikipedia", "access": "all-access", "agent": "user", "article": "Go", "country": "US",
		"start": "20240101", "end": "20240131", "tap": map[string]any{"base_url": base}}
	got, state, _ := manifestRun(t, dir, "wikipedia-pageviews.yaml", cfg, nil)
	if diff := cmp.Diff(map[string][]map[string]any{"per-article": views, "top": top}, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	again, _, _ := manifestRun(t, dir, "wikipedia-pageviews.yaml", cfg, state)
	if diff := cmp.Diff(views[9:], again["per-article"]); diff != "" {
		t.Errorf("second run's records (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"20240101", "20240110"}, asked); diff != "" {
		t.Errorf("windows' starts asked (-want +got):\n%s", diff)
	}
}
