// Package clientside filters the records of a stream that has a
// replication key but no incremental filter parameter. Nothing in its requests asks
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
type Filter struct {
	since any
	// keyFormat, when set (incremental.key_format), reads a key as a
	// time, as the bookmark was written.
	keyFormat string
	// of gives a child stream's bookmark for the partition (the parent
	// record) a record was read for, as its walk started; nil for a
	// stream with no parent.
	of func(streams.Partition) any
}

// New is the filter of d, read from bookmark (nil: from scratch), and says
// so in one WARN line naming the stream; nil when d is filtered by its
// requests (an incremental block) or read whole (no replication key, or
// full table). A child stream's bookmarks are per parent record: of
// gives the one a record is compared with (streams.Partitions.Since).
func New(d *streams.Definition, fullTable bool, bookmark any, of func(streams.Partition) any, log *slog.Logger) *Filter {
	if d.ReplicationKey == "" || d.AsksChanges() || fullTable {
		return nil
	}
	what := "replication_key without an incremental block"
	if d.Incremental != nil {
		what = "an incremental block without param"
	}
	log.Warn(what+": the API is asked for every record each run, and those below the bookmark are dropped here (add incremental.param to ask for changes only)",
		"stream", d.Name, "replication_key", d.ReplicationKey)
	f := &Filter{since: bookmark}
	if d.Incremental != nil {
		f.keyFormat = d.Incremental.KeyFormat
	}
	if d.Parent != nil {
		f.of = of
	}
	return f
}

// Below reports whether a record of part whose replication key is key
// lies under the bookmark (a child's: part's): it is not written and
// moves nothing. A record at the bookmark is written again, as a ">=
// bookmark" request filter returns it (there is no overlap without an
// incremental block); a null key, or one that cannot be compared with
// the bookmark, is never below.
func (f *Filter) Below(part streams.Partition, key any) bool {
	if f == nil || key == nil {
		return false
	}
	since := f.since
	if f.of != nil {
		since = f.of(part)
	}
	if since == nil {
		return false
	}
	if f.keyFormat != "" {
		t, ok := keys.TimeOf(key, f.keyFormat)
		if !ok {
			return false // cannot be compared: never below
		}
		key = t
	}
	c, err := keys.Compare(key, since)
	return err == nil && c < 0
}
