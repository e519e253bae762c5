package integration_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReconcileByIDChecksTheKey: the listing has keys 1–8, the stream
// wrote 1–5, and by_id answers the record of key 1 whatever it is asked.
// The answers are dead letters, no record is written again, and keys
// 6–8 stay missing: the next reconcile asks for them again.
func TestReconcileByIDChecksTheKey(t *testing.T) {
	t.Parallel()
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/accounts" && r.URL.Query().Get("fields") == "id":
			var ids []string
			for i := 1; i <= 8; i++ {
				ids = append(ids, fmt.Sprintf(`{"id":%d}`, i))
			}
			fmt.Fprintf(w, "[%s]", strings.Join(ids, ","))
		case r.URL.Path == "/accounts":
			w.Write([]byte(`[{"id":1},{"id":2},{"id":3},{"id":4},{"id":5}]`))
		case strings.HasPrefix(r.URL.Path, "/accounts/"):
			w.Write([]byte(`{"id":1}`)) // always key 1
		default:
			http.NotFound(w, r)
		}
	}))
	stream := map[string]any{"name": "accounts", "path": "/accounts", "records_path": "", "primary_key": []any{"id"},
		"reconcile": map[string]any{"every_runs": 0, "params": map[string]any{"fields": "id"}, "keys_file": "accounts.keys",
			"by_id": map[string]any{"path": "/accounts/{id}"}},
		"schema": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}}}}
	d := newTapDir(t, tapConfig(base, []any{stream}))
	for run := 1; run <= 2; run++ {
		r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json", "--reconcile")
		if r.code != 0 {
			t.Fatalf("run %d: exit %d; stderr:\n%s", run, r.code, r.stderr)
		}
		if n := countRecords(r.stdout); n != 5 {
			t.Errorf("run %d: %d records, want the stream's 5 and no fetched one", run, n)
		}
		if !strings.Contains(string(r.stderr), "reconcile stream=accounts listed=8 deleted=0 missed=3 fetched=0") {
			t.Errorf("run %d: want keys 6-8 missed and none fetched:\n%s", run, r.stderr)
		}
	}
	b, err := os.ReadFile(filepath.Join(d.dir, "dead_letter.jsonl"))
	if err != nil || strings.Count(string(b), "holds the record of key 1") != 6 {
		t.Errorf("want 6 dead letters (3 keys, 2 runs) naming the other key: %v\n%s", err, b)
	}
}
