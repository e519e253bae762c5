package state

import (
	"maps"
	"strings"

	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams/keys"
)

// Airbyte's declarative CDK keeps a stream's cursor in state shapes of its
// own: {"updated_at": "2024-05-01"} in the manifest's datetime_format, and
// for a substream {"states": [{"partition": {"parent_id": "1",
// "parent_slice": {}}, "cursor": {"updated_at": "…"}}], …}. A stream
// compiled from a manifest reads those shapes into its bookmarks, and
// writes them beside its own keys in Airbyte's per-stream state, so that a
// connection moves between the CDK and the tap, either way, without a
// resync. The CDK ignores the tap's keys; the tap's own keys, when a state
// has them, win over the CDK's.

// The keys of the CDK's partitioned state the tap reads or writes.
const (
	cdkStates    = "states"
	cdkPartition = "partition"
	cdkCursor    = "cursor"
	cdkSlice     = "parent_slice"
)

// UseCDK makes st read and write the CDK's state shapes for the streams
// of shapes: a stream whose state has the CDK's keys and none of the
// tap's takes its bookmarks from them now, and StreamJSON writes them
// from now on. Call it before Check.
func (st *State) UseCDK(shapes map[string]settings.CDKCursor) {
	if len(shapes) == 0 {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.cdk = shapes
	for name, sh := range shapes {
		b := st.bookmarks[name]
		if b == nil || b[keyValue] != nil || b[keyPartitions] != nil {
			continue
		}
		if list, ok := b[cdkStates].([]any); ok && sh.Partition != "" {
			var parts []any
			for _, e := range list {
				m, _ := e.(map[string]any)
				part, _ := m[cdkPartition].(map[string]any)
				cur, _ := m[cdkCursor].(map[string]any)
				key, hasKey := part[sh.PartitionField()]
				v, hasValue := cur[sh.Field]
				if !hasKey || !hasValue {
					continue
				}
				parts = append(parts, map[string]any{keyContext: map[string]any{sh.Partition: key},
					keyReplicationKey: sh.Field, keyValue: fromCDK(v, sh.Format)})
			}
			if len(parts) > 0 {
				b[keyPartitions] = parts
			}
			continue
		}
		if v, ok := b[sh.Field]; ok && sh.Partition == "" {
			b[keyReplicationKey] = sh.Field
			b[keyValue] = fromCDK(v, sh.Format)
		}
	}
}

// cdkLocked adds the CDK's keys for stream to its bookmark b (a copy when
// it adds any).
func (st *State) cdkLocked(stream string, b map[string]any) map[string]any {
	sh, ok := st.cdk[stream]
	if !ok {
		return b
	}
	if list, ok := b[keyPartitions].([]any); ok && sh.Partition != "" {
		states := make([]any, 0, len(list))
		for _, e := range list {
			m, _ := e.(map[string]any)
			ctx, _ := m[keyContext].(map[string]any)
			key, ok := ctx[sh.Partition]
			if !ok || m[keyValue] == nil {
				continue
			}
			part := map[string]any{sh.PartitionField(): key}
			if !sh.List {
				part[cdkSlice] = map[string]any{} // a substream's
			}
			states = append(states, map[string]any{
				cdkPartition: part,
				cdkCursor:    map[string]any{sh.Field: keys.Format(m[keyValue], sh.Format)},
			})
		}
		b = maps.Clone(b)
		b[cdkStates] = states
		return b
	}
	if v := b[keyValue]; v != nil && sh.Partition == "" {
		b = maps.Clone(b)
		b[sh.Field] = keys.Format(v, sh.Format)
	}
	return b
}

// fromCDK is a bookmark value of the CDK's, written in format, as the
// tap keeps a DatetimeBasedCursor's bookmark whatever the records hold
// (incremental.key_format): a time in RFC 3339 (keys.TimeOf). A value
// that does not read as format is kept as it is, for Check to judge.
func fromCDK(v any, format string) any {
	s, ok := v.(string)
	if !ok || format == "" || format == "rfc3339" {
		return v
	}
	if format == "unix" || format == "unix_ms" {
		s = strings.TrimSpace(s)
	}
	if t, ok := keys.TimeOf(s, format); ok {
		return t
	}
	return v
}
