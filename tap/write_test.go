package tap

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/tap/state"
)

// TestOneWritePath drives each way a record is made — a page read as a
// tree, a spliced page, a feed message, a replayed dead letter, a
// deletion record, a row read by id — with a record that echoes a
// configured secret, with and without stream maps: each is masked,
// written through the page writer as its stream and counted.
func TestOneWritePath(t *testing.T) {
	const secret = "s3cret-Key-0042"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data": [{"id": 1, "note": "echo `+secret+`"}]}`)
	}))
	defer srv.Close()
	echo := func() map[string]any { return map[string]any{"id": 1, "note": "echo " + secret} }
	now := time.Date(2026, 1, 11, 0, 0, 0, 0, time.UTC)
	paths := []struct {
		name  string
		write func(ctx context.Context, t *testing.T, e *engine, n *node) error
	}{
		{"page as trees", func(ctx context.Context, t *testing.T, e *engine, n *node) error {
			return n.handlePage(ctx, &streams.Page{Records: []any{echo()}}, now, walkStart{})
		}},
		{"spliced page", func(ctx context.Context, t *testing.T, e *engine, n *node) error {
			page, err := n.model.fetchOf()(ctx, streams.Request{URL: "/s"})
			if err != nil {
				return err
			}
			if page.Spliced == nil && n.out.outs == nil {
				t.Fatal("the page was not spliced: the row does not test the spliced write")
			}
			return n.handlePage(ctx, page, now, walkStart{})
		}},
		{"feed message", func(ctx context.Context, t *testing.T, e *engine, n *node) error {
			return (&listener{e: e, n: n}).Record(echo(), now)
		}},
		{"replayed letter", func(ctx context.Context, t *testing.T, e *engine, n *node) error {
			return (&Engine{e: e}).WriteRecord("s", echo(), now)
		}},
		{"deletion record", func(ctx context.Context, t *testing.T, e *engine, n *node) error {
			return (&tombstones{e: e, n: n}).WriteDeletion("echo "+secret, now.Format(time.RFC3339))
		}},
		{"row read by id", func(ctx context.Context, t *testing.T, e *engine, n *node) error {
			live, err := n.out.emitFetched(echo())
			if err == nil && !live {
				t.Error("the row read by id is not reported written")
			}
			return err
		}},
	}
	for _, maps := range []bool{false, true} {
		for _, p := range paths {
			name := p.name
			if maps {
				name += " through stream maps"
			}
			t.Run(name, func(t *testing.T) {
				conf := map[string]any{
					"base_url": srv.URL, "headers": map[string]any{"X-Api-Key": secret},
					"rate_limit": map[string]any{"requests_per_second": 0}, "retry": map[string]any{"max_attempts": 1},
					"streams": []any{map[string]any{
						"name": "s", "path": "/s", "records_path": "data", "primary_key": []string{"id"},
						"pagination": map[string]any{"type": "none"},
						"schema": map[string]any{"type": "object", "properties": map[string]any{
							"id": map[string]any{"type": []string{"integer", "string"}}, "note": map[string]any{"type": "string"}}},
					}},
				}
				out := "s"
				if maps {
					conf["stream_maps"] = map[string]any{"s": map[string]any{"__alias__": "t"}}
					out = "t"
				}
				cfg, err := settings.Load(writeConfig(t, t.TempDir(), "config.json", conf))
				if err != nil {
					t.Fatal(err)
				}
				rec := &recorder{}
				e := testEngine(t, cfg, run{policy: policy{mode: ModeSync}, state: state.New(), out: rec,
					log: slog.New(slog.NewTextHandler(io.Discard, nil))})
				e.now = func() time.Time { return now }
				n := e.byName["s"]
				if err := p.write(context.Background(), t, e, n); err != nil {
					t.Fatal(err)
				}
				var records []message
				for _, m := range rec.msgs {
					if m.Type == "RECORD" {
						records = append(records, m)
					}
				}
				if len(records) != 1 || records[0].Stream != out {
					t.Fatalf("want one RECORD of %q, got %+v", out, rec.msgs)
				}
				for k, v := range records[0].Record {
					if s, ok := v.(string); ok && strings.Contains(s, secret) {
						t.Errorf("field %s holds the secret: %q", k, s)
					}
				}
				if got := n.counts.Records.Load(); got != 1 {
					t.Errorf("records counted: %d, want 1", got)
				}
				if got := n.counts.Secrets.Load(); got != 1 {
					t.Errorf("secrets masked counted: %d, want 1", got)
				}
			})
		}
	}
}
