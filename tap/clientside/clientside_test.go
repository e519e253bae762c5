package clientside

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/tap-dev/tap/streams"
)

func TestFilter(t *testing.T) {
	const bm = "2026-01-05T00:00:00Z"
	noInc := &streams.Definition{Name: "s", ReplicationKey: "updated_at"}
	child := &streams.Definition{Name: "c", ReplicationKey: "updated_at", Parent: &streams.Parent{Stream: "s"}}
	inc := &streams.Definition{Name: "s", ReplicationKey: "updated_at", Incremental: &streams.Incremental{Param: "since"}}
	epoch := &streams.Definition{Name: "s", ReplicationKey: "updated_at", Incremental: &streams.Incremental{KeyFormat: "unix"}}
	tests := map[string]struct {
		def       *streams.Definition
		fullTable bool
		bookmark  any
		key       any
		want      bool
		parent    any // the partition's parent key, for a child
	}{
		"below the bookmark":                        {noInc, false, bm, "2026-01-04T23:59:59Z", true, nil},
		"at the bookmark is written again":          {noInc, false, bm, bm, false, nil},
		"above the bookmark":                        {noInc, false, bm, "2026-01-06T00:00:00Z", false, nil},
		"compared as instants":                      {noInc, false, bm, "2026-01-05T01:00:00+02:00", true, nil},
		"numbers":                                   {noInc, false, json.Number("10"), json.Number("9"), true, nil},
		"no bookmark: nothing is below":             {noInc, false, nil, "2026-01-01T00:00:00Z", false, nil},
		"a null key is never below":                 {noInc, false, bm, nil, false, nil},
		"an uncomparable key is not below":          {noInc, false, bm, true, false, nil},
		"with an incremental block the API filters": {inc, false, bm, "2026-01-01T00:00:00Z", false, nil},
		"full table: nothing is below":              {noInc, true, bm, "2026-01-01T00:00:00Z", false, nil},
		// An incremental block with no param asks for everything; its
		// key_format reads the key as the bookmark was written.
		"key_format, below":      {epoch, false, bm, json.Number("1767484800"), true, nil},  // 2026-01-04
		"key_format, above":      {epoch, false, bm, json.Number("1767657600"), false, nil}, // 2026-01-06
		"key_format, not a time": {epoch, false, bm, "soon", false, nil},
		// A child's bookmark is its parent record's: user 1 read to
		// 01-05, user 2 never (the stream's bookmark does not count).
		"a child below its parent's bookmark":  {child, false, nil, "2026-01-04T00:00:00Z", true, 1},
		"a child at its parent's bookmark":     {child, false, nil, bm, false, 1},
		"a child of a parent with no bookmark": {child, false, bm, "2026-01-01T00:00:00Z", false, 2},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			of := func(p streams.Partition) any { return map[any]any{1: bm}[p.Key] }
			f := New(tt.def, tt.fullTable, tt.bookmark, of, slog.New(slog.NewTextHandler(&logs, nil)))
			if got := f.Below(streams.Partition{Key: tt.parent}, tt.key); got != tt.want {
				t.Errorf("Below(%v) = %v, want %v", tt.key, got, tt.want)
			}
			warned := strings.Count(logs.String(), "the API is asked for every record each run")
			if want := !tt.def.AsksChanges() && !tt.fullTable; (warned == 1) != want || warned > 1 {
				t.Errorf("%d WARN lines, want one only for a client-side stream:\n%s", warned, logs.String())
			}
		})
	}
}
