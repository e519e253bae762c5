package integration_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func csvStream() map[string]any {
	return map[string]any{"name": "rows", "path": "/rows.csv", "format": "csv", "primary_key": []any{"id"},
		"schema": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}, "v": map[string]any{"type": "string"}}}}
}

// TestCSVHeaderNameTwice: a CSV body whose header names a column twice
// (id,id,v) would drop one value of every row in silence, the key taken
// from the second: each row is refused by its schema instead, set aside
// as a dead letter naming the column.
func TestCSVHeaderNameTwice(t *testing.T) {
	t.Parallel()
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		w.Write([]byte("id,id,v\n1,2,a\n3,4,b\n"))
	}))
	d := newTapDir(t, tapConfig(base, []any{csvStream()}))
	r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if n := countRecords(r.stdout); n != 0 {
		t.Errorf("records = %d, want 0: every row lost a value", n)
	}
	b, err := os.ReadFile(filepath.Join(d.dir, "dead_letter.jsonl"))
	if err != nil || strings.Count(string(b), "\n") != 2 || !strings.Contains(string(b), `/id`) {
		t.Errorf("want 2 dead letters naming /id: %v\n%s", err, b)
	}
}

// TestCSVCROnlyLineEnds: a CSV body whose lines end with CR alone is one
// line to CSV and read as 0 records with exit 0; it fails the stream
// with a message saying why instead.
func TestCSVCROnlyLineEnds(t *testing.T) {
	t.Parallel()
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		w.Write([]byte("id,v\r1,a\r2,b\r"))
	}))
	d := newTapDir(t, tapConfig(base, []any{csvStream()}))
	r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
	if r.code != 1 || !strings.Contains(string(r.stderr), `stream "rows": the csv header holds a carriage return`) {
		t.Errorf("exit %d, want 1 naming the stream and the CR line ends; stderr:\n%s", r.code, r.stderr)
	}
}
