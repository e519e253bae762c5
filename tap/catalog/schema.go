package catalog

import "github.com/tap-dev/tap/streams"

// OutputSchema is the schema a stream's SCHEMA message carries when its
// catalog drops the properties in dropped (Selection.Dropped): schema
// without them, in properties and in required, as the records are
// written without them. With none dropped it is schema itself; schema is
// never changed.
func OutputSchema(schema map[string]any, dropped map[string]bool) map[string]any {
	if len(dropped) == 0 {
		return schema
	}
	out := make(map[string]any, len(schema))
	for k, v := range schema {
		out[k] = v
	}
	props := map[string]any{}
	for k, v := range schema["properties"].(map[string]any) {
		if !dropped[k] {
			props[k] = v
		}
	}
	out["properties"] = props
	if req, ok := schema["required"].([]any); ok {
		var kept []any
		for _, r := range req {
			if s, _ := r.(string); !dropped[s] {
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

// BookmarkProperties are the properties a stream's bookmark is made of, as
// its SCHEMA message names them (Singer's bookmark_properties): its
// replication key, or none.
func BookmarkProperties(d *streams.Definition) []string {
	if d.ReplicationKey == "" {
		return nil
	}
	return []string{d.ReplicationKey}
}
