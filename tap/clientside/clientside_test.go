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
	tests := map[string]struct {
		def       *streams.Definition
		fullTable bool
		bookmark  any
		key       any
		want      bool
	}{
		"below the bookmark":                        {noInc, false, bm, "2026-01-04T23:59:59Z", true},
		"at the bookmark is written again":          {noInc, false, bm, bm, false},
		"above the bookmark":                        {noInc, false, bm, "2026-01-06T00:00:00Z", false},
		"compared as instants":                      {noInc, false, bm, "2026-01-05T01:00:00+02:00", true},
		"numbers":                                   {noInc, false, json.Number("10"), json.Number("9"), true},
		"no bookmark: nothing is below":             {noInc, false, nil, "2026-01-01T00:00:00Z", false},
		"a null key is never below":                 {noInc, false, bm, nil, false},
		"an uncomparable key is not below":          {noInc, false, bm, true, false},
		"with an incremental block the API filters": {inc, false, bm, "2026-01-01T00:00:00Z", false},
		"full table: nothing is below":              {noInc, true, bm, "2026-01-01T00:00:00Z", false},
		"a child stream is not filtered":            {child, false, bm, "2026-01-01T00:00:00Z", false},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			f := New(tt.def, tt.fullTable, tt.bookmark, slog.New(slog.NewTextHandler(&logs, nil)))
			if got := f.Below(tt.key); got != tt.want {
				t.Errorf("Below(%v) = %v, want %v", tt.key, got, tt.want)
			}
			warned := strings.Count(logs.String(), "replication_key without an incremental block")
			if want := tt.def.Incremental == nil && !tt.fullTable && tt.def.Parent == nil; (warned == 1) != want || warned > 1 {
				t.Errorf("%d WARN lines, want one only for a client-side stream:\n%s", warned, logs.String())
			}
		})
	}
}
