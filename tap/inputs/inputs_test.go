package inputs

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tap-dev/tap/internal/taptest"
	"github.com/tap-dev/tap/settings"
)

func TestCheckLogLevel(t *testing.T) {
	for name, ok := range map[string]bool{"": true, "debug": true, "info": true, "warn": true, "error": true, "INFO": false, "trace": false} {
		err := CheckLogLevel(name)
		if (err == nil) != ok {
			t.Errorf("CheckLogLevel(%q) = %v", name, err)
		}
		var ue *UsageError
		if err != nil && (!errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "--log-level: expected ")) {
			t.Errorf("CheckLogLevel(%q) = %v, want a usage error naming the flag", name, err)
		}
	}
	cfg := &settings.Config{LogLevel: "warn"}
	if got := (Files{}).Level(cfg); got != slog.LevelWarn {
		t.Errorf("config log_level: %v", got)
	}
	if got := (Files{LogLevel: "debug"}).Level(cfg); got != slog.LevelDebug {
		t.Errorf("--log-level does not override log_level: %v", got)
	}
}

const (
	barsBookmark = `{"bookmarks": {"bars": {"replication_key_value": "2026-01-01T00:00:00Z"}}}`
	onlyOrders   = `{"streams": [{"tap_stream_id": "orders", "metadata": [{"breadcrumb": [], "metadata": {"selected": true}}]}]}`
	onlySales    = `{"streams": [{"tap_stream_id": "sales", "metadata": [{"breadcrumb": [], "metadata": {"selected": true}}]}]}`
	onlyBars     = `{"streams": [{"tap_stream_id": "bars", "metadata": [{"breadcrumb": [], "metadata": {"selected": true}}]}]}`
)

// noStart drops start_date: the chunked stream bars then needs a bookmark.
func noStart(cfg map[string]any) { delete(cfg, "start_date") }

// salesMap aliases orders as sales.
func salesMap(cfg map[string]any) {
	cfg["stream_maps"] = map[string]any{"orders": map[string]any{"__alias__": "sales"}}
}

// files writes the demo's config (patched), and the state and catalog
// when given, into one directory.
func files(t *testing.T, patch func(map[string]any), st, cat string) Files {
	t.Helper()
	_, path := taptest.DemoConfig(t, patch)
	f := Files{Config: path}
	write := func(name, content string) string {
		p := filepath.Join(filepath.Dir(path), name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if st != "" {
		f.State = write("state.json", st)
	}
	if cat != "" {
		f.Catalog = write("catalog.json", cat)
	}
	return f
}

// TestLoad: every input is checked, and against the others, before a run
// starts; the error says which file and which field.
func TestLoad(t *testing.T) {
	for _, c := range []struct {
		name         string
		patch        func(map[string]any)
		state, cat   string
		noConfig     bool
		wantErr      string // in the error; "" = loads
		wantUsage    bool   // a *UsageError, else an *settings.InputError
		wantSelected string // a stream the selection selects
	}{
		{name: "demo", wantSelected: "bars"},
		{name: "no --config", noConfig: true, wantErr: "--config is required", wantUsage: true},
		{name: "a map that does not compile", patch: func(cfg map[string]any) {
			cfg["stream_maps"] = map[string]any{"orders": map[string]any{"x": "[i for i in note]"}}
		}, wantErr: `config.json: stream_maps.orders.x: "[i for i in note]"`},
		{name: "a bookmark that is not an object", state: `{"bookmarks": {"orders": 3}}`, wantErr: "state.json: bookmarks.orders: expected a bookmark object"},
		{name: "a catalog of no stream", cat: `{"streams": [{"tap_stream_id": "nope"}]}`, wantErr: `unknown stream "nope"`},
		{name: "a catalog names the mapped stream", patch: salesMap, cat: onlySales, wantSelected: "sales"},
		{name: "a catalog names the mapped stream's source", patch: salesMap, cat: onlyOrders, wantErr: `unknown stream "orders"`},
		{name: "a backfill without start", patch: noStart,
			wantErr: `stream "bars": incremental.chunk_days: needs start_date in the config (or a bookmark in the state)`},
		{name: "a backfill without start_date, from its bookmark", patch: noStart, state: barsBookmark, wantSelected: "bars"},
		{name: "a backfill without start, not selected", patch: noStart, cat: onlyOrders, wantSelected: "orders"},
		{name: "a backfill without start, selected", patch: noStart, cat: onlyBars, wantErr: `stream "bars": incremental.chunk_days`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := files(t, c.patch, c.state, c.cat)
			if c.noConfig {
				f.Config = ""
			}
			cfg, st, sel, err := f.Load()
			if c.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if cfg == nil || st == nil || !sel.Selected(c.wantSelected) {
					t.Errorf("config %v, state %v, %s selected: %v", cfg != nil, st != nil, c.wantSelected, sel.Selected(c.wantSelected))
				}
				return
			}
			var ue *UsageError
			var ie *settings.InputError
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("err = %v, want one with %q", err, c.wantErr)
			}
			if c.wantUsage && !errors.As(err, &ue) || !c.wantUsage && !errors.As(err, &ie) {
				t.Errorf("err = %T %v, want a usage error %v", err, err, c.wantUsage)
			}
		})
	}
}

// TestLoadRead: `read` needs its configured catalog, and a stream it
// syncs in full_refresh starts from no bookmark.
func TestLoadRead(t *testing.T) {
	const state = `{"bookmarks": {"customers": {"replication_key_value": "2026-03-01T00:00:00Z"}, "orders": {"replication_key_value": "2026-03-02T00:00:00Z"}}}`
	const configured = `{"streams": [
	  {"stream": {"name": "customers"}, "sync_mode": "full_refresh", "destination_sync_mode": "overwrite"},
	  {"stream": {"name": "orders"}, "sync_mode": "incremental", "cursor_field": ["updated_at"], "destination_sync_mode": "append_dedup"}]}`
	f := files(t, nil, state, configured)
	cfg, err := f.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	st, sel, err := f.LoadRead(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Value("customers") != nil || st.Value("orders") != "2026-03-02T00:00:00Z" {
		t.Errorf("bookmarks: customers %v (want none: full_refresh), orders %v", st.Value("customers"), st.Value("orders"))
	}
	if !sel.Selected("customers") || !sel.Selected("orders") || sel.Selected("bars") {
		t.Errorf("selected: customers %v, orders %v, bars %v", sel.Selected("customers"), sel.Selected("orders"), sel.Selected("bars"))
	}
	f.Catalog = ""
	var ue *UsageError
	if _, _, err := f.LoadRead(cfg); !errors.As(err, &ue) || err.Error() != "read needs --catalog CONFIGURED_CATALOG" {
		t.Errorf("without --catalog: %v", err)
	}
}

// TestLoadReadNamespaces: an Airbyte per-stream state applies to the
// stream of its name and namespace only, as Airbyte matches them; one of
// another namespace is ignored, said in Ignored, and not checked (its
// bookmark in the future would be refused were it applied).
func TestLoadReadNamespaces(t *testing.T) {
	state := func(ns string, value string) string {
		desc := `{"name": "orders"}`
		if ns != "" {
			desc = `{"name": "orders", "namespace": "` + ns + `"}`
		}
		return `{"type": "STREAM", "stream": {"stream_descriptor": ` + desc + `, "stream_state": {"replication_key": "updated_at", "replication_key_value": "` + value + `"}}}`
	}
	catalog := func(ns string) string {
		stream := `{"name": "orders"}`
		if ns != "" {
			stream = `{"name": "orders", "namespace": "` + ns + `"}`
		}
		return `{"streams": [{"stream": ` + stream + `, "sync_mode": "incremental", "destination_sync_mode": "append"}]}`
	}
	const future = "2999-01-01T00:00:00Z"
	for _, c := range []struct {
		name, state, catalog string
		want                 any // the bookmark applied
		ignored              []string
	}{
		{name: "none and none", state: "[" + state("", "2026-03-02T00:00:00Z") + "]", catalog: catalog(""), want: "2026-03-02T00:00:00Z"},
		{name: "same namespace", state: "[" + state("shop", "2026-03-02T00:00:00Z") + "]", catalog: catalog("shop"), want: "2026-03-02T00:00:00Z"},
		{name: "another namespace", state: "[" + state("other", future) + "]", catalog: catalog("shop"),
			ignored: []string{`the state of stream "orders" has namespace "other", and the catalog's stream has namespace "shop": it is ignored, as Airbyte does, and the stream reads as if it had no state`}},
		{name: "a namespace, the catalog none", state: "[" + state("other", future) + "]", catalog: catalog(""),
			ignored: []string{`the state of stream "orders" has namespace "other", and the catalog's stream has no namespace: it is ignored, as Airbyte does, and the stream reads as if it had no state`}},
		{name: "none, the catalog one", state: "[" + state("", future) + "]", catalog: catalog("shop"),
			ignored: []string{`the state of stream "orders" has no namespace, and the catalog's stream has namespace "shop": it is ignored, as Airbyte does, and the stream reads as if it had no state`}},
		{name: "the matching one of two", state: "[" + state("shop", "2026-03-02T00:00:00Z") + "," + state("", future) + "]", catalog: catalog("shop"), want: "2026-03-02T00:00:00Z",
			ignored: []string{`the state of stream "orders" has no namespace, and the catalog's stream has namespace "shop": it is ignored, as Airbyte does, and the stream reads as if it had no state`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := files(t, nil, c.state, c.catalog)
			cfg, err := f.LoadConfig()
			if err != nil {
				t.Fatal(err)
			}
			st, _, err := f.LoadRead(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Value("orders"); got != c.want {
				t.Errorf("bookmark %v, want %v", got, c.want)
			}
			if diff := cmp.Diff(c.ignored, st.Ignored(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ignored (-want +got):\n%s", diff)
			}
		})
	}
}
