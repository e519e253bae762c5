package integration_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"
)

// TestCatalogFullTable: a stream whose catalog metadata says
// "replication-method": "FULL_TABLE" is read whole, whatever its bookmark,
// and the bookmark stays as it came in; without it, the same state reads
// nothing new.
func TestCatalogFullTable(t *testing.T) {
	dir := t.TempDir()
	cfg := sampleConfig(t, dir)
	disc := runTap(t, dir, time.Minute, nil, "--config", cfg, "--discover")
	// Past every row, but within the day ahead of the clock a bookmark may
	// be (further ahead, the state is refused).
	ahead := time.Now().Add(12 * time.Hour).UTC().Format(time.RFC3339)
	writeFile(t, filepath.Join(dir, "state.json"),
		[]byte(`{"bookmarks":{"customers":{"replication_key":"updated_at","replication_key_value":"`+ahead+`"}}}`))
	for _, fullTable := range []bool{false, true} {
		var cat map[string]any
		if err := json.Unmarshal(disc.stdout, &cat); err != nil {
			t.Fatal(err)
		}
		for _, s := range cat["streams"].([]any) {
			s := s.(map[string]any)
			for _, m := range s["metadata"].([]any) {
				m := m.(map[string]any)
				if len(m["breadcrumb"].([]any)) != 0 {
					continue
				}
				md := m["metadata"].(map[string]any)
				md["selected"] = s["tap_stream_id"] == "customers"
				if fullTable {
					md["replication-method"] = "FULL_TABLE"
				}
			}
		}
		b, _ := json.Marshal(cat)
		writeFile(t, filepath.Join(dir, "catalog.json"), b)
		r := runTap(t, dir, 2*time.Minute, nil, "--config", cfg, "--catalog", "catalog.json", "--state", "state.json")
		if r.code != 0 {
			t.Fatalf("full table %v: exit %d: %s", fullTable, r.code, r.stderr)
		}
		records := 0
		var last singerMessage
		for _, m := range parseSinger(t, r.stdout) {
			switch m.Type {
			case "RECORD":
				records++
			case "STATE":
				last = m
			}
		}
		want := 0
		if fullTable {
			want = 60
		}
		if records != want {
			t.Errorf("full table %v: %d customers, want %d", fullTable, records, want)
		}
		if !bytes.Contains(last.Value, []byte(`"replication_key_value":"`+ahead+`"`)) {
			t.Errorf("full table %v: the bookmark moved: %s", fullTable, last.Value)
		}
	}
}

// TestCatalogFullTableFutureBookmark: a bookmark days in the future is
// refused for an incremental read (exit 2), but a FULL_TABLE selection,
// whose walk does not use it, runs with a WARN and keeps it.
func TestCatalogFullTableFutureBookmark(t *testing.T) {
	dir := t.TempDir()
	cfg := sampleConfig(t, dir)
	disc := runTap(t, dir, time.Minute, nil, "--config", cfg, "--discover")
	future := time.Now().Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339)
	writeFile(t, filepath.Join(dir, "state.json"),
		[]byte(`{"bookmarks":{"customers":{"replication_key":"updated_at","replication_key_value":"`+future+`"}}}`))
	for _, fullTable := range []bool{false, true} {
		var cat map[string]any
		if err := json.Unmarshal(disc.stdout, &cat); err != nil {
			t.Fatal(err)
		}
		for _, s := range cat["streams"].([]any) {
			s := s.(map[string]any)
			for _, m := range s["metadata"].([]any) {
				m := m.(map[string]any)
				if len(m["breadcrumb"].([]any)) != 0 {
					continue
				}
				md := m["metadata"].(map[string]any)
				md["selected"] = s["tap_stream_id"] == "customers"
				if fullTable {
					md["replication-method"] = "FULL_TABLE"
				}
			}
		}
		b, _ := json.Marshal(cat)
		writeFile(t, filepath.Join(dir, "catalog.json"), b)
		r := runTap(t, dir, 2*time.Minute, nil, "--config", cfg, "--catalog", "catalog.json", "--state", "state.json")
		if !fullTable {
			if r.code != 2 || !bytes.Contains(r.stderr, []byte("is in the future")) {
				t.Errorf("incremental: exit %d, want 2 refusing the bookmark: %s", r.code, r.stderr)
			}
			continue
		}
		if r.code != 0 {
			t.Fatalf("full table: exit %d: %s", r.code, r.stderr)
		}
		if !bytes.Contains(r.stderr, []byte("is in the future (the clock says")) || !bytes.Contains(r.stderr, []byte("read as a full table this run, which does not use it")) {
			t.Errorf("full table: no WARN about the ignored bookmark:\n%s", r.stderr)
		}
		if !bytes.Contains(r.stdout, []byte(`"replication_key_value":"`+future+`"`)) {
			t.Errorf("full table: the bookmark was not kept")
		}
	}
}
