package tap

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/tap/catalog"
	"github.com/tap-dev/tap/tap/inputs"
)

// Pages written through stream maps (tap/mapped): spliced as through the
// tree.

// TestSpliceMappedAgainstTree runs the demo streams with stream maps
// twice, spliced and through the tree path only: the same messages (the
// records' values), and the mapped streams that can splice did — a map
// of named properties keeps the splice path, with properties deselected
// in the catalog too.
func TestSpliceMappedAgainstTree(t *testing.T) {
	run := func(tree bool) *rawRecorder {
		_, path := demoConfig(t, func(cfg map[string]any) {
			cfg["demo"].(map[string]any)["events_growth"] = 0
			cfg["max_parallel_streams"] = 1
			cfg["stream_maps"] = map[string]any{
				"events": map[string]any{"ip": "md5(str(ip))", "id_x2": "id * 2", "user_agent": nil},
				"customers": map[string]any{
					"email_hash": "md5(config['seed'] + email) if email else None", "email": nil,
					"__filter__": "country != 'FR'",
				},
				"customers_pii": map[string]any{"__source__": "customers", "email": "email", "__else__": nil},
				"orders":        map[string]any{"__alias__": "sales", "note": "json.dumps(record)"},
			}
			cfg["stream_map_config"] = map[string]any{"seed": "pepper"}
		})
		cfg, err := settings.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		var cat strings.Builder
		cat.WriteString(`{"streams": [`)
		for i, s := range []string{"events", "customers", "customers_pii", "sales", "order_items", "invoices", "tickets"} {
			if i > 0 {
				cat.WriteString(",")
			}
			fmt.Fprintf(&cat, `{"tap_stream_id": %q, "metadata": [{"breadcrumb": [], "metadata": {"selected": true}}`, s)
			if s == "events" { // a property of the record and one of the map
				cat.WriteString(`, {"breadcrumb": ["properties", "source"], "metadata": {"selected": false}}`)
				cat.WriteString(`, {"breadcrumb": ["properties", "id_x2"], "metadata": {"selected": false}}`)
			}
			cat.WriteString("]}")
		}
		cat.WriteString("]}")
		catPath := filepath.Join(filepath.Dir(path), "catalog.json")
		if err := os.WriteFile(catPath, []byte(cat.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := inputs.Maps(cfg)
		if err != nil {
			t.Fatal(err)
		}
		sel, err := catalog.Load(catPath, cfg, m)
		if err != nil {
			t.Fatal(err)
		}
		w := &rawRecorder{raw: map[string][][]byte{}}
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		if err := syncTree(context.Background(), Options{Config: cfg, Writer: w, Log: log, Selection: sel}, tree); err != nil {
			t.Fatal(err)
		}
		for i, m := range w.msgs {
			w.msgs[i].Version = 0
			bm, _ := m.State["bookmarks"].(map[string]any)
			for _, b := range bm {
				delete(b.(map[string]any), "version") // the run's clock
				delete(b.(map[string]any), "window")
				if r, ok := b.(map[string]any)["resume"].(map[string]any); ok {
					delete(r, "version")
				}
			}
		}
		return w
	}
	tree, spliced := run(true), run(false)
	if d := cmp.Diff(tree.msgs, spliced.msgs, cmp.AllowUnexported(message{})); d != "" {
		t.Fatalf("messages differ (-tree +spliced):\n%s", d)
	}
	// The tree path sorts a record's keys; a spliced one keeps the API's
	// order, the map's properties after it.
	for _, stream := range []string{"events", "customers", "customers_pii", "sales"} {
		n := 0
		for i, b := range spliced.raw[stream] {
			if !bytes.Equal(b, tree.raw[stream][i]) {
				n++
			}
		}
		switch {
		case len(spliced.raw[stream]) == 0:
			t.Errorf("%s: no records", stream)
		case stream == "sales" && n > 0:
			t.Errorf("%s: %d records spliced; its map reads the record whole", stream, n)
		case stream != "sales" && n == 0:
			t.Errorf("%s: no record spliced of %d", stream, len(spliced.raw[stream]))
		}
		t.Logf("%s: %d of %d records spliced", stream, n, len(spliced.raw[stream]))
	}
	if a, b := len(spliced.raw["customers"]), len(spliced.raw["customers_pii"]); a == b || a == 0 {
		t.Errorf("customers %d records, customers_pii %d: the filter kept all or none", a, b)
	}
	for _, m := range spliced.msgs {
		if _, ok := m.Record["source"]; ok && m.Stream == "events" {
			t.Fatalf("a deselected property written: %v", m.Record)
		}
		if _, ok := m.Record["ip"]; !ok && m.Stream == "events" && m.Type == "RECORD" {
			t.Fatalf("a selected property missing: %v", m.Record)
		}
	}
}

// TestSpliceMappedMixedPage: on a page of records the walker is sure of
// and records it is not, a map writes the same records, dead letters and
// bookmark spliced as through the tree; and a map that fails on a record
// fails the same way, after the same records.
func TestSpliceMappedMixedPage(t *testing.T) {
	page := "{\"events\":[" + strings.Join([]string{
		`{"id":1,"type":"login","occurred_at":"2026-01-01T00:00:00Z","ip":"10.0.0.1"}`,
		`{"id":2,"type":"x","type":"last wins"}`,          // duplicate key
		`{"id":3,"type":"caf` + "\xff" + `"}`,             // invalid UTF-8
		`{"id":4,"type":"a","surprise":{"b":[1,2]}}`,      // drift
		`{"id":5, "ip" : null ,	"type":"spaces"}`,         // spaces around the members
		`{"id":"6","type":"wrong type"}`,                  // a dead letter
		`{"ip":"1.2.3.4","id":7,"user_agent":"first"}`,    // the removed member first
		`{"id":8,"actor_id":1e2,"ip":"x"}`,                // an exponent
		`{"user_agent":"only","id":9}`,                    // the removed member first, one left
		`{"id":10,"payload":{"ok":true,"path":"\u00e9"}}`, // nested, escaped
		`{"id":11,"type":"eleven"}`,
	}, ",") + "]}"
	for _, tc := range []struct {
		name    string
		maps    map[string]any
		records int
		err     string
	}{
		{"hash, arithmetic, removal", map[string]any{"events": map[string]any{"ip": "md5(str(ip))", "id_x2": "id * 2", "user_agent": nil}}, 10, ""},
		{"filter and __else__", map[string]any{"events": map[string]any{"__filter__": "id % 2 == 1", "a_type": "type", "__else__": nil}}, 6, ""},
		{"an error on record 11", map[string]any{"events": map[string]any{"n": "int(type) if id > 10 else 0"}}, 9, `stream "events": stream map "events", property "n"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree, spliced := syncEventsPage(t, page, true, tc.maps), syncEventsPage(t, page, false, tc.maps)
			n := 0
			for i := range tree.raw {
				if !bytes.Equal(tree.raw[i], spliced.raw[i]) {
					n++
				}
			}
			if n == 0 {
				t.Error("no record spliced")
			}
			tree.raw, spliced.raw = nil, nil
			if d := cmp.Diff(tree, spliced, cmp.AllowUnexported(message{}, pageRun{})); d != "" {
				t.Errorf("(-tree +spliced):\n%s", d)
			}
			if len(tree.dead) != 1 {
				t.Errorf("%d dead letters, want 1", len(tree.dead))
			}
			if !strings.Contains(tree.err, tc.err) || (tc.err == "") != (tree.err == "") {
				t.Errorf("error %q, want one containing %q", tree.err, tc.err)
			}
			var records int
			for _, m := range tree.msgs {
				if m.Type == "RECORD" {
					records++
				}
			}
			if records != tc.records {
				t.Errorf("%d records, want %d", records, tc.records)
			}
		})
	}
}
