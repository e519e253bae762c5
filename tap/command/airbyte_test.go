package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/internal/taptest"
	"github.com/tap-dev/tap/tap"
	"github.com/tap-dev/tap/tap/inputs"
	"github.com/tap-dev/tap/tap/output"
)

// abFiles writes the config and catalog of an ABServer at base (and the
// state, when not empty).
func abFiles(t *testing.T, base, catalog, state string) inputs.Files {
	t.Helper()
	p := taptest.WriteABFiles(t, base, catalog, state)
	return inputs.Files{Config: p.Config, Catalog: p.Catalog, State: p.State}
}

func TestFailureType(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&tap.InputError{File: "config.json", Err: errors.New("base_url: is required")}, output.FailureConfig},
		{&tap.UsageError{Msg: "read needs --catalog"}, output.FailureConfig},
		{fmt.Errorf("wrapped: %w", &tap.InputError{File: "catalog.json", Err: errors.New("x")}), output.FailureConfig},
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

// TestAirbyteReadEveryStreamEndsWithState checks that every selected
// stream, the empty one and the child included, ends with a STATE that
// follows its last RECORD and precedes its COMPLETE status.
func TestAirbyteReadEveryStreamEndsWithState(t *testing.T) {
	srv := taptest.NewABServer(t)
	f := abFiles(t, srv.URL, taptest.ABAllStreams, "")
	var out bytes.Buffer
	if err := Airbyte(context.Background(), "read", f, &out); err != nil {
		t.Fatalf("read: %v\n%s", err, out.String())
	}
	lastRecord, lastState, complete := map[string]int{}, map[string]int{}, map[string]int{}
	records := map[string]int{}
	for i, m := range taptest.JSONLines(t, out.Bytes()) {
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
	srv := taptest.NewABServer(t)
	state := `[{"type": "STREAM", "stream": {"stream_descriptor": {"name": "orders"}, "stream_state": {"replication_key": "updated_at", "replication_key_value": "2026-03-01T00:00:00Z"}}}]`
	for _, tt := range []struct{ mode, wantQuery string }{
		{"incremental", "/orders?since=2026-02-28T23%3A55%3A00Z"}, // the bookmark less the default overlap,
		{"full_refresh", "/orders"},
	} {
		catalog := fmt.Sprintf(`{"streams": [{"stream": {"name": "orders"}, "sync_mode": %q, "destination_sync_mode": "append"}]}`, tt.mode)
		f := abFiles(t, srv.URL, catalog, state)
		var out bytes.Buffer
		if err := Airbyte(context.Background(), "read", f, &out); err != nil {
			t.Fatalf("%s: %v", tt.mode, err)
		}
		if diff := cmp.Diff([]string{tt.wantQuery}, srv.Take()); diff != "" {
			t.Errorf("%s: requests (-want +got):\n%s", tt.mode, diff)
		}
	}
}

func TestAirbyteReadErrors(t *testing.T) {
	srv := taptest.NewABServer(t)
	tests := []struct {
		name, catalog string
		status        int
		failure       string
		code          int
	}{
		{"incremental on a full-table stream", `{"streams": [{"stream": {"name": "tickets"}, "sync_mode": "incremental", "destination_sync_mode": "append"}]}`, 0, output.FailureConfig, tap.ExitBadInput},
		{"unknown stream", `{"streams": [{"stream": {"name": "nope"}, "sync_mode": "full_refresh", "destination_sync_mode": "append"}]}`, 0, output.FailureConfig, tap.ExitBadInput},
		{"catalog not JSON", `{"streams": [`, 0, output.FailureConfig, tap.ExitBadInput},
		{"forbidden", taptest.ABAllStreams, http.StatusForbidden, output.FailureConfig, tap.ExitFailure},
		{"server down", taptest.ABAllStreams, http.StatusServiceUnavailable, output.FailureTransient, tap.ExitFailure},
		{"not found", taptest.ABAllStreams, http.StatusNotFound, output.FailureSystem, tap.ExitFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.SetStatus(tt.status)
			f := abFiles(t, srv.URL, tt.catalog, "")
			var out bytes.Buffer
			err := Airbyte(context.Background(), "read", f, &out)
			if tap.ExitCode(err) != tt.code {
				t.Fatalf("error %v: exit %d, want %d", err, tap.ExitCode(err), tt.code)
			}
			msgs := taptest.JSONLines(t, out.Bytes())
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
	srv.SetStatus(0)
}

func TestAirbyteCheck(t *testing.T) {
	srv := taptest.NewABServer(t)
	t.Run("succeeded, child checked with the first parent record", func(t *testing.T) {
		f := abFiles(t, srv.URL, "{}", "")
		var out bytes.Buffer
		if err := Airbyte(context.Background(), "check", f, &out); err != nil {
			t.Fatal(err)
		}
		msgs := taptest.JSONLines(t, out.Bytes())
		if diff := cmp.Diff(map[string]any{"status": "SUCCEEDED"}, msgs[len(msgs)-1]["connectionStatus"]); diff != "" {
			t.Errorf("status (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"/tickets", "/orders", "/orders/7/items"}, srv.Take()); diff != "" {
			t.Errorf("requests (-want +got):\n%s", diff)
		}
	})
	t.Run("bad token", func(t *testing.T) {
		f := abFiles(t, srv.URL, "{}", "")
		b, _ := os.ReadFile(f.Config)
		_ = os.WriteFile(f.Config, bytes.Replace(b, []byte("tok-secret"), []byte("wrong-token"), 1), 0o644)
		var out bytes.Buffer
		if err := Airbyte(context.Background(), "check", f, &out); err != nil {
			t.Fatalf("a failed check is no error: %v", err)
		}
		msgs := taptest.JSONLines(t, out.Bytes())
		cs := msgs[len(msgs)-1]["connectionStatus"].(map[string]any)
		msg, _ := cs["message"].(string)
		if cs["status"] != "FAILED" || !strings.Contains(msg, `stream "tickets"`) || !strings.Contains(msg, "401") ||
			!strings.Contains(msg, "check the credentials") || strings.Contains(out.String(), "wrong-token") {
			t.Errorf("status %v", cs)
		}
		srv.Take()
	})
	t.Run("unreadable config", func(t *testing.T) {
		var out bytes.Buffer
		err := Airbyte(context.Background(), "check", inputs.Files{Config: filepath.Join(t.TempDir(), "missing.json")}, &out)
		if tap.ExitCode(err) == tap.ExitOK {
			t.Fatal("want an error")
		}
		msgs := taptest.JSONLines(t, out.Bytes())
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
	msgs := taptest.JSONLines(t, out.Bytes())
	if len(msgs) != 1 {
		t.Fatalf("output %s", out.String())
	}
	e := msgs[0]["trace"].(map[string]any)["error"].(map[string]any)
	if e["failure_type"] != output.FailureTransient || e["stream_descriptor"].(map[string]any)["name"] != "orders" || tap.ExitCode(err) != tap.ExitFailure {
		t.Errorf("exit %d, error trace %v", tap.ExitCode(err), e)
	}
}

func TestAirbyteFail(t *testing.T) {
	var out bytes.Buffer
	err := AirbyteFail(&out, &tap.UsageError{Msg: "flag provided but not defined: -bogus"})
	msgs := taptest.JSONLines(t, out.Bytes())
	if tap.ExitCode(err) != tap.ExitBadInput || len(msgs) != 1 || msgs[0]["trace"].(map[string]any)["error"].(map[string]any)["failure_type"] != output.FailureConfig {
		t.Errorf("exit %d, output %s", tap.ExitCode(err), out.String())
	}
}
