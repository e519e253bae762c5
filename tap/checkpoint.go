package tap

import (
	"github.com/tap-dev/tap/streams"
)

// commit copies the plan's bookmark into the state when it changed and
// reports whether it did. Callers checkpoint after the records it covers.
func (e *engine) commit(n *node) bool {
	if n.held.Load() {
		return false // a dead-lettered request's rows are not read yet
	}
	if n.plan.PerPartition() {
		parts, floor, moved := n.plan.Partitions()
		if moved {
			e.state.SetPartitions(n.def.Name, n.def.ReplicationKey, parts, floor)
		}
		return moved
	}
	v, moved := n.plan.Checkpoint()
	if moved {
		e.state.SetValue(n.def.Name, n.def.ReplicationKey, v)
	}
	return moved
}

// checkpoint writes STATE. Dead letters are written to their file as they
// happen (unbuffered), so none can be lost behind a bookmark that moved
// past it.
func (e *engine) checkpoint(n *node) error {
	if err := e.schema(n); err != nil || e.recordLimit > 0 {
		return err
	}
	return e.out.State(n.def.Name, e.state, n.records.Load())
}

// schema writes a stream's SCHEMA before its first message. Sending it
// lazily keeps stdout empty when a run fails before any data arrives.
func (e *engine) schema(n *node) error {
	if n.schemaSent {
		return nil
	}
	n.schemaSent = true
	if n.outs != nil {
		return e.schemaMapped(n)
	}
	return e.out.Schema(n.def.Name, n.outputSchema(e.cfg.Schemas[n.def.Name]), n.def.PrimaryKey, bookmarkKeys(n.def))
}

func (e *engine) activateVersion(n *node) error {
	if err := e.schema(n); err != nil {
		return err
	}
	for _, name := range n.selectedOutputs() {
		if err := e.out.ActivateVersion(name, n.version); err != nil {
			return err
		}
	}
	return nil
}

func (n *node) outputSchema(schema map[string]any) map[string]any {
	if len(n.dropped) == 0 {
		return schema
	}
	out := make(map[string]any, len(schema))
	for k, v := range schema {
		out[k] = v
	}
	props := map[string]any{}
	for k, v := range schema["properties"].(map[string]any) {
		if !n.dropped[k] {
			props[k] = v
		}
	}
	out["properties"] = props
	if req, ok := schema["required"].([]any); ok {
		var kept []any
		for _, r := range req {
			if s, _ := r.(string); !n.dropped[s] {
				kept = append(kept, r)
			}
		}
		out["required"] = kept
		if kept == nil {
			delete(out, "required")
		}
	}
	return out
}

func bookmarkKeys(d *streams.Definition) []string {
	if d.ReplicationKey == "" {
		return nil
	}
	return []string{d.ReplicationKey}
}

// endStream notes a stream's record count in its bookmark and warns when a
// stream that had records last time returned none: an API that silently
// changed shape or filter looks exactly like that. An incremental stream
// that is caught up writes no new record, and that is normal; but the
// overlap re-reads the rows at its bookmark, so a source that returned
// nothing at all is suspicious there too.
func (e *engine) endStream(n *node) {
	records := n.records.Load()
	last, ok := e.state.LastRecords(n.def.Name)
	if ok && last > 0 && (n.received.Load() == 0 || (n.plan.FullTable() && records == 0)) {
		e.log.Warn("stream returned zero records where its last run returned some; check the API, the records_path and the filter",
			"stream", n.def.Name, "last_run_records", last)
	}
	e.state.SetLastRecords(n.def.Name, records)
}
