// Package clientside filters the records of a stream that has a
// replication key but no incremental block. Nothing in its requests asks
// the API for changes only, so every run reads the whole stream; as
// Airbyte's and dlt's client-side incremental do, the records below the
// bookmark the run started from are dropped here instead of written again.
package clientside

import (
	"log/slog"

	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/keys"
)

// Filter drops the records a stream's earlier runs wrote. The nil Filter
// drops nothing.
type Filter struct{ since any }

// New is the filter of d, read from bookmark (nil: from scratch), and says
// so in one WARN line naming the stream; nil when d is filtered by its
// requests (an incremental block), read whole (no replication key, or
// full table) or a child stream, whose bookmarks are per parent record.
func New(d *streams.Definition, fullTable bool, bookmark any, log *slog.Logger) *Filter {
	if d.ReplicationKey == "" || d.Incremental != nil || fullTable || d.Parent != nil {
		return nil
	}
	log.Warn("replication_key without an incremental block: the API is asked for every record each run, and those below the bookmark are dropped here (add incremental.param to ask for changes only)",
		"stream", d.Name, "replication_key", d.ReplicationKey)
	return &Filter{since: bookmark}
}

// Below reports whether a record whose replication key is key lies under
// the bookmark: it is not written and moves nothing. A record at the
// bookmark is written again, as a ">= bookmark" request filter returns it
// (there is no overlap without an incremental block); a null key, or one
// that cannot be compared with the bookmark, is never below.
func (f *Filter) Below(key any) bool {
	if f == nil || f.since == nil || key == nil {
		return false
	}
	c, err := keys.Compare(key, f.since)
	return err == nil && c < 0
}
