package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/tap-dev/tap/internal/taptest"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/tap"
	"github.com/tap-dev/tap/tap/inputs"
)

// TestCheckStreamedBodyStatusRules: check reads a csv stream's first
// record through the same request adapter as a sync, so the stream's
// on_status rules apply to it as they do to a JSON stream's first page.
func TestCheckStreamedBodyStatusRules(t *testing.T) {
	for _, c := range []struct {
		name     string
		onStatus map[string]any
		ok       bool
	}{
		{"404 ignored by on_status", map[string]any{"404": "ignore"}, true},
		{"404 not listed", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "gone", http.StatusNotFound)
			}))
			defer srv.Close()
			stream := map[string]any{"name": "export", "path": "/export", "format": "csv", "pagination": map[string]any{"type": "none"}, "schema": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}}}
			if c.onStatus != nil {
				stream["on_status"] = c.onStatus
			}
			p := taptest.WriteConfig(t, t.TempDir(), "config.json", map[string]any{
				"base_url": srv.URL, "retry": map[string]any{"max_attempts": 1},
				"streams": []any{stream},
			})
			cfg, err := inputs.Files{Config: p}.LoadConfig()
			if err != nil {
				t.Fatal(err)
			}
			err = checkConnection(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
			if (err == nil) != c.ok {
				t.Fatalf("check: %v, want ok=%v", err, c.ok)
			}
		})
	}
}

// firstRecords is a firstPages answering each stream's first record from a
// table, noting what it was asked.
type firstRecords struct {
	first map[string]map[string]any
	fail  map[string]error
	asked []string
}

func (p *firstRecords) FirstPage(_ context.Context, stream string, parent map[string]any) (map[string]any, int, error) {
	p.asked = append(p.asked, fmt.Sprintf("%s %v", stream, parent))
	if err := p.fail[stream]; err != nil {
		return nil, 0, err
	}
	if m := p.first[stream]; m != nil {
		return m, 1, nil
	}
	return nil, 0, nil
}

// checkTree asks for each stream's first page in the config's order, a
// child's with its parent's first record; a child of an empty page, and
// every stream below an async one, are not asked for; the first failure
// ends the check.
func TestCheckTree(t *testing.T) {
	cfg := &tap.Config{Streams: []streams.Definition{
		{Name: "a"},
		{Name: "b", Parent: &streams.Parent{Stream: "a", Key: "id"}},
		{Name: "c", Parent: &streams.Parent{Stream: "b", Key: "id"}},
		{Name: "d", Parent: &streams.Parent{Stream: "a", Key: "id"}},
	}}
	boom := errors.New("503")
	for _, tt := range []struct {
		name  string
		pages firstRecords
		asked []string
		err   error
	}{
		{"every stream, each child with its parent's first record",
			firstRecords{first: map[string]map[string]any{"a": {"id": 1}, "b": {"id": 2}}},
			[]string{"a map[]", "b map[id:1]", "c map[id:2]", "d map[id:1]"}, nil},
		{"an empty page: its children are skipped",
			firstRecords{first: map[string]map[string]any{"a": {"id": 1}}},
			[]string{"a map[]", "b map[id:1]", "d map[id:1]"}, nil},
		{"an async stream: neither it nor its children are read",
			firstRecords{first: map[string]map[string]any{"a": {"id": 1}, "b": {"id": 2}}, fail: map[string]error{"b": tap.ErrReportJob}},
			[]string{"a map[]", "b map[id:1]", "d map[id:1]"}, nil},
		{"the first failure ends the check",
			firstRecords{first: map[string]map[string]any{"a": {"id": 1}}, fail: map[string]error{"b": boom}},
			[]string{"a map[]", "b map[id:1]"}, boom},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := checkTree(context.Background(), &tt.pages, cfg, &cfg.Streams[0], nil, slog.New(slog.DiscardHandler))
			if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Errorf("checkTree: %v, want %v", err, tt.err)
			}
			if !slices.Equal(tt.pages.asked, tt.asked) {
				t.Errorf("asked %q, want %q", tt.pages.asked, tt.asked)
			}
		})
	}
}
