package integration_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stateRun is a run of the binary with what its stdout held: the bytes of
// its RECORD and STATE lines and its peak RSS.
type stateRun struct {
	result
	records, states int
	recordB, stateB int
	lastState       []byte
	peakRSSMiB      float64
}

func runCounted(t *testing.T, dir string, args ...string) stateRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tapBin, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("tap did not finish in time; stderr:\n%s", lastLine(errb.Bytes()))
	}
	r := stateRun{result: result{stdout: out.Bytes(), stderr: errb.Bytes()}}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.peakRSSMiB = float64(ru.Maxrss) / 1024 // KiB on Linux
	}
	for _, line := range bytes.Split(out.Bytes(), []byte("\n")) {
		switch {
		case bytes.HasPrefix(line, []byte(`{"type":"RECORD"`)):
			r.records++
			r.recordB += len(line) + 1
		case bytes.HasPrefix(line, []byte(`{"type":"STATE"`)):
			r.states++
			r.stateB += len(line) + 1
			r.lastState = line
		}
	}
	return r
}

// TestStateSizeLinear: the STATE a run writes stays proportional to what
// the run read, however many per-parent bookmarks a child stream keeps
// and however large the incoming state: every STATE is the whole state,
// so a large one is written again only once the records since the last
// outweigh it, and always as the last line.
func TestStateSizeLinear(t *testing.T) {
	t.Parallel()
	const parents = 2000
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/parents" {
			rows := make([]map[string]any, parents)
			for i := range rows {
				rows[i] = map[string]any{"id": i + 1}
			}
			writeJSONBody(w, map[string]any{"items": rows})
			return
		}
		id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/parents/"), "/kids")
		n, _ := strconv.Atoi(id)
		writeJSONBody(w, map[string]any{"items": []map[string]any{
			{"id": 2*n - 1, "parent_id": n, "updated_at": "2026-01-10T00:00:00Z"},
			{"id": 2 * n, "parent_id": n, "updated_at": "2026-01-11T00:00:00Z"},
		}})
	}))
	props := map[string]any{"id": map[string]any{"type": "integer"}, "parent_id": map[string]any{"type": "integer"},
		"updated_at": map[string]any{"type": "string", "format": "date-time"}}
	parent := map[string]any{"name": "parents", "path": "/parents", "records_path": "items", "primary_key": []string{"id"},
		"pagination": map[string]any{"type": "none"}, "schema": map[string]any{"type": "object", "properties": props}}
	kids := map[string]any{"name": "kids", "path": "/parents/{id}/kids", "records_path": "items", "primary_key": []string{"id"},
		"replication_key": "updated_at", "incremental": map[string]any{"param": "since"},
		"parent":     map[string]any{"stream": "parents", "key": "id"},
		"pagination": map[string]any{"type": "none"}, "schema": map[string]any{"type": "object", "properties": props}}

	t.Run("per_parent_bookmarks", func(t *testing.T) {
		d := newTapDir(t, tapConfig(base, []any{parent, kids}))
		r := runCounted(t, d.dir, "--config", "config.json")
		if r.code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
		}
		t.Logf("%d records (%d bytes), %d STATE (%d bytes), peak RSS %.0f MiB", r.records, r.recordB, r.states, r.stateB, r.peakRSSMiB)
		if got := bytes.Count(r.lastState, []byte(`"context"`)); got != parents {
			t.Errorf("the last STATE has %d partitions, want %d", got, parents)
		}
		if limit := 2*r.recordB + 1<<20; r.stateB > limit {
			t.Errorf("STATE lines hold %d bytes for %d bytes of records; want at most %d", r.stateB, r.recordB, limit)
		}
	})

	t.Run("large_incoming_state", func(t *testing.T) {
		d := newTapDir(t, tapConfig(base, []any{parent, kids}))
		var st strings.Builder
		st.WriteString(`{"bookmarks":{`)
		bookmarks := 100000
		if raceEnabled {
			bookmarks = 20000 // the race detector runs the binary ten times slower
		}
		for i := range bookmarks {
			if i > 0 {
				st.WriteByte(',')
			}
			fmt.Fprintf(&st, `"gone_%d":{"replication_key":"updated_at","replication_key_value":"2026-01-01T00:00:00Z"}`, i)
		}
		st.WriteString(`}}`)
		writeFile(t, filepath.Join(d.dir, "state.json"), []byte(st.String()))
		r := runCounted(t, d.dir, "--config", "config.json", "--state", "state.json")
		if r.code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
		}
		t.Logf("%d records (%d bytes), %d STATE (%d bytes), peak RSS %.0f MiB", r.records, r.recordB, r.states, r.stateB, r.peakRSSMiB)
		if !bytes.Contains(r.lastState, fmt.Appendf(nil, `"gone_%d"`, bookmarks-1)) {
			t.Errorf("the last STATE lost the incoming bookmarks")
		}
		if limit := 2*r.recordB + 3*st.Len(); r.stateB > limit {
			t.Errorf("STATE lines hold %d bytes for %d bytes of records and a %d-byte incoming state; want at most %d", r.stateB, r.recordB, st.Len(), limit)
		}
		limit := 400.0 // measured: 100-170 MiB, most of it reading the state file
		if raceEnabled {
			limit *= 8 // the race detector's shadow memory
		}
		if r.peakRSSMiB > limit {
			t.Errorf("peak RSS %.0f MiB, want at most %.0f", r.peakRSSMiB, limit)
		}
	})
}
