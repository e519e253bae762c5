package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/internal/taptest"
	"github.com/tap-dev/tap/settings"
)

// streamStates is a State holding each stream's stream_state as JSON.
type streamStates map[string]string

func (s streamStates) StreamJSON(stream string) ([]byte, error) {
	if b, ok := s[stream]; ok {
		return []byte(b), nil
	}
	return []byte("{}"), nil
}

func (s streamStates) AppendJSON(b []byte) ([]byte, error) {
	m := map[string]json.RawMessage{}
	for k, v := range s {
		m[k] = json.RawMessage(v)
	}
	j, err := json.Marshal(map[string]any{"bookmarks": m})
	return append(b, j...), err
}

func TestAirbyteWriterStateDedupeAndRecordCount(t *testing.T) {
	var out bytes.Buffer
	w := NewAirbyte(&out)
	st := streamStates{"orders": `{"replication_key":"updated_at","replication_key_value":"2026-01-01T00:00:00Z"}`}
	rec := []byte(`{"id":1}`)
	at := time.UnixMilli(1_700_000_000_123)
	steps := []func() error{
		func() error { return w.Record("orders", rec, at, 0) },
		func() error { return w.Record("orders", rec, at, 0) },
		func() error { return w.State("orders", st, 2) }, // 2 records
		func() error { return w.State("orders", st, 2) }, // exact repeat: skipped
		func() error { return w.Record("orders", rec, at, 0) },
		func() error { return w.State("orders", st, 3) }, // same blob, 1 new record: written
		func() error {
			st["orders"] = `{"replication_key":"updated_at","replication_key_value":"2026-02-01T00:00:00Z"}`
			return w.State("orders", st, 3)
		},
		func() error { return w.State("orders", st, 3) },  // repeat: skipped
		func() error { return w.State("tickets", st, 0) }, // another stream, first STATE, even empty
		func() error { return w.State("tickets", st, 0) }, // repeat: skipped
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if strings.HasPrefix(line, `{"type":"STATE"`) {
			states = append(states, line)
		}
	}
	want := []string{
		`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"orders"},"stream_state":{"replication_key":"updated_at","replication_key_value":"2026-01-01T00:00:00Z"}},"sourceStats":{"recordCount":2.0}}}`,
		`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"orders"},"stream_state":{"replication_key":"updated_at","replication_key_value":"2026-01-01T00:00:00Z"}},"sourceStats":{"recordCount":1.0}}}`,
		`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"orders"},"stream_state":{"replication_key":"updated_at","replication_key_value":"2026-02-01T00:00:00Z"}},"sourceStats":{"recordCount":0.0}}}`,
		`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"tickets"},"stream_state":{}},"sourceStats":{"recordCount":0.0}}}`,
	}
	if diff := cmp.Diff(want, states); diff != "" {
		t.Errorf("STATE lines (-want +got):\n%s", diff)
	}
}

func TestAirbyteWriterRecordAndStatus(t *testing.T) {
	var out bytes.Buffer
	w := NewAirbyte(&out)
	w.now = func() time.Time { return time.UnixMilli(42) }
	at := time.UnixMilli(1_700_000_000_123)
	_ = w.Schema("orders", map[string]any{"type": "object"}, []string{"id"}, nil)
	_ = w.ActivateVersion("orders", 7)
	_ = w.StreamStatus("orders", StatusStarted)
	_ = w.Record("orders", []byte(`{"id":1,"note":"a<b"}`), at, 7)
	_ = w.Record("orders", []byte(`{"id":2}`), at, 7)
	_ = w.StreamStatus("orders", StatusComplete)
	_ = w.Flush()
	want := `{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":42,"stream_status":{"stream_descriptor":{"name":"orders"},"status":"STARTED"}}}
{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":42,"stream_status":{"stream_descriptor":{"name":"orders"},"status":"RUNNING"}}}
{"type":"RECORD","record":{"stream":"orders","data":{"id":1,"note":"a<b"},"emitted_at":1700000000123}}
{"type":"RECORD","record":{"stream":"orders","data":{"id":2},"emitted_at":1700000000123}}
{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":42,"stream_status":{"stream_descriptor":{"name":"orders"},"status":"COMPLETE"}}}
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

func TestAirbyteWriterConcurrentLines(t *testing.T) {
	var out bytes.Buffer
	w := NewAirbyte(&out)
	log := w.Logger(0)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			stream := fmt.Sprintf("s%d", g)
			st := streamStates{}
			for i := range 200 {
				_ = w.Record(stream, []byte(`{"id":1}`), time.Now(), 0)
				log.Info("progress", "stream", stream, "i", i)
				if i%50 == 0 {
					_ = w.State(stream, st, int64(i+1))
				}
			}
		})
	}
	wg.Wait()
	_ = w.Flush()
	running := map[string]int{}
	for _, m := range taptest.JSONLines(t, out.Bytes()) {
		if tr, ok := m["trace"].(map[string]any); ok {
			ss := tr["stream_status"].(map[string]any)
			running[ss["stream_descriptor"].(map[string]any)["name"].(string)]++
		}
	}
	for g := range 8 {
		if n := running[fmt.Sprintf("s%d", g)]; n != 1 {
			t.Errorf("stream s%d: %d RUNNING statuses, want 1", g, n)
		}
	}
}

func TestAirbyteErrorTraceScrubsSecrets(t *testing.T) {
	var out bytes.Buffer
	w := NewAirbyte(&out)
	w.SetRedactor(settings.NewRedactor("s3cr3t-token"))
	err := &client.StatusError{Stream: "orders", Method: "GET", Path: "/v1/orders?key=s3cr3t-token", Status: 401, Message: "bad token s3cr3t-token"}
	if werr := w.Error(err, FailureConfig, "orders"); werr != nil {
		t.Fatal(werr)
	}
	w.Logger(0).Info("token is s3cr3t-token")
	_ = w.Flush()
	if strings.Contains(out.String(), "s3cr3t-token") {
		t.Fatalf("secret leaked:\n%s", out.String())
	}
	msgs := taptest.JSONLines(t, out.Bytes())
	e := msgs[0]["trace"].(map[string]any)["error"].(map[string]any)
	if e["failure_type"] != FailureConfig || !strings.Contains(e["message"].(string), "check the credentials") ||
		e["stream_descriptor"].(map[string]any)["name"] != "orders" {
		t.Errorf("error trace: %v", e)
	}
	if msgs[1]["log"].(map[string]any)["message"] != "token is REDACTED" {
		t.Errorf("log: %v", msgs[1])
	}
}
