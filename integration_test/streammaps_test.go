package integration_test

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// mapSeed is the stream_map_config value the maps hash with; like every
// secret it must never be printed.
const mapSeed = "pepper-5f1c9e"

// TestStreamMaps runs the binary with Meltano SDK stream maps on the demo
// customers: a hash with a config seed, a removed property, a filter, an
// alias and flattening; and checks the SCHEMA and every RECORD against
// the API's own rows.
func TestStreamMaps(t *testing.T) {
	srv, base := startDemo(t, demoBase())
	cfg := tapConfig(base, demoStreams(t, nil, "customers"))
	cfg["stream_maps"] = map[string]any{
		"customers": map[string]any{
			"__alias__":  "clients",
			"__filter__": "id % 2 == 0",
			"email_hash": "md5(config['seed'] + email) if email else None",
			"email":      nil,
			"name_upper": "name.upper() if name else None",
		},
	}
	cfg["stream_map_config"] = map[string]any{"seed": mapSeed}
	cfg["flattening_enabled"] = true
	cfg["flattening_max_depth"] = 1
	d := newTapDir(t, cfg)

	r := runTap(t, d.dir, 2*time.Minute, nil, "--config", "config.json")
	d.checkSecrets(r)
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	for name, b := range map[string][]byte{"stdout": r.stdout, "stderr": r.stderr} {
		if bytes.Contains(b, []byte(mapSeed)) {
			t.Errorf("the stream_map_config seed leaked into %s", name)
		}
	}

	var schema map[string]any
	var keys, bookmarks []string
	got := map[string]map[string]any{}
	for _, line := range bytes.Split(bytes.TrimSpace(r.stdout), []byte("\n")) {
		var m struct {
			Type               string         `json:"type"`
			Stream             string         `json:"stream"`
			Schema             map[string]any `json:"schema"`
			KeyProperties      []string       `json:"key_properties"`
			BookmarkProperties []string       `json:"bookmark_properties"`
			Record             map[string]any `json:"record"`
			Value              map[string]any `json:"value"`
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("stdout line is not JSON: %v: %.200s", err, line)
		}
		switch m.Type {
		case "SCHEMA":
			if m.Stream != "clients" {
				t.Fatalf("SCHEMA of stream %q, want only the alias clients", m.Stream)
			}
			schema, keys, bookmarks = m.Schema, m.KeyProperties, m.BookmarkProperties
		case "RECORD":
			if m.Stream != "clients" {
				t.Fatalf("RECORD of stream %q, want only the alias clients", m.Stream)
			}
			got[fmt.Sprint(m.Record["id"])] = m.Record
		case "STATE":
			bm, _ := m.Value["bookmarks"].(map[string]any)
			if _, ok := bm["customers"]; !ok {
				t.Errorf("STATE %v: bookmarks must stay keyed by the source stream customers", m.Value)
			}
		}
	}
	if schema == nil {
		t.Fatal("no SCHEMA")
	}
	props, _ := schema["properties"].(map[string]any)
	for _, p := range []string{"id", "email_hash", "name_upper", "address__city", "address__street", "address__zip", "updated_at"} {
		if _, ok := props[p]; !ok {
			t.Errorf("SCHEMA has no property %q: %v", p, slices.Sorted(maps.Keys(props)))
		}
	}
	for _, p := range []string{"email", "address"} {
		if _, ok := props[p]; ok {
			t.Errorf("SCHEMA still has property %q", p)
		}
	}
	if !slices.Equal(keys, []string{"id"}) || !slices.Equal(bookmarks, []string{"updated_at"}) {
		t.Errorf("key_properties %v, bookmark_properties %v; want [id], [updated_at]", keys, bookmarks)
	}

	want := 0
	for _, row := range source(t, srv, "customers") {
		id := fmt.Sprint(row["id"])
		var n int
		fmt.Sscan(id, &n)
		rec, ok := got[id]
		if n%2 != 0 {
			if ok {
				t.Errorf("customer %s passed the filter id %% 2 == 0", id)
			}
			continue
		}
		want++
		if !ok {
			t.Errorf("customer %s missing", id)
			continue
		}
		if _, has := rec["email"]; has {
			t.Errorf("customer %s: email was not removed", id)
		}
		if email, _ := row["email"].(string); email != "" {
			sum := md5.Sum([]byte(mapSeed + email))
			if h := hex.EncodeToString(sum[:]); rec["email_hash"] != h {
				t.Errorf("customer %s: email_hash %v, want %s", id, rec["email_hash"], h)
			}
		} else if rec["email_hash"] != nil {
			t.Errorf("customer %s has no email but email_hash %v", id, rec["email_hash"])
		}
		if name, _ := row["name"].(string); rec["name_upper"] != strings.ToUpper(name) && name != "" {
			t.Errorf("customer %s: name_upper %v, want %q", id, rec["name_upper"], strings.ToUpper(name))
		}
		if addr, ok := row["address"].(map[string]any); ok && rec["address__city"] != addr["city"] {
			t.Errorf("customer %s: address__city %v, want %v", id, rec["address__city"], addr["city"])
		}
		if _, has := rec["address"]; has {
			t.Errorf("customer %s: address was not flattened", id)
		}
	}
	if want == 0 || len(got) != want {
		t.Errorf("%d records written, want the %d customers with an even id", len(got), want)
	}

	t.Run("discover shows the mapped stream", func(t *testing.T) {
		r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json", "--discover")
		if r.code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
		}
		var cat struct {
			Streams []struct {
				TapStreamID string         `json:"tap_stream_id"`
				Schema      map[string]any `json:"schema"`
			} `json:"streams"`
		}
		if err := json.Unmarshal(r.stdout, &cat); err != nil {
			t.Fatal(err)
		}
		if len(cat.Streams) != 1 || cat.Streams[0].TapStreamID != "clients" {
			t.Fatalf("catalog streams %+v, want only clients", cat.Streams)
		}
		props, _ := cat.Streams[0].Schema["properties"].(map[string]any)
		if _, ok := props["email_hash"]; !ok {
			t.Errorf("catalog schema has no email_hash: %v", slices.Sorted(maps.Keys(props)))
		}
	})

	t.Run("airbyte discover and read write the mapped stream", func(t *testing.T) {
		disc := runAirbyte(t, d.dir, "discover", "--config", "config.json")
		cats := disc.of("CATALOG")
		if len(cats) != 1 {
			t.Fatalf("%d CATALOG messages", len(cats))
		}
		streams, _ := abGet(cats[0], "catalog", "streams").([]any)
		if len(streams) != 1 || abGet(streams[0], "name") != "clients" {
			t.Fatalf("catalog streams %v, want only clients", streams)
		}
		conf, _ := json.Marshal(map[string]any{"streams": []any{map[string]any{
			"stream": streams[0], "sync_mode": "incremental", "destination_sync_mode": "append", "cursor_field": []string{"updated_at"}}}})
		writeFile(t, d.dir+"/configured.json", conf)
		read := runAirbyte(t, d.dir, "read", "--config", "config.json", "--catalog", "configured.json")
		if read.code != 0 {
			t.Fatalf("read: exit %d: %v", read.code, read.errorTrace())
		}
		recs := read.of("RECORD")
		if len(recs) != len(got) {
			t.Errorf("read wrote %d records, want %d as in Singer mode", len(recs), len(got))
		}
		for _, m := range recs {
			data, _ := abGet(m, "record", "data").(map[string]any)
			_, hasEmail := data["email"]
			if abGet(m, "record", "stream") != "clients" || hasEmail || got[fmt.Sprint(data["id"])] == nil {
				t.Fatalf("record not mapped as in Singer mode: %v", m)
			}
		}
		if bytes.Contains(read.stdout, []byte(mapSeed)) {
			t.Error("the stream_map_config seed leaked into the Airbyte output")
		}
	})

	t.Run("about lists the capabilities", func(t *testing.T) {
		r := runTap(t, d.dir, time.Minute, nil, "--about")
		for _, c := range []string{`"stream-maps"`, `"schema-flattening"`} {
			if !bytes.Contains(r.stdout, []byte(c)) {
				t.Errorf("--about does not list %s", c)
			}
		}
	})

	t.Run("an expression outside the subset is a config error", func(t *testing.T) {
		cfg["stream_maps"] = map[string]any{"customers": map[string]any{"n": "len(name)"}}
		bad := newTapDir(t, cfg)
		r := runTap(t, bad.dir, time.Minute, nil, "--config", "config.json")
		if r.code != 2 || len(r.stdout) != 0 {
			t.Fatalf("exit %d with %d bytes of stdout, want exit 2 and nothing sent", r.code, len(r.stdout))
		}
		if line := lastLine(r.stderr); !strings.Contains(line, `stream_maps.customers.n: "len(name)"`) || !strings.Contains(line, "config.json") {
			t.Errorf("error %q does not name the file, the map and the expression", line)
		}
	})
}
