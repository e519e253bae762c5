package tap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/tap/output"
	"github.com/tap-dev/tap/tap/state"
)

// abConfig is a config of four streams: a full table, an incremental one,
// a parent and its child.
func abConfig() *Config {
	obj := func(props ...string) map[string]any {
		p := map[string]any{}
		for _, k := range props {
			p[k] = map[string]any{}
		}
		return map[string]any{"type": "object", "properties": p}
	}
	return &Config{
		Streams: []streams.Definition{
			{Name: "tickets", PrimaryKey: []string{"id"}},
			{Name: "orders", PrimaryKey: []string{"id"}, ReplicationKey: "updated_at"},
			{Name: "items", PrimaryKey: []string{"id"}, Parent: &streams.Parent{Stream: "orders", Key: "id", As: "order_id"}},
		},
		Schemas: map[string]map[string]any{
			"tickets": obj("id", "subject"),
			"orders":  obj("id", "updated_at", "amount", "note"),
			"items":   obj("id", "order_id", "sku"),
		},
	}
}

func TestDiscoverAirbyte(t *testing.T) {
	cat := DiscoverAirbyte(abConfig())
	got := map[string]AirbyteStream{}
	for _, s := range cat.Streams {
		s.JSONSchema = nil
		got[s.Name] = s
	}
	want := map[string]AirbyteStream{
		"tickets": {Name: "tickets", SupportedSyncModes: []string{"full_refresh"}, SourceDefinedPrimaryKey: [][]string{{"id"}}},
		"orders": {Name: "orders", SupportedSyncModes: []string{"full_refresh", "incremental"}, SourceDefinedCursor: true,
			DefaultCursorField: []string{"updated_at"}, SourceDefinedPrimaryKey: [][]string{{"id"}}},
		"items": {Name: "items", SupportedSyncModes: []string{"full_refresh"}, SourceDefinedPrimaryKey: [][]string{{"id"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("catalog (-want +got):\n%s", diff)
	}
}

func TestParseConfiguredCatalog(t *testing.T) {
	tests := []struct {
		name        string
		catalog     string
		selected    []string
		fullRefresh []string
		dropped     map[string]map[string]bool
		wantErr     string
	}{
		{
			name: "incremental and full refresh",
			catalog: `{"streams": [
				{"stream": {"name": "orders", "json_schema": {}}, "sync_mode": "incremental", "cursor_field": ["updated_at"], "destination_sync_mode": "append_dedup", "primary_key": [["id"]]},
				{"stream": {"name": "tickets", "json_schema": {}}, "sync_mode": "full_refresh", "destination_sync_mode": "overwrite"}]}`,
			selected: []string{"orders", "tickets"},
		},
		{
			name:        "full refresh of an incremental stream drops its bookmark",
			catalog:     `{"streams": [{"stream": {"name": "orders"}, "sync_mode": "full_refresh", "destination_sync_mode": "overwrite"}]}`,
			selected:    []string{"orders"},
			fullRefresh: []string{"orders"},
		},
		{
			name:        "sync_mode defaults to full_refresh",
			catalog:     `{"streams": [{"stream": {"name": "orders"}, "destination_sync_mode": "append"}]}`,
			selected:    []string{"orders"},
			fullRefresh: []string{"orders"},
		},
		{
			name:     "incremental without cursor_field takes the source-defined cursor",
			catalog:  `{"streams": [{"stream": {"name": "orders"}, "sync_mode": "incremental", "destination_sync_mode": "append"}]}`,
			selected: []string{"orders"},
		},
		{
			name: "column selection keeps the keys",
			catalog: `{"streams": [{"stream": {"name": "orders", "json_schema": {"type": "object", "properties": {"amount": {}}}},
				"sync_mode": "incremental", "destination_sync_mode": "append"}]}`,
			selected: []string{"orders"},
			dropped:  map[string]map[string]bool{"orders": {"note": true}},
		},
		{
			name:     "a child without its parent",
			catalog:  `{"streams": [{"stream": {"name": "items"}, "sync_mode": "full_refresh", "destination_sync_mode": "append"}]}`,
			selected: []string{"items"},
		},
		{
			name:    "incremental on a full-table stream",
			catalog: `{"streams": [{"stream": {"name": "tickets"}, "sync_mode": "incremental", "destination_sync_mode": "append"}]}`,
			wantErr: `streams[0].sync_mode: stream "tickets" supports only full_refresh (it has no replication_key), got incremental`,
		},
		{
			name:    "another cursor field",
			catalog: `{"streams": [{"stream": {"name": "orders"}, "sync_mode": "incremental", "cursor_field": ["amount"], "destination_sync_mode": "append"}]}`,
			wantErr: `streams[0].cursor_field: stream "orders" has the source-defined cursor ["updated_at"], got ["amount"]`,
		},
		{
			name:    "unknown stream",
			catalog: `{"streams": [{"stream": {"name": "nope"}, "sync_mode": "full_refresh", "destination_sync_mode": "append"}]}`,
			wantErr: `streams[0].stream.name: unknown stream "nope" (the config defines tickets, orders, items)`,
		},
		{
			name:    "unknown sync mode",
			catalog: `{"streams": [{"stream": {"name": "orders"}, "sync_mode": "cdc", "destination_sync_mode": "append"}]}`,
			wantErr: `streams[0].sync_mode: expected full_refresh or incremental, got "cdc"`,
		},
		{
			name:    "stream twice",
			catalog: `{"streams": [{"stream": {"name": "orders"}, "sync_mode": "full_refresh"}, {"stream": {"name": "orders"}, "sync_mode": "incremental"}]}`,
			wantErr: `streams[1].stream.name: stream "orders" is configured twice`,
		},
		{
			name:    "no name",
			catalog: `{"streams": [{"stream": {}, "sync_mode": "full_refresh"}]}`,
			wantErr: `streams[0].stream.name: is required`,
		},
		{
			name:    "no streams",
			catalog: `{"catalog": []}`,
			wantErr: `streams: expected the configured catalog's "streams" array`,
		},
		{
			name:    "a Singer catalog is not a configured catalog",
			catalog: `{"streams": [{"tap_stream_id": "orders", "stream": "orders"}]}`,
			wantErr: `streams.stream: expected an object, got string`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree, err := codec.Decode([]byte(tt.catalog))
			if err != nil {
				t.Fatal(err)
			}
			as, err := parseConfiguredCatalog(tree, abConfig())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var selected []string
			for _, d := range abConfig().Streams {
				if as.sel.Selected(d.Name) {
					selected = append(selected, d.Name)
				}
				if diff := cmp.Diff(tt.dropped[d.Name], as.sel.Dropped(d.Name)); diff != "" {
					t.Errorf("dropped of %s (-want +got):\n%s", d.Name, diff)
				}
			}
			if diff := cmp.Diff(tt.selected, selected, cmp.Transformer("sort", sortedCopy)); diff != "" {
				t.Errorf("selected (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.fullRefresh, as.fullRefresh); diff != "" {
				t.Errorf("full refresh (-want +got):\n%s", diff)
			}
		})
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestLoadConfiguredCatalogNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "configured.json")
	if err := os.WriteFile(path, []byte(`{"streams": [{"stream": {"name": "tickets"}, "sync_mode": "incremental"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := LoadConfiguredCatalog(path, abConfig())
	var ie *InputError
	if !errors.As(err, &ie) || ie.File != path || failureType(err) != output.FailureConfig || ExitCode(err) != ExitBadInput {
		t.Fatalf("error %v (%T), want an *InputError naming %s", err, err, path)
	}
}

func TestResetBookmark(t *testing.T) {
	st := state.New()
	st.SetValue("orders", "updated_at", "2026-01-01T00:00:00Z")
	st.SetValue("tickets", "updated_at", "2026-02-01T00:00:00Z")
	st.Reset("orders")
	if st.Value("orders") != nil || st.Value("tickets") == nil {
		t.Errorf("orders %v, tickets %v", st.Value("orders"), st.Value("tickets"))
	}
}

func TestFailureType(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&InputError{File: "config.json", Err: errors.New("base_url: is required")}, output.FailureConfig},
		{&UsageError{Msg: "read needs --catalog"}, output.FailureConfig},
		{fmt.Errorf("wrapped: %w", &InputError{File: "catalog.json", Err: errors.New("x")}), output.FailureConfig},
		{&client.StatusError{Stream: "s", Status: 401}, output.FailureConfig},
		{&client.StatusError{Stream: "s", Status: 403}, output.FailureConfig},
		{&client.StatusError{Stream: "s", Status: 503, Attempts: 6}, output.FailureTransient},
		{&client.StatusError{Stream: "s", Status: 429, Attempts: 6}, output.FailureTransient},
		{&client.StatusError{Stream: "s", Status: 0, Attempts: 6, Err: errors.New("connection reset")}, output.FailureTransient},
		{&client.StatusError{Stream: "s", Status: 404}, output.FailureSystem},
		{&client.StatusError{Stream: "s", Status: 400}, output.FailureSystem},
		{&client.DeferError{Stream: "s", Reason: "banned", RetryAt: time.Now()}, output.FailureTransient},
		{errors.Join(&client.DeferError{Stream: "s"}, errors.New("checkpoint")), output.FailureTransient},
		{fmt.Errorf("stream %q: %w", "s", client.ErrCircuitOpen), output.FailureTransient},
		{errors.New("stream \"s\": a record is not a JSON object"), output.FailureSystem},
	}
	for _, tt := range tests {
		if got := failureType(tt.err); got != tt.want {
			t.Errorf("failureType(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}

// abLines decodes the JSON lines of out.
func abLines(t *testing.T, out []byte) []map[string]any {
	t.Helper()
	var msgs []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("not a JSON line: %s: %v", line, err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// abServer is a small API: /tickets (full table, empty), /orders
// (incremental), /orders/{id}/items (child). It records every request.
type abServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string
	status   int // answered to every request when set
}

func newABServer(t *testing.T) *abServer {
	s := &abServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.URL.RequestURI())
		status := s.status
		s.mu.Unlock()
		if status != 0 {
			w.WriteHeader(status)
			fmt.Fprint(w, `{"error": "invalid token"}`)
			return
		}
		if r.Header.Get("Authorization") != "Bearer tok-secret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch {
		case r.URL.Path == "/tickets":
			fmt.Fprint(w, `[]`)
		case r.URL.Path == "/orders":
			fmt.Fprint(w, `[{"id": 7, "updated_at": "2026-03-01T00:00:00Z", "amount": 1}, {"id": 8, "updated_at": "2026-03-02T00:00:00Z", "amount": 2}]`)
		case strings.HasPrefix(r.URL.Path, "/orders/"):
			id := strings.Split(r.URL.Path, "/")[2]
			fmt.Fprintf(w, `[{"id": "%s-1", "sku": "x"}]`, id)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *abServer) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.requests
	s.requests = nil
	return r
}

// writeABFiles writes a config for srv and the given configured catalog
// (and state, when not empty) into a temp dir.
func writeABFiles(t *testing.T, base string, catalog, state string) Files {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`{
	  "base_url": %q,
	  "auth": {"type": "bearer", "token": "tok-secret"},
	  "rate_limit": {"requests_per_second": 0},
	  "retry": {"max_attempts": 2, "base_delay_ms": 1, "max_delay_ms": 2},
	  "streams": [
	    {"name": "tickets", "path": "/tickets", "records_path": "", "primary_key": ["id"],
	     "schema": {"type": "object", "properties": {"id": {"type": "integer"}}}},
	    {"name": "orders", "path": "/orders", "records_path": "", "primary_key": ["id"], "replication_key": "updated_at",
	     "incremental": {"param": "since"},
	     "schema": {"type": "object", "properties": {"id": {"type": "integer"}, "updated_at": {"type": "string"}, "amount": {"type": "integer"}}}},
	    {"name": "items", "path": "/orders/{id}/items", "records_path": "", "primary_key": ["id"],
	     "parent": {"stream": "orders", "key": "id", "as": "order_id"},
	     "schema": {"type": "object", "properties": {"id": {"type": "string"}, "order_id": {"type": "integer"}, "sku": {"type": "string"}}}}
	  ]}`, base)
	f := Files{Config: filepath.Join(dir, "config.json"), Catalog: filepath.Join(dir, "catalog.json")}
	files := map[string]string{f.Config: cfg, f.Catalog: catalog}
	if state != "" {
		f.State = filepath.Join(dir, "state.json")
		files[f.State] = state
	}
	for p, content := range files {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

const abAllStreams = `{"streams": [
  {"stream": {"name": "tickets"}, "sync_mode": "full_refresh", "destination_sync_mode": "overwrite"},
  {"stream": {"name": "orders"}, "sync_mode": "incremental", "cursor_field": ["updated_at"], "destination_sync_mode": "append_dedup"},
  {"stream": {"name": "items"}, "sync_mode": "full_refresh", "destination_sync_mode": "overwrite"}]}`

// TestAirbyteReadEveryStreamEndsWithState checks that every selected
// stream, the empty one and the child included, ends with a STATE that
// follows its last RECORD and precedes its COMPLETE status.
func TestAirbyteReadEveryStreamEndsWithState(t *testing.T) {
	srv := newABServer(t)
	f := writeABFiles(t, srv.URL, abAllStreams, "")
	var out bytes.Buffer
	if err := Airbyte(context.Background(), "read", f, &out); err != nil {
		t.Fatalf("read: %v\n%s", err, out.String())
	}
	lastRecord, lastState, complete := map[string]int{}, map[string]int{}, map[string]int{}
	records := map[string]int{}
	for i, m := range abLines(t, out.Bytes()) {
		switch m["type"] {
		case "RECORD":
			s := m["record"].(map[string]any)["stream"].(string)
			lastRecord[s] = i
			records[s]++
		case "STATE":
			s := m["state"].(map[string]any)["stream"].(map[string]any)["stream_descriptor"].(map[string]any)["name"].(string)
			lastState[s] = i
		case "TRACE":
			tr := m["trace"].(map[string]any)
			if ss, ok := tr["stream_status"].(map[string]any); ok && ss["status"] == output.StatusComplete {
				complete[ss["stream_descriptor"].(map[string]any)["name"].(string)] = i
			}
		}
	}
	if diff := cmp.Diff(map[string]int{"orders": 2, "items": 2}, records); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	for _, s := range []string{"tickets", "orders", "items"} {
		st, ok := lastState[s]
		if !ok {
			t.Errorf("stream %s has no STATE", s)
			continue
		}
		if r, ok := lastRecord[s]; ok && r > st {
			t.Errorf("stream %s: RECORD at line %d after its last STATE at line %d", s, r, st)
		}
		if c, ok := complete[s]; !ok || c < st {
			t.Errorf("stream %s: COMPLETE at line %d, last STATE at %d", s, c, st)
		}
	}
}

func TestAirbyteReadFullRefreshIgnoresBookmark(t *testing.T) {
	srv := newABServer(t)
	state := `[{"type": "STREAM", "stream": {"stream_descriptor": {"name": "orders"}, "stream_state": {"replication_key": "updated_at", "replication_key_value": "2026-03-01T00:00:00Z"}}}]`
	for _, tt := range []struct{ mode, wantQuery string }{
		{"incremental", "/orders?since=2026-03-01T00%3A00%3A00Z"},
		{"full_refresh", "/orders"},
	} {
		catalog := fmt.Sprintf(`{"streams": [{"stream": {"name": "orders"}, "sync_mode": %q, "destination_sync_mode": "append"}]}`, tt.mode)
		f := writeABFiles(t, srv.URL, catalog, state)
		var out bytes.Buffer
		if err := Airbyte(context.Background(), "read", f, &out); err != nil {
			t.Fatalf("%s: %v", tt.mode, err)
		}
		if diff := cmp.Diff([]string{tt.wantQuery}, srv.take()); diff != "" {
			t.Errorf("%s: requests (-want +got):\n%s", tt.mode, diff)
		}
	}
}

func TestAirbyteReadErrors(t *testing.T) {
	srv := newABServer(t)
	tests := []struct {
		name, catalog string
		status        int
		failure       string
		code          int
	}{
		{"incremental on a full-table stream", `{"streams": [{"stream": {"name": "tickets"}, "sync_mode": "incremental", "destination_sync_mode": "append"}]}`, 0, output.FailureConfig, ExitBadInput},
		{"unknown stream", `{"streams": [{"stream": {"name": "nope"}, "sync_mode": "full_refresh", "destination_sync_mode": "append"}]}`, 0, output.FailureConfig, ExitBadInput},
		{"catalog not JSON", `{"streams": [`, 0, output.FailureConfig, ExitBadInput},
		{"forbidden", abAllStreams, http.StatusForbidden, output.FailureConfig, ExitFailure},
		{"server down", abAllStreams, http.StatusServiceUnavailable, output.FailureTransient, ExitFailure},
		{"not found", abAllStreams, http.StatusNotFound, output.FailureSystem, ExitFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.mu.Lock()
			srv.status = tt.status
			srv.mu.Unlock()
			f := writeABFiles(t, srv.URL, tt.catalog, "")
			var out bytes.Buffer
			err := Airbyte(context.Background(), "read", f, &out)
			if ExitCode(err) != tt.code {
				t.Fatalf("error %v: exit %d, want %d", err, ExitCode(err), tt.code)
			}
			msgs := abLines(t, out.Bytes())
			last := msgs[len(msgs)-1]
			tr, _ := last["trace"].(map[string]any)
			e, _ := tr["error"].(map[string]any)
			if e == nil || e["failure_type"] != tt.failure {
				t.Errorf("last message %v, want an ERROR trace of %s", last, tt.failure)
			}
			if strings.Contains(out.String(), "tok-secret") {
				t.Errorf("secret leaked:\n%s", out.String())
			}
		})
	}
	srv.mu.Lock()
	srv.status = 0
	srv.mu.Unlock()
}

func TestAirbyteCheck(t *testing.T) {
	srv := newABServer(t)
	t.Run("succeeded, child checked with the first parent record", func(t *testing.T) {
		f := writeABFiles(t, srv.URL, "{}", "")
		var out bytes.Buffer
		if err := Airbyte(context.Background(), "check", f, &out); err != nil {
			t.Fatal(err)
		}
		msgs := abLines(t, out.Bytes())
		if diff := cmp.Diff(map[string]any{"status": "SUCCEEDED"}, msgs[len(msgs)-1]["connectionStatus"]); diff != "" {
			t.Errorf("status (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"/tickets", "/orders", "/orders/7/items"}, srv.take()); diff != "" {
			t.Errorf("requests (-want +got):\n%s", diff)
		}
	})
	t.Run("bad token", func(t *testing.T) {
		f := writeABFiles(t, srv.URL, "{}", "")
		b, _ := os.ReadFile(f.Config)
		_ = os.WriteFile(f.Config, bytes.Replace(b, []byte("tok-secret"), []byte("wrong-token"), 1), 0o644)
		var out bytes.Buffer
		if err := Airbyte(context.Background(), "check", f, &out); err != nil {
			t.Fatalf("a failed check is no error: %v", err)
		}
		msgs := abLines(t, out.Bytes())
		cs := msgs[len(msgs)-1]["connectionStatus"].(map[string]any)
		msg, _ := cs["message"].(string)
		if cs["status"] != "FAILED" || !strings.Contains(msg, `stream "tickets"`) || !strings.Contains(msg, "401") ||
			!strings.Contains(msg, "check the credentials") || strings.Contains(out.String(), "wrong-token") {
			t.Errorf("status %v", cs)
		}
		srv.take()
	})
	t.Run("unreadable config", func(t *testing.T) {
		var out bytes.Buffer
		err := Airbyte(context.Background(), "check", Files{Config: filepath.Join(t.TempDir(), "missing.json")}, &out)
		if ExitCode(err) == ExitOK {
			t.Fatal("want an error")
		}
		msgs := abLines(t, out.Bytes())
		if len(msgs) != 1 || msgs[0]["trace"].(map[string]any)["error"].(map[string]any)["failure_type"] != output.FailureConfig {
			t.Errorf("output %v", msgs)
		}
	})
}

// The trace of an error that ends a command carries its failure type and
// the stream it names.
func TestAirbyteErrorTrace(t *testing.T) {
	var out bytes.Buffer
	err := AirbyteFail(&out, fmt.Errorf("sync: %w", &client.StatusError{Stream: "orders", Method: "GET", Path: "/v1/orders", Status: 503, Attempts: 6}))
	msgs := abLines(t, out.Bytes())
	if len(msgs) != 1 {
		t.Fatalf("output %s", out.String())
	}
	e := msgs[0]["trace"].(map[string]any)["error"].(map[string]any)
	if e["failure_type"] != output.FailureTransient || e["stream_descriptor"].(map[string]any)["name"] != "orders" || ExitCode(err) != ExitFailure {
		t.Errorf("exit %d, error trace %v", ExitCode(err), e)
	}
}

func TestAirbyteFail(t *testing.T) {
	var out bytes.Buffer
	err := AirbyteFail(&out, &UsageError{Msg: "flag provided but not defined: -bogus"})
	msgs := abLines(t, out.Bytes())
	if ExitCode(err) != ExitBadInput || len(msgs) != 1 || msgs[0]["trace"].(map[string]any)["error"].(map[string]any)["failure_type"] != output.FailureConfig {
		t.Errorf("exit %d, output %s", ExitCode(err), out.String())
	}
}
