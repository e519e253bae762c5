package integration_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/demoapi"
)

// ---------------------------------------------------------------------------
// A validator of AirbyteMessage lines.
//
// The checks below encode the required fields, enums and types of every
// message type the tap emits, as the Airbyte protocol's message schema
// defines them: airbytehq/airbyte-protocol,
// protocol-models/src/main/resources/airbyte_protocol/v0/airbyte_protocol.yaml
// (definitions AirbyteMessage, AirbyteRecordMessage, AirbyteStateMessage,
// AirbyteStateType, AirbyteStreamState, StreamDescriptor, AirbyteStateStats,
// AirbyteLogMessage, AirbyteTraceMessage, AirbyteErrorTraceMessage,
// AirbyteStreamStatusTraceMessage, AirbyteStreamStatus,
// AirbyteConnectionStatus, AirbyteCatalog, AirbyteStream, SyncMode,
// ConnectorSpecification, DestinationSyncMode). Every definition there has
// additionalProperties: true, so extra members are not errors. On top of
// the schema, the tap's own contract: each message carries the member its
// type names (a RECORD has "record", ...), and STATE is per-stream.
// ---------------------------------------------------------------------------

var (
	abMessageTypes      = []string{"RECORD", "STATE", "LOG", "SPEC", "CONNECTION_STATUS", "CATALOG", "TRACE", "CONTROL", "DESTINATION_CATALOG"}
	abStateTypes        = []string{"GLOBAL", "STREAM", "LEGACY"}
	abLogLevels         = []string{"FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"}
	abTraceTypes        = []string{"ERROR", "ESTIMATE", "STREAM_STATUS", "ANALYTICS"}
	abFailureTypes      = []string{"system_error", "config_error", "transient_error"}
	abStreamStatuses    = []string{"STARTED", "RUNNING", "COMPLETE", "INCOMPLETE"}
	abConnectionStatus  = []string{"SUCCEEDED", "FAILED"}
	abSyncModes         = []string{"full_refresh", "incremental"}
	abDestinationModes  = []string{"append", "overwrite", "append_dedup", "update", "soft_delete"}
	abPayloadMemberName = map[string]string{
		"RECORD": "record", "STATE": "state", "LOG": "log", "SPEC": "spec",
		"CONNECTION_STATUS": "connectionStatus", "CATALOG": "catalog", "TRACE": "trace",
		"CONTROL": "control",
	}
)

// abChecker collects the schema violations of one message.
type abChecker struct{ errs []string }

func (c *abChecker) errorf(path, format string, args ...any) {
	c.errs = append(c.errs, path+": "+fmt.Sprintf(format, args...))
}

// object checks that v is an object with every required member.
func (c *abChecker) object(path string, v any, required ...string) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		c.errorf(path, "expected an object, got %T", v)
		return nil
	}
	for _, r := range required {
		if _, ok := m[r]; !ok {
			c.errorf(path, "required member %q is missing", r)
		}
	}
	return m
}

func (c *abChecker) str(path string, v any, enum ...string) string {
	s, ok := v.(string)
	if !ok {
		c.errorf(path, "expected a string, got %T", v)
		return ""
	}
	if len(enum) > 0 && !slices.Contains(enum, s) {
		c.errorf(path, "%q is not one of %v", s, enum)
	}
	return s
}

func (c *abChecker) number(path string, v any) {
	if _, ok := v.(json.Number); !ok {
		c.errorf(path, "expected a number, got %T", v)
	}
}

func (c *abChecker) integer(path string, v any) {
	n, ok := v.(json.Number)
	if !ok || strings.ContainsAny(string(n), ".eE") {
		c.errorf(path, "expected an integer, got %v", v)
	}
}

func (c *abChecker) boolean(path string, v any) {
	if _, ok := v.(bool); !ok {
		c.errorf(path, "expected a boolean, got %T", v)
	}
}

func (c *abChecker) array(path string, v any, minItems int) []any {
	a, ok := v.([]any)
	if !ok {
		c.errorf(path, "expected an array, got %T", v)
		return nil
	}
	if len(a) < minItems {
		c.errorf(path, "expected at least %d items, got %d", minItems, len(a))
	}
	return a
}

func (c *abChecker) strings(path string, v any, enum ...string) {
	for i, e := range c.array(path, v, 0) {
		c.str(fmt.Sprintf("%s[%d]", path, i), e, enum...)
	}
}

// abOpt calls check with m[key] when m has it.
func abOpt(m map[string]any, key string, check func(v any)) {
	if v, ok := m[key]; ok {
		check(v)
	}
}

func (c *abChecker) streamDescriptor(path string, v any) {
	d := c.object(path, v, "name")
	abOpt(d, "name", func(v any) { c.str(path+".name", v) })
	abOpt(d, "namespace", func(v any) { c.str(path+".namespace", v) })
}

func (c *abChecker) record(v any) {
	r := c.object("record", v, "stream", "data", "emitted_at")
	abOpt(r, "stream", func(v any) { c.str("record.stream", v) })
	abOpt(r, "data", func(v any) { c.object("record.data", v) })
	abOpt(r, "emitted_at", func(v any) { c.integer("record.emitted_at", v) })
	abOpt(r, "namespace", func(v any) { c.str("record.namespace", v) })
}

func (c *abChecker) state(v any) {
	s := c.object("state", v, "type", "stream") // required by the tap: per-stream state
	abOpt(s, "type", func(v any) {
		if c.str("state.type", v, abStateTypes...) != "STREAM" {
			c.errorf("state.type", "the tap writes STREAM state")
		}
	})
	abOpt(s, "stream", func(v any) {
		st := c.object("state.stream", v, "stream_descriptor")
		abOpt(st, "stream_descriptor", func(v any) { c.streamDescriptor("state.stream.stream_descriptor", v) })
		abOpt(st, "stream_state", func(v any) { c.object("state.stream.stream_state", v) })
	})
	abOpt(s, "data", func(v any) { c.object("state.data", v) })
	for _, k := range []string{"sourceStats", "destinationStats"} {
		abOpt(s, k, func(v any) {
			stats := c.object("state."+k, v)
			abOpt(stats, "recordCount", func(v any) { c.number("state."+k+".recordCount", v) })
		})
	}
}

func (c *abChecker) log(v any) {
	l := c.object("log", v, "level", "message")
	abOpt(l, "level", func(v any) { c.str("log.level", v, abLogLevels...) })
	abOpt(l, "message", func(v any) { c.str("log.message", v) })
	abOpt(l, "stack_trace", func(v any) { c.str("log.stack_trace", v) })
}

func (c *abChecker) trace(v any) {
	tr := c.object("trace", v, "type", "emitted_at")
	typ := ""
	abOpt(tr, "type", func(v any) { typ = c.str("trace.type", v, abTraceTypes...) })
	abOpt(tr, "emitted_at", func(v any) { c.number("trace.emitted_at", v) })
	switch typ {
	case "ERROR":
		e := c.object("trace.error", tr["error"], "message")
		abOpt(e, "message", func(v any) { c.str("trace.error.message", v) })
		abOpt(e, "internal_message", func(v any) { c.str("trace.error.internal_message", v) })
		abOpt(e, "stack_trace", func(v any) { c.str("trace.error.stack_trace", v) })
		abOpt(e, "failure_type", func(v any) { c.str("trace.error.failure_type", v, abFailureTypes...) })
		abOpt(e, "stream_descriptor", func(v any) { c.streamDescriptor("trace.error.stream_descriptor", v) })
	case "STREAM_STATUS":
		s := c.object("trace.stream_status", tr["stream_status"], "stream_descriptor", "status")
		abOpt(s, "stream_descriptor", func(v any) { c.streamDescriptor("trace.stream_status.stream_descriptor", v) })
		abOpt(s, "status", func(v any) { c.str("trace.stream_status.status", v, abStreamStatuses...) })
	}
}

func (c *abChecker) connectionStatus(v any) {
	s := c.object("connectionStatus", v, "status")
	abOpt(s, "status", func(v any) { c.str("connectionStatus.status", v, abConnectionStatus...) })
	abOpt(s, "message", func(v any) { c.str("connectionStatus.message", v) })
}

func (c *abChecker) catalog(v any) {
	cat := c.object("catalog", v, "streams")
	for i, s := range c.array("catalog.streams", cat["streams"], 0) {
		p := fmt.Sprintf("catalog.streams[%d]", i)
		st := c.object(p, s, "name", "json_schema", "supported_sync_modes")
		abOpt(st, "name", func(v any) { c.str(p+".name", v) })
		abOpt(st, "json_schema", func(v any) { c.object(p+".json_schema", v) })
		abOpt(st, "supported_sync_modes", func(v any) {
			for j, m := range c.array(p+".supported_sync_modes", v, 1) {
				c.str(fmt.Sprintf("%s.supported_sync_modes[%d]", p, j), m, abSyncModes...)
			}
		})
		abOpt(st, "source_defined_cursor", func(v any) { c.boolean(p+".source_defined_cursor", v) })
		abOpt(st, "default_cursor_field", func(v any) { c.strings(p+".default_cursor_field", v) })
		abOpt(st, "source_defined_primary_key", func(v any) {
			for j, k := range c.array(p+".source_defined_primary_key", v, 0) {
				c.strings(fmt.Sprintf("%s.source_defined_primary_key[%d]", p, j), k)
			}
		})
		abOpt(st, "namespace", func(v any) { c.str(p+".namespace", v) })
		abOpt(st, "is_resumable", func(v any) { c.boolean(p+".is_resumable", v) })
	}
}

func (c *abChecker) spec(v any) {
	s := c.object("spec", v, "connectionSpecification")
	for _, k := range []string{"documentationUrl", "changelogUrl"} {
		abOpt(s, k, func(v any) {
			if u, err := url.Parse(c.str("spec."+k, v)); err != nil || !u.IsAbs() {
				c.errorf("spec."+k, "expected a URI, got %v", v)
			}
		})
	}
	abOpt(s, "connectionSpecification", func(v any) { c.object("spec.connectionSpecification", v) })
	for _, k := range []string{"supportsIncremental", "supportsNormalization", "supportsDBT"} {
		abOpt(s, k, func(v any) { c.boolean("spec."+k, v) })
	}
	abOpt(s, "supported_destination_sync_modes", func(v any) {
		c.strings("spec.supported_destination_sync_modes", v, abDestinationModes...)
	})
	abOpt(s, "protocol_version", func(v any) { c.str("spec.protocol_version", v) })
}

// validateAirbyteLine checks one stdout line and returns it decoded
// (numbers as json.Number).
func validateAirbyteLine(line []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value on the line")
	}
	c := &abChecker{}
	m := c.object("(message)", v, "type")
	if m == nil {
		return nil, fmt.Errorf("%s", strings.Join(c.errs, "; "))
	}
	typ := ""
	abOpt(m, "type", func(v any) { typ = c.str("type", v, abMessageTypes...) })
	if member, ok := abPayloadMemberName[typ]; ok {
		if _, has := m[member]; !has {
			c.errorf("(message)", "a %s message needs its %q member", typ, member)
		}
	} else if typ != "" {
		c.errorf("type", "the tap does not write %s messages", typ)
	}
	switch typ {
	case "RECORD":
		c.record(m["record"])
	case "STATE":
		c.state(m["state"])
	case "LOG":
		c.log(m["log"])
	case "TRACE":
		c.trace(m["trace"])
	case "CONNECTION_STATUS":
		c.connectionStatus(m["connectionStatus"])
	case "CATALOG":
		c.catalog(m["catalog"])
	case "SPEC":
		c.spec(m["spec"])
	case "CONTROL":
		c.control(m["control"]) // oauth_test.go
	}
	if len(c.errs) > 0 {
		return m, fmt.Errorf("%s", strings.Join(c.errs, "; "))
	}
	return m, nil
}

func TestAirbyteValidatorRejects(t *testing.T) {
	bad := []string{
		`[]`,
		`{"type":"RECORD"}`,
		`{"type":"RECORD","record":{"stream":"s","data":{},"emitted_at":1.5}}`,
		`{"type":"RECORD","record":{"stream":"s","data":[],"emitted_at":1}}`,
		`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_state":{}}}}`,
		`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"s"}},"sourceStats":{"recordCount":"1"}}}`,
		`{"type":"LOG","log":{"level":"NOTICE","message":"m"}}`,
		`{"type":"TRACE","trace":{"type":"ERROR","emitted_at":1,"error":{"failure_type":"oops","message":"m"}}}`,
		`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1,"stream_status":{"stream_descriptor":{"name":"s"},"status":"DONE"}}}`,
		`{"type":"CONNECTION_STATUS","connectionStatus":{"status":"OK"}}`,
		`{"type":"CATALOG","catalog":{"streams":[{"name":"s","json_schema":{},"supported_sync_modes":[]}]}}`,
		`{"type":"SPEC","spec":{"connectionSpecification":{},"supported_destination_sync_modes":["upsert"]}}`,
		`{"type":"SCHEMA","stream":"s"}`,
	}
	for _, line := range bad {
		if _, err := validateAirbyteLine([]byte(line)); err == nil {
			t.Errorf("accepted %s", line)
		}
	}
	good := `{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"s"},"stream_state":{}},"sourceStats":{"recordCount":3.0}}}`
	if _, err := validateAirbyteLine([]byte(good)); err != nil {
		t.Errorf("rejected %s: %v", good, err)
	}
}

// abRun is one Airbyte command's output, every line validated.
type abRun struct {
	result
	msgs []map[string]any
}

// runAirbyte runs an Airbyte command in dir and checks that stdout holds
// only valid AirbyteMessages, stderr nothing, and no secret anywhere.
func runAirbyte(t *testing.T, dir string, args ...string) abRun {
	t.Helper()
	r := runTap(t, dir, time.Minute, nil, args...)
	if len(r.stderr) > 0 {
		t.Errorf("tap %v: stderr must be empty in Airbyte mode, got:\n%s", args, r.stderr)
	}
	for _, out := range [][]byte{r.stdout, r.stderr} {
		if bytes.Contains(out, []byte(sentinel)) {
			t.Errorf("tap %v: the secret leaked into the output", args)
		}
	}
	run := abRun{result: r}
	for i, line := range bytes.Split(r.stdout, []byte("\n")) {
		if len(line) == 0 {
			if i != len(bytes.Split(r.stdout, []byte("\n")))-1 {
				t.Errorf("tap %v: empty line %d on stdout", args, i+1)
			}
			continue
		}
		m, err := validateAirbyteLine(line)
		if err != nil {
			t.Errorf("tap %v: line %d is not a valid AirbyteMessage: %v\n%s", args, i+1, err, line)
		}
		if m != nil {
			run.msgs = append(run.msgs, m)
		}
	}
	return run
}

// of returns the messages of a type.
func (r abRun) of(typ string) []map[string]any {
	var out []map[string]any
	for _, m := range r.msgs {
		if m["type"] == typ {
			out = append(out, m)
		}
	}
	return out
}

// abGet digs into a decoded message: abGet(m, "record", "stream").
func abGet(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

func (r abRun) errorTrace() map[string]any {
	for _, m := range r.of("TRACE") {
		if abGet(m, "trace", "type") == "ERROR" {
			return abGet(m, "trace", "error").(map[string]any)
		}
	}
	return nil
}

// records returns each stream's records (data) as canonical JSON, sorted.
func (r abRun) records() map[string][]string {
	out := map[string][]string{}
	for _, m := range r.of("RECORD") {
		s := abGet(m, "record", "stream").(string)
		out[s] = append(out[s], abCanonical(abGet(m, "record", "data")))
	}
	for _, recs := range out {
		slices.Sort(recs)
	}
	return out
}

// lastStates returns the last STATE message of each stream, in the order
// the streams first wrote one: the array Airbyte passes back as --state.
func (r abRun) lastStates() []any {
	var order []string
	last := map[string]any{}
	for _, m := range r.of("STATE") {
		name := abGet(m, "state", "stream", "stream_descriptor", "name").(string)
		if _, seen := last[name]; !seen {
			order = append(order, name)
		}
		last[name] = m["state"]
	}
	out := make([]any, len(order))
	for i, n := range order {
		out[i] = last[n]
	}
	return out
}

func abCanonical(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// ---------------------------------------------------------------------------
// Fixtures: the demo streams of sample_config.json, small and fault-free.
// ---------------------------------------------------------------------------

// abStreams are the config's streams: the configured catalog's four, and
// orders, the parent of order_items.
var abStreams = []string{"customers", "orders", "order_items", "events", "tickets"}

// abDemo is a small demo with no faults and a fixed clock, so that every
// run sees the same rows.
func abDemo() demoapi.Config {
	return demoapi.Config{
		Seed: 7, Token: sentinel,
		Customers: 30, Orders: 20, Events: 200, Tickets: 25, Invoices: 10, Issues: 10, BarsDays: 1,
		SpanDays: 300, DataEnd: "2026-11-01T00:00:00Z", Now: "2026-11-01T00:00:00Z",
	}
}

// writeAirbyteConfig writes sample_config.json, pointed at base with the
// sentinel token, limited to abStreams, as dir/config.json.
func writeAirbyteConfig(t *testing.T, dir, base string, demo demoapi.Config) {
	t.Helper()
	var cfg map[string]any
	readJSON(t, "../sample_config.json", &cfg)
	var streams []any
	for _, s := range cfg["streams"].([]any) {
		if slices.Contains(abStreams, s.(map[string]any)["name"].(string)) {
			streams = append(streams, s)
		}
	}
	cfg["streams"] = streams
	cfg["base_url"] = base
	cfg["auth"] = map[string]any{"type": "bearer", "token": sentinel}
	cfg["rate_limit"] = map[string]any{"requests_per_second": 0}
	cfg["retry"] = map[string]any{"max_attempts": 3, "base_delay_ms": 10, "max_delay_ms": 50}
	cfg["demo"] = demo
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "config.json"), b)
}

// abDir is a temp dir with config.json for the embedded demo and the
// configured catalog of testdata.
func abDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeAirbyteConfig(t, dir, "embedded://demo", abDemo())
	b, err := os.ReadFile("testdata/configured_catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "configured_catalog.json"), b)
	return dir
}

// abRecorder is the demo API behind a log of the requests it served.
type abRecorder struct {
	mu   sync.Mutex
	reqs []*url.URL
}

func abStartRecordedDemo(t *testing.T, cfg demoapi.Config) (string, *abRecorder) {
	t.Helper()
	srv, err := demoapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := &abRecorder{}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, r.URL)
		rec.mu.Unlock()
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s.URL, rec
}

// take returns the requests served since the last take.
func (r *abRecorder) take() []*url.URL {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reqs
	r.reqs = nil
	return out
}

func abFirstRequest(t *testing.T, reqs []*url.URL, path string) *url.URL {
	t.Helper()
	for _, u := range reqs {
		if u.Path == path {
			return u
		}
	}
	t.Fatalf("no request to %s", path)
	return nil
}

// ---------------------------------------------------------------------------
// The commands.
// ---------------------------------------------------------------------------

func TestAirbyteSpec(t *testing.T) {
	t.Parallel()
	r := runAirbyte(t, t.TempDir(), "spec")
	if r.code != 0 || len(r.msgs) != 1 || r.msgs[0]["type"] != "SPEC" {
		t.Fatalf("exit %d, messages %v", r.code, r.msgs)
	}
	spec := r.msgs[0]["spec"].(map[string]any)
	if spec["protocol_version"] != "0.5.2" || spec["supportsIncremental"] != true ||
		spec["documentationUrl"] != "https://github.com/tap-dev/tap#readme" {
		t.Errorf("spec: %v", spec)
	}
	cs := spec["connectionSpecification"].(map[string]any)
	if cs["$schema"] != "http://json-schema.org/draft-07/schema#" || abCanonical(cs["required"]) != `["base_url"]` {
		t.Errorf("connectionSpecification: $schema %v, required %v", cs["$schema"], cs["required"])
	}
	// auth is a oneOf, one branch per auth type, told apart by a const.
	branches := map[string]map[string]any{}
	for _, b := range asSlice(abGet(cs, "properties", "auth", "oneOf")) {
		b := b.(map[string]any)
		c, _ := abGet(b, "properties", "type", "const").(string)
		branches[c] = b
	}
	for typ, secret := range map[string]string{"bearer": "token", "basic": "password", "api_key": "value", "oauth2": "client_secret", "jwt": "private_key"} {
		if abGet(branches[typ], "properties", secret, "airbyte_secret") != true {
			t.Errorf("auth type %s: %s is not marked airbyte_secret (branches %v)", typ, secret, branches[typ])
		}
	}
	if abGet(cs, "properties", "retry", "properties", "max_attempts", "default") != json.Number("6") {
		t.Errorf("retry.max_attempts: %v", abGet(cs, "properties", "retry", "properties", "max_attempts"))
	}
	if abGet(cs, "properties", "streams", "type") != "array" || abGet(cs, "properties", "streams", "items", "type") != "object" {
		t.Errorf("streams: %v", abGet(cs, "properties", "streams"))
	}
}

func TestAirbyteCheck(t *testing.T) {
	t.Parallel()
	t.Run("succeeded", func(t *testing.T) {
		t.Parallel()
		r := runAirbyte(t, abDir(t), "check", "--config", "config.json")
		cs := r.of("CONNECTION_STATUS")
		if r.code != 0 || len(cs) != 1 || abGet(cs[0], "connectionStatus", "status") != "SUCCEEDED" {
			t.Fatalf("exit %d, status %v", r.code, cs)
		}
	})
	t.Run("bad token fails with exit 0", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		demo := abDemo()
		demo.Token = "the-right-token"
		writeAirbyteConfig(t, dir, "embedded://demo", demo)
		r := runAirbyte(t, dir, "check", "--config", "config.json")
		cs := r.of("CONNECTION_STATUS")
		if r.code != 0 || len(cs) != 1 {
			t.Fatalf("exit %d, status %v", r.code, cs)
		}
		msg, _ := abGet(cs[0], "connectionStatus", "message").(string)
		if abGet(cs[0], "connectionStatus", "status") != "FAILED" || !strings.Contains(msg, "401") ||
			!strings.Contains(msg, "check the credentials") || !strings.Contains(msg, `stream "customers"`) {
			t.Errorf("status %v", cs[0])
		}
		if bytes.Contains(r.stdout, []byte("the-right-token")) {
			t.Error("the demo's token leaked")
		}
	})
	t.Run("unreadable config", func(t *testing.T) {
		t.Parallel()
		r := runAirbyte(t, t.TempDir(), "check", "--config", "missing.json")
		e := r.errorTrace()
		if r.code == 0 || e == nil || e["failure_type"] != "config_error" || !strings.Contains(e["message"].(string), "missing.json") {
			t.Errorf("exit %d, error trace %v", r.code, e)
		}
		if len(r.of("CONNECTION_STATUS")) != 0 {
			t.Error("a config that cannot be read is an error, not a connection status")
		}
	})
	t.Run("invalid config", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "config.json"), []byte(`{"base_url": "embedded://demo", "streams": [`))
		r := runAirbyte(t, dir, "check", "--config", "config.json")
		if e := r.errorTrace(); r.code == 0 || e == nil || e["failure_type"] != "config_error" {
			t.Errorf("exit %d, error trace %v", r.code, e)
		}
	})
}

func TestAirbyteDiscoverThenRead(t *testing.T) {
	t.Parallel()
	dir := abDir(t)
	r := runAirbyte(t, dir, "discover", "--config", "config.json")
	cats := r.of("CATALOG")
	if r.code != 0 || len(cats) != 1 {
		t.Fatalf("exit %d, catalogs %d", r.code, len(cats))
	}
	type stream struct {
		Modes  []string   `json:"supported_sync_modes"`
		Cursor bool       `json:"source_defined_cursor"`
		Field  []string   `json:"default_cursor_field"`
		PK     [][]string `json:"source_defined_primary_key"`
	}
	got := map[string]stream{}
	var configured []map[string]any
	for _, s := range abGet(cats[0], "catalog", "streams").([]any) {
		var st stream
		if err := json.Unmarshal([]byte(abCanonical(s)), &st); err != nil {
			t.Fatal(err)
		}
		name := abGet(s, "name").(string)
		got[name] = st
		mode := st.Modes[len(st.Modes)-1] // incremental when supported
		configured = append(configured, map[string]any{"stream": s, "sync_mode": mode, "cursor_field": st.Field,
			"destination_sync_mode": "append_dedup", "primary_key": st.PK})
	}
	want := map[string]stream{
		"customers":   {Modes: []string{"full_refresh", "incremental"}, Cursor: true, Field: []string{"updated_at"}, PK: [][]string{{"id"}}},
		"orders":      {Modes: []string{"full_refresh", "incremental"}, Cursor: true, Field: []string{"updated_at"}, PK: [][]string{{"id"}}},
		"order_items": {Modes: []string{"full_refresh"}, PK: [][]string{{"id"}}},
		"events":      {Modes: []string{"full_refresh", "incremental"}, Cursor: true, Field: []string{"id"}, PK: [][]string{{"id"}}},
		"tickets":     {Modes: []string{"full_refresh"}, PK: [][]string{{"id"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("discovered streams (-want +got):\n%s", diff)
	}
	// The discovered catalog, configured as the Airbyte UI would (full
	// json_schema included), reads every stream.
	b, _ := json.Marshal(map[string]any{"streams": configured})
	writeFile(t, filepath.Join(dir, "discovered.json"), b)
	read := runAirbyte(t, dir, "read", "--config", "config.json", "--catalog", "discovered.json")
	if read.code != 0 {
		t.Fatalf("read exit %d: %v", read.code, read.errorTrace())
	}
	recs := read.records()
	for _, s := range abStreams {
		if len(recs[s]) == 0 {
			t.Errorf("stream %s: no records", s)
		}
	}
}

// TestAirbyteReadIncrementalAndFullRefresh reads the configured catalog of
// testdata (two incremental streams, two full-refresh ones, one of them a
// child whose parent is not selected) and checks the life cycle of every
// stream: STARTED, RUNNING before the first RECORD, every RECORD covered
// by a later STATE whose recordCounts add up, COMPLETE after the last STATE.
func TestAirbyteReadIncrementalAndFullRefresh(t *testing.T) {
	t.Parallel()
	r := runAirbyte(t, abDir(t), "read", "--config", "config.json", "--catalog", "configured_catalog.json")
	if r.code != 0 {
		t.Fatalf("exit %d: %v", r.code, r.errorTrace())
	}
	type life struct {
		events       []string // STARTED, RUNNING, R (records), S (states), COMPLETE
		records      int
		countedInSum float64
	}
	streams := map[string]*life{}
	get := func(s string) *life {
		if streams[s] == nil {
			streams[s] = &life{}
		}
		return streams[s]
	}
	add := func(l *life, e string) {
		if n := len(l.events); n == 0 || l.events[n-1] != e || (e != "R" && e != "S") {
			l.events = append(l.events, e)
		}
	}
	for _, m := range r.msgs {
		switch m["type"] {
		case "RECORD":
			l := get(abGet(m, "record", "stream").(string))
			l.records++
			add(l, "R")
		case "STATE":
			l := get(abGet(m, "state", "stream", "stream_descriptor", "name").(string))
			n, _ := abGet(m, "state", "sourceStats", "recordCount").(json.Number).Float64()
			l.countedInSum += n
			add(l, "S")
		case "TRACE":
			if ss := abGet(m, "trace", "stream_status"); ss != nil {
				add(get(abGet(ss, "stream_descriptor", "name").(string)), abGet(ss, "status").(string))
			}
		}
	}
	want := map[string]int{"customers": 30, "events": 200, "tickets": 25}
	for name, l := range streams {
		if !slices.Contains([]string{"customers", "events", "tickets", "order_items"}, name) {
			t.Errorf("stream %s is not in the configured catalog but wrote messages: %v", name, l.events)
			continue
		}
		if n, ok := want[name]; ok && l.records != n {
			t.Errorf("stream %s: %d records, want %d", name, l.records, n)
		}
		if l.records == 0 {
			t.Errorf("stream %s: no records", name)
		}
		if float64(l.records) != l.countedInSum {
			t.Errorf("stream %s: %d records, but the STATE recordCounts add up to %v", name, l.records, l.countedInSum)
		}
		ev := strings.Join(l.events, " ")
		if !strings.HasPrefix(ev, "STARTED RUNNING R") || !strings.HasSuffix(ev, "R S COMPLETE") && !strings.HasSuffix(ev, "R S S COMPLETE") {
			t.Errorf("stream %s: life cycle %q, want STARTED RUNNING R ... S COMPLETE", name, ev)
		}
	}
	if len(streams) != 4 {
		t.Errorf("streams %d, want the 4 of the configured catalog", len(streams))
	}
}

// TestAirbyteReadResumesAndMatchesSinger reads twice, the second time with
// the STATE messages of the first, against the demo behind a request log;
// each time the Singer mode, given the same config and state, must write
// the same records.
func TestAirbyteReadResumesAndMatchesSinger(t *testing.T) {
	t.Parallel()
	dir := abDir(t)
	base, rec := abStartRecordedDemo(t, abDemo())
	writeAirbyteConfig(t, dir, base, abDemo())
	read := []string{"read", "--config", "config.json", "--catalog", "configured_catalog.json"}

	first := runAirbyte(t, dir, read...)
	if first.code != 0 {
		t.Fatalf("first read: exit %d: %v", first.code, first.errorTrace())
	}
	rec.take()
	states := first.lastStates()
	if len(states) != 4 {
		t.Fatalf("%d streams with STATE, want 4: %v", len(states), states)
	}
	b, _ := json.Marshal(states)
	writeFile(t, filepath.Join(dir, "state.json"), b)
	bookmark := map[string]any{}
	for _, s := range states {
		bookmark[abGet(s, "stream", "stream_descriptor", "name").(string)] = abGet(s, "stream", "stream_state", "replication_key_value")
	}

	second := runAirbyte(t, dir, append(read, "--state", "state.json")...)
	if second.code != 0 {
		t.Fatalf("second read: exit %d: %v", second.code, second.errorTrace())
	}
	reqs := rec.take()

	// The second run's requests carry the bookmarks.
	bm, err := time.Parse(time.RFC3339, bookmark["customers"].(string))
	if err != nil {
		t.Fatalf("customers bookmark %v: %v", bookmark["customers"], err)
	}
	if got, want := abFirstRequest(t, reqs, "/v1/customers").Query().Get("updated_since"), bm.Add(-300*time.Second).UTC().Format(time.RFC3339); got != want {
		t.Errorf("customers: updated_since %q, want the bookmark minus the overlap %q", got, want)
	}
	if got, want := abFirstRequest(t, reqs, "/v1/events").Query().Get("since_id"), fmt.Sprint(bookmark["events"]); got != want {
		t.Errorf("events: since_id %q, want the bookmark %q", got, want)
	}
	// Fewer records for the incremental streams, all of them again for
	// the full-refresh ones.
	r1, r2 := first.records(), second.records()
	for _, s := range []string{"customers", "events"} {
		if len(r2[s]) >= len(r1[s]) {
			t.Errorf("stream %s: %d records on the second run, %d on the first; want fewer", s, len(r2[s]), len(r1[s]))
		}
	}
	for _, s := range []string{"tickets", "order_items"} {
		if diff := cmp.Diff(r1[s], r2[s]); diff != "" {
			t.Errorf("full-refresh stream %s differs between runs (-first +second):\n%s", s, diff)
		}
	}

	// The Singer mode writes the same records for the same config and state.
	for i, run := range []struct {
		airbyte abRun
		args    []string
	}{
		{first, []string{"--config", "config.json"}},
		{second, []string{"--config", "config.json", "--state", "state.json"}},
	} {
		sr := runTap(t, dir, time.Minute, nil, run.args...)
		if sr.code != 0 {
			t.Fatalf("singer run %d: exit %d: %s", i+1, sr.code, sr.stderr)
		}
		singer := map[string][]string{}
		for _, line := range bytes.Split(bytes.TrimSpace(sr.stdout), []byte("\n")) {
			var m struct {
				Type   string         `json:"type"`
				Stream string         `json:"stream"`
				Record map[string]any `json:"record"`
			}
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.UseNumber() // big integers keep every digit, as in abRun
			if err := dec.Decode(&m); err != nil {
				t.Fatalf("singer line %s: %v", line, err)
			}
			if m.Type == "RECORD" && m.Stream != "orders" { // orders is not in the configured catalog
				singer[m.Stream] = append(singer[m.Stream], abCanonical(m.Record))
			}
		}
		for _, recs := range singer {
			slices.Sort(recs)
		}
		if diff := cmp.Diff(singer, run.airbyte.records()); diff != "" {
			t.Errorf("run %d: Singer and Airbyte records differ (-singer +airbyte):\n%s", i+1, diff)
		}
	}

	// full_refresh of an incremental stream ignores its bookmark.
	rec.take()
	writeFile(t, filepath.Join(dir, "refresh.json"), []byte(`{"streams": [
	  {"stream": {"name": "customers", "json_schema": {}, "supported_sync_modes": ["full_refresh", "incremental"]},
	   "sync_mode": "full_refresh", "destination_sync_mode": "overwrite"}]}`))
	refresh := runAirbyte(t, dir, "read", "--config", "config.json", "--catalog", "refresh.json", "--state", "state.json")
	if refresh.code != 0 {
		t.Fatalf("full refresh: exit %d: %v", refresh.code, refresh.errorTrace())
	}
	if got := abFirstRequest(t, rec.take(), "/v1/customers").Query().Get("updated_since"); got != "2026-01-01T00:00:00Z" {
		t.Errorf("full refresh of customers: updated_since %q, want the start_date", got)
	}
	if diff := cmp.Diff(r1["customers"], refresh.records()["customers"]); diff != "" {
		t.Errorf("full refresh of customers differs from the first read (-first +refresh):\n%s", diff)
	}
}

func TestAirbyteReadRejectsIncrementalOnFullTable(t *testing.T) {
	t.Parallel()
	dir := abDir(t)
	writeFile(t, filepath.Join(dir, "bad.json"), []byte(`{"streams": [
	  {"stream": {"name": "customers", "json_schema": {}, "supported_sync_modes": ["full_refresh", "incremental"]},
	   "sync_mode": "incremental", "cursor_field": ["updated_at"], "destination_sync_mode": "append"},
	  {"stream": {"name": "tickets", "json_schema": {}, "supported_sync_modes": ["full_refresh"]},
	   "sync_mode": "incremental", "destination_sync_mode": "append"}]}`))
	r := runAirbyte(t, dir, "read", "--config", "config.json", "--catalog", "bad.json")
	e := r.errorTrace()
	if r.code == 0 || e == nil || e["failure_type"] != "config_error" {
		t.Fatalf("exit %d, error trace %v", r.code, e)
	}
	if msg := e["message"].(string); !strings.Contains(msg, "bad.json") || !strings.Contains(msg, `"tickets"`) || !strings.Contains(msg, "incremental") {
		t.Errorf("message %q should name the file, the stream and the mode", msg)
	}
	if n := len(r.of("RECORD")) + len(r.of("STATE")); n != 0 {
		t.Errorf("%d RECORD/STATE messages before a config error", n)
	}
}

// A configured stream with a namespace: its RECORDs, STATEs and stream
// statuses carry it, so the STATE the platform stores is the stream's in
// the next read, which takes it (a state of another namespace would be
// ignored, as Airbyte does).
func TestAirbyteNamespaceRoundTrip(t *testing.T) {
	t.Parallel()
	dir := abDir(t)
	writeFile(t, filepath.Join(dir, "ns.json"), []byte(`{"streams": [
	  {"stream": {"name": "customers", "namespace": "shop", "json_schema": {}, "supported_sync_modes": ["full_refresh", "incremental"]},
	   "sync_mode": "incremental", "cursor_field": ["updated_at"], "destination_sync_mode": "append"}]}`))
	first := runAirbyte(t, dir, "read", "--config", "config.json", "--catalog", "ns.json")
	if first.code != 0 {
		t.Fatalf("read: exit %d: %v", first.code, first.errorTrace())
	}
	var states []any
	records := 0
	for _, m := range first.msgs {
		var ns any
		switch m["type"] {
		case "RECORD":
			records++
			ns = abGet(m, "record", "namespace")
		case "STATE":
			states = append(states, m)
			ns = abGet(m, "state", "stream", "stream_descriptor", "namespace")
		case "TRACE":
			if abGet(m, "trace", "type") != "STREAM_STATUS" {
				continue
			}
			ns = abGet(m, "trace", "stream_status", "stream_descriptor", "namespace")
		default:
			continue
		}
		if ns != "shop" {
			t.Fatalf("%v message without the stream's namespace: %v", m["type"], m)
		}
	}
	if records == 0 || len(states) == 0 {
		t.Fatalf("%d records and %d states in the first read", records, len(states))
	}
	b, err := json.Marshal(states)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "state.json"), b)
	second := runAirbyte(t, dir, "read", "--config", "config.json", "--catalog", "ns.json", "--state", "state.json")
	if second.code != 0 {
		t.Fatalf("second read: exit %d: %v", second.code, second.errorTrace())
	}
	again := 0
	for _, m := range second.msgs {
		if msg, _ := abGet(m, "log", "message").(string); strings.Contains(msg, "it is ignored") {
			t.Errorf("the second read ignored the first's state: %s", msg)
		}
		if m["type"] == "RECORD" {
			again++
		}
	}
	if again >= records {
		t.Errorf("the second read wrote %d records, the first %d: its state was not applied", again, records)
	}
}
